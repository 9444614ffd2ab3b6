"""Object and External metrics (getUsageRatioReplicaCount, Get{Object,External}PerPodMetricReplicas
in replica_calculator.go): no pod grouping, ready pods only for a Value target."""

from __future__ import annotations

import math
from typing import Any

from autoscaler.core.model import (
    EXTERNAL,
    OBJECT,
    MetricError,
    MetricInput,
    MetricItems,
    MetricSpec,
)
from autoscaler.core.numeric import MAX_INT32, MAX_INT64, ceil_int32, fdiv, wrap_int64
from autoscaler.core.pods import CalculationError, ready_pods_count
from autoscaler.core.proposal import (
    Context,
    MetricFailure,
    Proposal,
    format_milli,
    identifier,
    label,
)

__all__ = ["external_proposal", "object_proposal"]


# ---- Object and External ---------------------------------------------------------------


def _values(spec: MetricSpec, data: MetricInput, api: str) -> list[int]:
    if isinstance(data, MetricError):
        raise CalculationError(f"unable to get {api} metric {spec.name}: {data.message}")
    assert isinstance(data, MetricItems)
    if not data.items:
        raise CalculationError(
            f"unable to get metric {spec.name}: no metrics returned from {api} metrics API"
        )
    return [m.value for m in data.items]


def _ratio_replicas(ctx: Context, ratio: float) -> tuple[int, str]:
    """getUsageRatioReplicaCount: tolerance and ready pods, or ceil(ratio) from zero."""
    current = ctx.spec_replicas
    if current == 0:
        # from zero no tolerance and no pods: this is what lets a target wake up
        return ceil_int32(ratio), f"ceil({ratio:.4g}) from zero replicas"
    if ctx.tolerances.is_within(ratio):
        return current, f"within {ctx.tolerances.describe()}"
    try:
        ready = ready_pods_count(ctx.pods)
    except CalculationError as e:
        raise CalculationError(f"unable to calculate ready pods: {e}") from e
    f = ratio * ready
    if f > MAX_INT32:
        return MAX_INT32, "capped at MaxInt32"
    return ceil_int32(f), f"ceil({ratio:.4g} x {ready} ready pods)"


def _per_pod_replicas(ctx: Context, usage: int, target: int, *, cap: bool) -> tuple[int, int, str]:
    """Get{Object,External}PerPodMetricReplicas: (replicas, per-pod usage, why)."""
    status_replicas = ctx.status_replicas
    ratio = fdiv(float(usage), float(target) * float(status_replicas))
    replicas = status_replicas
    why = (
        f"ratio {ratio:.4g} within {ctx.tolerances.describe()} of {status_replicas} status replicas"
    )
    if not ctx.tolerances.is_within(ratio):
        raw = fdiv(float(usage), float(target))
        replicas = MAX_INT32 if cap and raw > MAX_INT32 else ceil_int32(raw)
        why = f"ceil({format_milli(usage)} / {format_milli(target)}), ratio {ratio:.4g}"
    if float(usage) >= float(MAX_INT64):
        per_pod = MAX_INT64
    elif status_replicas == 0:
        per_pod = 0
    else:
        per_pod = math.ceil(float(usage) / float(status_replicas))
    return replicas, per_pod, why


