"""Per-metric proposals (replica_calculator.go, metrics/utilization.go, and the dispatch of
horizontal.go's computeStatusFor*Metric).

Each calculator returns a `Proposal` or raises `MetricFailure` carrying the condition reason,
upstream's condition message and the error the pass reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autoscaler.core.model import (
    CONTAINER_RESOURCE,
    EXTERNAL,
    NS,
    OBJECT,
    PODS,
    RESOURCE,
    MetricError,
    MetricInput,
    MetricItems,
    MetricSpec,
    ResourceMetrics,
)
from autoscaler.core.numeric import ceil_int32, clamp_int32, fdiv, tdiv, wrap_int64
from autoscaler.core.objects import external_proposal, object_proposal
from autoscaler.core.pods import (
    CalculationError,
    Grouping,
    PodSample,
    calculate_requests,
    group_pods,
    pod_usage,
    pods_metric_values,
)
from autoscaler.core.proposal import (
    Context,
    MetricFailure,
    Proposal,
    format_milli,
    identifier,
    label,
)
from autoscaler.core.tolerances import Tolerances

__all__ = ["Context", "MetricFailure", "Proposal", "propose"]


def propose(ctx: Context, spec: MetricSpec, data: MetricInput) -> Proposal:
    """Dispatch one metric to its calculator, as computeReplicasForMetric does."""
    kind = spec.type
    if kind in (RESOURCE, CONTAINER_RESOURCE):
        return _resource(ctx, spec, data)
    if kind == PODS:
        return _pods(ctx, spec, data)
    if kind == OBJECT:
        return object_proposal(ctx, spec, data)
    if kind == EXTERNAL:
        return external_proposal(ctx, spec, data)
    err = f'unknown metric source type "{kind}"'
    raise MetricFailure("InvalidMetricSourceType", err, err)


# ---- ratios (metrics/utilization.go) ----------------------------------------------------


def utilization_ratio(
    samples: Mapping[str, PodSample], requests: Mapping[str, int], target: int
) -> tuple[float, int, int]:
    """GetResourceUtilizationRatio: (ratio, utilization %, raw average in thousandths).

    Only pods with a request count; the percentage is truncated before the ratio is taken.
    """
    total = 0
    requested = 0
    entries = 0
    for name, sample in samples.items():
        request = requests.get(name)
        if request is None:
            continue  # a superfluous sample (a pod the selector did not return)
        total += sample[0]
        requested += request
        entries += 1
    if requested == 0:
        raise CalculationError("no metrics returned matched known pods")
    # exact arithmetic, clamped to int32 (upstream's overflow-safe revision)
    utilization = clamp_int32(tdiv(total * 100, requested))
    return utilization / target, utilization, tdiv(total, entries)


def usage_ratio(samples: Mapping[str, PodSample], target: int) -> tuple[float, int]:
    """GetMetricUsageRatio: (ratio, truncated average); superfluous samples count."""
    total = 0
    for sample in samples.values():
        total += sample[0]
    average = tdiv(wrap_int64(total), len(samples))
    return fdiv(float(average), float(target)), average


# ---- Resource and ContainerResource -----------------------------------------------------


def _resource(ctx: Context, spec: MetricSpec, data: MetricInput) -> Proposal:
    res = spec.name
    container = spec.container if spec.type == CONTAINER_RESOURCE else None
    reason = (
        "FailedGetContainerResourceMetric" if container is not None else "FailedGetResourceMetric"
    )
    # computeReplicasForMetric's wrap names the container for ContainerResource, else the resource
    wrap = f"{container} container" if container is not None else f"{res} resource"
    target = spec.target
    if target.average_value is not None:  # checked first, whatever target.type says
        try:
            return _raw_resource(ctx, spec, data, container)
        except CalculationError as e:
            cause = f"failed to get {res} usage: {e}"
            raise MetricFailure(reason, cause, f"failed to get {wrap} metric value: {cause}") from e
    if target.average_utilization is None:
        # one text for Resource and ContainerResource (computeStatusForResourceMetricGeneric)
        cause = (
            "invalid resource metric source: neither an average utilization target "
            "nor an average value (usage) target was set"
        )
        raise MetricFailure(reason, cause, f"failed to get {wrap} metric value: {cause}")
    try:
        return _utilization(ctx, spec, data, container, target.average_utilization)
    except CalculationError as e:
        cause = f"failed to get {res} utilization: {e}"
        raise MetricFailure(reason, cause, f"failed to get {wrap} metric value: {cause}") from e


def resource_quantity(resource: str, milli: int) -> str:
    """buildQuantity: memory is written BinarySI (as metrics-server does), the rest DecimalSI.

    BinarySI falls back to DecimalSI below 1024 bytes and for a fraction of a byte; otherwise it
    takes out every factor of 1024 (1048576 -> 1Mi, 1536 -> 1536).
    """
    if resource != "memory" or milli % 1000 != 0 or -1024 < milli // 1000 < 1024:
        return format_milli(milli)
    amount = milli // 1000
    negative = amount < 0
    amount = -amount if negative else amount
    exponent = 0
    while amount >= 1024 and amount % 1024 == 0:
        amount //= 1024
        exponent += 1
    suffix = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")[exponent]
    return f"{'-' if negative else ''}{amount}{suffix}"


def _resource_samples(
    spec: MetricSpec, data: MetricInput, container: str | None
) -> dict[str, PodSample]:
    if isinstance(data, MetricError):
        raise CalculationError(f"unable to get metrics for resource {spec.name}: {data.message}")
    assert isinstance(data, ResourceMetrics)
    try:
        return pod_usage(data.pods, spec.name, container)
    except CalculationError as e:
        raise CalculationError(f"unable to get metrics for resource {spec.name}: {e}") from e


def _grouped(ctx: Context, samples: dict[str, PodSample], resource: str) -> Grouping:
    if not ctx.pods:
        raise CalculationError("no pods returned by selector while calculating replica count")
    opts = ctx.options
    grouping = group_pods(
        ctx.pods,
        samples,
        resource,
        now=ctx.now,
        cpu_initialization_period=opts.cpu_initialization_period_seconds * NS,
        initial_readiness_delay=opts.initial_readiness_delay_seconds * NS,
    )
    for name, _ in grouping.ignored:
        samples.pop(name, None)
    for name, _ in grouping.unready:
        samples.pop(name, None)
    if not samples:
        raise CalculationError("did not receive metrics for targeted pods (pods might be unready)")
    return grouping


def _utilization(
    ctx: Context, spec: MetricSpec, data: MetricInput, container: str | None, target: int
) -> Proposal:
    """GetResourceReplicas: a Utilization target."""
    samples = _resource_samples(spec, data, container)
    grouping = _grouped(ctx, samples, spec.name)
    requests = calculate_requests(
        ctx.pods, container, spec.name, pod_level=ctx.options.pod_level_resources
    )
    ratio, util, raw = utilization_ratio(samples, requests, target)
    current = ctx.spec_replicas
    tol = ctx.tolerances
    scale_up_with_unready = bool(grouping.unready) and ratio > 1.0
    first = f"utilization {util}% of request vs target {target}% (ratio {ratio:.4g})"
    if not scale_up_with_unready and not grouping.missing:
        if tol.is_within(ratio):
            replicas, why = current, f"within {tol.describe()}"
        else:
            replicas = ceil_int32(ratio * grouping.ready_count)
            why = f"ceil({ratio:.4g} x {grouping.ready_count} ready pods)"
    else:
        if grouping.missing:
            if ratio < 1.0:
                # scale-down: a missing pod uses its request (or the target, above 100%)
                fallback = max(100, target)
                for name in grouping.missing:
                    samples[name] = (tdiv(requests[name] * fallback, 100), 0, 0)
            elif ratio > 1.0:
                for name in grouping.missing:  # on a scale-up a missing pod counts as idle
                    samples[name] = (0, 0, 0)
        if scale_up_with_unready:
            for name, _ in grouping.unready:  # on a scale-up an unready pod counts as idle
                samples[name] = (0, 0, 0)
        new_ratio, _, _ = utilization_ratio(samples, requests, target)
        replicas, why = _rebalanced(ratio, new_ratio, len(samples), current, tol)
    head = label(spec, container)
    kind = "container resource" if container else "resource"
    name = f"{spec.name} {kind} utilization (percentage of request)"
    current_status: dict[str, Any] = {
        "averageUtilization": util,
        "averageValue": resource_quantity(spec.name, raw),
    }
    return Proposal(
        replicas,
        _resource_status(spec, container, current_status),
        name,
        f"{head}: {first}; {_groups(grouping)}; proposes {replicas} ({why})",
    )


def _raw_resource(
    ctx: Context, spec: MetricSpec, data: MetricInput, container: str | None
) -> Proposal:
    """GetRawResourceReplicas: an AverageValue target on a resource."""
    assert spec.target.average_value is not None
    samples = _resource_samples(spec, data, container)
    replicas, usage, line = _plain(ctx, samples, spec.target.average_value, spec.name)
    head = label(spec, container)
    name = f"{spec.name} resource"  # upstream's name, for ContainerResource too
    status = _resource_status(
        spec, container, {"averageValue": resource_quantity(spec.name, usage)}
    )
    return Proposal(replicas, status, name, f"{head}: {line}")


def _resource_status(
    spec: MetricSpec, container: str | None, current: dict[str, Any]
) -> dict[str, Any]:
    if container is not None:
        return {
            "type": CONTAINER_RESOURCE,
            "containerResource": {"name": spec.name, "container": container, "current": current},
        }
    return {"type": RESOURCE, "resource": {"name": spec.name, "current": current}}


# ---- plain per-pod metrics (calcPlainMetricReplicas) -------------------------------------


def _plain(
    ctx: Context, samples: dict[str, PodSample], target: int, resource: str
) -> tuple[int, int, str]:
    grouping = _grouped(ctx, samples, resource)
    ratio, usage = usage_ratio(samples, target)
    current = ctx.spec_replicas
    tol = ctx.tolerances
    scale_up_with_unready = bool(grouping.unready) and ratio > 1.0
    first = f"average {format_milli(usage)} vs target {format_milli(target)} (ratio {ratio:.4g})"
    if not scale_up_with_unready and not grouping.missing:
        if tol.is_within(ratio):
            replicas, why = current, f"within {tol.describe()}"
        else:
            replicas = ceil_int32(ratio * grouping.ready_count)
            why = f"ceil({ratio:.4g} x {grouping.ready_count} ready pods)"
    else:
        if grouping.missing and ratio != 1.0:
            # scale-down: a missing pod is exactly at target; scale-up: idle; at exactly 1 it
            # stays out (upstream master, as the utilization calculator)
            fill = target if ratio < 1.0 else 0
            for name in grouping.missing:
                samples[name] = (fill, 0, 0)
        if scale_up_with_unready:
            for name, _ in grouping.unready:
                samples[name] = (0, 0, 0)
        new_ratio, _ = usage_ratio(samples, target)
        replicas, why = _rebalanced(ratio, new_ratio, len(samples), current, tol)
    return replicas, usage, f"{first}; {_groups(grouping)}; proposes {replicas} ({why})"


def _rebalanced(
    ratio: float, new_ratio: float, count: int, current: int, tol: Tolerances
) -> tuple[int, str]:
    """The second pass after filling in missing and unready pods."""
    if tol.is_within(new_ratio):
        return current, f"rebalanced ratio {new_ratio:.4g} within {tol.describe()}"
    if (ratio < 1.0 and new_ratio > 1.0) or (ratio > 1.0 and new_ratio < 1.0):
        return current, f"rebalanced ratio {new_ratio:.4g} would reverse the direction"
    replicas = ceil_int32(new_ratio * count)
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return current, f"ceil({new_ratio:.4g} x {count}) = {replicas} goes against the direction"
    return replicas, f"rebalanced: ceil({new_ratio:.4g} x {count} pods)"


def _groups(g: Grouping) -> str:
    parts = [f"{g.ready_count} ready"]
    if g.unready:
        parts.append(
            f"{len(g.unready)} unready (" + ", ".join(f"{n}: {w}" for n, w in g.unready) + ")"
        )
    if g.missing:
        parts.append(f"{len(g.missing)} without a sample (" + ", ".join(g.missing) + ")")
    if g.ignored:
        parts.append(
            f"{len(g.ignored)} ignored (" + ", ".join(f"{n}: {w}" for n, w in g.ignored) + ")"
        )
    return ", ".join(parts)


def _pods(ctx: Context, spec: MetricSpec, data: MetricInput) -> Proposal:
    reason = "FailedGetPodsMetric"
    target = spec.target.average_value
    if target is None:
        cause = "invalid pods metric source: an average value target was not set"
        raise MetricFailure(reason, cause, f"failed to get pods metric value: {cause}")
    try:
        if isinstance(data, MetricError):
            raise CalculationError(f"unable to get metric {spec.name}: {data.message}")
        assert isinstance(data, MetricItems)
        try:
            samples = pods_metric_values(data.items)
        except CalculationError as e:
            raise CalculationError(f"unable to get metric {spec.name}: {e}") from e
        replicas, usage, line = _plain(ctx, samples, target, "")
    except CalculationError as e:
        raise MetricFailure(reason, str(e), f"failed to get pods metric value: {e}") from e
    status = {
        "type": PODS,
        "pods": {"metric": identifier(spec), "current": {"averageValue": format_milli(usage)}},
    }
    return Proposal(replicas, status, f"pods metric {spec.name}", f"{label(spec)}: {line}")
