"""The authentication/authorization seam between the server and `adapter.auth`.

The server calls `RequestGuard.admit` from one middleware for every request; the guard decides
everything, including which paths are always allowed (`/healthz`, `/livez`, `/readyz`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from aiohttp import web


@dataclass(frozen=True)
class UserInfo:
    """Who made a request, as authenticated (user.Info in the Kubernetes API server)."""

    name: str
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    uid: str = ""


ANONYMOUS = UserInfo(name="system:anonymous", groups=("system:unauthenticated",))


class RequestGuard(Protocol):
    """Authenticates and authorizes requests."""

    async def admit(self, request: web.Request) -> UserInfo:
        """Return the request's user when it may proceed.

        Raise `adapter.errors.Unauthorized` (401) when it cannot be authenticated and
        `adapter.errors.Forbidden` (403) when it is not allowed; any other StatusError (e.g.
        503 when a TokenReview cannot be made) is rendered as-is. Paths that are always
        allowed are decided here too.
        """
        ...


class AlwaysAllow:
    """Admits everything as system:anonymous (the --authorization-mode AlwaysAllow of tests)."""

    async def admit(self, request: web.Request) -> UserInfo:
        return ANONYMOUS


ALLOW_ALL: RequestGuard = AlwaysAllow()
