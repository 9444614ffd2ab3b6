"""The only code in the adapter that talks to Kubernetes (kubernetes-asyncio's ApiClient).

- `KubeObjects`: object names by label selector (the provider's `ObjectLister`), from one
  watch-backed cache per resource actually requested (LIST, then WATCH from its
  resourceVersion, relist on 410 Gone) into an `adapter.objectstore.ObjectStore`; and a
  `ResourceResolver` over the cluster's discovery, refreshed every minute and, on a miss, at
  most every 10 s, so a CRD installed after start-up resolves.
- `KubeAuth` (`adapter.kubeauth`): TokenReview and SubjectAccessReview creation, and
  following a ConfigMap (`adapter.auth.follow.AuthBackend`); LIST and WATCH are
  `adapter.kubewatch`.

Every failure to reach the API becomes `adapter.errors.KubeUnavailable`, raised from its cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import aiohttp
from kubernetes_asyncio import client as kclient
from kubernetes_asyncio import config as kconfig

from adapter.errors import BadRequest, KubeUnavailable
from adapter.kubewatch import REQUEST_TIMEOUT, Gone, list_and_watch
from adapter.objectstore import ObjectStore
from adapter.rules.podnames import PodLineage
from adapter.rules.resources import (
    STATIC_RESOLVER,
    GroupResource,
    ResourceInfo,
    StaticResolver,
)
from common.selectors import Selector

log = logging.getLogger(__name__)
_T = TypeVar("_T")

SYNC_WAIT = 5.0  # seconds a first request waits for a new cache to sync before a 503
DISCOVERY_PERIOD = 60.0  # seconds between discovery refreshes
DISCOVERY_MISS_PERIOD = 10.0  # at most one refresh per this many seconds on unknown names
_METADATA_ACCEPT = (
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)


class KubeClient:
    """One ApiClient from a kubeconfig file (or in-cluster config), created on first use."""

    def __init__(self, kubeconfig: str = "") -> None:
        self._kubeconfig = kubeconfig
        self._api: kclient.ApiClient | None = None
        self._lock = asyncio.Lock()

    async def api(self) -> Any:
        async with self._lock:
            if self._api is None:
                self._api = await self._create()
            return self._api

    async def _create(self) -> Any:
        configuration = kclient.Configuration()
        try:
            if self._kubeconfig:
                await kconfig.load_kube_config(
                    config_file=self._kubeconfig, client_configuration=configuration
                )
            else:
                kconfig.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except (kconfig.ConfigException, OSError, ValueError) as exc:
            where = self._kubeconfig or "in-cluster configuration"
            raise KubeUnavailable(f"cannot load Kubernetes client configuration ({where})") from exc
        return kclient.ApiClient(configuration)

    async def close(self) -> None:
        if self._api is not None:
            await self._api.close()
            self._api = None

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Mapping[str, Any] | None = None,
        accept: str = "application/json",
        request_timeout: float | aiohttp.ClientTimeout = REQUEST_TIMEOUT,
    ) -> aiohttp.ClientResponse:
        """A raw response (the caller reads and releases it); errors become KubeUnavailable."""
        api = await self.api()
        try:
            response: aiohttp.ClientResponse = await api.call_api(
                path,
                method,
                query_params=query or [],
                header_params={"Accept": accept, "Content-Type": "application/json"},
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=request_timeout,
            )
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise KubeUnavailable() from exc
        return response

    async def json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """The JSON body of a 2xx answer; 410 raises Gone, other codes KubeUnavailable."""
        response = await self.request(method, path, **kwargs)
        try:
            data = await response.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise KubeUnavailable() from exc
        finally:
            response.release()
        if response.status == 410:
            raise Gone()
        if not 200 <= response.status < 300:
            log.warning("Kubernetes API %s %s answered %d", method, path, response.status)
            raise KubeUnavailable(f"the Kubernetes API answered {response.status}")
        try:
            decoded: dict[str, Any] = json.loads(data)
        except ValueError as exc:
            raise KubeUnavailable("the Kubernetes API sent malformed JSON") from exc
        return decoded


class _ObjectCache:
    """One resource's `ObjectStore`, kept current by a list-watch task."""

    def __init__(self, kube: KubeClient, info: ResourceInfo) -> None:
        self.info = info
        self._kube = kube
        self.store = ObjectStore()
        self.synced = asyncio.Event()
        self.task = asyncio.create_task(self._run(), name=f"watch-{info.group_resource}")

    @property
    def path(self) -> str:
        # api_version is "v1" for the core group (under /api) and "apps/v1" for others
        prefix = "/apis" if self.info.group_resource.group else "/api"
        return f"{prefix}/{self.info.api_version}/{self.info.group_resource.resource}"

    async def _run(self) -> None:
        async for kind, obj in list_and_watch(
            self._kube, self.path, query=[], accept=_METADATA_ACCEPT
        ):
            if kind == "SYNC":
                self.store.replace(obj["items"])
                self.synced.set()
            else:
                self.store.apply(kind, obj)


