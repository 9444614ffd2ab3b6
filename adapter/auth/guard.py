"""The `RequestGuard` the server calls for every request: authenticate, then authorize.

Denials are answered as upstream does (401 `Unauthorized`; 403 with the "User X cannot get
resource ..." message) and logged once per (user, verb, path) and code within a window, with
the user, verb and path only: never a token, a certificate or a header value.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Protocol

from aiohttp import web

from adapter.auth.attributes import (
    Attributes,
    forbidden_details,
    forbidden_message,
    request_attributes,
)
from adapter.auth.authn import AuthenticationFailed, Authenticator
from adapter.auth.authn_config import DynamicAuthnConfig
from adapter.auth.authz import AlwaysAllowPaths, Authorizer
from adapter.auth.cache import Clock
from adapter.errors import Forbidden, ServiceUnavailable, StatusError
from adapter.server.auth_seam import ANONYMOUS, UserInfo

log = logging.getLogger(__name__)


def peer_certificate(request: web.Request) -> bytes | None:
    """DER of the client certificate the TLS layer verified, if the client sent one."""
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    return bytes(der) if der else None


class Service(Protocol):
    """Something the guard runs while it serves (following the ConfigMap, reloading files)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class DenialLog:
    """Logs each distinct denial once per `window` seconds, so a retry loop cannot flood logs."""

    def __init__(self, *, clock: Clock, window: float = 60.0, max_entries: int = 4096) -> None:
        self._clock = clock
        self._window = window
        self._max = max_entries
        self._seen: OrderedDict[tuple[int, str, str, str], float] = OrderedDict()

    def denied(self, code: int, user: str, verb: str, path: str, why: str) -> None:
        key = (code, user, verb, path)
        now = self._clock()
        last = self._seen.get(key)
        if last is not None and now - last < self._window:
            return
        self._seen[key] = now
        self._seen.move_to_end(key)
        while len(self._seen) > self._max:
            self._seen.popitem(last=False)
        log.warning("denied %d: user=%r verb=%s path=%r: %s", code, user, verb, path, why)


class DelegatingGuard:
    """Authentication and authorization delegated to the cluster (TokenReview, SAR)."""

    def __init__(
        self,
        *,
        authenticator: Authenticator,
        authorizer: Authorizer | None,  # None: --authorization-mode=AlwaysAllow
        always_allow: AlwaysAllowPaths,
        config: DynamicAuthnConfig,
        services: tuple[Service, ...] = (),  # started with the guard: ConfigMap, file reloads
        clock: Clock,
    ) -> None:
        self._authn = authenticator
        self._authz = authorizer
        self._always_allow = always_allow
        self._config = config
        self._services = services
        self._denials = DenialLog(clock=clock)

    async def start(self) -> None:
        """Start following the ConfigMap and CA files; ConfigError if the ConfigMap is needed
        and cannot be read (see ConfigMapFollower.start)."""
        started: list[Service] = []
        try:
            for service in self._services:
                await service.start()
                started.append(service)
        except BaseException:
            for service in reversed(started):  # a failed start leaves nothing running
                await service.stop()
            raise

    async def close(self) -> None:
        for service in reversed(self._services):
            await service.stop()

    def client_cas(self) -> bytes | None:
        """PEM of the CAs whose client certificates TLS should request (the TLS seam)."""
        return self._config.client_cas()

    @property
    def client_cas_generation(self) -> int:
        """Bumped whenever `client_cas()` may have changed."""
        return self._config.generation

    async def admit(self, request: web.Request) -> UserInfo:
        path = request.path
        attrs = request_attributes(request.method, path, request.query)
        if not attrs.is_resource and self._always_allow.allows(path):
            # health probes carry no credentials: upstream's path authorizer admits them
            return ANONYMOUS
        try:
            user = await self._authn.authenticate(request.headers, peer_certificate(request))
        except AuthenticationFailed as exc:
            self._denials.denied(401, "", attrs.verb, path, exc.why)
            raise
        if self._authz is not None:
            await self._authorize(self._authz, user, attrs)
        return user

    async def _authorize(self, authz: Authorizer, user: UserInfo, attrs: Attributes) -> None:
        try:
            decision = await authz.authorize(user, attrs)
        except StatusError as exc:
            log.error("authorization check failed for %s %s: %s", attrs.verb, attrs.path, exc)
            raise ServiceUnavailable(
                "the authorization check could not be made: the Kubernetes API is unavailable"
            ) from exc
        if not decision.allowed:
            self._denials.denied(403, user.name, attrs.verb, attrs.path, decision.reason or "-")
            raise Forbidden(
                forbidden_message(user.name, attrs, decision.reason),
                details=forbidden_details(attrs),
            )
