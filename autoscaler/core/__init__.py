"""The decision core: what the upstream HPA controller would decide for one autoscaler at one
instant. Pure: no I/O, no clock; time comes in as `now`, memory as `history`.

    from autoscaler.core import decide, decide_document

`decide(spec, status, scale, pods, metrics, history, now=..., options=...)` is the typed entry
(see `autoscaler.core.decide.decide`), `decide_controlled(..., controls=..., state=...)` the same
with the Autoscaler's controls around it (`autoscaler.core.orchestrate`); `decide_document(doc)`
implements the JSON contract of docs/decision-document.md and raises `DocumentError` (a
ValueError naming the field) for a bad document.
"""

from __future__ import annotations

from typing import Any

from autoscaler.core.controls_model import (
    ActiveSchedule,
    ControlEvent,
    Controls,
    ControlStatus,
    Fallback,
    MetricHealth,
    ScaleToZero,
    Schedule,
)
from autoscaler.core.decide import decide, rescale_failed
from autoscaler.core.document import Step, parse_document, parse_pod, parse_spec, parse_status
from autoscaler.core.fields import DocumentError
from autoscaler.core.model import (
    DEFAULT_OPTIONS,
    ControllerOptions,
    Decision,
    History,
    MetricError,
    MetricInput,
    MetricItems,
    MetricSample,
    Pod,
    ResourceMetrics,
    Scale,
    Spec,
    Status,
)
from autoscaler.core.orchestrate import decide_controlled
from autoscaler.core.render import render_decision, render_history, render_status

__all__ = [
    "DEFAULT_OPTIONS",
    "ActiveSchedule",
    "ControlEvent",
    "ControlStatus",
    "ControllerOptions",
    "Controls",
    "Decision",
    "DocumentError",
    "Fallback",
    "History",
    "MetricError",
    "MetricHealth",
    "MetricInput",
    "MetricItems",
    "MetricSample",
    "Pod",
    "ResourceMetrics",
    "Scale",
    "ScaleToZero",
    "Schedule",
    "Spec",
    "Status",
    "Step",
    "decide",
    "decide_controlled",
    "decide_document",
    "parse_document",
    "parse_pod",
    "parse_spec",
    "parse_status",
    "render_decision",
    "render_history",
    "render_status",
    "rescale_failed",
]


def decide_document(doc: Any) -> dict[str, Any]:
    """One decide document in, its result out (both plain JSON values)."""
    step = parse_document(doc)
    decision = decide_controlled(
        step.spec,
        step.status,
        step.scale,
        step.pods,
        step.metrics,
        step.history,
        now=step.now,
        options=step.options,
        controls=step.controls,
        state=step.control_status,
        forecasts=step.forecasts,
    )
    out = render_decision(decision)
    cost = step.spec.pod_deletion_cost
    down = decision.rescale and decision.desired_replicas < step.scale.spec_replicas
    if cost is not None and down:  # rank the pods before this scale-down (the controller's I/O)
        out["podDeletionCost"] = cost.as_json()
    return out
