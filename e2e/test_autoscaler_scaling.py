"""The controller on a Kubernetes API with a real Prometheus and the adapter: scaling up and
down on External and Pods metrics, scale to zero and back, and a hand-made zero that stays."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time

import pytest

from autoscaler.core import decide_document
from tests.controller.stack import (
    FAST,
    Stack,
    e2e_stack,
    eventually,
    external_metric,
    target_ref,
)

pytestmark = [pytest.mark.e2e, pytest.mark.prometheus]
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2"


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path) as s:
        yield s


def predict(spec, *, replicas, metrics, pods=(), status=None):
    """What the decision core says for these inputs (no history: the raw recommendation)."""
    doc = {
        "now": "2026-01-01T00:00:00Z",
        "autoscaler": {"spec": copy.deepcopy(spec), "status": status or {}},
        "scale": {
            "spec": {"replicas": replicas},
            "status": {"replicas": replicas, "selector": "app=x"},
        },
        "pods": list(pods),
        "metrics": metrics,
    }
    return decide_document(doc)["desiredReplicas"]


def ext_items(value):
    return [
        {
            "items": [
                {
                    "metricName": "e2e_queue_depth",
                    "metricLabels": {},
                    "timestamp": "2026-01-01T00:00:00Z",
                    "value": str(value),
                }
            ]
        }
    ]


def ready_pods(n):
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": "2025-12-31T00:00:00Z"}
    return [
        {
            "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "x"}},
            "status": {
                "phase": "Running",
                "startTime": "2025-12-31T00:00:00Z",
                "conditions": [ready],
            },
        }
        for i in range(n)
    ]


def pod_items(total, n):
    return [
        {
            "items": [
                {
                    "describedObject": {"kind": "Pod", "namespace": "default", "name": f"p{i}"},
                    "metricName": "e2e_requests_per_pod",
                    "timestamp": "2026-01-01T00:00:00Z",
                    "value": str(total / n),
                }
                for i in range(n)
            ]
        }
    ]


async def replicas_are(st: Stack, name: str, want: int) -> bool:
    return await st.replicas(name) == want


async def rescales(st: Stack, name: str) -> list[dict]:
    return [e for e in await st.events(name) if e["reason"] == "SuccessfulRescale"]


async def status_with(st: Stack, name: str, key: str, want: object) -> dict | None:
    """The Autoscaler's status once its `key` is `want` (a pass writes status last)."""
    status = (await st.get_autoscaler(name)).get("status") or {}
    return status if status.get(key) == want else None


async def test_external_metric_scales_up_then_down_after_the_window(stack: Stack):
    st = stack
    spec = {
        "scaleTargetRef": target_ref("worker"),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [external_metric("jobs")],
        "behavior": FAST,
    }
    up = predict(spec, replicas=1, metrics=ext_items(55))
    down = predict(
        {
            **spec,
            "behavior": {
                **FAST,
                "scaleDown": {**FAST["scaleDown"], "stabilizationWindowSeconds": 0},
            },
        },
        replicas=up,
        metrics=ext_items(12),
    )
    assert (up, down) == (6, 2), "the core's prediction for 55 and 12 against 10 per pod"
    await st.queue("jobs", 55)
    await st.deployment("worker", 1)
    await st.autoscaler("worker", spec)
    async with st.controller():
        await eventually(lambda: replicas_are(st, "worker", up), timeout=15, what=f"{up} replicas")
        # the pass writes the scale, then records its event: poll for it
        events = await eventually(lambda: rescales(st, "worker"), timeout=5, what="the event")
        assert [e["message"].split(";")[0] for e in events] == [f"New size: {up}"]
        assert "above target" in events[0]["message"]

        await st.queue("jobs", 12)
        dropped = time.monotonic()
        await eventually(
            lambda: replicas_are(st, "worker", down), timeout=15, what=f"{down} replicas"
        )
        waited = time.monotonic() - dropped
        assert waited >= 2.0, f"scaled down after {waited:.1f}s, inside the 3s stabilization window"
        # the status is written after the scale and the event: poll for the pass's status
        status = await eventually(
            lambda: status_with(st, "worker", "desiredReplicas", down), timeout=5, what="status"
        )
        assert status["observedGeneration"] == 1
        assert status["targets"].endswith("/10")
        assert status["history"]["scaleDownEvents"][0]["change"] == up - down


