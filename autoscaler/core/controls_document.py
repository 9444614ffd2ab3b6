"""The controls' part of a decide document (JSON) to the model, and back.

`parse_controls` reads the spec's extras, the metadata and `conflict`; `parse_control_status`
reads the controls' memory from the status; `render_control_status` / `render_event` write them
back. Errors are DocumentError naming the field, like the rest of the document.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autoscaler.core.controls_model import (
    EMPTY_CONTROL_STATUS,
    FALLBACK_BEHAVIORS,
    NO_CONTROLS,
    PAUSED_ANNOTATION,
    PAUSED_REPLICAS_ANNOTATION,
    ActiveSchedule,
    ControlEvent,
    Controls,
    ControlStatus,
    Fallback,
    MetricHealth,
    ScaleToZero,
    Schedule,
)
from autoscaler.core.fields import (
    DocumentError,
    as_bool,
    as_int,
    as_list,
    as_obj,
    as_str,
    duration_ns,
    milli,
    status_time,
    time_ns,
)
from autoscaler.core.inputs import as_dict
from autoscaler.core.model import EXTERNAL, OBJECT
from autoscaler.core.numeric import MAX_INT32
from autoscaler.core.predictive_document import parse_predictive, render_predictive
from autoscaler.core.schedules import schedule_problem

__all__ = ["parse_control_status", "parse_controls", "render_control_status", "render_event"]

I32 = MAX_INT32


def parse_controls(doc: Mapping[str, Any], autoscaler: Mapping[str, Any]) -> Controls:
    """The controls of one document; `autoscaler` is its (validated) `autoscaler` object."""
    spec = as_obj(autoscaler, "spec", "autoscaler")
    meta = as_obj(autoscaler, "metadata", "autoscaler")
    annotations = as_obj(meta, "annotations", "autoscaler.metadata")
    conflict = as_obj(doc, "conflict", "")
    if not (conflict or _PAUSE_KEYS.intersection(annotations) or _mentions_controls(spec)):
        return NO_CONTROLS  # the common case, in a few dictionary lookups
    created = meta.get("creationTimestamp")
    _check_bounds(spec, "autoscaler.spec")
    return Controls(
        activation=_activation(spec, "autoscaler.spec"),
        scale_to_zero=_scale_to_zero(spec.get("scaleToZero"), "autoscaler.spec.scaleToZero"),
        fallback=_fallback(spec.get("fallback"), "autoscaler.spec.fallback"),
        schedules=_schedules(spec, "autoscaler.spec"),
        created=None
        if created is None
        else time_ns(created, "autoscaler.metadata.creationTimestamp"),
        paused=_annotation(annotations, PAUSED_ANNOTATION),
        paused_replicas=_annotation(annotations, PAUSED_REPLICAS_ANNOTATION),
        conflict=as_str(conflict, "message", "conflict", required=True) if conflict else None,
        predictive=parse_predictive(spec, "autoscaler.spec"),
    )


_PAUSE_KEYS = frozenset({PAUSED_ANNOTATION, PAUSED_REPLICAS_ANNOTATION})
_SPEC_KEYS = frozenset({"scaleToZero", "fallback", "schedules", "predictive"})


def _mentions_controls(spec: Mapping[str, Any]) -> bool:
    if not _SPEC_KEYS.isdisjoint(spec):
        return True
    metrics = spec.get("metrics")
    return isinstance(metrics, list) and any(
        isinstance(m, dict) and "activation" in m for m in metrics
    )


def _check_bounds(spec: Mapping[str, Any], path: str) -> None:
    """What the CRD also refuses: scaleToZero without minReplicas 0, and a schedule whose max
    is below the spec's min (the window could never be honoured)."""
    low = spec.get("minReplicas", 1)
    if spec.get("scaleToZero") is not None and low != 0:
        raise DocumentError(f"{path}.scaleToZero", "is allowed only with minReplicas: 0")
    for i, item in enumerate(as_list(spec, "schedules", path)):
        high = item.get("maxReplicas") if isinstance(item, dict) else None
        if isinstance(high, int) and isinstance(low, int) and high < low:
            raise DocumentError(
                f"{path}.schedules[{i}].maxReplicas",
                f"must be greater than or equal to spec.minReplicas ({low})",
            )


