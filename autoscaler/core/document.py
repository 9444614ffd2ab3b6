"""The decide document (JSON) to the model: validation with messages naming the field path.

See docs/decision-document.md for the contract. Parsing is the hot path of `decide --jsonl`:
it reads each field once, converts quantities and times through small caches, and copies nothing
it does not need.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from autoscaler.core import fastparse
from autoscaler.core.behavior import DEFAULT_SCALE_DOWN, DEFAULT_SCALE_UP
from autoscaler.core.controls_document import parse_control_status, parse_controls
from autoscaler.core.controls_model import (
    EMPTY_CONTROL_STATUS,
    NO_CONTROLS,
    Controls,
    ControlStatus,
)
from autoscaler.core.deletioncost import parse_pod_deletion_cost
from autoscaler.core.fields import (
    DocumentError,
    _remember,
    as_bool,
    as_float,
    as_int,
    as_list,
    as_obj,
    as_str,
    milli,
    time_ns,
)
from autoscaler.core.forecast import Forecast
from autoscaler.core.inputs import as_dict, metric_input, parse_pod, required
from autoscaler.core.model import (
    CONTAINER_RESOURCE,
    EXTERNAL,
    OBJECT,
    PODS,
    RESOURCE,
    Behavior,
    Condition,
    ControllerOptions,
    History,
    MetricInput,
    MetricSpec,
    MetricTarget,
    Pod,
    Recommendation,
    Scale,
    ScaleEvent,
    ScalingPolicy,
    ScalingRules,
    Spec,
    Status,
)
from autoscaler.core.numeric import MAX_INT32
from autoscaler.core.predictive_document import parse_forecasts
from autoscaler.core.tolerances import parse_tolerance

I32 = MAX_INT32  # the API's int32 fields: nothing larger can be an HPA, a Scale or a history

__all__ = [
    "DocumentError",
    "Step",
    "parse_document",
    "parse_history",
    "parse_options",
    "parse_pod",
    "parse_spec",
    "parse_status",
]

# the API default for an autoscaler without metrics: CPU at 80% of requests
DEFAULT_METRICS = (
    MetricSpec(RESOURCE, "cpu", MetricTarget("Utilization", average_utilization=80)),
)
_SOURCE_KEYS = {
    RESOURCE: "resource",
    CONTAINER_RESOURCE: "containerResource",
    PODS: "pods",
    OBJECT: "object",
    EXTERNAL: "external",
}


@dataclass(frozen=True, slots=True)
class Step:
    """A parsed decide document: the arguments of `decide`, and of the controls around it."""

    spec: Spec
    status: Status
    scale: Scale
    pods: tuple[Pod, ...]
    metrics: tuple[MetricInput, ...]
    history: History | None
    now: int
    options: ControllerOptions
    controls: Controls = NO_CONTROLS
    control_status: ControlStatus = EMPTY_CONTROL_STATUS
    forecasts: tuple[Forecast | None, ...] = ()  # spec.predictive's, one per spec metric


def parse_document(doc: Any) -> Step:
    """Validate and convert a decide document; raises DocumentError naming the bad field."""
    if not isinstance(doc, dict):
        raise DocumentError("(document)", "must be a JSON object")
    if doc.get("now") is None:
        raise DocumentError("now", "is required")
    now = time_ns(doc["now"], "now")
    options = parse_options(as_obj(doc, "controller", ""))
    autoscaler = as_obj(doc, "autoscaler", "", required=True)
    spec = parse_spec(as_obj(autoscaler, "spec", "autoscaler", required=True), "autoscaler.spec")
    status = parse_status(as_obj(autoscaler, "status", "autoscaler"), "autoscaler.status")
    scale = _scale(as_obj(doc, "scale", "", required=True))
    pods = tuple(parse_pod(p, f"pods[{i}]") for i, p in enumerate(as_list(doc, "pods", "")))
    raw_metrics = as_list(doc, "metrics", "", required=True)
    if len(raw_metrics) != len(spec.metrics):
        raise DocumentError(
            "metrics",
            f"has {len(raw_metrics)} entries but autoscaler.spec.metrics has {len(spec.metrics)}"
            + (
                ""
                if autoscaler["spec"].get("metrics")
                else " (no spec.metrics: the default cpu metric)"
            )
            + ": give one entry per spec metric, in the same order",
        )
    metrics = tuple(
        metric_input(m, s, f"metrics[{i}]")
        for i, (m, s) in enumerate(zip(raw_metrics, spec.metrics, strict=True))
    )
    history = parse_history(doc.get("history"), "history")
    controls = parse_controls(doc, autoscaler)
    control_status = parse_control_status(
        as_obj(autoscaler, "status", "autoscaler"), "autoscaler.status"
    )
    forecasts = parse_forecasts(doc.get("forecasts"), len(spec.metrics), "forecasts")
    return Step(
        spec,
        status,
        scale,
        pods,
        metrics,
        history,
        now,
        options,
        controls,
        control_status,
        forecasts,
    )


def parse_options(obj: Mapping[str, Any], path: str = "controller") -> ControllerOptions:
    if not obj:
        return ControllerOptions()
    try:  # a controller sends the same block with every document: parse each distinct one once
        key: tuple[Any, ...] | None = (path, *((k, type(v), v) for k, v in obj.items()))
        options = _OPTIONS.get(key)  # type: ignore[arg-type]
    except TypeError:  # an unhashable value: a wrong type, which the parse below names
        key, options = None, None
    if options is None:
        options = _parse_options(obj, path)
        if key is not None:
            _remember(_OPTIONS, key, options)
    return options


_OPTIONS: dict[tuple[Any, ...], ControllerOptions] = {}


def _parse_options(obj: Mapping[str, Any], path: str) -> ControllerOptions:
    d = ControllerOptions()
    return ControllerOptions(
        tolerance=as_float(obj, "tolerance", path, default=d.tolerance),
        cpu_initialization_period_seconds=_opt_int(
            obj, "cpuInitializationPeriodSeconds", path, d.cpu_initialization_period_seconds
        ),
        initial_readiness_delay_seconds=_opt_int(
            obj, "initialReadinessDelaySeconds", path, d.initial_readiness_delay_seconds
        ),
        downscale_stabilization_seconds=_opt_int(
            obj, "downscaleStabilizationSeconds", path, d.downscale_stabilization_seconds
        ),
        scale_to_zero=as_bool(obj, "scaleToZero", path, default=d.scale_to_zero),
        configurable_tolerance=as_bool(
            obj, "configurableTolerance", path, default=d.configurable_tolerance
        ),
        pod_level_resources=as_bool(obj, "podLevelResources", path, default=d.pod_level_resources),
        scale_up_limit_factor=as_float(
            obj, "scaleUpLimitFactor", path, default=d.scale_up_limit_factor
        ),
        scale_up_limit_minimum=as_float(
            obj, "scaleUpLimitMinimum", path, default=d.scale_up_limit_minimum
        ),
    )


def _opt_int(obj: Mapping[str, Any], key: str, path: str, default: int) -> int:
    value = as_int(obj, key, path, default=default, minimum=0)
    assert value is not None
    return value


# ---- spec -------------------------------------------------------------------------------


def parse_spec(obj: Mapping[str, Any], path: str) -> Spec:
    """An autoscaling/v2 HorizontalPodAutoscalerSpec, with the API's defaults applied."""
    max_replicas = as_int(obj, "maxReplicas", path, required=True, minimum=1, maximum=I32)
    min_replicas = as_int(obj, "minReplicas", path, minimum=0, maximum=I32)
    assert max_replicas is not None
    if min_replicas is not None and max_replicas < min_replicas:
        raise DocumentError(
            f"{path}.maxReplicas", f"must be greater than or equal to minReplicas ({min_replicas})"
        )
    raw = as_list(obj, "metrics", path)
    metrics = (
        tuple(_metric_spec(m, f"{path}.metrics[{i}]") for i, m in enumerate(raw)) or DEFAULT_METRICS
    )
    behavior_obj = obj.get("behavior")
    behavior = None
    if behavior_obj is not None:
        if not isinstance(behavior_obj, dict):
            raise DocumentError(f"{path}.behavior", "must be an object")
        behavior = Behavior(
            scale_up=_rules(
                behavior_obj.get("scaleUp"), DEFAULT_SCALE_UP, f"{path}.behavior.scaleUp"
            ),
            scale_down=_rules(
                behavior_obj.get("scaleDown"), DEFAULT_SCALE_DOWN, f"{path}.behavior.scaleDown"
            ),
        )
    return Spec(
        max_replicas=max_replicas,
        metrics=metrics,
        min_replicas=min_replicas,
        behavior=behavior,
        pod_deletion_cost=parse_pod_deletion_cost(behavior_obj, f"{path}.behavior"),
    )