def object_proposal(ctx: Context, spec: MetricSpec, data: MetricInput) -> Proposal:
    reason = "FailedGetObjectMetric"
    t = spec.target
    kind = (spec.described_object or {}).get("kind", "")
    inner = ""  # computeStatusForObjectMetric's own wrap (AverageValue only)
    try:
        if t.type == "Value" and t.value is not None:
            usage = _values(spec, data, "custom")[0]
            ratio = fdiv(float(usage), float(t.value))
            replicas, why = _ratio_replicas(ctx, ratio)
            current = {"value": format_milli(usage)}
            line = _value_line(usage, t.value, ratio, replicas, why)
            name = f"{kind} metric {spec.name}"
        elif t.type == "AverageValue" and t.average_value is not None:
            inner = f"failed to get {spec.name} object metric: "
            usage = _values(spec, data, "custom")[0]
            replicas, per_pod, why = _per_pod_replicas(ctx, usage, t.average_value, cap=False)
            current = {"averageValue": format_milli(per_pod)}
            line = _total_line(usage, t.average_value, replicas, why)
            # upstream names an Object AverageValue metric with the External text
            selector = (spec.metric or {}).get("selector")
            name = f"external metric {spec.name}({_go_selector(selector)})"
        else:
            cause = _NO_TARGET.format("object")
            raise MetricFailure(reason, cause, f"failed to get object metric value: {cause}")
    except CalculationError as e:
        raise MetricFailure(reason, str(e), f"failed to get object metric value: {inner}{e}") from e
    status: dict[str, Any] = {
        "type": OBJECT,
        "object": {"metric": identifier(spec), "current": current},
    }
    if spec.described_object is not None:
        status["object"]["describedObject"] = dict(spec.described_object)
    return Proposal(replicas, status, name, f"{label(spec)}: {line}")


def external_proposal(ctx: Context, spec: MetricSpec, data: MetricInput) -> Proposal:
    reason = "FailedGetExternalMetric"
    t = spec.target
    selector = (spec.metric or {}).get("selector")
    name = f"external metric {spec.name}({_go_selector(selector)})"
    wrap = f"failed to get {spec.name} external metric value: "  # computeReplicasForMetric's
    inner = ""  # computeStatusForExternalMetric's own wrap, per target
    try:
        if t.average_value is not None:  # checked first, whatever target.type says
            inner = f"failed to get {spec.name} external metric: "
            total = 0
            for v in _values(spec, data, "external"):
                total = wrap_int64(total + v)
                if total < 0:
                    # upstream takes any negative running sum for an overflow and stops there
                    total = MAX_INT64
                    break
            replicas, per_pod, why = _per_pod_replicas(ctx, total, t.average_value, cap=True)
            current = {"averageValue": format_milli(per_pod)}
            line = _total_line(total, t.average_value, replicas, why)
        elif t.value is not None:
            inner = f"failed to get external metric {spec.name}: "
            usage = 0
            for v in _values(spec, data, "external"):
                if v > 0 and usage > MAX_INT64 - v:
                    usage = MAX_INT64  # a positive overflow is capped, and the sum stops there
                    break
                usage = wrap_int64(usage + v)  # Go's int64 (a negative overflow wraps)
            ratio = fdiv(float(usage), float(t.value))
            replicas, why = _ratio_replicas(ctx, ratio)
            current = {"value": format_milli(usage)}
            line = _value_line(usage, t.value, ratio, replicas, why)
        else:
            cause = _NO_TARGET.format("external")
            raise MetricFailure(reason, cause, f"{wrap}{cause}")
    except CalculationError as e:
        raise MetricFailure(reason, str(e), f"{wrap}{inner}{e}") from e
    status = {"type": EXTERNAL, "external": {"metric": identifier(spec), "current": current}}
    return Proposal(replicas, status, name, f"{label(spec)}: {line}")


_NO_TARGET = "invalid {} metric source: neither a value target nor an average value target was set"


def _value_line(usage: int, target: int, ratio: float, replicas: int, why: str) -> str:
    return (
        f"value {format_milli(usage)} vs target {format_milli(target)} (ratio {ratio:.4g}); "
        f"proposes {replicas} ({why})"
    )


def _total_line(total: int, per_pod: int, replicas: int, why: str) -> str:
    return (
        f"total {format_milli(total)} vs {format_milli(per_pod)} per pod; "
        f"proposes {replicas} ({why})"
    )


def _go_selector(selector: Any) -> str:
    """How Go's %+v prints a *metav1.LabelSelector: its generated String(), "nil" for none.

    `&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:
    []LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}`
    (keys sorted; an empty selector is not nil).
    """
    if selector is None:
        return "nil"
    labels = selector.get("matchLabels") or {}
    inner = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or []
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{inner}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
