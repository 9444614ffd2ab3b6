"""The soak's Autoscalers, their targets and metrics, and the load each one sees. Pure.

Most Autoscalers drive a pod-less custom resource with `/scale` (`Worker`, as the controller
benchmark does: the sandbox cannot run thousands of pods quickly); a few drive Deployments
whose pods carry a Pods metric. Metrics: External (`soak_queue{queue}`), Object (`soak_backlog`
of a Service) and Pods (`soak_requests` per pod); every fourth External one has minReplicas 0.
Each follows the demo's load shape from its own offset, scaled to its own range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from demo.scenario import duration as shape_duration
from demo.scenario import load_at
from sandbox.manifests import crd

__all__ = ["RULES", "Member", "fleet", "value_at"]

NS = "soak"
GROUP = "soak.promscaler.dev"
TARGET = 5.0  # every metric's target per replica (AverageValue) or for the object (Value)
PEAK_RPS = 240.0  # the demo shape's highest web load: its level 1.0

RULES = """\
rules:
- seriesQuery: 'soak_requests{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'soak_backlog{namespace!="",service!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      service: {resource: service}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
externalRules:
- seriesQuery: 'soak_queue{queue!=""}'
  resources: {namespaced: false}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)'
"""

WORKERS_CRD: dict[str, Any] = crd(GROUP, "Worker", scale=True, status=True)


@dataclass(frozen=True)
class Member:
    """One Autoscaler and what it scales."""

    name: str
    metric: str  # "External", "Object" or "Pods"
    min_replicas: int
    max_replicas: int
    offset: float  # seconds into the load shape at the run's start
    down_window: int  # scaleDown stabilizationWindowSeconds

    @property
    def target_kind(self) -> str:
        return "Deployment" if self.metric == "Pods" else "Worker"


def fleet(n: int, *, pods: int, seed: int) -> list[Member]:
    """`n` Autoscalers, the first `pods` of them on Deployments with a Pods metric."""
    out = []
    for i in range(n):
        metric = "Pods" if i < pods else ("Object" if i % 3 == 0 else "External")
        zero = metric == "External" and i % 4 == 1
        out.append(
            Member(
                name=f"s{i}",
                metric=metric,
                min_replicas=0 if zero else 1,
                max_replicas=4 if metric == "Pods" else 8,
                offset=(seed * 7919 + i * 37) % int(shape_duration()),
                down_window=(0, 2, 4)[i % 3],
            )
        )
    return out


def value_at(member: Member, t: float, *, speed: float) -> float:
    """The member's metric total at `t` seconds into the run: its share of the demo shape's
    load, so the wanted replicas move between 0 (or 1) and about its max."""
    load = load_at((t * speed + member.offset) % shape_duration())
    level = load.web_rps / PEAK_RPS if member.min_replicas else load.arrivals / 36.0
    return round(level * member.max_replicas * TARGET * 0.9, 1)


def autoscaler(member: Member) -> dict[str, Any]:
    ref_api = "apps/v1" if member.target_kind == "Deployment" else f"{GROUP}/v1"
    return {
        "apiVersion": "promscaler.dev/v1alpha1",
        "kind": "Autoscaler",
        "metadata": {"name": member.name, "namespace": NS},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": ref_api,
                "kind": member.target_kind,
                "name": member.name,
            },
            "minReplicas": member.min_replicas,
            "maxReplicas": member.max_replicas,
            "metrics": [_metric(member)],
            "behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 0},
                "scaleDown": {"stabilizationWindowSeconds": member.down_window},
            },
        },
    }


def _metric(member: Member) -> dict[str, Any]:
    average = {"type": "AverageValue", "averageValue": f"{TARGET:g}"}
    if member.metric == "Pods":
        return {"type": "Pods", "pods": {"metric": {"name": "soak_requests"}, "target": average}}
    if member.metric == "Object":
        return {
            "type": "Object",
            "object": {
                "describedObject": {"apiVersion": "v1", "kind": "Service", "name": member.name},
                "metric": {"name": "soak_backlog"},
                "target": average,
            },
        }
    selector = {"matchLabels": {"queue": member.name}}
    return {
        "type": "External",
        "external": {"metric": {"name": "soak_queue", "selector": selector}, "target": average},
    }


def target(member: Member) -> tuple[str, dict[str, Any]]:
    """(collection path, object) of the member's scale target."""
    labels = {"app": member.name}
    if member.target_kind == "Deployment":
        return f"/apis/apps/v1/namespaces/{NS}/deployments", {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": member.name, "namespace": NS},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "app", "image": "example.com/app:1"}]},
                },
            },
        }
    return f"/apis/{GROUP}/v1/namespaces/{NS}/workers", {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Worker",
        "metadata": {"name": member.name, "namespace": NS},
        "spec": {"replicas": 1, "selector": f"app={member.name}"},
    }


def service(member: Member) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": member.name, "namespace": NS},
        "spec": {"ports": [{"port": 80}]},
    }


def series(
    member: Member, value: float, ready_pods: list[str], now: float
) -> list[tuple[dict[str, str], list[tuple[float, float]]]]:
    """Remote-write series carrying `value` for the member's metric."""
    if member.metric == "Pods":
        share = value / len(ready_pods) if ready_pods else 0.0
        return [
            ({"__name__": "soak_requests", "namespace": NS, "pod": pod}, [(now, share)])
            for pod in ready_pods
        ]
    if member.metric == "Object":
        labels = {"__name__": "soak_backlog", "namespace": NS, "service": member.name}
        return [(labels, [(now, value)])]
    return [({"__name__": "soak_queue", "queue": member.name}, [(now, value)])]


def wanted(member: Member, value: float, ready: int) -> int:
    """Replicas the metric alone asks for (AverageValue over the pods or replicas), clamped;
    the picture's reference line, not a check."""
    if member.metric == "Pods":
        return max(member.min_replicas, min(member.max_replicas, max(1, ready)))
    return max(member.min_replicas, min(member.max_replicas, math.ceil(value / TARGET)))
