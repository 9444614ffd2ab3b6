"""What a metric's calculator returns: a Proposal, or a MetricFailure; and the context they
share (the pods, the instant, the options, the tolerances and the replica counts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from autoscaler.core.model import CONTAINER_RESOURCE, RESOURCE, ControllerOptions, MetricSpec, Pod
from autoscaler.core.tolerances import Tolerances
from common.quantity import format_milli as _format_milli

__all__ = ["Context", "MetricFailure", "Proposal", "format_milli", "identifier", "label"]

_FORMATTED: dict[int, str] = {}


def format_milli(milli: int) -> str:
    """format_milli, memoized: the same few values recur in every step."""
    text = _FORMATTED.get(milli)
    if text is None:
        text = _format_milli(milli)
        if len(_FORMATTED) < 65536:
            _FORMATTED[milli] = text
    return text


@dataclass(frozen=True, slots=True)
class Proposal:
    replicas: int
    status: dict[str, Any]  # the MetricStatus JSON
    name: str  # upstream's metricNameProposal
    detail: str  # one line for the explanation


class MetricFailure(Exception):
    """A metric gives no proposal. `reason` is the ScalingActive reason, `condition_message` the
    condition text, and `error` the message the pass would report."""

    def __init__(self, reason: str, cause: str, error: str) -> None:
        super().__init__(error)
        self.reason = reason
        self.condition_message = f"the HPA was unable to compute the replica count: {cause}"
        self.error = error


@dataclass(frozen=True, slots=True)
class Context:
    pods: Sequence[Pod]
    now: int
    options: ControllerOptions
    tolerances: Tolerances
    spec_replicas: int
    status_replicas: int


def label(spec: MetricSpec, container: str | None = None) -> str:
    if spec.type == RESOURCE:
        return f"{spec.name} resource"
    if spec.type == CONTAINER_RESOURCE:
        return f"{spec.name} of container {container}"
    return f"{spec.type.lower()} metric {spec.name}"


# ---- Pods -------------------------------------------------------------------------------


def identifier(spec: MetricSpec) -> dict[str, Any]:
    return dict(spec.metric) if spec.metric is not None else {"name": spec.name}
