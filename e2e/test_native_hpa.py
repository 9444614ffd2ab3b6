"""The native path: autoscaling/v2 HorizontalPodAutoscalers reconciled by kube-controller-manager's
HPA controller (the sandbox's stand-in, or the real one on a cluster) reading our adapter through
the aggregation layer, with a real Prometheus behind it; `kubectl get/describe hpa` as on a real
cluster; what the HPA does when Prometheus goes away."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil

import pytest

from tests.controller.stack import (
    FAST,
    HPA_SYNC_PERIOD,
    Stack,
    e2e_stack,
    eventually,
    external_metric,
    target_ref,
)

pytestmark = [pytest.mark.e2e, pytest.mark.prometheus]

REAL = bool(os.environ.get("PROMSCALER_E2E_KUBECONFIG"))
# seconds between the HPA controller's passes: the sandbox's, or a real kube-controller-manager's
# --horizontal-pod-autoscaler-sync-period (15 s by default; docs/e2e.md sets 1 s on kind)
SYNC = float(
    os.environ.get("PROMSCALER_E2E_HPA_SYNC_SECONDS") or (15.0 if REAL else HPA_SYNC_PERIOD)
)
# how long a change may take to show: a few passes, generous on a loaded 2-core machine
WAIT = 20 * SYNC
PODS_METRIC = {
    "type": "Pods",
    "pods": {
        "metric": {"name": "e2e_requests_per_pod"},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
}
NO_WINDOW = {**FAST, "scaleDown": {**FAST["scaleDown"], "stabilizationWindowSeconds": 0}}


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path) as s:
        yield s


def hpas(st: Stack) -> str:
    return f"/apis/autoscaling/v2/namespaces/{st.namespace}/horizontalpodautoscalers"


async def create_hpa(st: Stack, name: str, spec: dict) -> dict:
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": st.namespace},
        "spec": spec,
    }
    return await st.create(hpas(st), body)


async def hpa_condition(st: Stack, name: str, type_: str) -> dict:
    obj = await st.kube.request("GET", f"{hpas(st)}/{name}")
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            return dict(c)
    return {}


async def hpa_reason(st: Stack, name: str, type_: str, reason: str) -> dict | None:
    """The condition once it has `reason` (a pass writes its status last)."""
    cond = await hpa_condition(st, name, type_)
    return cond if cond.get("reason") == reason else None


async def pods_metric_served(st: Stack, app: str, *, version: str = "v1beta2") -> bool:
    """The adapter's discovery has seen the pods' series (it relists every second)."""
    path = f"/apis/custom.metrics.k8s.io/{version}/namespaces/{st.namespace}/pods/*/"
    return await st.served(path + "e2e_requests_per_pod", label_selector=f"app={app}")


async def rescale_events(st: Stack, name: str) -> list[dict]:
    return [e for e in await hpa_events(st, name) if e["reason"] == "SuccessfulRescale"]


async def hpa_events(st: Stack, name: str) -> list[dict]:
    doc = await st.kube.request("GET", f"/api/v1/namespaces/{st.namespace}/events")
    return [
        e
        for e in doc.get("items", [])
        if e["involvedObject"].get("name") == name
        and e["involvedObject"].get("kind") == "HorizontalPodAutoscaler"
    ]


async def replicas_are(st: Stack, name: str, want: int) -> bool:
    return await st.replicas(name) == want


async def feed_pods(st: Stack, app: str, total: list[float]) -> None:
    """`total[0]` spread evenly over the running pods, written every 0.3 s."""
    while True:
        pods = await st.pods(app)
        for p in pods:
            labels = {"namespace": st.namespace, "pod": p["metadata"]["name"]}
            await st.write("e2e_requests_per_pod", labels, total[0] / len(pods))
        await asyncio.sleep(0.3)


@contextlib.asynccontextmanager
async def feeding(st: Stack, app: str, total: list[float]):
    task = asyncio.create_task(feed_pods(st, app, total))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def kubectl(st: Stack, *args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        str(st.kubeconfig),
        "--namespace",
        st.namespace,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_pods_metric_scales_a_deployment_up_and_down(stack: Stack):
    st = stack
    spec = {
        "scaleTargetRef": target_ref("web"),
        "minReplicas": 1,
        "maxReplicas": 5,
        "metrics": [PODS_METRIC],
        "behavior": NO_WINDOW,
    }
    total = [40.0]  # 40 over 1 pod against 10 a pod: 4 replicas
    await st.deployment("web", 1)
    async with feeding(st, "web", total):
        await eventually(lambda: st.pods("web"), timeout=10, what="a pod")
        await eventually(lambda: pods_metric_served(st, "web"), timeout=WAIT, what="the metric")
        await create_hpa(st, "web", spec)
        await eventually(lambda: replicas_are(st, "web", 4), timeout=WAIT, what="4 replicas")
        # the HPA controller writes the scale, then records the event (upstream's order)
        rescales = await eventually(lambda: rescale_events(st, "web"), timeout=WAIT)
        assert rescales[0]["message"] == (
            "New size: 4; reason: pods metric e2e_requests_per_pod above target"
        )
        assert rescales[0]["source"]["component"] == "horizontal-pod-autoscaler"
        if shutil.which("kubectl"):
            await check_kubectl_get_and_describe(st)
        total[0] = 15.0  # 15 over 4 pods: 3.75 a pod, ceil(4 x 0.375) = 2
        await eventually(lambda: replicas_are(st, "web", 2), timeout=WAIT, what="2 replicas")

        async def decided():  # scale, event, then status: the status comes last
            status = (await st.kube.request("GET", f"{hpas(st)}/web")).get("status") or {}
            return status if status.get("desiredReplicas") == 2 else None

        status = await eventually(decided, timeout=WAIT, what="desiredReplicas 2")
        assert status["currentMetrics"][0]["pods"]["metric"]["name"] == "e2e_requests_per_pod"

        async def down():
            return [e for e in await hpa_events(st, "web") if "below target" in e["message"]]

        assert await eventually(down, timeout=WAIT), "a SuccessfulRescale event for the scale-down"


async def check_kubectl_get_and_describe(st: Stack) -> None:
    """`kubectl get hpa` and `kubectl describe hpa` (the real kubectl 1.32) at 4 replicas."""

    async def settled():
        out = await kubectl(st, "get", "hpa", "web")
        row = out.splitlines()[1].split()
        # the pass after the rescale: it counts 4 replicas and has a value
        return out if row[5] == "4" and "<unknown>" not in out else None

    out = await eventually(settled, timeout=WAIT, what="4 replicas counted")
    header, row = out.splitlines()[:2]
    assert header.split() == [
        "NAME",
        "REFERENCE",
        "TARGETS",
        "MINPODS",
        "MAXPODS",
        "REPLICAS",
        "AGE",
    ]
    cells = row.split()
    assert cells[:2] == ["web", "Deployment/web"]
    assert cells[2].endswith("/10")
    assert cells[3:6] == ["1", "5", "4"]
    text = await kubectl(st, "describe", "hpa", "web")
    lines = [line.rstrip() for line in text.splitlines()]
    fields = {
        line.split(":", 1)[0]: line.split(":", 1)[1].strip()
        for line in lines
        if ":" in line and not line.startswith(" ")
    }
    assert fields["Name"] == "web"
    assert fields["Reference"] == "Deployment/web"
    assert fields["Min replicas"] == "1"
    assert fields["Max replicas"] == "5"
    assert fields["Deployment pods"] == "4 current / 4 desired"
    assert fields["Metrics"] == "( current / target )"
    metric = next(line for line in lines if '"e2e_requests_per_pod" on pods:' in line)
    assert metric.split(":", 1)[1].split()[-2:] == ["/", "10"]
    conditions = {
        line.split()[0]: line.split()[1:3]
        for line in lines
        if line.startswith("  ")
        and line.split()[0] in ("AbleToScale", "ScalingActive", "ScalingLimited")
    }
    assert conditions["AbleToScale"][0] == "True"
    assert conditions["ScalingActive"] == ["True", "ValidMetricFound"]
    event = next(line for line in lines if "SuccessfulRescale" in line)
    assert "horizontal-pod-autoscaler" in event
    assert "New size: 4; reason: pods metric e2e_requests_per_pod above target" in event


async def test_external_metric_with_min_zero_scales_to_zero_and_wakes(stack: Stack):
    st = stack
    spec = {
        "scaleTargetRef": target_ref("batch"),
        "minReplicas": 0,
        "maxReplicas": 10,
        "metrics": [external_metric("native-batch")],
        "behavior": NO_WINDOW,
    }
    await st.queue("native-batch", 0)
    await st.deployment("batch", 2)
    await create_hpa(st, "batch", spec)
    await eventually(lambda: replicas_are(st, "batch", 0), timeout=WAIT, what="zero")
    # the status is written after the scale: poll for the condition's new reason
    cond = await eventually(
        lambda: hpa_reason(st, "batch", "ScaledToZero", "ScaledToZero"), timeout=WAIT
    )
    assert cond["status"] == "True"
    await st.queue("native-batch", 30)  # 30 against 10 a pod: 3 replicas
    await eventually(lambda: replicas_are(st, "batch", 3), timeout=WAIT, what="wake up")
    cond = await eventually(
        lambda: hpa_reason(st, "batch", "ScaledToZero", "NotScaledToZero"), timeout=WAIT
    )
    assert cond["status"] == "False"


@pytest.mark.sandbox_only(
    "re-registering the custom metrics APIServices and stopping Prometheus (a cluster's are shared)"
)
async def test_v1beta1_fallback_then_prometheus_gone_holds_the_replicas(stack: Stack):
    """Custom metrics read at v1beta1 when only that version is served; then Prometheus stops:
    the metric fails, the replicas hold (never a scale-down on a failed metric) and the HPA
    says why in its condition and events."""
    st = stack
    api = "/apis/apiregistration.k8s.io/v1/apiservices"
    old = await st.kube.request("GET", f"{api}/v1beta2.custom.metrics.k8s.io")
    # with v1beta2 gone a v1beta2 request is a 404: scaling below proves v1beta1 was read
    await st.kube.request("DELETE", f"{api}/v1beta2.custom.metrics.k8s.io")
    spec = dict(old["spec"], version="v1beta1")
    body = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService"}
    await st.create(
        api, {**body, "metadata": {"name": "v1beta1.custom.metrics.k8s.io"}, "spec": spec}
    )
    total = [20.0]
    await st.deployment("legacy", 1)
    async with feeding(st, "legacy", total):
        await eventually(lambda: st.pods("legacy"), timeout=10, what="a pod")
        await eventually(
            lambda: pods_metric_served(st, "legacy", version="v1beta1"), timeout=WAIT, what="metric"
        )
        await create_hpa(
            st,
            "legacy",
            {
                "scaleTargetRef": target_ref("legacy"),
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [PODS_METRIC],
                "behavior": NO_WINDOW,
            },
        )
        await eventually(lambda: replicas_are(st, "legacy", 2), timeout=WAIT, what="2 replicas")
        cond = await eventually(
            lambda: hpa_reason(st, "legacy", "ScalingActive", "ValidMetricFound"), timeout=WAIT
        )
        assert cond["status"] == "True"
    st.prometheus.close()  # the adapter can no longer answer: the metric fails

    async def failing():
        cond = await hpa_condition(st, "legacy", "ScalingActive")
        return cond if cond.get("status") == "False" else None

    cond = await eventually(failing, timeout=WAIT, what="ScalingActive=False")
    assert cond["reason"] == "FailedGetPodsMetric"
    assert "unable to fetch metrics from custom metrics API" in cond["message"]
    await asyncio.sleep(3 * SYNC)
    assert await st.replicas("legacy") == 2, "a failed metric never scales down"
    reasons = {e["reason"] for e in await hpa_events(st, "legacy")}
    assert {"FailedGetPodsMetric", "FailedComputeMetricsReplicas"} <= reasons
