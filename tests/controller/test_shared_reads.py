"""`--share-pod-metrics`: Pods metrics read namespace-wide once per window and shared.

A fake API server at the KubeClient seam holds pods (LIST and WATCH, for the pod cache) and
answers the custom metrics API as an adapter does: `pods/*/{metric}` gives the pods the
`labelSelector` matches (all of the namespace without one) that have a value, by name. Every
entry a pass gets with sharing on must equal the one it gets with sharing off.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoscaler.kube.client import KubeUnavailable
from autoscaler.kube.cluster import KubeCluster
from autoscaler.kube.sharedreads import PODS_PER_REQUEST, SharedReads
from common.selectors import parse_selector

PODS = "/api/v1/namespaces/ns/pods"
METRIC = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/rps"


def pods_metric(selector: dict[str, Any] | None = None) -> dict[str, Any]:
    metric: dict[str, Any] = {"name": "rps"}
    if selector is not None:
        metric["selector"] = selector
    return {"type": "Pods", "pods": {"metric": metric, "target": {"type": "AverageValue"}}}


class FakeApi:
    """Pods with labels, and each pod's value of `rps` (absent: no series for that pod)."""

    timeout = 5.0

    def __init__(self, pods: dict[str, dict[str, str]], values: dict[str, str]) -> None:
        self.pods, self.values = pods, values
        self.metric_calls: list[list[tuple[str, str]]] = []
        self.fail: Exception | None = None
        self.hold: asyncio.Event | None = None  # set: answers wait for it

    def _pod(self, name: str) -> dict[str, Any]:
        meta = {"namespace": "ns", "name": name, "labels": self.pods[name]}
        return {"metadata": {**meta, "resourceVersion": "1"}, "status": {"phase": "Running"}}

    async def request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        query = list(kw.get("query") or ())
        if path == PODS:
            items = [self._pod(n) for n in sorted(self.pods)]
            return {"metadata": {"resourceVersion": "1"}, "items": items}
        if path == METRIC:
            self.metric_calls.append(query)
            if self.hold is not None:
                await self.hold.wait()
            if self.fail is not None:
                raise self.fail
            params = dict(query)
            sel = parse_selector(params.get("labelSelector", ""))
            items = [
                {
                    "describedObject": {"kind": "Pod", "namespace": "ns", "name": n},
                    "metric": {"name": "rps"},
                    "timestamp": "2026-12-02T00:00:00Z",
                    "value": self.values[n],
                }
                for n in sorted(self.pods)
                if n in self.values and sel.matches(self.pods[n])
            ]
            return {"kind": "MetricValueList", "items": items}
        raise AssertionError(f"unexpected {method} {path}")

    async def watch(self, path: str, **kw: Any) -> AsyncIterator[dict[str, Any]]:
        await asyncio.Event().wait()  # nothing changes
        yield {}


async def passes(cluster: KubeCluster, selectors: list[str]) -> list[dict[str, Any]]:
    """One pass each, as the reconciler makes it: the pods first, then the metric."""
    out = []
    for sel in selectors:
        await cluster.list_pods("ns", sel)
        out.append(await cluster.fetch_metric("ns", pods_metric(), pod_selector=sel))
    return out


def sharing(api: FakeApi, window: float) -> tuple[KubeCluster, list[float]]:
    """A cluster with shared reads on, and the clock its windows are counted by (seconds)."""
    clock = [0.0]
    cluster = KubeCluster(api, share_pod_metrics=window)  # type: ignore[arg-type]
    assert cluster.shared_reads is not None
    cluster.shared_reads._clock = lambda: clock[0]
    return cluster, clock


def web_api(n: int = 10) -> FakeApi:
    pods = {f"p{i}": {"app": f"a{i % 3}"} for i in range(n)}
    return FakeApi(pods, {f"p{i}": str(i) for i in range(n) if i != 4})


async def test_off_by_default_every_pass_sends_its_own_selector() -> None:
    api = web_api()
    cluster = KubeCluster(api)  # type: ignore[arg-type]
    try:
        await passes(cluster, ["app=a0"] * 5)
        assert cluster.shared_reads is None
        assert api.metric_calls == [[("labelSelector", "app=a0")]] * 5
    finally:
        await cluster.close()


async def test_a_busy_metric_is_read_once_per_window_and_each_pass_keeps_its_pods() -> None:
    api = web_api()
    cluster, clock = sharing(api, 5.0)
    try:
        sels = ["app=a0", "app=a1", "app=a2"]
        own = await passes(cluster, sels)  # first window: nothing seen before, own reads
        assert [dict(q) for q in api.metric_calls] == [{"labelSelector": s} for s in sels]
        clock[0] = 5.0  # the next window: the one before saw 3 requests
        api.metric_calls.clear()
        shared = await passes(cluster, sels * 2)
        assert api.metric_calls == [[]]  # one read, no pod selector
        assert shared == own * 2
        names = {i["describedObject"]["name"] for i in shared[0]["items"]}
        assert names == {"p0", "p3", "p6", "p9"}
        clock[0] = 10.5  # the answer is a window old: read again
        await passes(cluster, sels)
        assert api.metric_calls == [[], []]
        r = cluster.shared_reads
        assert (r.own, r.shared, r.wide_reads) == (3, 9, 2)
    finally:
        await cluster.close()


