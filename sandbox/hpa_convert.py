"""HorizontalPodAutoscaler: one stored `autoscaling/v2` object, served as v1 too.

Upstream's v1 conversion (`pkg/apis/autoscaling/v1/conversion.go`) keeps what v1 cannot say in
annotations: every metric but a CPU utilization target in `autoscaling.alpha.kubernetes.io/
metrics`, the metric statuses in `.../current-metrics`, the conditions in `.../conditions`, and
`spec.behavior` in `.../behavior` (the internal Go type marshalled, so its keys are the Go field
names: `ScaleUp`, `StabilizationWindowSeconds`, ...). The v1 metric shapes are v2beta1's
(`targetAverageValue`, `metricName`, ...). Going back, the annotations are read and removed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from sandbox.hpa_v1_metrics import (
    metric_spec_from_v1,
    metric_spec_to_v1,
    metric_status_from_v1,
    metric_status_to_v1,
    pick,
)
from sandbox.kinds import default_hpa_spec

Obj = dict[str, Any]

V1 = "autoscaling/v1"
V2 = "autoscaling/v2"
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP = (METRICS, BEHAVIOR, CURRENT_METRICS, CONDITIONS)
DEFAULT_CPU_UTILIZATION = 80  # autoscaling.DefaultCPUUtilization
# MetricSpec.type -> the field holding its source
SOURCES = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}


def _compact(value: Any) -> str:
    """Go's json.Marshal layout: no spaces."""
    return json.dumps(value, separators=(",", ":"))


# ---- v2 -> v1 ------------------------------------------------------------------------------


def _is_cpu_utilization(metric: Obj) -> bool:
    res = metric.get("resource") or {}
    target = res.get("target") or {}
    return (
        metric.get("type") == "Resource"
        and res.get("name") == "cpu"
        and target.get("averageUtilization") is not None
    )


def _rules_to_internal(rules: Obj | None) -> Obj | None:
    if rules is None:
        return None
    return {
        "StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
        "SelectPolicy": rules.get("selectPolicy"),
        "Policies": [
            {
                "Type": p.get("type"),
                "Value": p.get("value"),
                "PeriodSeconds": p.get("periodSeconds"),
            }
            for p in rules.get("policies") or []
        ]
        or None,
        "Tolerance": rules.get("tolerance"),
    }


def behavior_annotation(behavior: Obj) -> str:
    """The internal HorizontalPodAutoscalerBehavior marshalled (Go names, nil pointers null)."""
    return _compact(
        {
            "ScaleUp": _rules_to_internal(behavior.get("scaleUp")),
            "ScaleDown": _rules_to_internal(behavior.get("scaleDown")),
        }
    )


def _v1_spec(spec: Obj) -> Obj:
    out: Obj = {"scaleTargetRef": dict(spec.get("scaleTargetRef") or {})}
    if spec.get("minReplicas") is not None:
        out["minReplicas"] = spec["minReplicas"]
    out["maxReplicas"] = spec.get("maxReplicas", 0)
    for m in spec.get("metrics") or []:
        if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu":
            utilization = ((m["resource"].get("target")) or {}).get("averageUtilization")
            if utilization is not None:
                out["targetCPUUtilizationPercentage"] = utilization
            break  # the first CPU metric decides, as upstream
    return out


def _v1_status(status: Obj) -> Obj:
    out: Obj = {}
    for key in ("observedGeneration", "lastScaleTime"):
        if status.get(key) is not None:
            out[key] = status[key]
    out["currentReplicas"] = status.get("currentReplicas", 0)
    out["desiredReplicas"] = status.get("desiredReplicas", 0)
    for m in status.get("currentMetrics") or []:
        res = m.get("resource") or {}
        current = (res.get("current") or {}).get("averageUtilization")
        if m.get("type") == "Resource" and res.get("name") == "cpu" and current is not None:
            out["currentCPUUtilizationPercentage"] = current  # the last one wins, as upstream
    return out


