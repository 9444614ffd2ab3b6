"""The controller under API-server faults, one kind at a time (the sandbox's fault plan):
failed /scale writes hold replicas and back off, broken watches resume without relisting,
latency and refused connections delay scaling but never break it.

The fault plan is the sandbox's (PUT /sandbox/faults); on a real cluster these tests skip.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sandbox.promfaults import PromFaultPlan, PromFaultProxy
from tests.controller.stack import FAST, Stack, e2e_stack, eventually, external_metric, target_ref

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.sandbox_only("the sandbox's fault plan (PUT /sandbox/faults) and fault proxy"),
]


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path) as s:
        if s.prometheus is None:
            pytest.skip("needs the sandbox's fault plan (PUT /sandbox/faults)")
        yield s


async def plan(st: Stack, doc: dict[str, Any]) -> None:
    await st.kube.request("PUT", "/sandbox/faults", body=doc)


async def stats(st: Stack) -> dict[str, Any]:
    doc = await st.kube.request("GET", "/sandbox/stats")
    return {
        "requests": {(r["verb"], r["resource"]): r["count"] for r in doc["requests"]},
        "injected": doc["injected"],
    }


async def worker(
    st: Stack, name: str = "worker", queue: str = "jobs", metric: dict[str, Any] | None = None
) -> None:
    await st.deployment(name, 1)
    spec = {
        "scaleTargetRef": target_ref(name),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [metric or external_metric(queue)],
        "behavior": FAST,
    }
    await st.autoscaler(name, spec)


async def replicas_are(st: Stack, name: str, want: int) -> bool:
    return await st.replicas(name) == want


def scale_writes(counts: dict[tuple[str, str], int]) -> int:
    return sum(counts.get((verb, "deployments/scale"), 0) for verb in ("update", "patch"))


@pytest.mark.parametrize("code", [503, 409], ids=["503", "409-conflict"])
async def test_failed_scale_writes_hold_replicas_back_off_and_recover(stack, code):
    st = stack
    await st.queue("jobs", 55)
    await worker(st)
    rule = {"code": code, "verbs": ["update", "patch"], "resources": ["deployments/scale"]}
    await plan(st, {"seed": 1, "errors": [rule]})
    async with st.controller():
        cond = await eventually(
            lambda: _reason(st, "AbleToScale", "FailedUpdateScale"), timeout=10, what="failed"
        )
        assert cond["status"] == "False"
        before = scale_writes((await stats(st))["requests"])
        await asyncio.sleep(3)
        tried = scale_writes((await stats(st))["requests"]) - before
        assert await st.replicas("worker") == 1
        assert 1 <= tried <= 6  # retried, at most about once per 1 s sync period: no hot loop
        assert [e for e in await st.events("worker") if e["reason"] == "FailedRescale"]
        await plan(st, {})
        await eventually(lambda: replicas_are(st, "worker", 6), timeout=15, what="6 replicas")


async def test_cut_and_expired_watches_resume_without_a_relist_storm(stack):
    st = stack
    await st.queue("jobs", 55)
    await worker(st)
    watch = {"resources": ["autoscalers"], "cutAfterEvents": 1, "goneOnResume": 0.25}
    await plan(st, {"seed": 3, "watch": watch})
    async with st.controller():
        await eventually(lambda: replicas_are(st, "worker", 6), timeout=15, what="6 replicas")
        await st.queue("jobs", 22)  # more status writes, so more watch events and cuts
        await eventually(lambda: replicas_are(st, "worker", 3), timeout=15, what="3 replicas")
    s = await stats(st)
    watches = s["requests"].get(("watch", "autoscalers"), 0)
    lists = s["requests"].get(("list", "autoscalers"), 0)
    expired = s["injected"].get("watch410", 0)
    assert watches >= 3  # the streams were cut and resumed
    assert lists <= 1 + expired  # one LIST at start, one per 410, none for a plain cut


async def test_latency_and_refused_connections_delay_but_never_break_scaling(stack):
    st = stack
    await st.queue("jobs", 55)
    await worker(st)
    await plan(st, {"seed": 5, "latency": [{"distribution": "uniform", "seconds": 0.3}]})
    async with st.controller():
        await eventually(lambda: replicas_are(st, "worker", 6), timeout=20, what="6 replicas")
        await st.queue("jobs", 12)
        await plan(st, {"seed": 6, "refuseSeconds": 2})
        await asyncio.sleep(2.5)
        await eventually(lambda: replicas_are(st, "worker", 2), timeout=20, what="2 replicas")
    assert (await stats(st))["injected"].get("latency", 0) > 0


async def _reason(st: Stack, type_: str, reason: str) -> dict[str, Any] | None:
    cond = await st.condition("worker", type_)
    return cond if cond.get("reason") == reason else None


async def test_prometheus_nan_hangs_and_partial_answers_hold_replicas_then_scaling_resumes(
    tmp_path,
):
    """Through the fault proxy: NaN answers (the adapter's 404), hangs past the adapter's
    timeout and partial answers (Thanos-style `warnings`; the adapter's 503) are failed
    metrics; replicas hold in both directions, then follow again. The metric sums two queues,
    so a partial answer (every other series) would halve it: served as complete, it would
    scale 6 -> 3."""
    proxy = PromFaultProxy(upstream="http://127.0.0.1:9")  # the stack's Prometheus, below
    await proxy.start()

    def through_proxy(url: str) -> str:
        proxy.upstream = url
        return proxy.url

    try:
        async with e2e_stack(tmp_path, adapter_prometheus=through_proxy) as st:
            if st.prometheus is None:
                pytest.skip("needs the sandbox stack's own Prometheus behind the fault proxy")
            await st.queue("jobs", 30)
            await st.queue("jobs-b", 30)
            await worker(st, metric=two_queues("jobs", "jobs-b"))
            async with st.controller():
                await eventually(lambda: replicas_are(st, "worker", 6), timeout=15, what="6")
                for kind, queue, then in (("nan", 0, 3), ("hang", 30, 6), ("partial", 30, 6)):
                    proxy.set(PromFaultPlan(seed=1, rates={kind: 1.0}, hang_seconds=30))
                    await st.queue("jobs", queue)
                    await eventually(
                        lambda: _metric_failed(st), timeout=15, what=f"failed metric ({kind})"
                    )
                    held = await st.replicas("worker")
                    await asyncio.sleep(4)  # past the 3 s windows: no rescale on a failed metric
                    assert await st.replicas("worker") == held
                    proxy.set(PromFaultPlan())
                    await eventually(
                        lambda w=then: replicas_are(st, "worker", w), timeout=20, what=f"{then}"
                    )
                    await eventually(
                        lambda: _metric_read(st), timeout=15, what=f"metric read ({kind})"
                    )
                for kind in ("nan", "hang", "partial"):
                    assert proxy.injected[kind] > 0
    finally:
        await proxy.stop()


def two_queues(*queues: str) -> dict[str, Any]:
    """An External metric over the sum of several queues' series."""
    metric = external_metric(queues[0])
    selector = {"matchExpressions": [{"key": "queue", "operator": "In", "values": list(queues)}]}
    metric["external"]["metric"]["selector"] = selector
    return metric


async def _metric_read(st: Stack) -> bool:
    cond = await st.condition("worker", "ScalingActive")
    return cond.get("status") == "True"


async def _metric_failed(st: Stack) -> bool:
    cond = await st.condition("worker", "ScalingActive")
    return cond.get("reason") == "FailedGetExternalMetric"
