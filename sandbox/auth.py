"""Authentication (bearer tokens, client certificates) and RBAC-like authorization.

One `Policy` (from the sandbox config, format in sandbox/README.md) answers the sandbox's own
requests and the TokenReview / SubjectAccessReview APIs. Rules only allow; anything not allowed
is denied; the group `system:masters` is allowed everything, as in a real cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"


class PolicyError(ValueError):
    """The policy document is malformed; the message names the field."""


@dataclass(frozen=True)
class User:
    """An authenticated identity (user.Info)."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def with_authenticated(self) -> User:
        if AUTHENTICATED in self.groups:
            return self
        return User(self.name, (*self.groups, AUTHENTICATED), self.uid, self.extra)


@dataclass(frozen=True)
class Attributes:
    """What a request wants to do (authorizer.Attributes)."""

    user: User
    verb: str
    is_resource: bool
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""


@dataclass(frozen=True)
class Rule:
    """One allow rule; empty subject lists match nobody, empty namespaces mean everywhere."""

    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    def applies_to(self, user: User) -> bool:
        return (
            user.name in self.users
            or "*" in self.users
            or any(g in self.groups for g in user.groups)
        )

    def allows(self, a: Attributes) -> bool:
        if not self.applies_to(a.user) or not _has(self.verbs, a.verb):
            return False
        if not a.is_resource:
            return any(_url_match(p, a.path) for p in self.non_resource_urls)
        if not self.resources or not _has(self.api_groups, a.api_group):
            return False
        if not any(_resource_match(r, a.resource, a.subresource) for r in self.resources):
            return False
        if self.namespaces and a.namespace not in self.namespaces and "*" not in self.namespaces:
            return False
        return not self.resource_names or a.name in self.resource_names


def _has(allowed: tuple[str, ...], value: str) -> bool:
    return "*" in allowed or value in allowed


def _resource_match(rule: str, resource: str, subresource: str) -> bool:
    want = f"{resource}/{subresource}" if subresource else resource
    if rule in ("*", want):
        return True
    head, _, tail = rule.partition("/")
    # RBAC's "*/scale" form; "deployments/*" is accepted too for convenience
    return bool(subresource) and (
        (head == "*" and tail == subresource) or (head == resource and tail == "*")
    )


def _url_match(pattern: str, path: str) -> bool:
    if pattern.endswith("*"):
        return path.startswith(pattern[:-1])
    return pattern == path


@dataclass(frozen=True)
class Policy:
    """Tokens -> users, and the allow rules."""

    tokens: Mapping[str, User] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()

    def authenticate_token(self, token: str) -> User | None:
        user = self.tokens.get(token)
        return user.with_authenticated() if user else None

    def authorize(self, a: Attributes) -> tuple[bool, str]:
        """(allowed, reason) for a request."""
        if MASTERS in a.user.groups:
            return True, f"user is in group {MASTERS}"
        for i, rule in enumerate(self.rules):
            if rule.allows(a):
                return True, f"allowed by sandbox policy rule {i}"
        return False, ""

    def with_user(self, token: str, user: User) -> Policy:
        return Policy({**self.tokens, token: user}, self.rules)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(f"{where}: must be a list of strings")
    return tuple(value)


