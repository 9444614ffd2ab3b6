"""A Pods metric's history in the controller (autoscaler/history.py): read for the target's pod
selector, shared by the Autoscalers of the same pods and metric, read afresh when the selector
changes, and, when it cannot be read, NoHistory with the reason and a reactive decision."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from autoscaler.cluster import ClusterError
from autoscaler.core import decide_document
from autoscaler.history import HistoryCache
from autoscaler.reconcile import ControllerOptions, Reconciler
from tests.controller.fakes import FakeCluster, autoscaler, pods_metric
from tests.controller.test_history_cache import NOW, PREDICTIVE, Reader, condition

DAY = 26 * 3600  # PREDICTIVE's history


def ready_pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "status": {
            "phase": "Running",
            "startTime": "2025-12-31T00:00:00Z",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2025-12-31T00:00:00Z"}
            ],
        },
    }


def rps(**values: str) -> dict[str, Any]:
    return {
        "items": [
            {
                "describedObject": {"kind": "Pod", "name": name, "apiVersion": "v1"},
                "metricName": "rps",
                "timestamp": "2026-01-02T12:26:50Z",
                "value": value,
            }
            for name, value in values.items()
        ]
    }


def spec(predictive: dict[str, Any] | None = PREDICTIVE, target: str = "web") -> dict[str, Any]:
    obj = autoscaler(metrics=[pods_metric("rps", "10")], max_replicas=20)
    obj["spec"]["scaleTargetRef"]["name"] = target
    if predictive is not None:
        obj["spec"]["predictive"] = predictive
    return obj


def cluster_of(replicas: int = 1, selector: str = "app=web") -> FakeCluster:
    cluster = FakeCluster()
    cluster.add_target("web", replicas, selector=selector)
    cluster.pods = [ready_pod("web-1")]
    cluster.metrics["rps"] = rps(**{"web-1": "10"})  # the load now: one pod's worth
    return cluster


async def passes(cluster: FakeCluster, reader: Reader, *, times: int = 2) -> dict[str, Any]:
    cache = HistoryCache(reader, timeout=0.2)
    r = Reconciler(cluster, options=ControllerOptions(), decide=decide_document, history=cache)
    obj = spec()
    for i in range(times):
        await r.reconcile(obj, now=NOW + timedelta(seconds=15 * i))
        await cache.settled()
    await cache.close()
    return cluster.status_patches[-1][1]


async def test_the_pods_forecast_raises_the_replicas_ahead_of_the_load() -> None:
    reader = Reader()
    cluster = cluster_of()
    patch = await passes(cluster, reader)
    plain = cluster_of()
    await passes(plain, Reader(), times=1)  # the first pass: no history held yet
    assert plain.scale_writes == []
    # the history (the sum over the pods, the demand) peaks at 100 three minutes from now:
    # ten pods' worth; the scale-up policy allows 4 from 1 (reactive: 10 is one pod's)
    assert cluster.scale_writes == [("web", 4)]
    assert condition(patch)[:2] == ("True", "ForecastApplied")
    line = patch["predictive"]["metrics"][0]
    assert (line["verdict"], line["forecast"], line["forecastReplicas"]) == ("Ready", "100", 10)
    ((ns, name, start, end),) = reader.calls
    assert (ns, name, end - start) == ("default", "rps", DAY)
    assert reader.selectors == ["app=web"]  # the target's /scale selector, as the value's


async def test_autoscalers_of_the_same_pods_and_metric_share_one_history() -> None:
    reader = Reader()
    cache = HistoryCache(reader)
    same = [spec(target="web")["spec"], spec(target="web")["spec"]]
    for s in same:
        cache.forecasts("default", s, NOW, pod_selector="app=web")
    cache.forecasts("default", same[0], NOW, pod_selector="app=api")  # other pods
    cache.forecasts("other", same[0], NOW, pod_selector="app=web")  # another namespace
    await cache.settled()
    assert len(cache) == 3
    assert sorted(
        (ns, sel) for (ns, *_), sel in zip(reader.calls, reader.selectors, strict=True)
    ) == [
        ("default", "app=api"),
        ("default", "app=web"),
        ("other", "app=web"),
    ]
    await cache.close()


async def test_a_changed_selector_is_read_afresh() -> None:
    reader = Reader()
    cache = HistoryCache(reader)
    s = spec()["spec"]
    cache.forecasts("default", s, NOW, pod_selector="app=web")
    await cache.settled()
    later = NOW + timedelta(seconds=30)
    ready = cache.forecasts("default", s, later, pod_selector="app=web")
    assert ready is not None
    assert ready[0]["verdict"] == "Ready"
    # the Deployment's selector changed (a new version of it): its pods are others
    fresh = cache.forecasts("default", s, later, pod_selector="app=web,track=v2")
    assert fresh == [None]  # nothing held for these pods yet: the core says NoHistory
    await cache.settled()
    assert reader.selectors == ["app=web", "app=web,track=v2"]
    (_, _, start, end) = reader.calls[-1]
    assert end - start == DAY  # the whole history, not the minutes since the other's read
    again = cache.forecasts(
        "default", s, later + timedelta(seconds=15), pod_selector="app=web,track=v2"
    )
    assert again is not None
    assert again[0]["verdict"] == "Ready"
    await cache.close()


@pytest.mark.parametrize(
    ("error", "needle"),
    [
        pytest.param(
            ClusterError("BadRequest", "labelSelector: unable to parse requirement"),
            "labelSelector: unable to parse",
            id="adapter-400",
        ),
        pytest.param(
            ClusterError("ServiceUnavailable", "Prometheus is unavailable"),
            "Prometheus is unavailable",
            id="adapter-503",
        ),
    ],
)
async def test_an_unreadable_pods_history_leaves_the_decision_reactive(
    error: ClusterError, needle: str
) -> None:
    cluster = cluster_of(replicas=3)
    patch = await passes(cluster, Reader(error=error))
    plain = cluster_of(replicas=3)
    plain_patch = await passes(plain, Reader(), times=1)  # before any history: reactive
    status, reason, message = condition(patch)
    assert (status, reason) == ("False", "NoHistory")
    assert needle in message
    # reactive: 10 against 10 per pod is one pod, and never a scale-down for a failure
    assert cluster.scale_writes == plain.scale_writes == []
    assert patch["desiredReplicas"] == plain_patch["desiredReplicas"]