async def test_a_lone_autoscaler_or_a_big_namespace_keeps_reading_its_own_pods() -> None:
    api = web_api(n=5 * PODS_PER_REQUEST + 1)  # more pods than 5 requests justify
    cluster, clock = sharing(api, 1.0)
    try:
        for t in range(4):  # one request a window: never shared
            clock[0] = float(t)
            await passes(cluster, ["app=a0"])
        assert all(q == [("labelSelector", "app=a0")] for q in api.metric_calls)
        clock[0] = 10.0
        await passes(cluster, ["app=a1"] * 5)  # 5 requests in a window ...
        clock[0] = 11.0
        api.metric_calls.clear()
        await passes(cluster, ["app=a1"])  # ... but 5 * 100 < 501 pods: still its own
        assert api.metric_calls == [[("labelSelector", "app=a1")]]
        clock[0] = 12.0
        await passes(cluster, ["app=a1"] * 6)
        clock[0] = 13.0
        api.metric_calls.clear()
        await passes(cluster, ["app=a1"])  # 6 * 100 >= 501: namespace-wide
        assert api.metric_calls == [[]]
    finally:
        await cluster.close()


async def test_a_failed_read_fails_its_waiters_and_is_not_kept() -> None:
    api = web_api()
    cluster, clock = sharing(api, 5.0)
    try:
        await passes(cluster, ["app=a0", "app=a1"])
        clock[0] = 5.0
        api.fail = KubeUnavailable(0, "Unavailable", "adapter gone")
        api.hold = asyncio.Event()
        for sel in ("app=a0", "app=a1"):
            await cluster.list_pods("ns", sel)
        waiting = [
            asyncio.create_task(cluster.fetch_metric("ns", pods_metric(), pod_selector=s))
            for s in ("app=a0", "app=a1", "app=a2")
        ]
        await asyncio.sleep(0.01)
        api.hold.set()
        entries = await asyncio.gather(*waiting)
        assert len(api.metric_calls) == 3  # the two own reads, then one shared
        assert all(e["error"] == "adapter gone" for e in entries)  # a failure, never a value
        api.fail = None
        again = await passes(cluster, ["app=a0"])  # the same window: asked again
        assert len(api.metric_calls) == 4
        assert "items" in again[0]
    finally:
        await cluster.close()


async def test_a_pass_that_gives_up_does_not_cancel_the_shared_read() -> None:
    reads = SharedReads(5.0)
    gate = asyncio.Event()
    calls = 0

    async def fetch() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        await gate.wait()
        return {"items": [1]}

    first = asyncio.create_task(reads.read("k", fetch))
    second = asyncio.create_task(reads.read("k", fetch))
    await asyncio.sleep(0.01)
    first.cancel()
    gate.set()
    assert await second == {"items": [1]}
    assert calls == 1
    with pytest.raises(asyncio.CancelledError):
        await first


def test_the_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        SharedReads(0)


LABELS = st.dictionaries(
    st.sampled_from(["app", "tier", "env"]), st.sampled_from(["a", "b", "c"]), max_size=3
)
SELECTORS = st.lists(
    st.sampled_from(["", "app=a", "app!=b", "tier in (a,b)", "env", "!env", "app=a,tier=b"]),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pods=st.dictionaries(st.sampled_from([f"p{i}" for i in range(20)]), LABELS, max_size=20),
    with_values=st.sets(st.sampled_from([f"p{i}" for i in range(20)])),
    selectors=SELECTORS,
)
def test_shared_answers_equal_own_answers(
    pods: dict[str, dict[str, str]], with_values: set[str], selectors: list[str]
) -> None:
    values = {n: f"{len(n)}{n[1:]}m" for n in with_values}

    async def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[list[Any]]]:
        own_api, shared_api = FakeApi(pods, values), FakeApi(pods, values)
        own = KubeCluster(own_api)  # type: ignore[arg-type]
        shared, clock = sharing(shared_api, 60.0)
        try:
            await passes(shared, [*selectors, "", ""])  # a window with enough requests
            clock[0] = 60.0
            return (
                await passes(own, selectors),
                await passes(shared, selectors),
                shared_api.metric_calls,
            )
        finally:
            await own.close()
            await shared.close()

    own, shared, calls = asyncio.run(run())
    assert shared == own
    assert calls[-1] == []  # answered namespace-wide


async def test_metric_selector_is_part_of_the_key() -> None:
    api = web_api()
    cluster, clock = sharing(api, 5.0)
    sel = {"matchLabels": {"verb": "GET"}}
    try:
        for metric in (pods_metric(), pods_metric(sel)) * 2:
            await cluster.list_pods("ns", "app=a0")
            await cluster.fetch_metric("ns", metric, pod_selector="app=a0")
        clock[0] = 5.0
        api.metric_calls.clear()
        for metric in (pods_metric(), pods_metric(sel)) * 2:
            await cluster.fetch_metric("ns", metric, pod_selector="app=a0")
        assert api.metric_calls == [[], [("metricLabelSelector", "verb=GET")]]
    finally:
        await cluster.close()
