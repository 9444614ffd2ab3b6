"""Who is calling: k8s.io/apiserver's delegating authenticator, in the same order.

1. Front proxy (`requestheader.go`): a client certificate issued by the request-header CA, with
   a CN in the allowed names, makes the user, groups and extras of the configured headers
   trusted. Without such a certificate the headers are ignored: they are never a credential.
2. Client certificate (`x509.go`) issued by the client CA: user = CN, groups = O.
3. Bearer token: a TokenReview, cached for the token TTL (answers only, not errors).
4. Nobody: `system:anonymous` in `system:unauthenticated`, unless anonymous auth is off.

A credential that was presented but did not verify (a certificate of the wrong CN, a token the
cluster rejects) is a 401 even with anonymous auth on, as upstream's FailOnError union does;
every authenticated user also gets `system:authenticated` (AuthenticatedGroupAdder).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Protocol
from urllib.parse import unquote

from adapter.auth.authn_config import DynamicAuthnConfig, RequestHeaderConfig
from adapter.auth.cache import Clock, TTLCache
from adapter.auth.certs import CertificateError
from adapter.errors import StatusError, Unauthorized
from adapter.server.auth_seam import ANONYMOUS, UserInfo

log = logging.getLogger(__name__)

AUTHENTICATED_GROUP = "system:authenticated"


@dataclass(frozen=True)
class TokenReviewResult:
    """The cluster's verdict on a bearer token (TokenReview status)."""

    authenticated: bool
    user: UserInfo | None = None
    error: str = ""  # the reviewer's reason for rejecting; safe to log, never holds the token


class TokenReviewer(Protocol):
    """Creates TokenReviews (authentication.k8s.io/v1) in the cluster."""

    async def review_token(self, token: str) -> TokenReviewResult:
        """The cluster's verdict; raises adapter.errors.KubeUnavailable if none could be had."""
        ...


class AuthenticationFailed(Unauthorized):
    """401 with upstream's body; `why` is for the log only."""

    def __init__(self, why: str) -> None:
        super().__init__("Unauthorized")
        self.why = why


class Authenticator:
    """Turns a request's credentials into a user, or raises AuthenticationFailed (401)."""

    def __init__(
        self,
        *,
        config: DynamicAuthnConfig,
        tokens: TokenReviewer | None,
        token_ttl: float,  # seconds a TokenReview answer is reused; upstream's default is 10
        anonymous: bool,
        clock: Clock,
        wall_clock: Callable[[], datetime],
    ) -> None:
        self._config = config
        self._tokens = tokens
        self._anonymous = anonymous
        self._now = wall_clock
        self._token_cache: TTLCache[bytes, TokenReviewResult] = TTLCache(
            ttl=lambda _result: token_ttl, clock=clock
        )

    async def authenticate(self, headers: _Headers, peer_certificate: bytes | None) -> UserInfo:
        """The user; `headers` is the request's multidict of headers."""
        errors: list[str] = []
        if peer_certificate is not None:
            user = self._from_certificate(headers, peer_certificate, errors)
            if user is not None:
                return _with_authenticated_group(user)
        token = _bearer_token(headers.get("Authorization"), errors)
        if token is not None:
            user = await self._from_token(token, errors)
            if user is not None:
                return _with_authenticated_group(user)
        if errors:
            raise AuthenticationFailed("; ".join(errors))
        if self._anonymous:
            return ANONYMOUS
        raise AuthenticationFailed("no credentials and anonymous authentication is off")

    def _from_certificate(
        self, headers: _Headers, der: bytes, errors: list[str]
    ) -> UserInfo | None:
        now = self._now()
        front_proxy = self._config.front_proxy_verifier
        request_header = self._config.config.request_header
        if front_proxy is not None and request_header is not None:
            try:
                identity = front_proxy.verify(der, now=now)
            except CertificateError as exc:
                errors.append(f"front-proxy certificate: {exc}")
            else:
                allowed = request_header.allowed_names
                if allowed and identity.common_name not in allowed:
                    errors.append("front-proxy certificate: CN not in the allowed names")
                else:
                    return _from_headers(headers, request_header)
        client = self._config.client_verifier
        if client is not None:
            try:
                identity = client.verify(der, now=now)
            except CertificateError as exc:
                errors.append(f"client certificate: {exc}")
            else:
                if identity.common_name:
                    return UserInfo(name=identity.common_name, groups=identity.organizations)
        return None

    async def _from_token(self, token: str, errors: list[str]) -> UserInfo | None:
        if self._tokens is None:
            errors.append("bearer token: token authentication is not configured")
            return None
        tokens = self._tokens
        # the cache is keyed by a digest, so no token is kept in memory longer than a request
        key = hashlib.sha256(token.encode()).digest()
        try:
            result = await self._token_cache.get(key, lambda: tokens.review_token(token))
        except StatusError as exc:
            errors.append(f"bearer token: the token review failed: {exc.message}")
            return None
        if result.authenticated and result.user is not None:
            return result.user
        errors.append(f"bearer token: rejected: {result.error or 'not authenticated'}")
        return None


class _Headers(Protocol):
    def get(self, key: str, /) -> str | None: ...

    def getall(self, key: str, default: list[str], /) -> list[str]: ...

    def keys(self) -> object: ...

    def items(self) -> object: ...


def _from_headers(headers: _Headers, config: RequestHeaderConfig) -> UserInfo | None:
    """The user a trusted front proxy names in its headers; None when it names nobody."""
    name = ""
    for header in config.username_headers:
        name = (headers.get(header.strip()) or "") if header.strip() else ""
        if name:
            break
    if not name:
        return None
    groups = tuple(
        value for header in config.group_headers for value in headers.getall(header, []) if value
    )
    uid = next((v for h in config.uid_headers if h.strip() and (v := headers.get(h.strip()))), "")
    extra = _extra(headers, config.extra_prefixes)
    return UserInfo(name=name, groups=groups, extra=extra, uid=uid)


def _extra(headers: _Headers, prefixes: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    extra: dict[str, list[str]] = {}
    lowered = [p.lower() for p in prefixes if p]
    for key, value in headers.items():  # type: ignore[attr-defined]
        low = str(key).lower()
        for prefix in lowered:
            if low.startswith(prefix) and len(low) > len(prefix):
                # keys are percent-encoded on the wire (upstream unescapeExtraKey)
                extra.setdefault(unquote(low[len(prefix) :]), []).append(str(value))
    return MappingProxyType({k: tuple(v) for k, v in extra.items()})


def _bearer_token(header: str | None, errors: list[str]) -> str | None:
    """The token of `Authorization: Bearer <token>`; other schemes are not ours to judge."""
    if header is None:
        return None
    parts = header.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    token = parts[1]
    if not token or len(parts) > 2:  # upstream ignores a third part; we refuse it
        errors.append("bearer token: malformed Authorization header")
        return None
    return token


def _with_authenticated_group(user: UserInfo) -> UserInfo:
    special = (AUTHENTICATED_GROUP, "system:unauthenticated")
    if user.name == ANONYMOUS.name or any(g in special for g in user.groups):
        return user
    return UserInfo(
        name=user.name, groups=(*user.groups, AUTHENTICATED_GROUP), extra=user.extra, uid=user.uid
    )