def _metric_spec(obj: Any, path: str) -> MetricSpec:
    if not isinstance(obj, dict):
        raise DocumentError(path, "must be an object")
    kind = as_str(obj, "type", path, required=True)
    key = _SOURCE_KEYS.get(kind)
    if key is None:
        # upstream keeps it and fails the metric with InvalidMetricSourceType
        return MetricSpec(kind, "", MetricTarget(""))
    src = as_obj(obj, key, path, required=True)
    spath = f"{path}.{key}"
    target = _target(as_obj(src, "target", spath, required=True), f"{spath}.target")
    if kind in (RESOURCE, CONTAINER_RESOURCE):
        name = as_str(src, "name", spath, required=True)
        container = (
            as_str(src, "container", spath, required=True) if kind == CONTAINER_RESOURCE else None
        )
        return MetricSpec(kind, name, target, container=container)
    metric = as_obj(src, "metric", spath, required=True)
    name = as_str(metric, "name", f"{spath}.metric", required=True)
    described = as_obj(src, "describedObject", spath, required=True) if kind == OBJECT else None
    return MetricSpec(kind, name, target, metric=metric, described_object=described)


def _target(obj: Mapping[str, Any], path: str) -> MetricTarget:
    kind = as_str(obj, "type", path, required=True)
    if kind not in ("Utilization", "Value", "AverageValue"):
        raise DocumentError(
            f"{path}.type", f"must be Utilization, Value or AverageValue, not {kind!r}"
        )
    value = _positive_milli(obj, "value", path)
    average = _positive_milli(obj, "averageValue", path)
    util = as_int(obj, "averageUtilization", path, minimum=1, maximum=I32)
    return MetricTarget(kind, value=value, average_value=average, average_utilization=util)


