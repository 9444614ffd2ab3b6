"""The model back to Kubernetes JSON: a Decision as the decide document's result."""

from __future__ import annotations

from typing import Any

from autoscaler.core.controls_document import render_control_status, render_event
from autoscaler.core.fields import history_time, status_time
from autoscaler.core.model import Condition, Decision, History, Status

__all__ = ["render_decision", "render_history", "render_status"]


def render_condition(c: Condition) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": c.type,
        "status": c.status,
        "reason": c.reason,
        "message": c.message,
    }
    if c.last_transition_time is not None:
        out["lastTransitionTime"] = status_time(c.last_transition_time)
    return out


def render_status(s: Status) -> dict[str, Any]:
    out: dict[str, Any] = {
        "currentReplicas": s.current_replicas,
        "desiredReplicas": s.desired_replicas,
        "currentMetrics": list(s.current_metrics),
        "conditions": [render_condition(c) for c in s.conditions],
    }
    if s.last_scale_time is not None:
        out["lastScaleTime"] = status_time(s.last_scale_time)
    return out


def render_history(h: History) -> dict[str, Any]:
    """History keeps full nanosecond precision: the next step compares against it strictly."""
    recs = None
    if h.recommendations is not None:
        recs = [
            {"replicas": r.replicas, "timestamp": history_time(r.timestamp)}
            for r in h.recommendations
        ]
    return {
        "recommendations": recs,
        "scaleUpEvents": [
            {"change": e.change, "timestamp": history_time(e.timestamp), "outdated": e.outdated}
            for e in h.scale_up_events
        ],
        "scaleDownEvents": [
            {"change": e.change, "timestamp": history_time(e.timestamp), "outdated": e.outdated}
            for e in h.scale_down_events
        ],
    }


def render_decision(d: Decision) -> dict[str, Any]:
    status = render_status(d.status)
    if d.controls is not None:  # only with a control present: otherwise upstream's bytes
        status.update(render_control_status(d.controls))
    out: dict[str, Any] = {
        "desiredReplicas": d.desired_replicas,
        "rescale": d.rescale,
        "status": status,
        "history": render_history(d.history),
        "explanation": list(d.explanation),
        "summary": d.summary,
    }
    if d.rescale_reason:
        out["rescaleReason"] = d.rescale_reason
    if d.compute_error is not None:
        out["computeError"] = d.compute_error
    if d.controls is not None or d.events:
        out["events"] = [render_event(e) for e in d.events]
    return out
