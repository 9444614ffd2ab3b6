"""podDeletionCost in a reconcile pass against a fake cluster: the costs are written (only the
changed ones) before /scale on a scale-down, nothing is read or written on other passes, and
every failure of the ranking (metric, pods, patches, a StatefulSet) still scales down."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from autoscaler.cluster import ClusterError, Scale
from autoscaler.controller import Controller, ControllerConfig
from autoscaler.core import decide_document
from autoscaler.reconcile import ControllerOptions, Reconciler
from tests.controller.fakes import FakeCluster, autoscaler, external, external_value

NOW = datetime(2026, 1, 1, tzinfo=UTC)
COST = "controller.kubernetes.io/pod-deletion-cost"
BLOCK = {"metric": {"name": "inflight"}}


class OrderedCluster(FakeCluster):
    """Keeps every write in one list, so a test sees annotations come before /scale."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []
        self.cost_reads = 0
        self.cost_delay = 0.0  # seconds the ranking metric takes to answer

    async def annotate_pod(self, namespace: str, name: str, key: str, value: str) -> None:
        await super().annotate_pod(namespace, name, key, value)
        self.log.append(f"annotate {name}={value}")

    async def update_scale(self, scale: Scale, replicas: int) -> None:
        await super().update_scale(scale, replicas)
        self.log.append(f"scale {replicas}")

    async def fetch_metric(
        self, namespace: str, metric: Any, *, pod_selector: str
    ) -> dict[str, Any]:
        if metric.get("type") == "Pods":
            self.cost_reads += 1
            await asyncio.sleep(self.cost_delay)
        return await super().fetch_metric(namespace, metric, pod_selector=pod_selector)


