"""The controller's decision options (kube-controller-manager's HPA flags) and the spec as the
API defaults it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_METRICS", "ControllerOptions", "with_default_metrics"]

JSON = dict[str, Any]


@dataclass(frozen=True)
class ControllerOptions:
    """kube-controller-manager's HPA flags, passed to the core as the document's `controller`."""

    tolerance: float = 0.1  # ratio; --horizontal-pod-autoscaler-tolerance
    cpu_initialization_period: float = 300.0  # seconds; upstream default 5m
    initial_readiness_delay: float = 30.0  # seconds; upstream default 30s
    downscale_stabilization: float = 300.0  # seconds; upstream default 5m
    scale_to_zero: bool = True  # the HPAScaleToZero behaviour, always on here
    # seconds: how stale the persisted recommendation timestamps may get when nothing else
    # changed; every pass refreshes them, and writing each pass would cost one status write
    # per autoscaler per sync period
    history_refresh: float = 60.0
    # seconds the pod-deletion-cost ranking before a scale-down may take (metric read and pod
    # patches); past it the scale-down goes ahead, so a slow ranking never holds one back
    deletion_cost_budget: float = 5.0

    def document(self) -> JSON:
        return {
            "tolerance": self.tolerance,
            "cpuInitializationPeriodSeconds": int(self.cpu_initialization_period),
            "initialReadinessDelaySeconds": int(self.initial_readiness_delay),
            "downscaleStabilizationSeconds": int(self.downscale_stabilization),
            "scaleToZero": self.scale_to_zero,
        }


# SetDefaults_HorizontalPodAutoscaler: no metrics means CPU utilization at 80%
DEFAULT_METRICS: tuple[JSON, ...] = (
    {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
    },
)


def with_default_metrics(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec as the HPA API would default it: an empty `metrics` becomes CPU at 80%."""
    if spec.get("metrics"):
        return dict(spec)
    return {**spec, "metrics": [dict(m) for m in DEFAULT_METRICS]}
