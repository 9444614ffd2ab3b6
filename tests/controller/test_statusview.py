"""The TARGETS printer column, as `kubectl get hpa` formats it."""

from __future__ import annotations

import pytest

from autoscaler.statusview import effective_bounds, reference, snapshot, targets
from tests.controller.fakes import external, pods_metric

CPU = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
}


@pytest.mark.parametrize(
    ("metrics", "current", "want"),
    [
        pytest.param(
            [external("queue", "10", average=True)],
            [{"type": "External", "external": {"current": {"averageValue": "27500m"}}}],
            "27500m/10",
            id="external-average",
        ),
        pytest.param(
            [external("queue", "50")],
            [{"type": "External", "external": {"current": {"value": "42"}}}],
            "42/50",
            id="external-value",
        ),
        pytest.param(
            [CPU, pods_metric("rps", "1")],
            [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "current": {"averageUtilization": 30}},
                },
                {"type": "Pods", "pods": {"current": {"averageValue": "300m"}}},
            ],
            "cpu: 30%/80%, 300m/1",
            id="cpu-and-pods",
        ),
        pytest.param([external("queue", "50")], [{"type": ""}], "<unknown>/50", id="unreadable"),
        pytest.param([external("queue", "50")], None, "<unknown>/50", id="no-status-yet"),
        pytest.param([], None, "<none>", id="no-metrics"),
    ],
)
def test_targets_column(metrics, current, want):
    assert targets({"metrics": metrics}, current) == want


def test_reference_column():
    assert (
        reference({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
        == "Deployment/web"
    )


@pytest.mark.parametrize(
    ("spec", "schedules", "bounds"),
    [
        pytest.param({"maxReplicas": 10}, [], (1, 10), id="min-defaults-to-1"),
        pytest.param({"minReplicas": 0, "maxReplicas": 10}, [], (0, 10), id="zero-floor"),
        pytest.param(
            {"minReplicas": 2, "maxReplicas": 10},
            [{"minReplicas": 8}, {"minReplicas": 5, "maxReplicas": 9}],
            (8, 9),
            id="largest-floor-smallest-ceiling",
        ),
        pytest.param(
            {"minReplicas": 2, "maxReplicas": 10},
            [{"minReplicas": 8}, {"minReplicas": 1, "maxReplicas": 6}],
            (6, 6),
            id="crossing-windows-the-ceiling-wins",
        ),
    ],
)
def test_effective_bounds_follow_the_active_schedules(spec, schedules, bounds):
    assert effective_bounds(spec, {"schedules": schedules}) == bounds


def test_snapshot_reads_values_targets_and_labels():
    spec = {
        "maxReplicas": 10,
        "metrics": [
            {
                "type": "External",
                "external": {
                    "metric": {"name": "q"},
                    "target": {"type": "AverageValue", "averageValue": "10"},
                },
            },
            {
                "type": "External",
                "external": {
                    "metric": {"name": "q"},
                    "target": {"type": "Value", "value": "1500m"},
                },
            },
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            },
        ],
    }
    status = {
        "currentReplicas": 2,
        "desiredReplicas": 3,
        "paused": True,
        "currentMetrics": [
            {"type": "External", "external": {"current": {"averageValue": "27500m"}}},
            {"type": "External", "external": {"current": {"value": "2"}}},
            {"type": "Resource", "resource": {"current": {"averageUtilization": 40}}},
        ],
        "conditions": [{"type": "Paused", "status": "True"}],
    }
    snap = snapshot(spec, status)
    assert snap.metrics == (("q", 27.5, 10.0), ("q#1", 2.0, 1.5), ("cpu", 40.0, 80.0))
    assert (snap.paused, snap.in_fallback) == (True, False)
    assert (snap.current_replicas, snap.desired_replicas) == (2, 3)
    assert snap.conditions == (("Paused", "True"),)


@pytest.mark.parametrize(
    ("value", "want"),
    [("1500m", 1.5), ("10", 10.0), ("2Ki", 2048.0), ("ten", None), (3, 3.0), (True, None)],
)
def test_gauge_numbers_are_the_same_when_remembered(value, want):
    from autoscaler.statusview import _number

    assert _number(value) == want
    assert _number(value) == want  # the second time from the memo