def pod(name: str, cost: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": {"app": "web"}}
    if cost is not None:
        meta["annotations"] = {COST: cost}
    return {"metadata": meta, "status": {"phase": "Running"}}


def inflight(values: dict[str, str]) -> dict[str, Any]:
    return {
        "items": [
            {"describedObject": {"kind": "Pod", "name": n}, "metricName": "inflight", "value": v}
            for n, v in values.items()
        ]
    }


def setup(
    *, queue: str, replicas: int = 5, kind: str = "Deployment", api: str = "apps/v1"
) -> tuple[OrderedCluster, dict[str, Any]]:
    """`replicas` pods a..e; queue `queue` against 10 per pod; three of them busy."""
    cluster = OrderedCluster()
    cluster.add_target("web", replicas)
    cluster.pods = [pod(n) for n in "abcde"[:replicas]]
    cluster.metrics["queue"] = external_value(queue)
    cluster.metrics["inflight"] = inflight({"a": "0", "b": "7", "c": "0", "d": "2", "e": "7"})
    obj = autoscaler(metrics=[external("queue", "10", average=True)])
    obj["spec"]["scaleTargetRef"] = {"apiVersion": api, "kind": kind, "name": "web"}
    obj["spec"]["behavior"] = {
        "scaleDown": {"stabilizationWindowSeconds": 0, "podDeletionCost": BLOCK}
    }
    return cluster, obj


def reconciler(cluster: FakeCluster, **options: Any) -> Reconciler:
    return Reconciler(cluster, options=ControllerOptions(**options), decide=decide_document)


async def test_costs_are_written_busiest_highest_before_the_scale_down() -> None:
    cluster, obj = setup(queue="30")  # 30 / 10 per pod: 5 -> 3

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.log == [
        "annotate a=0",
        "annotate b=2",
        "annotate c=0",
        "annotate d=1",
        "annotate e=2",
        "scale 3",
    ]
    assert outcome.deletion_cost is not None
    assert (outcome.deletion_cost.outcome, outcome.deletion_cost.written) == ("Written", 5)
    event = next(e for e in cluster.events if e[2] == "PodDeletionCostUpdated")
    assert event[1] == "Normal"
    assert (
        event[3]
        == "set pod-deletion-cost on 5 of 5 pods from metric inflight before scaling 5 -> 3"
    )


async def test_only_the_pods_whose_cost_changed_are_patched() -> None:
    cluster, obj = setup(queue="30")
    cluster.pods = [pod("a", "0"), pod("b", "2"), pod("c", "5"), pod("d", "1"), pod("e")]

    await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.log == ["annotate c=0", "annotate e=2", "scale 3"]


async def test_an_unchanged_ranking_writes_no_pod_and_no_event() -> None:
    cluster, obj = setup(queue="30")
    cluster.pods = [pod("a", "0"), pod("b", "2"), pod("c", "0"), pod("d", "1"), pod("e", "2")]

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.log == ["scale 3"]
    assert outcome.deletion_cost is not None
    assert outcome.deletion_cost.outcome == "Unchanged"
    assert not [e for e in cluster.events if "PodDeletionCost" in e[2]]


@pytest.mark.parametrize(
    ("queue", "want"),
    [pytest.param("50", [], id="steady"), pytest.param("80", ["scale 8"], id="scale-up")],
)
async def test_no_read_and_no_write_on_a_pass_that_does_not_scale_down(
    queue: str, want: list[str]
) -> None:
    cluster, obj = setup(queue=queue)

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.log == want
    assert cluster.cost_reads == 0
    assert outcome.deletion_cost is None


async def test_a_failing_cost_metric_still_scales_down_and_touches_no_pod() -> None:
    cluster, obj = setup(queue="30")
    cluster.pods = [pod("a", "4")]  # a cost from an earlier scale-down stays as it was
    cluster.metrics["inflight"] = {"error": "the server is currently unable to handle the request"}

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.log == ["scale 3"]
    assert cluster.pods[0]["metadata"]["annotations"] == {COST: "4"}
    assert outcome.deletion_cost is not None
    assert outcome.deletion_cost.outcome == "MetricFailed"
    (event,) = [e for e in cluster.events if e[2] == "FailedGetPodDeletionCostMetric"]
    assert event[1] == "Warning"
    assert "unable to handle the request" in event[3]
    assert event[3].endswith("scaling 5 -> 3 with the costs as they are")


async def test_a_failing_patch_still_scales_down_and_says_so() -> None:
    cluster, obj = setup(queue="30")
    cluster.annotate_errors["b"] = ClusterError("Forbidden", 'pods "b" is forbidden')

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.log[-1] == "scale 3"
    assert len(cluster.log) == 5  # four annotations and the scale
    assert outcome.deletion_cost is not None
    assert (outcome.deletion_cost.outcome, outcome.deletion_cost.failed) == ("PatchFailed", 1)
    (event,) = [e for e in cluster.events if e[2] == "FailedUpdatePodDeletionCost"]
    assert "4 of 5 pods, 1 failed: pod b:" in event[3]


@pytest.mark.parametrize(
    ("kind", "api", "says"),
    [
        pytest.param("StatefulSet", "apps/v1", "highest ordinals", id="statefulset"),
        pytest.param("Rollout", "argoproj.io/v1alpha1", "not a Deployment", id="custom"),
    ],
)
async def test_a_target_whose_pods_the_replicaset_does_not_pick_gets_no_cost(
    kind: str, api: str, says: str
) -> None:
    cluster, obj = setup(queue="30", kind=kind, api=api)

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.log == ["scale 3"]
    assert cluster.cost_reads == 0
    assert outcome.deletion_cost is not None
    assert outcome.deletion_cost.outcome == "Unsupported"
    (event,) = [e for e in cluster.events if e[2] == "PodDeletionCostUnsupported"]
    assert says in event[3]


async def test_pods_without_a_sample_count_as_idle_and_the_event_says_how_many() -> None:
    cluster, obj = setup(queue="30")
    cluster.metrics["inflight"] = inflight({"b": "7", "d": "2", "e": "7"})

    await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.log[:5] == [
        "annotate a=0",
        "annotate b=2",
        "annotate c=0",
        "annotate d=1",
        "annotate e=2",
    ]
    (event,) = [e for e in cluster.events if e[2] == "PodDeletionCostUpdated"]
    assert "(2 without a value, counted as idle)" in event[3]


async def test_the_controller_counts_rankings_and_writes() -> None:
    cluster, obj = setup(queue="30")
    cluster.annotate_errors["b"] = ClusterError("Forbidden", "no")
    rec = reconciler(cluster)
    controller = Controller(rec, store=_Store({}), config=ControllerConfig())
    outcome = await rec.reconcile(obj, now=NOW)

    controller._account("default/web", outcome)

    read = controller.metrics.registry.get_sample_value
    rankings = "promscaler_autoscaler_pod_deletion_cost_rankings_total"
    writes = "promscaler_autoscaler_pod_deletion_cost_writes_total"
    assert read(rankings, {"outcome": "PatchFailed"}) == 1
    assert read(writes, {"result": "success"}) == 4
    assert read(writes, {"result": "failure"}) == 1


class _Store:
    def __init__(self, objects: dict[str, Any]) -> None:
        self.objects = objects


async def test_a_hung_cost_metric_runs_out_of_its_budget_and_the_scale_down_goes_ahead() -> None:
    cluster, obj = setup(queue="30")
    cluster.cost_delay = 30.0  # an adapter that never answers

    outcome = await asyncio.wait_for(
        reconciler(cluster, deletion_cost_budget=0.2).reconcile(obj, now=NOW), timeout=5
    )

    assert cluster.log == ["scale 3"]
    assert outcome.deletion_cost is not None
    assert outcome.deletion_cost.outcome == "Timeout"
    (event,) = [e for e in cluster.events if e[2] == "FailedUpdatePodDeletionCost"]
    assert event[3] == (
        "pod-deletion-cost not fully written: the ranking took over 0.2s; scaling 5 -> 3 anyway"
    )