class KubeObjects:
    """`ObjectLister` and `ResourceResolver` backed by the cluster."""

    def __init__(
        self,
        kube: KubeClient,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_objects: int = 10_000,  # objects one wildcard request may cover (Limits.max_objects)
        sync_wait: float = SYNC_WAIT,  # seconds a first request waits for a new cache
    ) -> None:
        self._kube = kube
        self._max_objects = max_objects
        self._sync_wait = sync_wait
        self._clock = clock
        self._caches: dict[GroupResource, _ObjectCache] = {}
        self._resolver: StaticResolver | None = None
        self._last_discovery = -1e18
        self._discovery_task: asyncio.Task[None] | None = None
        self._refreshing: asyncio.Task[None] | None = None

    async def names(
        self, info: ResourceInfo, *, namespace: str | None, selector: Selector
    ) -> list[str]:
        cache = await self._synced(info)
        return self._bounded(
            info, cache.store.names(namespace if info.namespaced else None, selector)
        )

    async def objects(
        self, info: ResourceInfo, *, namespace: str | None, selector: Selector
    ) -> list[tuple[str, str, Mapping[str, str]]]:
        """(namespace, name, labels) of the matching objects (resource metrics need all three)."""
        cache = await self._synced(info)
        return self._bounded(
            info, cache.store.objects(namespace if info.namespaced else None, selector)
        )

    async def lineage(
        self, info: ResourceInfo, *, namespace: str, selector: Selector
    ) -> list[PodLineage]:
        """The matching objects of a namespaced resource (pods), each with where its name came
        from: generateName, controller and pod-template-hash (`adapter.rules.podnames`)."""
        cache = await self._synced(info)
        return self._bounded(info, cache.store.lineage(namespace, selector))

    async def _synced(self, info: ResourceInfo) -> _ObjectCache:
        cache = self._caches.get(info.group_resource)
        if cache is None or cache.task.done():
            cache = self._caches[info.group_resource] = _ObjectCache(self._kube, info)
        if not cache.synced.is_set():
            try:
                await asyncio.wait_for(asyncio.shield(cache.synced.wait()), self._sync_wait)
            except TimeoutError as exc:
                raise KubeUnavailable() from exc
        return cache

    def _bounded(self, info: ResourceInfo, found: list[_T]) -> list[_T]:
        if len(found) > self._max_objects:
            raise BadRequest(
                f"the labelSelector matches {len(found)} {info.group_resource}, more than "
                f"{self._max_objects}: narrow it"
            )
        return found

    # --- discovery -----------------------------------------------------------------------

    def resolve(self, name: str, group: str = "") -> ResourceInfo | None:
        info = self._resolver.resolve(name, group) if self._resolver else None
        if info is None:
            now = self._clock()
            if now - self._last_discovery >= DISCOVERY_MISS_PERIOD and not self._refresh_running():
                # a CRD installed after the last refresh: look again, answer from the fallback now
                self._schedule_refresh()
            info = STATIC_RESOLVER.resolve(name, group)
        return info

    def _schedule_refresh(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # resolved outside the event loop (rule loading): the periodic refresh will do
        self._refreshing = loop.create_task(self._quiet_refresh(), name="discovery-on-miss")

    async def _quiet_refresh(self) -> None:
        with contextlib.suppress(KubeUnavailable):
            await self.refresh_discovery()

    def _refresh_running(self) -> bool:
        return self._refreshing is not None and not self._refreshing.done()

    async def start(self) -> None:
        """Read discovery once (errors logged) and refresh it every DISCOVERY_PERIOD."""
        with contextlib.suppress(KubeUnavailable):
            await self.refresh_discovery()
        if self._discovery_task is None:
            self._discovery_task = asyncio.create_task(self._discovery_loop(), name="discovery")

    async def _discovery_loop(self) -> None:
        while True:
            await asyncio.sleep(DISCOVERY_PERIOD)
            with contextlib.suppress(KubeUnavailable):
                await self.refresh_discovery()

    async def refresh_discovery(self) -> None:
        """Re-read the cluster's served resources; KubeUnavailable keeps the previous table."""
        self._last_discovery = self._clock()
        try:
            infos = await discover_resources(self._kube)
        except KubeUnavailable as exc:
            log.warning("resource discovery failed: %s", exc)
            raise
        self._resolver = StaticResolver(tuple(infos))

    async def close(self) -> None:
        tasks = [c.task for c in self._caches.values()]
        tasks += [t for t in (self._discovery_task, self._refreshing) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, KubeUnavailable):
                await task
        self._caches.clear()

    def cached_objects(self) -> int:
        """Objects held across all caches (for self-metrics and memory checks)."""
        return sum(cache.store.size() for cache in self._caches.values())


async def discover_resources(kube: KubeClient) -> list[ResourceInfo]:
    """Every served top-level resource in its group's preferred version (core first)."""
    infos = _resources(await kube.json("GET", "/api/v1"), group="", version="v1")
    groups = await kube.json("GET", "/apis")
    for group in groups.get("groups") or []:
        preferred = (group.get("preferredVersion") or {}).get("version")
        name = group.get("name", "")
        if not preferred or not name:
            continue
        try:
            listing = await kube.json("GET", f"/apis/{name}/{preferred}")
        except KubeUnavailable:
            # one broken aggregated API (often our own, while starting) must not hide the rest
            log.info("discovery of %s/%s failed; skipping it", name, preferred)
            continue
        infos += _resources(listing, group=name, version=preferred)
    return infos


def _resources(listing: Mapping[str, Any], *, group: str, version: str) -> list[ResourceInfo]:
    out = []
    for res in listing.get("resources") or []:
        plural = res.get("name", "")
        if not plural or "/" in plural:  # subresources such as pods/status
            continue
        kind = res.get("kind", "")
        out.append(
            ResourceInfo(
                group_resource=GroupResource(group, plural),
                version=version,
                kind=kind,
                singular=res.get("singularName") or kind.lower(),
                namespaced=bool(res.get("namespaced")),
            )
        )
    return out
