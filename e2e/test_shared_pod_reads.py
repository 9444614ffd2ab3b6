"""`--share-pod-metrics` on the real path: the API server's aggregation layer, the adapter and a
real Prometheus. A namespace-wide read, cut to each target's pods, gives what the target's own
request gives; and the controller scales on shared reads as the core predicts."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from autoscaler.kube.client import KubeError
from autoscaler.kube.cluster import KubeCluster
from autoscaler.kube.sharedreads import SharedReads
from tests.controller.stack import FAST, Stack, e2e_stack, eventually, target_ref

pytestmark = [pytest.mark.e2e, pytest.mark.prometheus]
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2"
METRIC = "e2e_requests_per_pod"


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path) as s:
        yield s


def pods_metric(average: str = "10") -> dict[str, Any]:
    return {
        "type": "Pods",
        "pods": {
            "metric": {"name": METRIC},
            "target": {"type": "AverageValue", "averageValue": average},
        },
    }


async def _served_for(st: Stack, app: str, n: int) -> bool:
    path = f"{CUSTOM}/namespaces/{st.namespace}/pods/*/{METRIC}"
    try:
        doc = await st.kube.request("GET", path, query=[("labelSelector", f"app={app}")])
    except KubeError:  # the adapter is not up yet, or has not discovered the series
        return False
    return len(doc.get("items") or []) == n


def _values(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """What a decision reads of an entry, less the timestamp (each read has its own)."""
    assert "items" in entry, entry
    return [(i["describedObject"]["name"], i["value"]) for i in entry["items"]]


async def test_a_shared_read_gives_each_target_what_its_own_request_gives(stack: Stack):
    st = stack
    apps = {"sa": 1, "sb": 2, "sc": 3}
    for app, n in apps.items():
        await st.deployment(app, n)
    for app, n in apps.items():
        pods = await eventually(
            lambda a=app, k=n: _pods_if(st, a, k), timeout=15, what=f"{n} pods of {app}"
        )
        for j, p in enumerate(pods):  # a different value per pod
            labels = {"namespace": st.namespace, "pod": p["metadata"]["name"]}
            await st.write(METRIC, labels, 10.0 * len(app) + j + 0.25)
    for app, n in apps.items():
        await eventually(lambda a=app, k=n: _served_for(st, a, k), timeout=15, what=app)

    sels = [f"app={a}" for a in apps] + ["app in (sa,sc)", "app=nothing"]
    own_cluster, shared_cluster = KubeCluster(st.kube), KubeCluster(st.kube, share_pod_metrics=60)
    reads = shared_cluster.shared_reads
    assert reads is not None
    clock = [0.0]
    reads._clock = lambda: clock[0]
    try:
        own, shared = [], []
        for sel in sels:  # the first window: own reads, counted
            await own_cluster.list_pods(st.namespace, sel)
            await shared_cluster.list_pods(st.namespace, sel)
            own.append(
                await own_cluster.fetch_metric(st.namespace, pods_metric(), pod_selector=sel)
            )
            await shared_cluster.fetch_metric(st.namespace, pods_metric(), pod_selector=sel)
        clock[0] = 60.0  # the next window: namespace-wide
        for sel in sels:
            shared.append(
                await shared_cluster.fetch_metric(st.namespace, pods_metric(), pod_selector=sel)
            )
        assert reads.wide_reads == 1
        assert reads.shared == len(sels)
        assert [_values(e) for e in shared[:-1]] == [_values(e) for e in own[:-1]]
        assert [len(e["items"]) for e in shared[:3]] == list(apps.values())
        # no pod of the target: no value either way, an error entry (never a scale-down)
        assert "error" in own[-1]
        assert "items" not in own[-1]
        assert shared[-1]["reason"] == "Empty"
        assert "items" not in shared[-1]
    finally:
        await own_cluster.close()
        await shared_cluster.close()


async def _pods_if(st: Stack, app: str, n: int) -> list[dict[str, Any]] | None:
    pods = await st.pods(app)
    return pods if len(pods) == n else None


async def _feed(st: Stack, totals: dict[str, float]) -> None:
    """Each app's total spread evenly over its running pods, written every 0.3 s."""
    while True:
        for app, total in totals.items():
            pods = await st.pods(app)
            for p in pods:
                labels = {"namespace": st.namespace, "pod": p["metadata"]["name"]}
                await st.write(METRIC, labels, total / len(pods))
        await asyncio.sleep(0.3)


async def test_the_controller_scales_on_shared_reads(stack: Stack, monkeypatch):
    st = stack
    wide: list[Any] = []
    read = SharedReads.read

    async def counted(self: SharedReads, key: Any, fetch: Any) -> Any:
        wide.append(key)
        return await read(self, key, fetch)

    monkeypatch.setattr(SharedReads, "read", counted)
    # 10 per pod for pa, 5 for pb: 5 and 6 replicas. A pass given the other's pods would
    # average both apps' values and settle elsewhere (pa: 80 over 11 pods, 8 replicas)
    totals = {"pa": 50.0, "pb": 30.0}
    targets = {"pa": "10", "pb": "5"}
    for app in totals:
        await st.deployment(app, 1)
    feeder = asyncio.create_task(_feed(st, totals))
    try:
        for app in totals:
            await eventually(lambda a=app: _served_for(st, a, 1), timeout=15, what=app)
        for app in totals:
            spec = {
                "scaleTargetRef": target_ref(app),
                "minReplicas": 1,
                "maxReplicas": 10,
                "metrics": [pods_metric(targets[app])],
                "behavior": FAST,
            }
            await st.autoscaler(app, spec)
        # 1 s syncs, two Autoscalers: about four requests per 2 s window, so reads are shared
        # from the second window on
        async with st.controller(share_pod_metrics=2.0):
            for app, want in (("pa", 5), ("pb", 6)):
                await eventually(
                    lambda a=app, w=want: _replicas_are(st, a, w), timeout=30, what=f"{app}={want}"
                )
            await eventually(lambda: _sharing(wide), timeout=15, what="a namespace-wide read")
            reads = len(wide)
            totals["pa"] = 70.0  # the load moves: passes on shared reads must follow it
            await eventually(lambda: _replicas_are(st, "pa", 7), timeout=30, what="pa=7")
            await asyncio.sleep(3)  # three more passes each, on shared reads: they stay
            assert (await st.replicas("pa"), await st.replicas("pb")) == (7, 6)
            assert len(wide) > reads
    finally:
        feeder.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feeder


async def _sharing(wide: list[Any]) -> bool:
    return bool(wide)


async def _replicas_are(st: Stack, app: str, want: int) -> bool:
    return await st.replicas(app) == want
