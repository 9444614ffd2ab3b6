"""`kubectl get hpa` columns, as kube-apiserver's table printer fills them.

REFERENCE is `Kind/name`; TARGETS lists at most two metrics as `current/target` (`<unknown>`
until the controller has a value, ` (avg)` for AverageValue targets of Object and External
metrics, `name: ` before resource metrics) and `+ N more...` after them; MINPODS is `<unset>`
without minReplicas.
"""

from __future__ import annotations

from typing import Any

from common.quantity import QuantityError, format_quantity, parse_quantity
from sandbox import hpa_convert

Obj = dict[str, Any]
SHOWN = 2  # metrics printed before "+ N more..."
UNKNOWN = "<unknown>"


def _column(name: str, kind: str, description: str) -> Obj:
    return {"name": name, "type": kind, "format": "", "description": description, "priority": 0}


COLUMNS = [
    _column("Reference", "string", "The workload this autoscaler scales (Kind/name)."),
    _column("Targets", "string", "Current and target values of the first metrics."),
    _column("MinPods", "string", "The lowest replica count the autoscaler may set."),
    _column("MaxPods", "integer", "The highest replica count the autoscaler may set."),
    _column("Replicas", "integer", "The replica count last seen by the autoscaler."),
]


def quantity_text(value: Any) -> str:
    """Go's `Quantity.String()`: the canonical form (binary suffixes are kept as written)."""
    if value is None:
        return "<nil>"  # a nil *Quantity prints so in Go
    text = str(value)
    if text.endswith("i"):
        return text
    try:
        return format_quantity(parse_quantity(text))
    except QuantityError:
        return text


def _current(statuses: list[Obj], i: int, key: str) -> Obj | None:
    if i < len(statuses) and isinstance(statuses[i].get(key), dict):
        return statuses[i][key].get("current") or {}
    return None


def _value_pair(current: Obj | None, target: Obj, *, average_if_set: bool) -> str:
    if average_if_set and target.get("averageValue") is not None:
        now = UNKNOWN
        if current is not None and current.get("averageValue") is not None:
            now = quantity_text(current["averageValue"])
        return f"{now}/{quantity_text(target['averageValue'])} (avg)"
    now = UNKNOWN if current is None else quantity_text(current.get("value", "0"))
    return f"{now}/{quantity_text(target.get('value'))}"


def _resource_pair(name: str, current: Obj | None, target: Obj) -> str:
    if target.get("averageValue") is not None:
        now = UNKNOWN if current is None else quantity_text(current.get("averageValue", "0"))
        return f"{name}: {now}/{quantity_text(target['averageValue'])}"
    now = UNKNOWN
    if current is not None and current.get("averageUtilization") is not None:
        now = f"{current['averageUtilization']}%"
    goal = "<auto>"
    if target.get("averageUtilization") is not None:
        goal = f"{target['averageUtilization']}%"
    return f"{name}: {now}/{goal}"


def _one(metric: Obj, statuses: list[Obj], i: int) -> str:
    kind = metric.get("type")
    if kind not in hpa_convert.SOURCES:
        return "<unknown type>"
    key = hpa_convert.SOURCES[kind]
    source = metric.get(key) or {}
    target = source.get("target") or {}
    current = _current(statuses, i, key)
    if kind in ("External", "Object"):
        return _value_pair(current, target, average_if_set=True)
    if kind == "Pods":
        now = UNKNOWN if current is None else quantity_text(current.get("averageValue", "0"))
        return f"{now}/{quantity_text(target.get('averageValue'))}"
    return _resource_pair(str(source.get("name", "")), current, target)


def targets(spec: Obj, status: Obj) -> str:
    """The TARGETS cell."""
    metrics = spec.get("metrics") or []
    if not metrics:
        return "<none>"
    statuses = status.get("currentMetrics") or []
    shown = [_one(m, statuses, i) for i, m in enumerate(metrics)]
    text = ", ".join(shown[:SHOWN])
    return f"{text} + {len(shown) - SHOWN} more..." if len(shown) > SHOWN else text


def cells(obj: Obj) -> list[Any]:
    """The cells between NAME and AGE, from the object at whatever version it is served."""
    if obj.get("apiVersion") == hpa_convert.V1:
        obj = hpa_convert.from_v1(obj)
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    low = spec.get("minReplicas")
    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        targets(spec, status),
        "<unset>" if low is None else str(low),
        int(spec.get("maxReplicas") or 0),
        int(status.get("currentReplicas") or 0),
    ]
