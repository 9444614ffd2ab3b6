"""Authorization attributes of a request, as k8s.io/apiserver's RequestInfoFactory derives them.

custom-metrics-apiserver installs its routes into a generic API server and leaves request
parsing to the stock `RequestInfoFactory` (`pkg/endpoints/request/requestinfo.go`), so the
SubjectAccessReview the cluster sees is whatever that parser makes of a metrics path:

- `/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/m`: verb `get`, resource `pods`,
  name `*`, subresource `m`, namespace `ns`.
- `/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/metrics/m`: resource `metrics`, name `m`
  (the parser treats what follows `namespaces/{ns}` as a namespaced resource).
- `/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/m`: verb `list` (no name), resource `m`.
- Everything shorter than `/apis/{group}/{version}/{x}`, and every path outside `/api` and
  `/apis`: a non-resource request with the lowercased HTTP method as verb.

We follow it exactly so existing RBAC rules written for prometheus-adapter keep working.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

# verbs that appear as a path segment (`/api/v1/watch/...`), as upstream's specialVerbs
_SPECIAL_VERBS = frozenset({"proxy", "watch"})
_NO_SUBRESOURCE_VERBS = frozenset({"proxy"})
# what may follow `namespaces/{ns}` as a subresource of the namespace itself
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
# prefixes whose paths carry a group segment; `/api` is the groupless core prefix
_API_PREFIXES = frozenset({"api", "apis"})
_GROUPLESS_PREFIXES = frozenset({"api"})

_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


@dataclass(frozen=True)
class Attributes:
    """What one request asks to do, in SubjectAccessReview terms."""

    verb: str
    path: str
    is_resource: bool = False
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""

    def review_spec(self) -> dict[str, object]:
        """The `resourceAttributes` / `nonResourceAttributes` half of a SubjectAccessReview spec."""
        if not self.is_resource:
            return {"nonResourceAttributes": {"path": self.path, "verb": self.verb}}
        attrs = {
            "namespace": self.namespace,
            "verb": self.verb,
            "group": self.api_group,
            "version": self.api_version,
            "resource": self.resource,
            "subresource": self.subresource,
            "name": self.name,
        }
        return {"resourceAttributes": {k: v for k, v in attrs.items() if v}}


def request_attributes(method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """The attributes of `method path?query` (path already percent-decoded)."""
    parts = path.strip("/").split("/") if path.strip("/") else []
    method_verb = method.lower()
    if len(parts) < 3 or parts[0] not in _API_PREFIXES:
        return Attributes(verb=method_verb, path=path)
    prefix, rest = parts[0], parts[1:]
    group = ""
    if prefix not in _GROUPLESS_PREFIXES:
        if len(rest) < 3:
            # `/apis/{group}/{version}` is discovery: a non-resource request
            return Attributes(verb=method_verb, path=path)
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    verb = _METHOD_VERBS.get(method.upper(), "")
    if rest and rest[0] in _SPECIAL_VERBS:
        verb, rest = rest[0], rest[1:]
        if not rest:
            # `/api/v1/watch` alone names nothing: upstream answers a non-resource request
            return Attributes(verb=method_verb, path=path)
    return _resource_attributes(verb, path, group, version, rest, query)


def _resource_attributes(
    verb: str, path: str, group: str, version: str, rest: list[str], query: Mapping[str, str]
) -> Attributes:
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 and verb not in _NO_SUBRESOURCE_VERBS else ""
    if not name and verb == "get":
        # a get without a name is a collection read: list, or watch when asked to
        verb = "watch" if query.get("watch", "").lower() in ("true", "1") else "list"
    elif not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        verb=verb,
        path=path,
        is_resource=True,
        api_group=group,
        api_version=version,
        namespace=namespace,
        resource=resource,
        subresource=subresource,
        name=name,
    )


def forbidden_message(user: str, attrs: Attributes, reason: str = "") -> str:
    """The message of upstream's 403 Status (responsewriters.Forbidden), for the same request."""
    if not attrs.is_resource:
        text = f"forbidden: User {_q(user)} cannot {attrs.verb} path {_q(attrs.path)}"
    else:
        resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
        scope = (
            f"in the namespace {_q(attrs.namespace)}" if attrs.namespace else "at the cluster scope"
        )
        text = (
            f"User {_q(user)} cannot {attrs.verb} resource {_q(resource)} "
            f"in API group {_q(attrs.api_group)} {scope}"
        )
        qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
        named = f' "{attrs.name}"' if attrs.name else ""
        text = f"{qualified}{named} is forbidden: {text}"
    return f"{text}: {reason}" if reason else text


def forbidden_details(attrs: Attributes) -> dict[str, str]:
    """The `details` of upstream's 403 Status (NewForbidden): name, group and resource (sent
    as "kind"), each left out when empty; `{}` for a non-resource path."""
    if not attrs.is_resource:
        return {}
    fields = {"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource}
    return {key: value for key, value in fields.items() if value}


def _q(text: str) -> str:
    """Go's %q, near enough: a double-quoted, escaped string."""
    return json.dumps(text, ensure_ascii=False)