async def _feed_pods(st: Stack, app: str, total: list[float]) -> None:
    """The load model: `total[0]` spread evenly over the running pods, written every 0.3 s."""
    while True:
        pods = await st.pods(app)
        for p in pods:
            await st.write(
                "e2e_requests_per_pod",
                {"namespace": st.namespace, "pod": p["metadata"]["name"]},
                total[0] / len(pods),
            )
        await asyncio.sleep(0.3)


async def test_pods_metric_settles_where_the_core_predicts(stack: Stack):
    st = stack
    metric = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "e2e_requests_per_pod"},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    }
    spec = {
        "scaleTargetRef": target_ref("api"),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [metric],
        "behavior": FAST,
    }
    # the load model: 50 spread over the pods, then 19 (each pod reports total / pods). Not 20:
    # a pass that catches the change half-written can land on 3 pods, where 20/3 reads as 6667m
    # and ceil(0.6667 x 3) = 3 holds for good; with 19 every pod count from 5 down leads to 2
    up = predict(spec, replicas=1, metrics=pod_items(50, 1), pods=ready_pods(1))
    steady = predict(spec, replicas=up, metrics=pod_items(50, up), pods=ready_pods(up))
    no_window = {**FAST, "scaleDown": {**FAST["scaleDown"], "stabilizationWindowSeconds": 0}}
    down = predict(
        {**spec, "behavior": no_window}, replicas=up, metrics=pod_items(19, up), pods=ready_pods(up)
    )
    assert (up, steady, down) == (5, 5, 2)
    total = [50.0]
    await st.deployment("api", 1)
    feeder = asyncio.create_task(_feed_pods(st, "api", total))
    try:
        await eventually(lambda: st.pods("api"), timeout=10, what="a pod")
        path = f"{CUSTOM}/namespaces/{st.namespace}/pods/*/e2e_requests_per_pod"
        await eventually(
            lambda: st.served(path, label_selector="app=api"), timeout=15, what="the pods metric"
        )
        await st.autoscaler("api", spec)
        async with st.controller():
            await eventually(lambda: replicas_are(st, "api", up), timeout=20, what=f"{up} replicas")
            await asyncio.sleep(2)
            assert await st.replicas("api") == steady, "50 over 5 pods is on target: it stays"
            total[0] = 19.0
            await eventually(lambda: replicas_are(st, "api", down), timeout=20, what=f"{down}")
    finally:
        feeder.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feeder


async def test_scale_to_zero_and_back_within_two_seconds(stack: Stack):
    st = stack
    spec = {
        "scaleTargetRef": target_ref("batch"),
        "minReplicas": 0,
        "maxReplicas": 10,
        "metrics": [external_metric("batch")],
        "behavior": {**FAST, "scaleDown": {**FAST["scaleDown"], "stabilizationWindowSeconds": 0}},
    }
    await st.queue("batch", 0)
    await st.deployment("batch", 2)
    await st.autoscaler("batch", spec)
    async with st.controller(sync_period=15.0):  # waking must not wait for a sync period
        await eventually(lambda: replicas_are(st, "batch", 0), timeout=20, what="zero replicas")
        # the pass scales, records its event, then writes status (as upstream): poll for it
        cond = await eventually(
            lambda: _reason_is(st, "batch", "ScaledToZero", "ScaledToZero"), timeout=5
        )
        assert cond["status"] == "True"
        await asyncio.sleep(1.0)

        status = (await st.get_autoscaler("batch"))["status"]
        want = predict(
            spec, replicas=0, metrics=ext_items(30), status={"conditions": status["conditions"]}
        )
        assert want == 3
        await st.queue("batch", 30)
        rose = time.monotonic()
        await eventually(
            lambda: replicas_are(st, "batch", want), timeout=10, interval=0.05, what="wake up"
        )
        woke = time.monotonic() - rose
        print(f"0 -> {want} replicas {woke:.2f}s after the metric rose")
        assert woke <= 2.5, f"woke after {woke:.2f}s"
        cond = await eventually(
            lambda: _reason_is(st, "batch", "ScaledToZero", "NotScaledToZero"), timeout=5
        )
        assert cond["status"] == "False"


async def test_target_scaled_to_zero_by_hand_stays_at_zero(stack: Stack):
    st = stack
    spec = {
        "scaleTargetRef": target_ref("paused"),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [external_metric("paused")],
    }
    await st.queue("paused", 55)
    await st.deployment("paused", 2)
    await st.autoscaler("paused", spec)
    async with st.controller():
        await eventually(
            lambda: st.condition("paused", "ScalingActive"), timeout=10, what="a first pass"
        )
        await st.scale("paused", 0)
        cond = await eventually(
            lambda: _reason_is(st, "paused", "ScalingActive", "ScalingDisabled"),
            timeout=10,
            what="ScalingDisabled",
        )
        assert cond["status"] == "False"
        await asyncio.sleep(2.5)
        assert await st.replicas("paused") == 0


