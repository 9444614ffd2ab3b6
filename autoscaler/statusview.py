"""Status bookkeeping the core does not do: printer-column strings and error-path conditions.

`targets` renders `kubectl get hpa`'s TARGETS column (kubectl's `formatHPAMetrics`) into
`status.targets`, since a CRD printer column can only show a field, not format one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from common.kubetime import format_time

__all__ = ["reference", "set_condition", "targets"]

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
    field = {"ContainerResource": "containerResource"}.get(kind, kind[:1].lower() + kind[1:])
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
