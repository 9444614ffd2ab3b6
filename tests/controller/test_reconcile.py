"""One reconcile pass against a fake cluster: what is read, what the core sees, what is written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from autoscaler.cluster import ClusterError
from autoscaler.core import decide_document
from autoscaler.reconcile import ControllerOptions, Reconciler
from tests.controller.fakes import (
    FakeCluster,
    ScriptedDecide,
    autoscaler,
    external,
    external_value,
    pods_metric,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def reconciler(cluster, decide=decide_document, **options):
    return Reconciler(cluster, options=ControllerOptions(**options), decide=decide)


def reasons(cluster):
    return [e[2] for e in cluster.events]


async def test_scale_up_writes_scale_event_and_status_with_history():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("55")
    obj = autoscaler(metrics=[external("queue", "10", average=True)], generation=3)

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    # ceil(55/10) = 6, limited by the default scale-up rule to max(2*2, 4) = 4
    assert cluster.scale_writes == [("web", 4)]
    assert outcome.rescaled
    assert outcome.replicas == 4
    assert outcome.reason == "SucceededRescale"
    assert cluster.events[0][1:3] == ("Normal", "SuccessfulRescale")
    assert cluster.events[0][3] == "New size: 4; reason: external metric queue(nil) above target"
    ((key, patch),) = cluster.status_patches
    assert key == "default/web"
    assert patch["observedGeneration"] == 3
    assert patch["desiredReplicas"] == 4
    assert patch["reference"] == "Deployment/web"
    assert patch["targets"] == "27500m/10"
    assert [r["replicas"] for r in patch["history"]["recommendations"]] == [2, 6]
    # the decision explained for `kubectl describe pas`: the summary and one line per step
    assert patch["decision"]["summary"] == "scale 2 -> 4: external metric queue(nil) above target"
    assert patch["decision"]["explanation"][0].startswith("metrics[0] external metric queue")
    assert len(patch["decision"]["explanation"]) >= 2


async def test_unchanged_status_is_not_written_again():
    cluster = FakeCluster()
    cluster.add_target("web", 4)
    cluster.metrics["queue"] = external_value("40")
    obj = autoscaler(metrics=[external("queue", "10", average=True)])
    rec = reconciler(cluster)
    await rec.reconcile(obj, now=NOW)
    assert len(cluster.status_patches) == 1
    obj["status"] = {k: v for k, v in cluster.status_patches[0][1].items() if v is not None}

    await rec.reconcile(obj, now=NOW)

    assert len(cluster.status_patches) == 1, "a pass that changes nothing writes nothing"
    assert cluster.scale_writes == []


async def test_history_from_status_feeds_the_next_pass():
    cluster = FakeCluster()
    cluster.add_target("web", 4)
    cluster.metrics["queue"] = external_value("10")
    obj = autoscaler(metrics=[external("queue", "10", average=True)])
    history = {
        "recommendations": [{"replicas": 4, "timestamp": "2025-12-31T23:59:00Z"}],
        "scaleUpEvents": [],
        "scaleDownEvents": [],
    }
    obj["status"] = {"history": history}
    decide = ScriptedDecide(decide_document)

    await reconciler(cluster, decide).reconcile(obj, now=NOW)

    assert decide.docs[0]["history"] == history
    # 10/10 per pod over 4 pods proposes 1, but the 5-minute downscale window holds 4
    assert cluster.scale_writes == []


async def test_metric_fetch_error_becomes_error_entry_and_never_scales_down():
    cluster = FakeCluster()
    cluster.add_target("web", 5)
    obj = autoscaler(metrics=[external("queue", "10", average=True)])  # no "queue" metric
    decide = ScriptedDecide(decide_document)

    outcome = await reconciler(cluster, decide).reconcile(obj, now=NOW)

    assert decide.docs[0]["metrics"] == [{"error": "no metric queue"}]
    assert cluster.scale_writes == []
    assert outcome.reason == "FailedGetExternalMetric"
    assert reasons(cluster) == ["FailedGetExternalMetric", "FailedComputeMetricsReplicas"]
    conds = {c["type"]: c for c in cluster.status_patches[0][1]["conditions"]}
    assert conds["ScalingActive"]["status"] == "False"


async def test_failed_get_scale_sets_condition_and_event_without_deciding():
    cluster = FakeCluster()
    cluster.scale_errors["web"] = ClusterError("NotFound", 'deployments.apps "web" not found')
    decide = ScriptedDecide(decide_document)

    outcome = await reconciler(cluster, decide).reconcile(autoscaler(), now=NOW)

    assert decide.docs == []
    assert outcome.error
    assert outcome.reason == "FailedGetScale"
    assert reasons(cluster) == ["FailedGetScale"]
    (cond,) = cluster.status_patches[0][1]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == (
        "AbleToScale",
        "False",
        "FailedGetScale",
    )


async def test_failed_scale_write_keeps_desired_and_scale_events():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.update_errors["web"] = ClusterError("Conflict", "the object has been modified")
    cluster.metrics["queue"] = external_value("55")
    obj = autoscaler(metrics=[external("queue", "10", average=True)])
    obj["status"] = {"desiredReplicas": 2, "currentReplicas": 2}
    obj["spec"]["behavior"] = {
        "scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}
    }

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert outcome.reason == "FailedUpdateScale"
    assert outcome.error
    assert reasons(cluster) == ["FailedRescale"]
    assert cluster.events[0][3].startswith("New size: 3; reason: ")
    patch = cluster.status_patches[0][1]
    assert patch["desiredReplicas"] == 2
    assert patch["history"]["scaleUpEvents"] == [], "a failed write is not a scale event"
    conds = {c["type"]: c for c in patch["conditions"]}
    assert conds["AbleToScale"]["reason"] == "FailedUpdateScale"
    assert patch["decision"]["summary"].endswith("(not written)")
    assert patch["decision"]["summary"].startswith("New size: 3; reason: ")


async def test_invalid_spec_gets_condition_and_event_not_an_exception():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    obj = autoscaler(metrics=[{"type": "External"}])  # no external source

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert outcome.reason == "InvalidSpec"
    assert outcome.error
    assert reasons(cluster) == ["FailedComputeMetricsReplicas"]
    assert "external" in cluster.events[0][3]
    conds = {c["type"]: c for c in cluster.status_patches[0][1]["conditions"]}
    assert conds["ScalingActive"]["reason"] == "InvalidSpec"
    summary = cluster.status_patches[0][1]["decision"]["summary"]
    assert summary.startswith("no decision (InvalidSpec): ")


async def test_follower_reads_and_decides_but_never_writes():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    cluster.metrics["queue"] = external_value("55")
    obj = autoscaler(metrics=[external("queue", "10", average=True)])

    await reconciler(cluster).reconcile(obj, now=NOW, write=False)

    assert cluster.scale_writes == []
    assert cluster.status_patches == []
    assert cluster.events == []


@pytest.mark.parametrize(
    ("metrics", "want_pod_calls"),
    [
        pytest.param([external("queue", "10", average=True)], 0, id="external-average-skips-pods"),
        pytest.param([external("queue", "10")], 1, id="external-value-counts-ready-pods"),
        pytest.param([pods_metric("rps", "10")], 1, id="pods-metric-lists-pods"),
    ],
)
async def test_pods_are_listed_only_when_a_metric_needs_them(metrics, want_pod_calls):
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    await reconciler(cluster).reconcile(autoscaler(metrics=metrics), now=NOW)
    assert cluster.pod_calls == want_pod_calls


async def test_scale_to_zero_then_fast_wake_outcome():
    cluster = FakeCluster()
    cluster.add_target("web", 1)
    cluster.metrics["queue"] = external_value("0")
    obj = autoscaler(metrics=[external("queue", "10", average=True)], min_replicas=0)
    obj["spec"]["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": 0}}
    rec = reconciler(cluster)

    down = await rec.reconcile(obj, now=NOW)
    assert cluster.scale_writes == [("web", 0)]
    assert down.at_zero_awake, "a target just scaled to zero is polled fast"
    obj["status"] = cluster.status_patches[-1][1]
    conds = {c["type"]: c for c in obj["status"]["conditions"]}
    assert (conds["ScaledToZero"]["status"], conds["ScaledToZero"]["reason"]) == (
        "True",
        "ScaledToZero",
    )

    cluster.metrics["queue"] = external_value("25")
    up = await rec.reconcile(obj, now=NOW + timedelta(seconds=1))
    assert cluster.scale_writes[-1] == ("web", 3)
    assert up.replicas == 3
    assert not up.at_zero_awake


async def test_manual_zero_stays_with_scaling_disabled():
    cluster = FakeCluster()
    cluster.add_target("web", 0)
    cluster.metrics["queue"] = external_value("100")
    obj = autoscaler(metrics=[external("queue", "10", average=True)], min_replicas=1)

    outcome = await reconciler(cluster).reconcile(obj, now=NOW)

    assert cluster.scale_writes == []
    assert outcome.reason == "ScalingDisabled"
    assert not outcome.at_zero_awake


def ready_pod(name: str) -> dict:
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


async def test_external_value_target_scales_by_the_ready_pod_count():
    cluster = FakeCluster()
    cluster.add_target("web", 3)
    cluster.pods = [ready_pod("a"), ready_pod("b")]  # one of the 3 replicas has no pod yet
    cluster.metrics["queue"] = external_value("30")
    obj = autoscaler(metrics=[external("queue", "10")])

    await reconciler(cluster).reconcile(obj, now=NOW)

    # ratio 30/10 = 3 times the 2 ready pods (upstream getUsageRatioReplicaCount)
    assert cluster.scale_writes == [("web", 6)]


async def test_no_metrics_means_cpu_utilization_80_as_the_hpa_defaults():
    cluster = FakeCluster()
    cluster.add_target("web", 2)
    seen = []

    def recording(doc):
        seen.append(doc)
        return decide_document(doc)

    obj = autoscaler(metrics=[])
    outcome = await reconciler(cluster, decide=recording).reconcile(obj, now=NOW)

    (doc,) = seen
    assert doc["autoscaler"]["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]
    assert len(doc["metrics"]) == 1, "one fetched entry for the defaulted cpu metric"
    # the fake cluster serves no cpu samples: the metric fails, it is not an invalid spec
    assert outcome.reason != "InvalidSpec"
    assert "FailedGetResourceMetric" in reasons(cluster)
    assert obj["spec"]["metrics"] == [], "the object itself is not modified"


def test_the_document_time_is_format_time_of_each_pass():
    """The pass formats its time once per second; each document still says its own second."""
    from autoscaler.reconcile import _now_text
    from common.kubetime import format_time

    base = datetime(2026, 12, 2, 8, 0, 0, tzinfo=UTC)
    steps = [0, 0.2, 0.999, 1.0, 1.5, -3.25, 59.9, 3600.0, 0.4]
    for step in steps:
        now = base + timedelta(seconds=step)
        assert _now_text(now) == format_time(now)
    before_epoch = datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    assert _now_text(before_epoch) == format_time(before_epoch) == "1969-12-31T23:59:59Z"
    elsewhere = (base + timedelta(seconds=7)).astimezone(timezone(timedelta(hours=1)))
    assert _now_text(elsewhere) == format_time(elsewhere) == "2026-12-02T08:00:07Z"
