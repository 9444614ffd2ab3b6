"""Fakes at the auth seams: a cluster that answers TokenReviews, SARs and a ConfigMap."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping

from adapter.auth.authn import TokenReviewResult
from adapter.auth.authz import AccessDecision
from adapter.errors import KubeUnavailable
from adapter.server.auth_seam import UserInfo


class FakeCluster:
    """`AuthBackend` from tables: tokens -> users, (user, verb, resource|path) -> allowed."""

    def __init__(
        self,
        *,
        tokens: Mapping[str, UserInfo] | None = None,
        allow: set[tuple[str, str, str]] | None = None,
        configmap: Mapping[str, str] | None = None,
    ) -> None:
        self.tokens = dict(tokens or {})
        self.allow = set(allow or ())
        self.token_reviews = 0
        self.access_reviews: list[Mapping[str, object]] = []
        self.down = False
        self._configmap = configmap
        self._changed = asyncio.Event()

    async def review_token(self, token: str) -> TokenReviewResult:
        self.token_reviews += 1
        if self.down:
            raise KubeUnavailable()
        user = self.tokens.get(token)
        if user is None:
            return TokenReviewResult(authenticated=False, error="invalid bearer token")
        return TokenReviewResult(authenticated=True, user=user)

    async def review_access(self, spec: Mapping[str, object]) -> AccessDecision:
        self.access_reviews.append(spec)
        if self.down:
            raise KubeUnavailable()
        attrs = spec.get("resourceAttributes") or spec.get("nonResourceAttributes")
        assert isinstance(attrs, dict)
        what = attrs.get("resource") or attrs.get("path")
        allowed = (str(spec["user"]), str(attrs["verb"]), str(what)) in self.allow
        return AccessDecision(allowed=allowed, reason="" if allowed else "no RBAC rule")

    def set_configmap(self, data: Mapping[str, str] | None) -> None:
        self._configmap = data
        self._changed.set()

    async def watch_configmap(
        self, namespace: str, name: str
    ) -> AsyncIterator[Mapping[str, str] | None]:
        assert (namespace, name) == ("kube-system", "extension-apiserver-authentication")
        while True:
            self._changed.clear()
            yield self._configmap
            await self._changed.wait()
