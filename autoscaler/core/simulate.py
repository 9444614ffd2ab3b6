"""Replay an autoscaler spec over a metric timeline with a simple load model (pure).

The load model (docs/decision-document.md, "simulate"):
- each timeline point is one controller pass at that instant;
- a timeline value is, per metric type:
  Resource / ContainerResource / Pods: the TOTAL over the workload (cores for cpu, bytes for
  memory, the metric's unit for Pods); each ready pod reports total / ready pods;
  Object and External: the metric's value as the API would return it;
- the scale is written at once; new pods are Pending for `pod_ready_delay` seconds, then Running
  and Ready (start time = creation, Ready since creation + delay); a scale-down removes the
  newest pods first, at once;
- every pod requests `request_milli` of the resource (Utilization targets need it);
- a point with no value for a metric is a failed metric on that pass (fallback counts it);
- the controls (pause, activation, cooldowns, fallback, schedules) apply as in the controller;
  the Autoscaler counts as created at the first point unless `controls.created` says otherwise;
- with `spec.predictive`, the model sees only the points before each pass (predictive_replay).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from autoscaler.core.controls_model import EMPTY_CONTROL_STATUS, NO_CONTROLS, Controls
from autoscaler.core.model import (
    CONTAINER_RESOURCE,
    NS,
    PODS,
    RESOURCE,
    ContainerRequests,
    ContainerUsage,
    ControllerOptions,
    Decision,
    History,
    MetricError,
    MetricInput,
    MetricItems,
    MetricSample,
    MetricSpec,
    Pod,
    PodMetrics,
    ResourceMetrics,
    Scale,
    Spec,
    Status,
)
from autoscaler.core.orchestrate import decide_controlled
from autoscaler.core.predictive_replay import ReplayHistory

__all__ = ["SimPoint", "SimStep", "simulate"]

SAMPLE_WINDOW = 30 * NS  # what metrics-server reports as its window


@dataclass(frozen=True, slots=True)
class SimPoint:
    """One timeline point: an instant (ns) and one value per spec metric (None: no data)."""

    time: int
    values: tuple[float | None, ...]


@dataclass(frozen=True, slots=True)
class SimStep:
    time: int
    values: tuple[float | None, ...]
    current: int  # scale.spec.replicas before the step
    ready: int  # ready pods at the step
    desired: int
    summary: str
    fallback: bool = False  # a metric was in fallback on this pass
    paused: bool = False
    schedules: tuple[str, ...] = ()  # the windows open on this pass
    forecast: tuple[float | None, ...] = ()  # per metric, the Ready forecast used on this pass


@dataclass(slots=True)
class _SimPod:
    name: str
    created: int
    ready_at: int


def simulate(
    spec: Spec,
    timeline: Sequence[SimPoint],
    *,
    replicas: int,
    request_milli: int = 1000,
    pod_ready_delay: int = 30,
    options: ControllerOptions | None = None,
    controls: Controls = NO_CONTROLS,
) -> list[SimStep]:
    """Run `decide_controlled` at every timeline point, feeding back status, history, the
    controls' memory and the pods."""
    opts = options or ControllerOptions()
    if not timeline:
        return []
    start = timeline[0].time
    if controls.present and controls.created is None:
        controls = replace(controls, created=start)
    state = EMPTY_CONTROL_STATUS
    # the initial pods have been ready for long: outside every initialization period
    long_ago = start - 3600 * NS
    pods = [_SimPod(f"pod-{i}", long_ago, long_ago) for i in range(replicas)]
    counter = replicas
    current = replicas
    status = Status()
    history: History | None = None
    out: list[SimStep] = []
    delay = pod_ready_delay * NS
    past = ReplayHistory(controls.predictive, spec.metrics) if controls.predictive else None
    for point in timeline:
        now = point.time
        model_pods = [_pod(p, now, spec, request_milli) for p in pods]
        ready_names = [p.name for p in pods if p.ready_at <= now]
        metrics = [
            _metric(m, v, ready_names, now) for m, v in zip(spec.metrics, point.values, strict=True)
        ]
        scale = Scale(current, len(pods), "app=simulated")
        forecasts = past.forecasts(now) if past is not None else ()
        decision = decide_controlled(
            spec,
            status,
            scale,
            model_pods,
            metrics,
            history,
            now=now,
            options=opts,
            controls=controls,
            state=state,
            forecasts=forecasts,
        )
        if past is not None:
            past.observe(now, point.values)  # after the pass: it never saw its own values
        # a pass that fails keeps the scale as it is (status.desiredReplicas may be stale)
        desired = decision.desired_replicas if decision.rescale else current
        step = _step(point, current, len(ready_names), desired, decision)
        if forecasts:
            step = replace(step, forecast=tuple(f.value if f else None for f in forecasts))
        out.append(step)
        status, history = decision.status, decision.history
        state = decision.controls or EMPTY_CONTROL_STATUS
        if decision.rescale:
            target = decision.desired_replicas
            while len(pods) > target:
                pods.pop()  # the newest first
            while len(pods) < target:
                pods.append(_SimPod(f"pod-{counter}", now, now + delay))
                counter += 1
            current = target
    return out


def _step(point: SimPoint, current: int, ready: int, desired: int, d: Decision) -> SimStep:
    c = d.controls
    return SimStep(
        point.time,
        point.values,
        current,
        ready,
        desired,
        d.summary,
        fallback=bool(c and c.fallback),
        paused=bool(c and c.paused),
        schedules=tuple(w.name for w in (c.schedules or ())) if c else (),
    )


def _pod(p: _SimPod, now: int, spec: Spec, request_milli: int) -> Pod:
    ready = p.ready_at <= now
    names = {m.name for m in spec.metrics if m.type in (RESOURCE, CONTAINER_RESOURCE)} or {"cpu"}
    container = next((m.container for m in spec.metrics if m.container), None) or "app"
    requests = dict.fromkeys(names, request_milli)
    return Pod(
        name=p.name,
        phase="Running" if ready else "Pending",
        ready="True" if ready else "False",
        ready_transition=p.ready_at if ready else p.created,
        start_time=p.created,
        containers=(ContainerRequests(container, requests),),
    )


def _metric(
    spec_metric: MetricSpec, value: float | None, ready: list[str], now: int
) -> MetricInput:
    if value is None or math.isnan(value):
        return MetricError("no data in the timeline at this instant")
    milli = math.ceil(value * 1000)
    kind = spec_metric.type
    if kind in (RESOURCE, CONTAINER_RESOURCE):
        if not ready:
            return ResourceMetrics(())
        per_pod = math.ceil(milli / len(ready))
        container = spec_metric.container or "app"
        return ResourceMetrics(
            tuple(
                PodMetrics(
                    name,
                    now,
                    SAMPLE_WINDOW,
                    (ContainerUsage(container, {spec_metric.name: per_pod}),),
                )
                for name in ready
            )
        )
    if kind == PODS:
        if not ready:
            return MetricItems(())
        per_pod = math.ceil(milli / len(ready))
        return MetricItems(tuple(MetricSample(per_pod, now, name) for name in ready))
    return MetricItems((MetricSample(milli, now),))
