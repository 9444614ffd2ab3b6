"""Pods: samples to per-pod values, `groupPods`, and `calculateRequests` (replica_calculator.go,
metrics/client.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from autoscaler.core.model import NS, ZERO_TIME, MetricSample, Pod, PodMetrics

__all__ = [
    "CalculationError",
    "Grouping",
    "PodSample",
    "calculate_requests",
    "group_pods",
    "pod_usage",
    "pods_metric_values",
    "ready_pods_count",
]

# value (thousandths), timestamp (ns), window (ns)
PodSample = tuple[int, int, int]

DEFAULT_CUSTOM_METRIC_WINDOW = 60 * NS  # metrics/client.go: windowSeconds unset means 1m
POD_LEVEL_RESOURCES = ("cpu", "memory")  # plus hugepages-*: what IsPodLevelRequestsSet checks


class CalculationError(Exception):
    """A metric cannot give a proposal; the message is upstream's error text."""


@dataclass(frozen=True, slots=True)
class Grouping:
    """groupPods' answer: how many pods are ready, and the names (with why) of the others."""

    ready_count: int
    unready: tuple[tuple[str, str], ...]  # (pod, why)
    missing: tuple[str, ...]
    ignored: tuple[tuple[str, str], ...]  # (pod, why)


def pod_usage(
    raw: Sequence[PodMetrics], resource: str, container: str | None
) -> dict[str, PodSample]:
    """Resource metrics API items to per-pod values: the sum over the pod's containers (no value
    when a container lacks the resource or there are none), or the named container's value."""
    if not raw:
        raise CalculationError("no metrics returned from resource metrics API")
    out: dict[str, PodSample] = {}
    for pm in raw:
        total = 0
        found = False
        for c in pm.containers:
            if container is not None and c.name != container:
                continue
            value = c.usage.get(resource)
            if value is None:
                found = False
                break
            total += value
            found = True
        if found:
            out[pm.pod] = (total, pm.timestamp, pm.window)
    return out


def pods_metric_values(items: Sequence[MetricSample]) -> dict[str, PodSample]:
    """Custom metrics API items (one per pod) to per-pod values keyed by describedObject.name."""
    if not items:
        raise CalculationError("no metrics returned from custom metrics API")
    out: dict[str, PodSample] = {}
    for m in items:
        window = DEFAULT_CUSTOM_METRIC_WINDOW if m.window_seconds is None else m.window_seconds * NS
        out[m.name] = (m.value, m.timestamp, window)
    return out


def group_pods(
    pods: Sequence[Pod],
    samples: Mapping[str, PodSample],
    resource: str,
    *,
    now: int,
    cpu_initialization_period: int,
    initial_readiness_delay: int,
) -> Grouping:
    """Sort pods into ready / unready / missing / ignored, in upstream's order of checks.

    Periods are in nanoseconds. Only for `cpu` do readiness and start times matter.
    """
    ready = 0
    unready: list[tuple[str, str]] = []
    missing: list[str] = []
    ignored: list[tuple[str, str]] = []
    for pod in pods:
        if pod.deleting:
            ignored.append((pod.name, "being deleted"))
            continue
        if pod.phase == "Failed" or pod.phase == "Succeeded":
            ignored.append((pod.name, f"phase {pod.phase}"))
            continue
        if pod.phase == "Pending":
            # a pending pod is unready even when it reports a sample
            unready.append((pod.name, "phase Pending"))
            continue
        sample = samples.get(pod.name)
        if sample is None:
            missing.append(pod.name)
            continue
        if resource == "cpu":
            why = _cpu_unready(pod, sample, now, cpu_initialization_period, initial_readiness_delay)
            if why:
                unready.append((pod.name, why))
                continue
        ready += 1
    return Grouping(ready, tuple(unready), tuple(missing), tuple(ignored))