def _annotation(annotations: Mapping[str, Any], key: str) -> str | None:
    value = annotations.get(key)
    if value is None:
        return None
    if not isinstance(value, str):  # annotations are strings in the API
        raise DocumentError(f"autoscaler.metadata.annotations[{key}]", "must be a string")
    return value


def _activation(spec: Mapping[str, Any], path: str) -> tuple[int | None, ...]:
    out: list[int | None] = []
    for i, m in enumerate(as_list(spec, "metrics", path)):
        mpath = f"{path}.metrics[{i}]"
        if not isinstance(m, dict) or m.get("activation") is None:
            out.append(None)
            continue
        block = as_obj(m, "activation", mpath)
        if m.get("type") not in (OBJECT, EXTERNAL):
            raise DocumentError(
                f"{mpath}.activation", "is allowed only on Object and External metrics"
            )
        raw = block.get("threshold")
        if raw is None:
            raise DocumentError(f"{mpath}.activation.threshold", "is required")
        out.append(milli(raw, f"{mpath}.activation.threshold"))
    return tuple(out) if any(t is not None for t in out) else ()


def _scale_to_zero(obj: Any, path: str) -> ScaleToZero | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise DocumentError(path, "must be an object")
    d = ScaleToZero()
    cooldown = as_int(obj, "cooldownSeconds", path, default=d.cooldown_seconds, minimum=0)
    initial = as_int(
        obj, "initialCooldownSeconds", path, default=d.initial_cooldown_seconds, minimum=0
    )
    return ScaleToZero(cooldown_seconds=cooldown or 0, initial_cooldown_seconds=initial or 0)


def _fallback(obj: Any, path: str) -> Fallback | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise DocumentError(path, "must be an object")
    replicas = as_int(obj, "replicas", path, required=True, minimum=0, maximum=I32)
    failures = as_int(obj, "failureThreshold", path, default=3, minimum=1, maximum=I32)
    recovery = as_int(obj, "recoveryThreshold", path, default=1, minimum=1, maximum=I32)
    behavior = as_str(obj, "behavior", path, default="Static")
    if behavior not in FALLBACK_BEHAVIORS:
        raise DocumentError(
            f"{path}.behavior", f"must be one of {', '.join(FALLBACK_BEHAVIORS)}, not {behavior!r}"
        )
    assert replicas is not None
    assert failures is not None
    assert recovery is not None
    return Fallback(replicas, failures, recovery, behavior)


def _schedules(spec: Mapping[str, Any], path: str) -> tuple[Schedule, ...]:
    out: list[Schedule] = []
    seen: set[str] = set()
    for i, raw in enumerate(as_list(spec, "schedules", path)):
        spath = f"{path}.schedules[{i}]"
        schedule = _schedule(as_dict(raw, spath), spath)
        if schedule.name in seen:
            raise DocumentError(f"{spath}.name", f"duplicate schedule name {schedule.name!r}")
        seen.add(schedule.name)
        out.append(schedule)
    return tuple(out)


def _schedule(obj: Mapping[str, Any], path: str) -> Schedule:
    name = as_str(obj, "name", path, required=True)
    cron = as_str(obj, "schedule", path, required=True)
    zone = as_str(obj, "timeZone", path, default="UTC")
    problem = schedule_problem(cron, zone)
    if problem is not None:
        field, why = problem
        raise DocumentError(f"{path}.{field}", why)
    duration = duration_ns(obj.get("duration"), f"{path}.duration")
    if duration <= 0:
        raise DocumentError(f"{path}.duration", "must be greater than 0")
    low = as_int(obj, "minReplicas", path, required=True, minimum=0, maximum=I32)
    high = as_int(obj, "maxReplicas", path, minimum=1, maximum=I32)
    assert low is not None
    if high is not None and high < low:
        raise DocumentError(f"{path}.maxReplicas", f"must be at least minReplicas ({low})")
    return Schedule(name, cron, duration, low, high, zone)


# ---- status ------------------------------------------------------------------------------


