"""spec.predictive end to end: an External metric, and a Pods metric, with a day of hourly peaks in
a real Prometheus (backfilled by remote write), read by the controller through the API server's
aggregation layer and the adapter's history.promscaler.dev group; the forecast raises the
replicas before the peak arrives, and the status and the Predictive condition say so. The Pods
metric's history is the sum over the pods of the Deployment's earlier rollouts, not over a
similarly named workload's."""

from __future__ import annotations

import asyncio
import subprocess
import time
from typing import Any

import pytest

from tests.controller.stack import (
    FAST,
    STALE_NAN,
    e2e_stack,
    eventually,
    external_metric,
    target_ref,
)
from tests.support.history_load import hourly_load

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.sandbox_only("a Prometheus that accepts day-old samples by remote write"),
]


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path, backfill_window="2d") as s:
        yield s


async def test_the_forecast_scales_up_before_the_hourly_peak(stack) -> None:
    from sandbox.prometheus import remote_write

    labels = {"__name__": "e2e_queue_depth", "queue": "pred"}
    await remote_write(stack.prometheus_url, [(labels, hourly_load(int(time.time())))])
    await stack.queue("pred", 10)  # the load now: one pod's worth
    await eventually(lambda: stack.queue_served("pred"), timeout=30, what="metric served")
    await stack.deployment("pred", 1)
    spec: dict[str, Any] = {
        "scaleTargetRef": target_ref("pred"),
        "minReplicas": 1,
        "maxReplicas": 20,
        "metrics": [external_metric("pred", average="10")],
        "behavior": FAST,
        "predictive": {"mode": "Scale", "horizon": "5m", "history": "26h", "seasonality": ["1h"]},
    }
    await stack.autoscaler("pred", spec)
    async with stack.controller():
        # reactive: 10 / 10 is one pod; the forecast of the peak (100) asks for ten
        obj = await _scaled_ahead(stack, "pred")
        text = await describe(stack, "pred")
    assert_forecast_applied(obj)
    # kubectl describe explains it: the status block, the condition and the decision's reason
    for needle in ("Predictive:", "Forecast Replicas:", "ForecastApplied", "forecast 100 within"):
        assert needle in text, f"{needle!r} not in kubectl describe:\n{text}"


async def test_a_pods_metric_is_forecast_from_the_deployments_earlier_pods(stack) -> None:
    from sandbox.prometheus import remote_write

    await stack.deployment("ppred", 1)
    (pod,) = await eventually(lambda: stack.pods("ppred"), timeout=30, what="the pod")
    name = pod["metadata"]["name"]  # ppred-<pod-template-hash>-<5 random>
    load = hourly_load(int(time.time()))
    half = len(load) // 2

    def rps(pod_name: str) -> dict[str, str]:
        return {"__name__": "e2e_requests_per_pod", "namespace": stack.namespace, "pod": pod_name}

    def ended(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        return [*points, (points[-1][0] + 30, STALE_NAN)]  # the pod went: its series is stale

    # two earlier rollouts of the Deployment (their pods long gone) carried the day's load, and
    # a similarly named workload's pod (Deployment ppred-db) a thousand times more
    old, older = "ppred-6c4f8b7d9", "ppred-5b9c4d8f7"
    await remote_write(
        stack.prometheus_url,
        [
            (rps(f"{older}-bcdfg"), ended([(t, v / 2) for t, v in load[:half]])),
            (rps(f"{older}-hjklm"), ended([(t, v / 2) for t, v in load[:half]])),
            (rps(f"{old}-npqrs"), ended(load[half:])),
            (rps("ppred-db-5b9c4d8f7-tvwxz"), [(t, 1000.0) for t, _ in load]),
        ],
    )
    await stack.write("e2e_requests_per_pod", {"namespace": stack.namespace, "pod": name}, 10)
    custom = f"/apis/custom.metrics.k8s.io/v1beta2/namespaces/{stack.namespace}"
    path = f"{custom}/pods/*/e2e_requests_per_pod"
    await eventually(
        lambda: stack.served(path, label_selector="app=ppred"), timeout=30, what="metric served"
    )
    spec: dict[str, Any] = {
        "scaleTargetRef": target_ref("ppred"),
        "minReplicas": 1,
        "maxReplicas": 20,
        "metrics": [
            {
                "type": "Pods",
                "pods": {
                    "metric": {"name": "e2e_requests_per_pod"},
                    "target": {"type": "AverageValue", "averageValue": "10"},
                },
            }
        ],
        "behavior": FAST,
        "predictive": {"mode": "Scale", "horizon": "5m", "history": "26h", "seasonality": ["1h"]},
    }
    await stack.autoscaler("ppred", spec)
    async with stack.controller():
        # reactive: the one pod's 10 against 10 a pod; the forecast of the demand (100) asks ten
        obj = await _scaled_ahead(stack, "ppred")
    assert_forecast_applied(obj)


async def describe(stack, name: str) -> str:
    argv = ["kubectl", "--kubeconfig", str(stack.kubeconfig), "-n", stack.namespace]
    out = await asyncio.to_thread(
        subprocess.run,
        [*argv, "describe", "autoscalers.promscaler.dev", name],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def assert_forecast_applied(obj: dict[str, Any]) -> None:
    """The status of a pass the forecast raised from 1 to 10: the peak of 100, a 1h season."""
    predictive = obj["status"]["predictive"]
    (line,) = predictive["metrics"]
    assert (line["verdict"], line["forecast"], line["seasonSeconds"]) == ("Ready", "100", 3600)
    assert (predictive["reactiveReplicas"], predictive["forecastReplicas"]) == (1, 10)
    condition = next(c for c in obj["status"]["conditions"] if c["type"] == "Predictive")
    assert (condition["status"], condition["reason"]) == ("True", "ForecastApplied")


async def _scaled_ahead(stack, name: str) -> dict[str, Any]:
    """The Autoscaler once its target is at 10 replicas and its status says why. The /scale
    write comes before the pass's status patch, so the replicas alone may show a status of the
    pass before (no history read yet)."""

    async def done() -> dict[str, Any] | None:
        if await stack.replicas(name) != 10:
            return None
        obj = await stack.get_autoscaler(name)
        forecast = obj.get("status", {}).get("predictive", {}).get("forecastReplicas")
        return obj if forecast == 10 else None

    return await eventually(done, timeout=60, what="scaled ahead of the peak, and said so")