def _positive_milli(obj: Mapping[str, Any], key: str, path: str) -> int | None:
    raw = obj.get(key)
    if raw is None:
        return None
    value = milli(raw, f"{path}.{key}")
    if value <= 0:
        raise DocumentError(f"{path}.{key}", f"must be positive, not {raw!r}")
    return value


def _rules(obj: Any, defaults: ScalingRules, path: str) -> ScalingRules:
    """copyHPAScalingRules: set fields replace the defaults; an explicit [] replaces policies."""
    if obj is None:
        return defaults
    if not isinstance(obj, dict):
        raise DocumentError(path, "must be an object")
    window = as_int(obj, "stabilizationWindowSeconds", path, minimum=0, maximum=I32)
    select = as_str(obj, "selectPolicy", path, default=defaults.select_policy)
    if select not in ("Max", "Min", "Disabled"):
        raise DocumentError(f"{path}.selectPolicy", f"must be Max, Min or Disabled, not {select!r}")
    policies = defaults.policies
    if obj.get("policies") is not None:
        policies = tuple(
            _policy(p, f"{path}.policies[{i}]")
            for i, p in enumerate(as_list(obj, "policies", path))
        )
    tolerance = None
    if obj.get("tolerance") is not None:
        tolerance = parse_tolerance(obj["tolerance"], f"{path}.tolerance")
    return ScalingRules(
        stabilization_window_seconds=defaults.stabilization_window_seconds
        if window is None
        else window,
        select_policy=select,
        policies=policies,
        tolerance=tolerance,
    )


