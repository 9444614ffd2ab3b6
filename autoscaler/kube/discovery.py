"""Which resource (plural) serves a kind in a group/version, and whether it has /scale.

Like client-go's scale client with a RESTMapper: read `/apis/<group>/<version>` (or `/api/v1`)
and find the top-level resource of that kind. Answers are cached for `ttl` seconds; a miss
refreshes once, so a CRD installed after start is found on the next pass.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from autoscaler.kube.client import KubeClient, NotFound

__all__ = ["Discovery", "ResourceRef", "group_version_path"]


@dataclass(frozen=True)
class ResourceRef:
    """A resource found by kind: its collection path and whether it has a /scale subresource."""

    api_path: str  # /api/v1 or /apis/<group>/<version>
    plural: str
    namespaced: bool
    has_scale: bool


def group_version_path(api_version: str) -> str:
    """`apps/v1` -> `/apis/apps/v1`; `v1` (the core group) -> `/api/v1`."""
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version or 'v1'}"


class Discovery:
    def __init__(
        self, kube: KubeClient, *, ttl: float = 300.0
    ) -> None:  # seconds, like a discovery cache
        self._kube = kube
        self._ttl = ttl
        self._cache: dict[str, tuple[float, list[dict[str, Any]]]] = {}

    async def find(self, api_version: str, kind: str) -> ResourceRef | None:
        """The resource serving `kind`, or None when the group/version or kind is unknown."""
        path = group_version_path(api_version)
        for fresh in (False, True):
            resources = await self._resources(path, refresh=fresh)
            found = _pick(resources, kind)
            if found is not None:
                return ResourceRef(path, *found)
        return None

    async def _resources(self, path: str, *, refresh: bool) -> list[dict[str, Any]]:
        cached = self._cache.get(path)
        if cached and not refresh and time.monotonic() - cached[0] < self._ttl:
            return cached[1]
        try:
            doc = await self._kube.request("GET", path)
        except NotFound:
            doc = {}
        resources = list(doc.get("resources") or [])
        self._cache[path] = (time.monotonic(), resources)
        return resources


def _pick(resources: list[dict[str, Any]], kind: str) -> tuple[str, bool, bool] | None:
    names = {str(r.get("name", "")) for r in resources}
    for r in resources:
        name = str(r.get("name", ""))
        if r.get("kind") == kind and "/" not in name:
            return name, bool(r.get("namespaced", True)), f"{name}/scale" in names
    return None