async def _reason_is(st: Stack, name: str, type_: str, reason: str):
    cond = await st.condition(name, type_)
    return cond if cond.get("reason") == reason else None


async def test_object_metric_scales_a_deployment_and_puts_it_to_sleep(stack: Stack):
    st = stack
    metric = {
        "type": "Object",
        "object": {
            "describedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "consumer"},
            "metric": {"name": "e2e_backlog"},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    }
    no_window = {**FAST, "scaleDown": {**FAST["scaleDown"], "stabilizationWindowSeconds": 0}}
    spec = {
        "scaleTargetRef": target_ref("consumer"),
        "minReplicas": 0,
        "maxReplicas": 10,
        "metrics": [metric],
        "behavior": no_window,
    }
    backlog = {"namespace": st.namespace, "deployment": "consumer"}
    item = [
        {
            "items": [
                {
                    "describedObject": {},
                    "metricName": "e2e_backlog",
                    "timestamp": "2026-01-01T00:00:00Z",
                    "value": "40",
                }
            ]
        }
    ]
    want = predict(spec, replicas=1, metrics=item)
    assert want == 4
    await st.write("e2e_backlog", backlog, 40)
    await st.deployment("consumer", 1)
    path = f"{CUSTOM}/namespaces/{st.namespace}/deployments.apps/consumer/e2e_backlog"
    await eventually(lambda: st.served(path), timeout=15, what="the object metric")
    await st.autoscaler("consumer", spec)
    async with st.controller():
        await eventually(lambda: replicas_are(st, "consumer", want), timeout=15, what=f"{want}")

        async def per_pod():
            status = (await st.get_autoscaler("consumer")).get("status") or {}
            current = (status.get("currentMetrics") or [{"type": ""}])[0]
            # a pass whose read failed leaves the slot empty ({"type": ""}, as upstream does)
            if current["type"] == "":
                return None
            return current["object"]["current"]["averageValue"] == "10"

        # 40 over the 4 replicas the Deployment reports once its new pods run
        await eventually(per_pod, timeout=10, what="averageValue 10")
        assert await st.replicas("consumer") == want
        await st.write("e2e_backlog", backlog, 0)
        await eventually(lambda: replicas_are(st, "consumer", 0), timeout=15, what="zero")
        cond = await eventually(
            lambda: _reason_is(st, "consumer", "ScaledToZero", "ScaledToZero"), timeout=5
        )
        assert cond["status"] == "True"


@pytest.mark.sandbox_only(
    "the stand-in metrics-server that sets each pod's CPU usage (tests/controller/podmetrics.py)"
)
async def test_cpu_utilization_from_the_resource_metrics_api(stack: Stack):
    """metrics.k8s.io comes from a stand-in metrics-server (tests/controller/podmetrics.py)."""
    if stack.prometheus is None:
        pytest.skip("a real cluster brings its own metrics-server")
    from autoscaler.reconcile import ControllerOptions
    from tests.controller.podmetrics import PodMetricsServer

    st = stack
    total = [400.0]  # millicores over all running pods
    server = PodMetricsServer(st.kube, lambda pods: total[0] / pods)
    await server.start()
    cpu = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
    }
    spec = {
        "scaleTargetRef": target_ref("web"),
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [cpu],
        "behavior": FAST,
    }
    try:
        await st.deployment("web", 1, cpu_request="100m")
        await eventually(lambda: st.pods("web"), timeout=10, what="a pod")
        await st.autoscaler("web", spec)
        # no CPU initialization period: the sandbox's pods are ready at once
        options = ControllerOptions(cpu_initialization_period=0)
        async with st.controller(options=options):
            # 400m on one pod requesting 100m is 400% against 50%: ceil(1 x 8) = 8
            await eventually(lambda: replicas_are(st, "web", 8), timeout=20, what="8 replicas")
            status = await eventually(
                lambda: status_with(st, "web", "desiredReplicas", 8), timeout=5, what="status"
            )
            assert status["targets"].startswith("cpu: ")
            total[0] = 100.0  # 12.5m per pod, 12.5%: ceil(8 x 0.25) = 2 after the window
            await eventually(lambda: replicas_are(st, "web", 2), timeout=20, what="2 replicas")
    finally:
        await server.stop()