def _policy(obj: Any, path: str) -> ScalingPolicy:
    if not isinstance(obj, dict):
        raise DocumentError(path, "must be an object")
    kind = as_str(obj, "type", path, required=True)
    value = as_int(obj, "value", path, required=True, minimum=1, maximum=I32)
    period = as_int(obj, "periodSeconds", path, required=True, minimum=1, maximum=I32)
    assert value is not None
    assert period is not None
    return ScalingPolicy(kind, value, period)


# ---- status, scale, history --------------------------------------------------------------


def parse_status(obj: Mapping[str, Any], path: str) -> Status:
    if not obj:
        return Status()
    conditions = tuple(
        _condition(c, f"{path}.conditions[{i}]")
        for i, c in enumerate(as_list(obj, "conditions", path))
    )
    last = obj.get("lastScaleTime")
    return Status(
        current_replicas=_int32(obj, "currentReplicas", path),
        desired_replicas=_int32(obj, "desiredReplicas", path),
        last_scale_time=None if last is None else time_ns(last, f"{path}.lastScaleTime"),
        current_metrics=tuple(as_list(obj, "currentMetrics", path)),
        conditions=conditions,
    )


def _int32(obj: Mapping[str, Any], key: str, path: str) -> int:
    return as_int(obj, key, path, default=0, minimum=-I32 - 1, maximum=I32) or 0


def _condition(obj: Any, path: str) -> Condition:
    if not isinstance(obj, dict):
        raise DocumentError(path, "must be an object")
    ltt = obj.get("lastTransitionTime")
    return Condition(
        type=as_str(obj, "type", path, required=True),
        status=as_str(obj, "status", path, required=True),
        reason=as_str(obj, "reason", path),
        message=as_str(obj, "message", path),
        last_transition_time=None if ltt is None else time_ns(ltt, f"{path}.lastTransitionTime"),
    )


def _scale(obj: Mapping[str, Any]) -> Scale:
    spec = as_obj(obj, "spec", "scale", required=True)
    status = as_obj(obj, "status", "scale")
    replicas = as_int(spec, "replicas", "scale.spec", required=True, minimum=0, maximum=I32)
    status_replicas = as_int(status, "replicas", "scale.status", default=0, minimum=0, maximum=I32)
    assert replicas is not None
    return Scale(
        spec_replicas=replicas,
        status_replicas=status_replicas or 0,
        selector=as_str(status, "selector", "scale.status"),
    )


def parse_history(obj: Any, path: str) -> History | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise DocumentError(path, "must be an object")
    recs_raw = obj.get("recommendations")
    recs = None
    if type(recs_raw) is list:
        try:
            recs = fastparse.recommendations(recs_raw)
        except fastparse.Slow:
            recs = None
    if recs is None and recs_raw is not None:
        recs = tuple(
            Recommendation(
                as_int(
                    as_dict(r, f"{path}.recommendations[{i}]"),
                    "replicas",
                    f"{path}.recommendations[{i}]",
                    required=True,
                    minimum=-I32 - 1,
                    maximum=I32,
                )
                or 0,
                time_ns(
                    required(r, "timestamp", f"{path}.recommendations[{i}]"),
                    f"{path}.recommendations[{i}].timestamp",
                ),
            )
            for i, r in enumerate(as_list(obj, "recommendations", path))
        )
    return History(recs, _events(obj, "scaleUpEvents", path), _events(obj, "scaleDownEvents", path))


def _events(obj: Mapping[str, Any], key: str, path: str) -> tuple[ScaleEvent, ...]:
    out = []
    for i, e in enumerate(as_list(obj, key, path)):
        epath = f"{path}.{key}[{i}]"
        e = as_dict(e, epath)
        change = as_int(e, "change", epath, required=True, minimum=-I32 - 1, maximum=I32)
        assert change is not None
        out.append(
            ScaleEvent(
                change,
                time_ns(required(e, "timestamp", epath), f"{epath}.timestamp"),
                as_bool(e, "outdated", epath, default=False),
            )
        )
    return tuple(out)
