"""What a replay cost and what it missed (docs/predictive.md "simulate"): pod-seconds short of
demand, replica-seconds and scale events, so a run with prediction and one without can be
compared on the same timeline. Pure.

Demand, in pods, per metric: value / averageValue (the metric above `ready x target`), for a
Value target ready x value / target, for a Utilization target the value's cores over each pod's
share (request x utilization). A pass is short by the largest demand over the metrics minus its
ready pods, for the time until the next pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from autoscaler.core.model import NS, MetricSpec, Spec
from autoscaler.core.simulate import SimStep

__all__ = ["RunFigures", "run_figures"]


@dataclass(frozen=True, slots=True)
class RunFigures:
    short_pod_seconds: float  # sum over passes of (demand - ready pods, if above 0) x seconds
    replica_seconds: float  # sum over passes of the replicas written x seconds
    scale_events: int  # passes that wrote a new replica count
    seconds: float  # the span measured


def run_figures(
    spec: Spec, steps: Sequence[SimStep], *, request_milli: int = 1000, since: int | None = None
) -> RunFigures:
    """The figures of a run, from `since` (ns; default the first pass) to the last pass."""
    short = replicas = seconds = 0.0
    events = 0
    for i, step in enumerate(steps[:-1]):
        if since is not None and step.time < since:
            continue
        dt = (steps[i + 1].time - step.time) / NS
        demand = max(
            (
                d
                for m, v in zip(spec.metrics, step.values, strict=True)
                if (d := _demand(m, v, step.ready, request_milli)) is not None
            ),
            default=None,
        )
        if demand is not None and demand > step.ready:
            short += (demand - step.ready) * dt
        replicas += step.desired * dt
        seconds += dt
        events += step.desired != step.current
    return RunFigures(short, replicas, events, seconds)


def _demand(m: MetricSpec, value: float | None, ready: int, request_milli: int) -> float | None:
    """The pods this metric's value needs (None: no value, or no target to measure against)."""
    if value is None:
        return None
    t = m.target
    if t.average_value:
        return value * 1000 / t.average_value
    if t.value:
        return ready * value * 1000 / t.value
    if t.average_utilization and request_milli:
        return value * 1000 / (request_milli * t.average_utilization / 100)
    return None