def parse_policy(doc: Any) -> Policy:
    """A Policy from the `users`/`rules` document (see sandbox/README.md)."""
    if doc is None:
        return Policy()
    if not isinstance(doc, dict):
        raise PolicyError("policy: must be a mapping with 'users' and 'rules'")
    unknown = set(doc) - {"users", "rules"}
    if unknown:
        raise PolicyError(f"policy: unknown field {sorted(unknown)[0]!r}")
    tokens: dict[str, User] = {}
    for i, u in enumerate(doc.get("users") or []):
        where = f"users[{i}]"
        if (
            not isinstance(u, dict)
            or not isinstance(u.get("name"), str)
            or not isinstance(u.get("token"), str)
        ):
            raise PolicyError(f"{where}: needs string 'name' and 'token'")
        extra = u.get("extra") or {}
        if not isinstance(extra, dict):
            raise PolicyError(f"{where}.extra: must be a mapping of lists")
        tokens[u["token"]] = User(
            u["name"],
            _strings(u.get("groups"), f"{where}.groups"),
            str(u.get("uid", "")),
            {str(k): _strings(v, f"{where}.extra.{k}") for k, v in extra.items()},
        )
    rules = []
    fields = {
        "users": "users",
        "groups": "groups",
        "verbs": "verbs",
        "apiGroups": "api_groups",
        "resources": "resources",
        "namespaces": "namespaces",
        "resourceNames": "resource_names",
        "nonResourceURLs": "non_resource_urls",
    }
    for i, r in enumerate(doc.get("rules") or []):
        if not isinstance(r, dict):
            raise PolicyError(f"rules[{i}]: must be a mapping")
        unknown = set(r) - set(fields)
        if unknown:
            raise PolicyError(f"rules[{i}]: unknown field {sorted(unknown)[0]!r}")
        if not r.get("verbs"):
            raise PolicyError(f"rules[{i}].verbs: required")
        rules.append(
            Rule(
                **{
                    py: _strings(r.get(yaml_name), f"rules[{i}].{yaml_name}")
                    for yaml_name, py in fields.items()
                }
            )
        )
    return Policy(tokens, tuple(rules))


def forbidden_message(a: Attributes) -> str:
    """kube-apiserver's wording for a denied request."""
    who = f'User "{a.user.name}"'
    if not a.is_resource:
        return f'forbidden: {who} cannot {a.verb} path "{a.path}"'
    resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    gr = f"{a.resource}.{a.api_group}" if a.api_group else a.resource
    subject = f'{gr} "{a.name}"' if a.name else gr
    scope = f'in the namespace "{a.namespace}"' if a.namespace else "at the cluster scope"
    return (
        f'{subject} is forbidden: {who} cannot {a.verb} resource "{resource}" in API group '
        f'"{a.api_group}" {scope}'
    )


def token_review(policy: Policy, body: dict[str, Any]) -> dict[str, Any]:
    token = str((body.get("spec") or {}).get("token", ""))
    user = policy.authenticate_token(token) if token else None
    status: dict[str, Any] = {"authenticated": False, "user": {}}
    if user is not None:
        info: dict[str, Any] = {"username": user.name, "groups": list(user.groups)}
        if user.uid:
            info["uid"] = user.uid
        if user.extra:
            info["extra"] = {k: list(v) for k, v in user.extra.items()}
        status = {"authenticated": True, "user": info}
        if (body.get("spec") or {}).get("audiences"):
            status["audiences"] = body["spec"]["audiences"]
    else:
        status["error"] = "invalid bearer token"
    return {**body, "status": status}


def review_attributes(spec: dict[str, Any], user: User) -> Attributes:
    ra = spec.get("resourceAttributes")
    if isinstance(ra, dict):
        return Attributes(
            user,
            str(ra.get("verb", "")),
            True,
            str(ra.get("group", "")),
            str(ra.get("resource", "")),
            str(ra.get("subresource", "")),
            str(ra.get("namespace", "")),
            str(ra.get("name", "")),
        )
    nra = spec.get("nonResourceAttributes") or {}
    return Attributes(user, str(nra.get("verb", "")), False, path=str(nra.get("path", "")))


def access_review(
    policy: Policy, body: dict[str, Any], *, user: User | None = None
) -> dict[str, Any]:
    """SubjectAccessReview (user from spec) or SelfSubjectAccessReview (user given)."""
    spec = body.get("spec") or {}
    if user is None:
        extra = {str(k): tuple(v or ()) for k, v in (spec.get("extra") or {}).items()}
        user = User(
            str(spec.get("user", "")),
            tuple(spec.get("groups") or ()),
            str(spec.get("uid", "")),
            extra,
        )
    allowed, reason = policy.authorize(review_attributes(spec, user))
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return {**body, "status": status}
