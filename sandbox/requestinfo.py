"""What a request is about: kube-apiserver's RequestInfo (verb, group, resource, namespace...).

Both authorization and routing work from this, as in `k8s.io/apiserver/pkg/endpoints/request`.
"""

from __future__ import annotations

from dataclasses import dataclass

_TRUE = ("true", "True", "1")


@dataclass(frozen=True)
class RequestInfo:
    """A parsed request path; `is_resource` False for /version, /apis discovery, /healthz..."""

    path: str
    verb: str
    is_resource: bool = False
    prefix: str = ""  # "api" or "apis"
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: tuple[str, ...] = ()
    selected_name: str = ""  # list/watch pinned by `fieldSelector=metadata.name=X`: X

    @property
    def authorization_name(self) -> str:
        """The name RBAC sees: the path's, or the one a list/watch is pinned to."""
        return self.name or self.selected_name


def _method_verb(method: str) -> str:
    return {
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete",
        "GET": "get",
        "HEAD": "get",
    }.get(method, method.lower())


def parse(method: str, path: str, query: dict[str, str]) -> RequestInfo:
    """Split `/api[s]/[group/]version/[namespaces/ns/]resource[/name[/sub]]` (or non-resource)."""
    segs = [s for s in path.split("/") if s]
    if not segs or segs[0] not in ("api", "apis"):
        return RequestInfo(path=path, verb=method.lower())
    prefix, rest = segs[0], segs[1:]
    if prefix == "api":
        group = ""
        if not rest:
            return RequestInfo(path=path, verb=method.lower(), prefix=prefix)
        version, rest = rest[0], rest[1:]
    else:
        if len(rest) < 2:
            # /apis and /apis/<group> are discovery, not resources
            group = rest[0] if rest else ""
            return RequestInfo(path=path, verb=method.lower(), prefix=prefix, group=group)
        group, version, rest = rest[0], rest[1], rest[2:]
    if not rest:
        return RequestInfo(
            path=path, verb=method.lower(), prefix=prefix, group=group, version=version
        )
    verb = _method_verb(method)
    watch_prefix = rest[0] == "watch"
    if watch_prefix:
        rest = rest[1:]
    namespace = ""
    if len(rest) >= 2 and rest[0] == "namespaces":
        # /namespaces/<name>[/status|/finalize] is the namespace object itself, in itself
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in ("status", "finalize"):
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if verb in ("get", "delete") and not name:
        verb = "list" if verb == "get" else "deletecollection"
    if watch_prefix or (verb in ("get", "list") and query.get("watch") in _TRUE):
        verb = "watch"
    # as kube-apiserver: a list/watch pinned to one name by `metadata.name=` is authorized with
    # that name, so RBAC resourceNames rules (e.g. extension-apiserver-authentication-reader)
    # allow it; routing still sees a collection request
    pinned = _field_selector_name(query.get("fieldSelector", "")) if not name else ""
    return RequestInfo(
        selected_name=pinned if verb in ("list", "watch") else "",
        path=path,
        verb=verb,
        is_resource=True,
        prefix=prefix,
        group=group,
        version=version,
        namespace=namespace,
        resource=resource,
        subresource=subresource,
        name=name,
        parts=tuple(rest),
    )


def _field_selector_name(selector: str) -> str:
    """The name a field selector requires exactly (`metadata.name=x` or `==x`), else ""."""
    names = set()
    for term in selector.split(","):
        field, op, value = term.partition("==") if "==" in term else term.partition("=")
        if op and not field.endswith("!") and field.strip() == "metadata.name":
            names.add(value.strip())
    # a valid path segment only, as upstream (path.IsValidPathSegmentName)
    if len(names) == 1:
        (name,) = names
        if name and name not in (".", "..") and "/" not in name and "%" not in name:
            return name
    return ""