def _cpu_unready(pod: Pod, sample: PodSample, now: int, init_period: int, delay: int) -> str:
    """Why a pod's CPU sample cannot be trusted yet, or "" when it can."""
    if pod.ready is None or pod.start_time is None:
        return "no Ready condition" if pod.ready is None else "no start time"
    ltt = pod.ready_transition if pod.ready_transition is not None else ZERO_TIME
    if pod.start_time + init_period > now:
        # inside the CPU initialization period: only a sample taken after readiness counts
        if pod.ready == "False":
            return "not ready, within the CPU initialization period"
        if sample[1] < ltt + sample[2]:
            return (
                "sample older than readiness plus its window, within the CPU initialization period"
            )
        return ""
    # after it: unready only when it never became ready since its start (Unknown is not False)
    if pod.ready == "False" and pod.start_time + delay > ltt:
        return "not ready since start (initial readiness delay)"
    return ""


def ready_pods_count(pods: Sequence[Pod]) -> int:
    """getReadyPodsCount: Running and Ready=True (pods being deleted still count)."""
    if not pods:
        raise CalculationError("no pods returned by selector while calculating replica count")
    return sum(1 for p in pods if p.phase == "Running" and p.ready == "True")


def calculate_requests(
    pods: Sequence[Pod], container: str | None, resource: str, *, pod_level: bool
) -> dict[str, int]:
    """Each selected pod's request of `resource` in thousandths (every pod, even ignored ones)."""
    out: dict[str, int] = {}
    for pod in pods:
        if pod_level and container is None and _pod_level_set(pod):
            out[pod.name] = _pod_level_request(pod, resource)
        else:
            out[pod.name] = _container_requests(pod, container, resource)
    return out


def _pod_level_set(pod: Pod) -> bool:
    reqs = pod.pod_requests
    if not reqs:
        return False
    return any(k in POD_LEVEL_RESOURCES or k.startswith("hugepages-") for k in reqs)


def _supported(resource: str) -> bool:
    return resource in POD_LEVEL_RESOURCES or resource.startswith("hugepages-")


def _pod_level_request(pod: Pod, resource: str) -> int:
    """resourcehelpers.PodRequests(pod)[resource], overhead included."""
    assert pod.pod_requests is not None
    value = pod.pod_requests.get(resource) if _supported(resource) else None
    if value is None:
        value = _aggregate_containers(pod, resource)
    overhead = pod.overhead.get(resource)
    if value is None and overhead is None:
        raise CalculationError(f"missing pod-level request for {resource} in Pod {pod.name}")
    # PodRequests adds the overhead even for a resource nothing else requests
    return (value or 0) + (overhead or 0)


def _aggregate_containers(pod: Pod, resource: str) -> int | None:
    """The sidecar-aware container aggregate: sidecars add to the running total; a plain init
    container needs its own request plus the sidecars started before it."""
    seen = False
    total = 0
    for c in pod.containers:
        if resource in c.requests:
            seen = True
            total += c.requests[resource]
    sidecars = 0
    init_peak = 0
    for c in pod.init_containers:
        value = c.requests.get(resource)
        seen = seen or value is not None
        value = value or 0
        if c.restartable_init:
            total += value
            sidecars += value
            init_peak = max(init_peak, sidecars)
        else:
            init_peak = max(init_peak, value + sidecars)
    return max(total, init_peak) if seen else None


def _container_requests(pod: Pod, container: str | None, resource: str) -> int:
    """Regular containers plus sidecars; non-restartable init containers are skipped."""
    total = 0
    found = False
    for c in (*pod.containers, *(i for i in pod.init_containers if i.restartable_init)):
        if container is not None and c.name != container:
            continue
        found = True
        value = c.requests.get(resource)
        if value is None:
            raise CalculationError(
                f"missing request for {resource} in container {c.name} of Pod {pod.name}"
            )
        total += value
    if container is not None and not found:
        raise CalculationError(f"container {container} not found in Pod {pod.name}")
    return total
