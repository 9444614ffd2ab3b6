"""/scale is read again exactly when the target changed or the watch cannot say: a fake API
server at the KubeClient seam (LIST, WATCH, GET /scale, PUT /scale)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from autoscaler.kube.client import KubeError, KubeUnavailable
from autoscaler.kube.cluster import KubeCluster

APPS = "/apis/apps/v1"
COLLECTION = f"{APPS}/namespaces/ns/deployments"
SCALE = f"{COLLECTION}/web/scale"
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
DISCOVERY = {
    "resources": [
        {"name": "deployments", "kind": "Deployment", "namespaced": True},
        {"name": "deployments/scale", "kind": "Scale", "namespaced": True},
    ]
}


class FakeApi:
    """One Deployment `web`; `change()` bumps its resourceVersion and tells the watchers."""

    timeout = 5.0

    def __init__(self, *, list_error: KubeError | None = None) -> None:
        self.rv, self.replicas = 10, 2
        self.list_error = list_error
        self.gets = 0
        self.lists = 0
        self.watchers: list[asyncio.Queue[dict[str, Any] | Exception]] = []

    def obj(self) -> dict[str, Any]:
        meta = {"namespace": "ns", "name": "web", "resourceVersion": str(self.rv)}
        return {"metadata": meta, "spec": {"replicas": self.replicas}}

    def scale(self) -> dict[str, Any]:
        meta = {"namespace": "ns", "name": "web", "resourceVersion": str(self.rv)}
        status = {"replicas": self.replicas, "selector": "app=web"}
        return {"metadata": meta, "spec": {"replicas": self.replicas}, "status": status}

    def change(self, replicas: int) -> None:
        self.rv, self.replicas = self.rv + 1, replicas
        for q in self.watchers:
            q.put_nowait({"type": "MODIFIED", "object": self.obj()})

    def break_watches(self, error: Exception | None = None) -> None:
        for q in self.watchers:
            q.put_nowait(error or KubeUnavailable(0, "Unavailable", "connection reset"))

    async def request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        if path == APPS:
            return DISCOVERY
        if path == COLLECTION and method == "GET":
            self.lists += 1
            if self.list_error is not None:
                raise self.list_error
            return {"metadata": {"resourceVersion": str(self.rv)}, "items": [self.obj()]}
        if path == SCALE and method == "GET":
            self.gets += 1
            return self.scale()
        if path == SCALE and method == "PUT":
            self.change(int(kw["body"]["spec"]["replicas"]))
            return self.scale()
        raise AssertionError(f"unexpected {method} {path}")

    async def watch(self, path: str, **kw: Any) -> AsyncIterator[dict[str, Any]]:
        q: asyncio.Queue[dict[str, Any] | Exception] = asyncio.Queue()
        self.watchers.append(q)
        try:
            while True:
                item = await q.get()
                if isinstance(item, Exception):
                    raise item
                yield item
        finally:
            self.watchers.remove(q)


async def settle() -> None:
    for _ in range(5):  # let the informer's task list, watch and apply what is queued
        await asyncio.sleep(0.01)


async def test_unchanged_target_is_read_once() -> None:
    api = FakeApi()
    cluster = KubeCluster(api)  # type: ignore[arg-type]
    try:
        await cluster.get_scale("ns", REF)  # starts the watch; read
        await settle()
        scales = [await cluster.get_scale("ns", REF) for _ in range(3)]
        assert api.gets == 1  # read once, then vouched for by the watch
        assert {s.replicas for s in scales} == {2}
    finally:
        await cluster.close()


@pytest.mark.parametrize(
    ("act", "reads", "replicas"),
    [
        pytest.param(lambda api, c: api.change(5), 1, 5, id="target-changed"),
        pytest.param(lambda api, c: api.break_watches(), 1, 2, id="watch-broken"),
    ],
)
async def test_read_again_when_the_cache_cannot_vouch(act: Any, reads: int, replicas: int) -> None:
    api = FakeApi()
    cluster = KubeCluster(api)  # type: ignore[arg-type]
    try:
        await cluster.get_scale("ns", REF)
        await settle()
        await cluster.get_scale("ns", REF)
        before = api.gets
        act(api, cluster)
        await settle()
        assert (await cluster.get_scale("ns", REF)).replicas == replicas
        assert api.gets - before == reads
    finally:
        await cluster.close()


async def test_own_write_is_the_next_scale_once_the_watch_shows_it() -> None:
    api = FakeApi()
    cluster = KubeCluster(api)  # type: ignore[arg-type]
    try:
        await settle()
        scale = await cluster.get_scale("ns", REF)
        await cluster.update_scale(scale, 4)
        await settle()
        before = api.gets
        assert (await cluster.get_scale("ns", REF)).replicas == 4
        assert api.gets == before  # the PUT's answer, vouched for by the watch
    finally:
        await cluster.close()


@pytest.mark.parametrize(
    "cluster_kw",
    [
        pytest.param({"cache_scales": False}, id="cache-off"),
        pytest.param({}, id="list-forbidden"),
    ],
)
async def test_every_pass_reads_without_a_watch(cluster_kw: dict[str, Any]) -> None:
    api = FakeApi(list_error=KubeError(403, "Forbidden", "deployments is forbidden"))
    cluster = KubeCluster(api, **cluster_kw)  # type: ignore[arg-type]
    try:
        for _ in range(3):
            await cluster.get_scale("ns", REF)
            await settle()
        assert api.gets == 3
    finally:
        await cluster.close()