def parse_control_status(obj: Mapping[str, Any], path: str) -> ControlStatus:
    """The controls' memory in an Autoscaler status (absent fields: a fresh start)."""
    if not obj or _STATUS_KEYS.isdisjoint(obj):
        return EMPTY_CONTROL_STATUS
    last = obj.get("lastActiveTime")
    paused = obj.get("paused")
    return ControlStatus(
        last_active_time=None if last is None else time_ns(last, f"{path}.lastActiveTime"),
        metric_health=tuple(
            _health(h, f"{path}.metricHealth[{i}]")
            for i, h in enumerate(as_list(obj, "metricHealth", path))
        ),
        active=obj.get("active") if isinstance(obj.get("active"), bool) else None,
        fallback=obj.get("fallback") if isinstance(obj.get("fallback"), bool) else None,
        paused=paused if isinstance(paused, bool) else False,
        paused_replicas=as_int(obj, "pausedReplicas", path, minimum=0, maximum=I32),
        schedules=_active_schedules(obj.get("schedules"), f"{path}.schedules"),
    )


_STATUS_KEYS = frozenset(
    {
        "lastActiveTime",
        "metricHealth",
        "active",
        "fallback",
        "paused",
        "pausedReplicas",
        "schedules",
    }
)


def _health(raw: Any, path: str) -> MetricHealth:
    obj = as_dict(raw, path)
    active = obj.get("active")
    return MetricHealth(
        index=as_int(obj, "index", path, default=0, minimum=0) or 0,
        name=as_str(obj, "name", path),
        active=active if isinstance(active, bool) else None,
        consecutive_failures=as_int(obj, "consecutiveFailures", path, default=0, minimum=0) or 0,
        consecutive_successes=as_int(obj, "consecutiveSuccesses", path, default=0, minimum=0) or 0,
        fallback=as_bool(obj, "fallback", path, default=False),
        last_error=as_str(obj, "lastError", path),
        last_reason=as_str(obj, "lastReason", path),
    )


def _active_schedules(raw: Any, path: str) -> tuple[ActiveSchedule, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise DocumentError(path, "must be a list")
    out = []
    for i, item in enumerate(raw):
        ipath = f"{path}[{i}]"
        obj = as_dict(item, ipath)
        out.append(
            ActiveSchedule(
                name=as_str(obj, "name", ipath, required=True),
                start=time_ns(obj.get("start"), f"{ipath}.start"),
                end=time_ns(obj.get("end"), f"{ipath}.end"),
                min_replicas=as_int(obj, "minReplicas", ipath, default=0, minimum=0) or 0,
                max_replicas=as_int(obj, "maxReplicas", ipath, minimum=1),
            )
        )
    return tuple(out)


def render_control_status(s: ControlStatus) -> dict[str, Any]:
    """The status fields of the controls (merged into the rendered status)."""
    out: dict[str, Any] = {}
    if s.last_active_time is not None:
        out["lastActiveTime"] = status_time(s.last_active_time)
    out["metricHealth"] = [_render_health(h) for h in s.metric_health]
    if s.active is not None:
        out["active"] = s.active
    if s.fallback is not None:
        out["fallback"] = s.fallback
    if s.paused:
        out["paused"] = True
    if s.paused_replicas is not None:
        out["pausedReplicas"] = s.paused_replicas
    if s.schedules is not None:
        out["schedules"] = [_render_schedule(a) for a in s.schedules]
    if s.predictive is not None:
        out["predictive"] = render_predictive(s.predictive)
    return out


def _render_health(h: MetricHealth) -> dict[str, Any]:
    out: dict[str, Any] = {"index": h.index, "name": h.name}
    if h.active is not None:
        out["active"] = h.active
    out["consecutiveFailures"] = h.consecutive_failures
    out["consecutiveSuccesses"] = h.consecutive_successes
    out["fallback"] = h.fallback
    if h.last_error:
        out["lastError"] = h.last_error
    if h.last_reason:
        out["lastReason"] = h.last_reason
    return out


def _render_schedule(a: ActiveSchedule) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": a.name,
        "start": status_time(a.start),
        "end": status_time(a.end),
        "minReplicas": a.min_replicas,
    }
    if a.max_replicas is not None:
        out["maxReplicas"] = a.max_replicas
    return out


def render_event(e: ControlEvent) -> dict[str, str]:
    return {"type": e.type, "reason": e.reason, "message": e.message}
