"""Busy-aware scale-in, the I/O half: before a scale-down, rank the target's pods by a Pods metric
and write `controller.kubernetes.io/pod-deletion-cost` on those whose cost changed.

The decision core says when (`podDeletionCost` in a result that scales down) and how the costs
follow from the values (`autoscaler.core.deletioncost`); this module reads the metric through
the same custom metrics API path as the scaling metrics (`Cluster.fetch_metric`), the pods
from the controller's pod cache, and patches the pods.

Nothing here ever holds a scale-down: the scaling decision was made on the scaling metrics,
which the core already guards ("never a scale-down because a metric failed"). When the ranking
metric cannot be read, the pods keep whatever cost they had and the scale-down goes ahead, as
it would without the feature; the pass reports it (a Warning event, a log line, a counter).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from autoscaler.cluster import Cluster, ClusterError, Scale
from autoscaler.core.deletioncost import ANNOTATION, costs_by_busyness, plan_writes
from common.quantity import QuantityError, milli_value

__all__ = ["ANNOTATION", "CostPass", "describe", "rank_pods", "supported", "unsupported_message"]

# whose pods the ReplicaSet controller picks on a scale-down; a StatefulSet deletes the highest
# ordinal and never reads the annotation
_SUPPORTED = frozenset({("apps", "Deployment"), ("apps", "ReplicaSet")})
Event = tuple[str, str, str]  # (type, reason, message)
_PATCHES_AT_ONCE = 8  # pod patches in flight per pass; a large target must not flood the server


@dataclass(frozen=True)
class CostPass:
    """What one ranking did, for the event, the log and the counters."""

    # Written, Unchanged, MetricFailed, PodsUnavailable, PatchFailed, Timeout, Unsupported
    outcome: str
    pods: int = 0  # pods of the target that were ranked
    written: int = 0  # annotations written
    failed: int = 0  # annotation writes that failed
    unmeasured: int = 0  # ranked pods the metric had no value for (counted as idle)
    message: str = ""  # the error, for the failure outcomes


def supported(ref: Mapping[str, Any]) -> bool:
    """Whether `ref` (a scaleTargetRef) is a target whose pods the ReplicaSet controller picks."""
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    return (group, str(ref.get("kind") or "")) in _SUPPORTED


async def rank_pods(
    cluster: Cluster,
    namespace: str,
    scale: Scale,
    block: Mapping[str, Any],
    *,
    budget: float,
) -> CostPass:
    """Read the metric named by `block` (the result's `podDeletionCost`) for the pods of
    `scale`'s selector and write the changed costs, within `budget` seconds. Never raises:
    failures, and running out of time, are the outcome."""
    try:
        async with asyncio.timeout(budget):
            return await _rank(cluster, namespace, scale, block)
    except TimeoutError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():  # the pass was cancelled, not our budget
            raise asyncio.CancelledError from None
        return CostPass("Timeout", message=f"the ranking took over {budget:g}s")


async def _rank(
    cluster: Cluster, namespace: str, scale: Scale, block: Mapping[str, Any]
) -> CostPass:
    metric = {
        "type": "Pods",
        # the target is never read: only the values are; it keeps the entry well-formed
        "pods": {"metric": dict(block.get("metric") or {}), "target": _ANY_TARGET},
    }
    entry = await cluster.fetch_metric(namespace, metric, pod_selector=scale.selector)
    if "error" in entry:
        return CostPass("MetricFailed", message=str(entry["error"]))
    try:
        pods = await cluster.list_pods(namespace, scale.selector)
        values = _values(entry.get("items") or [], pods)
    except ClusterError as e:
        return CostPass("PodsUnavailable", message=str(e))
    except (QuantityError, TypeError, ValueError) as e:
        return CostPass("MetricFailed", message=f"invalid metric value: {e}")
    current = {name: _annotation(pod) for name, pod in _live(pods).items()}
    writes = plan_writes(costs_by_busyness(values), current)
    unmeasured = sum(1 for v in values.values() if v is None)
    failures = await _patch(cluster, namespace, writes)
    ranked = len(values)
    if failures:
        first = failures[0]
        written = len(writes) - len(failures)
        return CostPass("PatchFailed", ranked, written, len(failures), unmeasured, first)
    return CostPass("Written" if writes else "Unchanged", ranked, len(writes), 0, unmeasured)


_ANY_TARGET = {"type": "AverageValue", "averageValue": "1"}


def _live(pods: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The target's pods by name, without those already being deleted (upstream's active
    pods: the ReplicaSet controller does not count them)."""
    out = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        phase = (pod.get("status") or {}).get("phase")
        if not meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
            out[str(meta.get("name", ""))] = pod
    return out


def _values(items: list[Any], pods: list[dict[str, Any]]) -> dict[str, int | None]:
    """Each live pod's metric value in milli-units (None: no sample for it)."""
    values: dict[str, int | None] = dict.fromkeys(_live(pods))
    for item in items:
        name = str(((item or {}).get("describedObject") or {}).get("name", ""))
        if name in values:
            values[name] = milli_value(str(item.get("value")))
    return values


def _annotation(pod: Mapping[str, Any]) -> str | None:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(ANNOTATION)
    return value if isinstance(value, str) else None


async def _patch(cluster: Cluster, namespace: str, writes: Mapping[str, str]) -> list[str]:
    """Write the annotations, a few at a time; returns the errors (empty: all written)."""
    limit = asyncio.Semaphore(_PATCHES_AT_ONCE)

    async def one(name: str, value: str) -> str | None:
        async with limit:
            try:
                await cluster.annotate_pod(namespace, name, ANNOTATION, value)
            except ClusterError as e:
                return f"pod {name}: {e}"
            return None

    results = await asyncio.gather(*(one(n, v) for n, v in writes.items()))
    return [r for r in results if r is not None]


def unsupported_message(ref: Mapping[str, Any]) -> str:
    kind = str(ref.get("kind") or "the target")
    if kind == "StatefulSet":
        why = "a StatefulSet deletes its highest ordinals and never reads pod-deletion-cost"
    else:
        why = f"{kind} ({ref.get('apiVersion')}) is not a Deployment or ReplicaSet of apps/v1"
    return f"podDeletionCost has no effect: {why}"


def describe(ranked: CostPass, block: Mapping[str, Any], current: int, desired: int) -> Event:
    """The event for a ranking (reason "" for none: an unchanged ranking is only logged)."""
    name = str((block.get("metric") or {}).get("name", ""))
    step = f"scaling {current} -> {desired}"
    idle = f" ({ranked.unmeasured} without a value, counted as idle)" if ranked.unmeasured else ""
    if ranked.outcome == "Written":
        what = f"set pod-deletion-cost on {ranked.written} of {ranked.pods} pods"
        return "Normal", "PodDeletionCostUpdated", f"{what} from metric {name}{idle} before {step}"
    if ranked.outcome == "Unchanged":
        return "Normal", "", f"pod-deletion-cost of {ranked.pods} pods already ranks metric {name}"
    if ranked.outcome == "MetricFailed":
        msg = f"unable to read metric {name} for pod-deletion-cost: {ranked.message}"
        return (
            "Warning",
            "FailedGetPodDeletionCostMetric",
            f"{msg}; {step} with the costs as they are",
        )
    if ranked.outcome == "Unsupported":
        return "Warning", "PodDeletionCostUnsupported", f"{ranked.message}; {step}"
    if ranked.outcome == "PatchFailed":
        msg = (
            f"set pod-deletion-cost on {ranked.written} of {ranked.pods} pods, "
            f"{ranked.failed} failed: {ranked.message}"
        )
    elif ranked.outcome == "Timeout":
        msg = f"pod-deletion-cost not fully written: {ranked.message}"
    else:
        msg = f"unable to list the pods: {ranked.message}"
    return "Warning", "FailedUpdatePodDeletionCost", f"{msg}; {step} anyway"
