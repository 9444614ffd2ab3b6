"""Status bookkeeping the core does not do: printer-column strings, error-path conditions and
the numbers the per-Autoscaler gauges show.

`targets` renders `kubectl get hpa`'s TARGETS column (kubectl's `formatHPAMetrics`) into
`status.targets`, since a CRD printer column can only show a field, not format one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from autoscaler.selfmetrics import Snapshot
from common.kubetime import format_time
from common.memo import remember
from common.quantity import QuantityError, parse_quantity

__all__ = ["effective_bounds", "metric_labels", "reference", "set_condition", "snapshot", "targets"]

UNKNOWN = "<unknown>"


def reference(ref: Mapping[str, Any]) -> str:
    """`Deployment/web`, kubectl's REFERENCE column."""
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def targets(spec: Mapping[str, Any], current: Sequence[Mapping[str, Any]] | None) -> str:
    """`42/50, cpu: 30%/80%`: current/target per metric, in spec order."""
    specs = list(spec.get("metrics") or [])
    statuses = list(current or [])
    parts = []
    for i, metric in enumerate(specs):
        status = statuses[i] if i < len(statuses) else {}
        if status.get("type") != metric.get("type"):
            status = {}  # the metric could not be read this pass
        parts.append(_one(metric, status))
    return ", ".join(parts) if parts else "<none>"


def _one(metric: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    kind = str(metric.get("type", ""))
    field = _field(kind)
    source = metric.get(field) or {}
    target = source.get("target") or {}
    cur = (status.get(field) or {}).get("current") or {}
    if kind in ("Resource", "ContainerResource"):
        name = str(source.get("name", ""))
        if target.get("type") == "Utilization":
            now = cur.get("averageUtilization")
            shown = UNKNOWN if now is None else f"{now}%"
            return f"{name}: {shown}/{target.get('averageUtilization')}%"
        return f"{name}: {_pair(cur, target, 'averageValue')}"
    if target.get("type") == "AverageValue" or kind == "Pods":
        return _pair(cur, target, "averageValue")
    return _pair(cur, target, "value")


def _pair(cur: Mapping[str, Any], target: Mapping[str, Any], key: str) -> str:
    now = cur.get(key)
    return f"{UNKNOWN if now is None else now}/{target.get(key, UNKNOWN)}"


def set_condition(
    conditions: list[dict[str, Any]],
    type_: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
) -> list[dict[str, Any]]:
    """Upstream's setConditionInList: update in place (transition time moves only when the
    status changes) or append."""
    out = [dict(c) for c in conditions]
    for c in out:
        if c.get("type") == type_:
            if c.get("status") != status:
                c["lastTransitionTime"] = format_time(now)
            c.update(status=status, reason=reason, message=message)
            return out
    out.append(
        {
            "type": type_,
            "status": status,
            "lastTransitionTime": format_time(now),
            "reason": reason,
            "message": message,
        }
    )
    return out


def snapshot(spec: Mapping[str, Any], status: Mapping[str, Any]) -> Snapshot:
    """The gauges' view of an Autoscaler after a pass (spec as defaulted, status as written)."""
    conditions = tuple(
        (str(c.get("type")), str(c.get("status"))) for c in status.get("conditions") or []
    )
    low, high = effective_bounds(spec, status)
    return Snapshot(
        conditions=conditions,
        paused=bool(status.get("paused")) or status.get("pausedReplicas") is not None,
        in_fallback=bool(status.get("fallback")),
        current_replicas=_int(status.get("currentReplicas")),
        desired_replicas=_int(status.get("desiredReplicas")),
        min_replicas=low,
        max_replicas=high,
        metrics=_metric_numbers(spec, status.get("currentMetrics") or []),
        forecasts=_forecast_numbers(spec, status.get("predictive")),
        forecast_changed=bool((status.get("predictive") or {}).get("changedDecision")),
    )


def _forecast_numbers(
    spec: Mapping[str, Any], predictive: Any
) -> tuple[tuple[str, float | None, float | None], ...]:
    """(metric label, forecast, recent error) of each metric status.predictive lists."""
    if not isinstance(predictive, Mapping):
        return ()
    labels = metric_labels(spec)
    out = []
    for line in predictive.get("metrics") or []:
        index = line.get("index")
        if isinstance(index, int) and 0 <= index < len(labels):
            error = line.get("recentError")
            recent = None if error in (None, "inf") else _number(error)
            out.append((labels[index], _number(line.get("forecast")), recent))
    return tuple(out)


def effective_bounds(spec: Mapping[str, Any], status: Mapping[str, Any]) -> tuple[int, int]:
    """[min, max] after the active schedules (status.schedules): the largest floor, the
    smallest ceiling, and the ceiling wins when they cross (decision-document.md)."""
    low = int(spec.get("minReplicas", 1) if spec.get("minReplicas") is not None else 1)
    high = int(spec.get("maxReplicas") or 0)
    for window in status.get("schedules") or []:
        low = max(low, int(window.get("minReplicas") or 0))
        if window.get("maxReplicas") is not None:
            high = min(high, int(window["maxReplicas"]))
    return min(low, high), high


def metric_labels(spec: Mapping[str, Any]) -> list[str]:
    """The `metric` label of each spec metric: its name (the resource for Resource metrics);
    a repeated name gets `#<index>` so two selectors on one metric stay two series."""
    labels: list[str] = []
    for i, metric in enumerate(spec.get("metrics") or []):
        source = metric.get(_field(str(metric.get("type", "")))) or {}
        name = str((source.get("metric") or {}).get("name") or source.get("name") or "")
        labels.append(name if name not in labels else f"{name}#{i}")
    return labels


def _metric_numbers(
    spec: Mapping[str, Any], current: Sequence[Mapping[str, Any]]
) -> tuple[tuple[str, float | None, float | None], ...]:
    out = []
    for i, (label, metric) in enumerate(
        zip(metric_labels(spec), spec.get("metrics") or [], strict=False)
    ):
        field = _field(str(metric.get("type", "")))
        target = (metric.get(field) or {}).get("target") or {}
        status = current[i] if i < len(current) else {}
        if status.get("type") != metric.get("type"):
            status = {}  # the metric could not be read this pass
        now = (status.get(field) or {}).get("current") or {}
        key = {"Utilization": "averageUtilization", "AverageValue": "averageValue"}.get(
            str(target.get("type")), "value"
        )
        out.append((label, _number(now.get(key)), _number(target.get(key))))
    return tuple(out)


def _field(kind: str) -> str:
    return {"ContainerResource": "containerResource"}.get(kind, kind[:1].lower() + kind[1:])


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    if text in _NUMBERS:
        return _NUMBERS[text]
    try:
        number: float | None = float(parse_quantity(text))
    except QuantityError:
        number = None
    remember(_NUMBERS, text, number, limit=_NUMBERS_LIMIT)
    return number


# Quantity text -> float: every pass turns its metric's current value and target into gauge
# numbers, and a cluster's Autoscalers repeat a few hundred distinct values.
_NUMBERS: dict[str, float | None] = {}
_NUMBERS_LIMIT = 4096


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None
