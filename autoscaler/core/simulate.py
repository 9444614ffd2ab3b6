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
- every pod requests `request_milli` of the resource (Utilization targets need it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from autoscaler.core.decide import decide
from autoscaler.core.model import (
    CONTAINER_RESOURCE,
    NS,
    PODS,
    RESOURCE,
    ContainerRequests,
    ContainerUsage,
    ControllerOptions,
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
) -> list[SimStep]:
    """Run `decide` at every timeline point, feeding back status, history and pods."""
    opts = options or ControllerOptions()
    if not timeline:
        return []
    start = timeline[0].time
    # the initial pods have been ready for long: outside every initialization period
    long_ago = start - 3600 * NS
    pods = [_SimPod(f"pod-{i}", long_ago, long_ago) for i in range(replicas)]
    counter = replicas
    current = replicas
    status = Status()
    history: History | None = None
    out: list[SimStep] = []
    delay = pod_ready_delay * NS
    for point in timeline:
        now = point.time
        model_pods = [_pod(p, now, spec, request_milli) for p in pods]
        ready_names = [p.name for p in pods if p.ready_at <= now]
        metrics = [
            _metric(m, v, ready_names, now) for m, v in zip(spec.metrics, point.values, strict=True)
        ]
        scale = Scale(current, len(pods), "app=simulated")
        decision = decide(spec, status, scale, model_pods, metrics, history, now=now, options=opts)
        # a pass that fails keeps the scale as it is (status.desiredReplicas may be stale)
        desired = decision.desired_replicas if decision.rescale else current
        out.append(SimStep(now, point.values, current, len(ready_names), desired, decision.summary))
        status, history = decision.status, decision.history
        if decision.rescale:
            target = decision.desired_replicas
            while len(pods) > target:
                pods.pop()  # the newest first
            while len(pods) < target:
                pods.append(_SimPod(f"pod-{counter}", now, now + delay))
                counter += 1
            current = target
    return out


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
