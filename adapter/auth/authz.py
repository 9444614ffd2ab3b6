"""May they: k8s.io/apiserver's delegating authorizer.

A union, in upstream's order: always-allowed paths (non-resource requests only; a trailing `*`
is a prefix), the privileged group `system:masters`, then a SubjectAccessReview (cached: allowed
answers for the authorized TTL, denied ones for the unauthorized TTL, errors not at all).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from adapter.auth.attributes import Attributes
from adapter.auth.cache import Clock, TTLCache
from adapter.server.auth_seam import UserInfo

PRIVILEGED_GROUP = "system:masters"


@dataclass(frozen=True)
class AccessDecision:
    """A SubjectAccessReview's status."""

    allowed: bool
    reason: str = ""  # the authorizer's explanation; shown to the client on a 403, as upstream


class AccessReviewer(Protocol):
    """Creates SubjectAccessReviews (authorization.k8s.io/v1) in the cluster."""

    async def review_access(self, spec: Mapping[str, object]) -> AccessDecision:
        """The verdict for a SubjectAccessReview `spec`; raises adapter.errors.KubeUnavailable."""
        ...


class AlwaysAllowPaths:
    """`--authorization-always-allow-paths`: exact paths, or prefixes ending in `*`."""

    def __init__(self, paths: Sequence[str]) -> None:
        self._exact = frozenset(p for p in paths if not p.endswith("*"))
        self._prefixes = tuple(p[:-1] for p in paths if p.endswith("*"))

    def allows(self, path: str) -> bool:
        return path in self._exact or any(path.startswith(p) for p in self._prefixes)


def review_spec(user: UserInfo, attrs: Attributes) -> dict[str, object]:
    """The SubjectAccessReview spec asking whether `user` may do `attrs`."""
    spec: dict[str, object] = {"user": user.name, "groups": list(user.groups)}
    if user.uid:
        spec["uid"] = user.uid
    if user.extra:
        spec["extra"] = {k: list(v) for k, v in user.extra.items()}
    spec.update(attrs.review_spec())
    return spec


_Key = tuple[str, str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...], Attributes]


class Authorizer:
    """Decides `(user, attributes)`; the cluster's SubjectAccessReview has the last word."""

    def __init__(
        self,
        *,
        reviewer: AccessReviewer,
        authorized_ttl: float,  # seconds an allowed answer is reused; upstream default 10
        unauthorized_ttl: float,  # seconds a denied answer is reused; upstream default 10
        clock: Clock,
    ) -> None:
        self._reviewer = reviewer
        self._cache: TTLCache[_Key, AccessDecision] = TTLCache(
            ttl=lambda d: authorized_ttl if d.allowed else unauthorized_ttl, clock=clock
        )

    @property
    def cache(self) -> TTLCache[_Key, AccessDecision]:
        return self._cache

    async def authorize(self, user: UserInfo, attrs: Attributes) -> AccessDecision:
        """Allowed or not, with the reason; raises KubeUnavailable when the cluster can't say."""
        if PRIVILEGED_GROUP in user.groups:
            return AccessDecision(allowed=True)
        extra = tuple(sorted(user.extra.items())) if user.extra else ()
        key: _Key = (user.name, user.uid, user.groups, extra, attrs)
        return await self._cache.get(
            key, lambda: self._reviewer.review_access(review_spec(user, attrs))
        )
