"""The TARGETS printer column, as `kubectl get hpa` formats it."""

from __future__ import annotations

import pytest

from autoscaler.statusview import reference, targets
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
