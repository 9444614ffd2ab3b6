"""Failures around the controller: Prometheus going away and coming back, and invalid
Autoscalers next to valid ones."""

from __future__ import annotations

import asyncio
import time

import pytest

from autoscaler.kube import KubeError
from tests.controller.stack import FAST, Stack, e2e_stack, eventually, external_metric, target_ref

pytestmark = [pytest.mark.e2e, pytest.mark.prometheus]


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path) as s:
        yield s


async def replicas_are(st: Stack, name: str, want: int) -> bool:
    return await st.replicas(name) == want


async def reason_is(st: Stack, name: str, type_: str, reason: str):
    cond = await st.condition(name, type_)
    return cond if cond.get("reason") == reason else None


async def event(st: Stack, name: str, reason: str):
    return [e for e in await st.events(name) if e["reason"] == reason]


@pytest.mark.sandbox_only("a Prometheus the test can stop and restart (the sandbox stack's)")
async def test_prometheus_outage_holds_replicas_and_scaling_resumes(stack: Stack):
    st = stack
    if st.prometheus is None:
        pytest.skip("needs a Prometheus this test can stop")
    spec = {
        "scaleTargetRef": target_ref("worker"),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [external_metric("jobs")],
        "behavior": FAST,
    }
    await st.queue("jobs", 55)
    await st.deployment("worker", 1)
    await st.autoscaler("worker", spec)
    async with st.controller():
        await eventually(lambda: replicas_are(st, "worker", 6), timeout=15, what="6 replicas")
        st.prometheus.stop()
        stopped = time.monotonic()
        cond = await eventually(
            lambda: reason_is(st, "worker", "ScalingActive", "FailedGetExternalMetric"),
            timeout=10,
            what="FailedGetExternalMetric",
        )
        assert cond["status"] == "False"
        warned = await eventually(lambda: event(st, "worker", "FailedGetExternalMetric"), timeout=5)
        assert warned[0]["type"] == "Warning"
        assert await event(st, "worker", "FailedComputeMetricsReplicas")
        # well past the 3s scale-down window: a metric we cannot read never scales down
        await asyncio.sleep(max(0.0, 5 - (time.monotonic() - stopped)))
        assert await st.replicas("worker") == 6

        st.prometheus.start()
        await st.queue("jobs", 12)
        await eventually(lambda: replicas_are(st, "worker", 2), timeout=20, what="2 replicas")
        # the pass scales, records its event, then writes status (as upstream): poll for it
        cond = await eventually(
            lambda: reason_is(st, "worker", "ScalingActive", "ValidMetricFound"), timeout=5
        )
        assert cond["status"] == "True"


async def test_invalid_autoscalers_get_conditions_and_events_and_others_keep_working(
    stack: Stack,
):
    st = stack
    await st.queue("jobs", 55)
    await st.deployment("worker", 1)
    good = {
        "scaleTargetRef": target_ref("worker"),
        "maxReplicas": 10,
        "metrics": [external_metric("jobs")],
        "behavior": FAST,
    }
    missing = {**good, "scaleTargetRef": target_ref("nowhere")}
    no_scale = {**good, "scaleTargetRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}}
    bad_metric = {**good, "metrics": [{"type": "External"}]}
    await st.autoscaler("missing", missing)
    await st.autoscaler("no-scale", no_scale)
    try:
        await st.autoscaler("bad-metric", bad_metric)
        rejected = 0
    except KubeError as e:  # a real API server's CEL rules refuse it up front
        rejected = e.status
    assert rejected in (0, 422)
    await st.autoscaler("worker", good)
    async with st.controller():
        await eventually(lambda: replicas_are(st, "worker", 6), timeout=15, what="6 replicas")
        for name, needle in (("missing", "not found"), ("no-scale", "no /scale")):
            cond = await eventually(
                lambda n=name: reason_is(st, n, "AbleToScale", "FailedGetScale"), timeout=10
            )
            assert cond["status"] == "False"
            assert needle in cond["message"]
            (warning,) = await eventually(lambda n=name: event(st, n, "FailedGetScale"), timeout=5)
            assert warning["type"] == "Warning"
        if not rejected:
            cond = await eventually(
                lambda: reason_is(st, "bad-metric", "ScalingActive", "InvalidSpec"), timeout=10
            )
            assert "external" in cond["message"]
            assert await event(st, "bad-metric", "FailedComputeMetricsReplicas")
        # the broken ones keep being retried without holding up the good one
        await st.queue("jobs", 12)
        await eventually(lambda: replicas_are(st, "worker", 2), timeout=15, what="2 replicas")
