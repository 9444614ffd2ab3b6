"""Busy-aware scale-in on the sandbox with a real Prometheus and the adapter: five pods, three
busy (a Pods metric through the custom metrics API), the queue drops so the target goes 5 -> 3,
and the ReplicaSet deletes exactly the two idle pods. With the ranking metric failing, the
scale-down still happens and no pod is annotated."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from autoscaler.kube import KubeError
from tests.controller.stack import FAST, Stack, e2e_stack, eventually, external_metric, target_ref

pytestmark = [pytest.mark.e2e, pytest.mark.prometheus]
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2"
COST = "controller.kubernetes.io/pod-deletion-cost"
BUSY_METRIC = "e2e_requests_per_pod"  # in-flight requests per pod, here (the stack's Pods rule)


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path) as s:
        yield s


def spec(name: str, metric: str) -> dict:
    return {
        "scaleTargetRef": target_ref(name),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [external_metric(name)],  # the scaling metric: the queue, 10 per pod
        "behavior": {
            **FAST,
            "scaleDown": {
                **FAST["scaleDown"],
                "stabilizationWindowSeconds": 0,
                "podDeletionCost": {"metric": {"name": metric}},
            },
        },
    }


async def ready_pods(st: Stack, name: str, n: int) -> list[dict]:
    async def check() -> list[dict] | None:
        pods = await st.pods(name)
        ready = [p for p in pods if _ready(p)]
        return ready if len(pods) == n and len(ready) == n else None

    return await eventually(check, timeout=15, what=f"{n} ready pods")


def _ready(pod: dict) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


@contextlib.asynccontextmanager
async def feeding(st: Stack, load: dict[str, float]) -> AsyncIterator[None]:
    """Write each pod's in-flight requests every 0.3 s (a scraped gauge, as it would be)."""

    async def feed() -> None:
        while True:
            for pod, value in load.items():
                await st.write(BUSY_METRIC, {"namespace": st.namespace, "pod": pod}, value)
            await asyncio.sleep(0.3)

    task = asyncio.create_task(feed())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def all_measured(st: Stack, name: str, n: int) -> bool:
    """The adapter serves a value for each of the `n` pods (its discovery relists every second):
    a pod ranked without one would count as idle."""
    path = f"{CUSTOM}/namespaces/{st.namespace}/pods/*/{BUSY_METRIC}"
    try:
        doc = await st.kube.request("GET", path, query=[("labelSelector", f"app={name}")])
    except KubeError:
        return False
    return len({i["describedObject"]["name"] for i in doc.get("items", [])}) == n


async def pods_left(st: Stack, name: str, n: int) -> set[str] | None:
    names = {p["metadata"]["name"] for p in await st.pods(name)}
    return names if len(names) == n else None


async def test_the_two_idle_pods_are_the_ones_deleted(stack: Stack):
    st = stack
    await st.queue("web", 50)  # 50 against 10 per pod: five pods, steady
    # two pods first, three more later: without a cost the ReplicaSet deletes the pods ready
    # most recently (log2 scale of the time since: 6 s apart puts them in other buckets), so
    # it would delete two of the three new ones. Here the new ones are the busy ones.
    await st.deployment("web", 2)
    idle = {p["metadata"]["name"] for p in await ready_pods(st, "web", 2)}
    await asyncio.sleep(6)
    await st.scale("web", 5)
    names = [p["metadata"]["name"] for p in await ready_pods(st, "web", 5)]
    busy = set(names) - idle
    load = {n: (4.0 if n in busy else 0.0) for n in names}
    async with feeding(st, load):
        await eventually(lambda: all_measured(st, "web", 5), timeout=15, what="5 pods' values")
        await st.autoscaler("web", spec("web", BUSY_METRIC))
        async with st.controller():
            await asyncio.sleep(1.5)  # passes at 5: none scales down, none annotates
            assert await st.replicas("web") == 5
            assert all(
                COST not in (p["metadata"].get("annotations") or {}) for p in await st.pods("web")
            )

            await st.queue("web", 30)  # 30 against 10 per pod: 5 -> 3
            left = await eventually(lambda: pods_left(st, "web", 3), timeout=20, what="3 pods")
            assert left == busy, f"deleted {sorted(set(names) - left)}, idle were {sorted(idle)}"
            costs = {
                p["metadata"]["name"]: p["metadata"]["annotations"][COST]
                for p in await st.pods("web")
            }
            assert costs == dict.fromkeys(busy, "1")  # dense rank: idle 0, the busy 1
            events = await eventually(
                lambda: _events(st, "web", "PodDeletionCostUpdated"), timeout=5, what="the event"
            )
            assert events[0]["type"] == "Normal"
            assert (
                f"set pod-deletion-cost on 5 of 5 pods from metric {BUSY_METRIC}"
                in events[0]["message"]
            )


async def test_with_the_cost_metric_failing_the_scale_down_happens_and_no_pod_is_touched(
    stack: Stack,
):
    st = stack
    await st.queue("api", 50)
    await st.deployment("api", 5)
    await ready_pods(st, "api", 5)
    # a metric no rule serves: the custom metrics API answers 404 for it, every pass
    await st.autoscaler("api", spec("api", "e2e_inflight_never_written"))
    async with st.controller():
        await asyncio.sleep(1.5)
        assert await st.replicas("api") == 5
        await st.queue("api", 30)
        await eventually(lambda: pods_left(st, "api", 3), timeout=20, what="3 pods")
        assert all(
            COST not in (p["metadata"].get("annotations") or {}) for p in await st.pods("api")
        )
        events = await eventually(
            lambda: _events(st, "api", "FailedGetPodDeletionCostMetric"), timeout=5, what="event"
        )
        assert events[0]["type"] == "Warning"
        assert "scaling 5 -> 3 with the costs as they are" in events[0]["message"]
        rescaled = await _events(st, "api", "SuccessfulRescale")
        assert rescaled
        assert rescaled[0]["message"].startswith("New size: 3")


async def _events(st: Stack, name: str, reason: str) -> list[dict]:
    return [e for e in await st.events(name) if e["reason"] == reason]
