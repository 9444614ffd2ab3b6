"""autoscaling/v1's metric shapes (v2beta1's: `targetAverageValue`, `metricName`, ...) as the
round-trip annotations hold them, to and from autoscaling/v2's MetricSpec and MetricStatus
(`pkg/apis/autoscaling/v1/conversion.go`). Quantities that v1 requires but v2 may leave unset
are written as "0", as Go's zero Quantity is.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def pick(*pairs: tuple[str, Any]) -> Obj:
    """An object of the (key, value) pairs whose value is set (Go's omitempty)."""
    return {k: v for k, v in pairs if v is not None and v != {}}


def metric_spec_to_v1(m: Obj) -> Obj:
    """A v2 MetricSpec in v1's (v2beta1) shape; quantities v1 requires default to "0"."""
    kind = m.get("type", "")
    out: Obj = {"type": kind}
    if kind == "Resource" or kind == "ContainerResource":
        key = "resource" if kind == "Resource" else "containerResource"
        src = m.get(key) or {}
        t = src.get("target") or {}
        out[key] = pick(
            ("name", src.get("name", "")),
            ("targetAverageUtilization", t.get("averageUtilization")),
            ("targetAverageValue", t.get("averageValue")),
            ("container", src.get("container")),
        )
    elif kind == "Pods":
        src = m.get("pods") or {}
        metric, t = src.get("metric") or {}, src.get("target") or {}
        out["pods"] = pick(
            ("metricName", metric.get("name", "")),
            ("targetAverageValue", t.get("averageValue") or "0"),
            ("selector", metric.get("selector")),
        )
    elif kind == "Object":
        src = m.get("object") or {}
        metric, t = src.get("metric") or {}, src.get("target") or {}
        out["object"] = pick(
            ("target", dict(src.get("describedObject") or {})),
            ("metricName", metric.get("name", "")),
            ("targetValue", t.get("value") or "0"),
            ("selector", metric.get("selector")),
            ("averageValue", t.get("averageValue")),
        )
    elif kind == "External":
        src = m.get("external") or {}
        metric, t = src.get("metric") or {}, src.get("target") or {}
        out["external"] = pick(
            ("metricName", metric.get("name", "")),
            ("metricSelector", metric.get("selector")),
            ("targetValue", t.get("value")),
            ("targetAverageValue", t.get("averageValue")),
        )
    return out


def metric_status_to_v1(s: Obj) -> Obj:
    kind = s.get("type", "")
    out: Obj = {"type": kind}
    if kind == "Resource" or kind == "ContainerResource":
        key = "resource" if kind == "Resource" else "containerResource"
        src = s.get(key) or {}
        cur = src.get("current") or {}
        out[key] = pick(
            ("name", src.get("name", "")),
            ("currentAverageUtilization", cur.get("averageUtilization")),
            ("currentAverageValue", cur.get("averageValue") or "0"),
            ("container", src.get("container")),
        )
    elif kind == "Pods":
        src = s.get("pods") or {}
        metric, cur = src.get("metric") or {}, src.get("current") or {}
        out["pods"] = pick(
            ("metricName", metric.get("name", "")),
            ("currentAverageValue", cur.get("averageValue") or "0"),
            ("selector", metric.get("selector")),
        )
    elif kind == "Object":
        src = s.get("object") or {}
        metric, cur = src.get("metric") or {}, src.get("current") or {}
        out["object"] = pick(
            ("target", dict(src.get("describedObject") or {})),
            ("metricName", metric.get("name", "")),
            ("currentValue", cur.get("value") or "0"),
            ("selector", metric.get("selector")),
            ("averageValue", cur.get("averageValue")),
        )
    elif kind == "External":
        src = s.get("external") or {}
        metric, cur = src.get("metric") or {}, src.get("current") or {}
        out["external"] = pick(
            ("metricName", metric.get("name", "")),
            ("metricSelector", metric.get("selector")),
            ("currentValue", cur.get("value") or "0"),
            ("currentAverageValue", cur.get("averageValue")),
        )
    return out


def metric_spec_from_v1(m: Obj) -> Obj:
    kind = m.get("type", "")
    out: Obj = {"type": kind}
    if kind == "Resource" or kind == "ContainerResource":
        key = "resource" if kind == "Resource" else "containerResource"
        src = m.get(key) or {}
        utilization = src.get("targetAverageUtilization")
        target = pick(
            ("type", "AverageValue" if utilization is None else "Utilization"),
            ("averageValue", src.get("targetAverageValue")),
            ("averageUtilization", utilization),
        )
        out[key] = pick(("name", src.get("name", "")), ("container", src.get("container"))) | {
            "target": target
        }
    elif kind == "Pods":
        src = m.get("pods") or {}
        out["pods"] = {
            "metric": pick(("name", src.get("metricName", "")), ("selector", src.get("selector"))),
            "target": {"type": "AverageValue", "averageValue": src.get("targetAverageValue", "0")},
        }
    elif kind == "Object":
        src = m.get("object") or {}
        average = src.get("averageValue")
        out["object"] = {
            "describedObject": dict(src.get("target") or {}),
            "metric": pick(("name", src.get("metricName", "")), ("selector", src.get("selector"))),
            "target": pick(
                ("type", "Value" if average is None else "AverageValue"),
                ("value", src.get("targetValue", "0")),
                ("averageValue", average),
            ),
        }
    elif kind == "External":
        src = m.get("external") or {}
        value = src.get("targetValue")
        out["external"] = {
            "metric": pick(
                ("name", src.get("metricName", "")), ("selector", src.get("metricSelector"))
            ),
            "target": pick(
                ("type", "AverageValue" if value is None else "Value"),
                ("value", value),
                ("averageValue", src.get("targetAverageValue")),
            ),
        }
    return out


def metric_status_from_v1(s: Obj) -> Obj:
    kind = s.get("type", "")
    out: Obj = {"type": kind}
    if kind == "Resource" or kind == "ContainerResource":
        key = "resource" if kind == "Resource" else "containerResource"
        src = s.get(key) or {}
        current = pick(
            ("averageValue", src.get("currentAverageValue", "0")),
            ("averageUtilization", src.get("currentAverageUtilization")),
        )
        out[key] = pick(("name", src.get("name", "")), ("container", src.get("container"))) | {
            "current": current
        }
    elif kind == "Pods":
        src = s.get("pods") or {}
        out["pods"] = {
            "metric": pick(("name", src.get("metricName", "")), ("selector", src.get("selector"))),
            "current": {"averageValue": src.get("currentAverageValue", "0")},
        }
    elif kind == "Object":
        src = s.get("object") or {}
        out["object"] = {
            "metric": pick(("name", src.get("metricName", "")), ("selector", src.get("selector"))),
            "current": pick(
                ("value", src.get("currentValue", "0")),
                ("averageValue", src.get("averageValue")),
            ),
            "describedObject": dict(src.get("target") or {}),
        }
    elif kind == "External":
        src = s.get("external") or {}
        out["external"] = {
            "metric": pick(
                ("name", src.get("metricName", "")), ("selector", src.get("metricSelector"))
            ),
            "current": pick(
                ("value", src.get("currentValue", "0")),
                ("averageValue", src.get("currentAverageValue")),
            ),
        }
    return out