def to_v1(obj: Obj) -> Obj:
    """The stored v2 object as `autoscaling/v1` serves it."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    meta = copy.deepcopy(obj.get("metadata") or {})
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in ROUND_TRIP}
    other = [metric_spec_to_v1(m) for m in spec.get("metrics") or [] if not _is_cpu_utilization(m)]
    if other:
        notes[METRICS] = _compact(other)
    if status.get("currentMetrics"):
        notes[CURRENT_METRICS] = _compact(
            [metric_status_to_v1(s) for s in status["currentMetrics"]]
        )
    if status.get("conditions"):
        notes[CONDITIONS] = _compact(
            [
                pick(
                    ("type", c.get("type")),
                    ("status", c.get("status")),
                    ("lastTransitionTime", c.get("lastTransitionTime")),
                    ("reason", c.get("reason") or None),
                    ("message", c.get("message") or None),
                )
                for c in status["conditions"]
            ]
        )
    if spec.get("behavior") is not None:
        notes[BEHAVIOR] = behavior_annotation(spec["behavior"])
    if notes:
        meta["annotations"] = notes
    else:
        meta.pop("annotations", None)
    out: Obj = {"kind": "HorizontalPodAutoscaler", "apiVersion": V1, "metadata": meta}
    out["spec"] = _v1_spec(spec)
    if "status" in obj:
        out["status"] = _v1_status(status)
    return out


# ---- v1 -> v2 ------------------------------------------------------------------------------


def _rules_from_internal(rules: Any) -> Obj | None:
    if not isinstance(rules, dict):
        return None
    out = pick(
        ("stabilizationWindowSeconds", rules.get("StabilizationWindowSeconds")),
        ("selectPolicy", rules.get("SelectPolicy")),
        ("tolerance", rules.get("Tolerance")),
    )
    policies = rules.get("Policies")
    if isinstance(policies, list):
        out["policies"] = [
            {
                "type": p.get("Type"),
                "value": p.get("Value"),
                "periodSeconds": p.get("PeriodSeconds"),
            }
            for p in policies
            if isinstance(p, dict)
        ]
    return out


def behavior_from_annotation(text: str) -> Obj | None:
    """spec.behavior from the annotation; None when malformed or empty (upstream ignores it)."""
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    up, down = _rules_from_internal(raw.get("ScaleUp")), _rules_from_internal(raw.get("ScaleDown"))
    if up is None and down is None:
        return None
    return pick(("scaleUp", up), ("scaleDown", down)) or None


def _annotation_list(notes: dict[str, str], key: str) -> list[Obj] | None:
    text = notes.pop(key, None)
    if text is None:
        return None
    value = json.loads(text)  # a broken annotation fails the request, as upstream's decode does
    if not isinstance(value, list):
        raise ValueError(f"annotation {key}: must hold a JSON list")
    return [v for v in value if isinstance(v, dict)]


def from_v1(obj: Obj) -> Obj:
    """A v1 object (as sent by a client) as the stored v2 object; raises ValueError on a
    malformed round-trip annotation."""
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata") or {}
    notes = dict(meta.get("annotations") or {})
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    v2spec: Obj = {"scaleTargetRef": spec.get("scaleTargetRef") or {}}
    if spec.get("minReplicas") is not None:
        v2spec["minReplicas"] = spec["minReplicas"]
    v2spec["maxReplicas"] = spec.get("maxReplicas", 0)
    metrics = [metric_spec_from_v1(m) for m in _annotation_list(notes, METRICS) or []]
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is not None:
        metrics.append(_cpu_metric(cpu))
    v2spec["metrics"] = metrics or [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    behavior_text = notes.pop(BEHAVIOR, None)
    behavior = behavior_from_annotation(behavior_text) if behavior_text is not None else None
    if behavior is not None:
        v2spec["behavior"] = behavior
    v2status = _v2_status(status, notes)
    for key in ROUND_TRIP:
        notes.pop(key, None)
    if notes:
        meta["annotations"] = notes
    else:
        meta.pop("annotations", None)
    out: Obj = {"kind": "HorizontalPodAutoscaler", "apiVersion": V2, "metadata": meta}
    out["spec"] = v2spec
    if "status" in obj or v2status.get("conditions"):
        out["status"] = v2status
    return out


def _cpu_metric(utilization: Any) -> Obj:
    return {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": utilization},
        },
    }


def _v2_status(status: Obj, notes: dict[str, str]) -> Obj:
    out: Obj = {}
    for key in ("observedGeneration", "lastScaleTime"):
        if status.get(key) is not None:
            out[key] = status[key]
    if status.get("currentReplicas"):
        out["currentReplicas"] = status["currentReplicas"]
    out["desiredReplicas"] = status.get("desiredReplicas", 0)
    current = _annotation_list(notes, CURRENT_METRICS)
    if current is not None:
        out["currentMetrics"] = [metric_status_from_v1(s) for s in current]
    elif status.get("currentCPUUtilizationPercentage") is not None:
        out["currentMetrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "current": {"averageUtilization": status["currentCPUUtilizationPercentage"]},
                },
            }
        ]
    conditions = _annotation_list(notes, CONDITIONS)
    if conditions is not None:
        out["conditions"] = conditions
    return out


# ---- the two ends the API uses -------------------------------------------------------------


def served(version: str, stored: Obj) -> Obj:
    """The stored (v2) object as `version` serves it."""
    return to_v1(stored) if version == "v1" else stored


def decoded(version: str, body: Obj) -> Obj:
    """A request body of `version` as the stored v2 object, with v2's defaults applied (the
    real server defaults every decoded object, on update as on create)."""
    obj = from_v1(body) if version == "v1" else body
    spec = obj.get("spec")
    if isinstance(spec, dict):
        default_hpa_spec(spec)
    return obj
