"""One reconcile pass for one Autoscaler: gather -> decide (core) -> act.

The shape of upstream's `reconcileAutoscaler` (horizontal.go) around a pure core: read the
target's /scale, its pods and its metrics through the `Cluster` seam, build the decision document
of issue 3, let `decide_document` decide, then write /scale (only when the core says so), the
status (only when it changed) and Events as the HPA's recorder does.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from autoscaler import deletioncost
from autoscaler.cluster import Cluster, ClusterError, Scale, failure
from autoscaler.conflicts import Claim, describe, target_key
from autoscaler.deletioncost import CostPass
from autoscaler.history import HistoryCache
from autoscaler.options import ControllerOptions, with_default_metrics
from autoscaler.selfmetrics import Snapshot
from autoscaler.statusview import set_condition, snapshot
from autoscaler.statuswrite import StatusWriter, failed_update
from common.kubetime import format_time

__all__ = ["ControllerOptions", "Outcome", "Reconciler"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
Decide = Callable[[JSON], JSON]
NEEDS_PODS = frozenset({"Resource", "ContainerResource", "Pods"})
WARNING, NORMAL = "Warning", "Normal"


PAUSED, PAUSED_REPLICAS = "promscaler.dev/paused", "promscaler.dev/paused-replicas"
PAUSE_ANNOTATIONS = (PAUSED, PAUSED_REPLICAS)


class Conflicts(Protocol):
    """Who holds a target (`autoscaler.conflicts.TargetIndex`)."""

    def holder(self, obj: Mapping[str, Any]) -> Claim | None: ...


@dataclass(frozen=True)
class Outcome:
    """What a pass did, for scheduling and self-metrics."""

    reason: (
        str  # decision or failure reason, e.g. SucceededRescale, ReadyForNewScale, FailedGetScale
    )
    replicas: int | None = None  # the target's spec.replicas after the pass, when known
    rescaled: bool = False
    at_zero_awake: bool = False  # at 0 replicas and allowed to wake: poll it fast
    error: str | None = None  # set when the pass failed and should back off
    metric_failures: tuple[str, ...] = ()  # the reason of each metric that failed this pass
    snapshot: Snapshot | None = None  # the per-Autoscaler gauges after the pass
    held: tuple[str, int] | None = None  # (scale path, N) while paused-replicas holds it
    deletion_cost: CostPass | None = None  # what podDeletionCost did before a scale-down


class Reconciler:
    """Runs passes. `write=False` (not the leader) reads and decides but never writes."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        options: ControllerOptions,
        decide: Decide,
        index: Conflicts | None = None,
        history: HistoryCache | None = None,
    ) -> None:
        self._cluster = cluster
        self._history = history  # spec.predictive's forecasts; None: no history is read
        self._options = options
        self._decide = decide
        self._index = index
        self._status = StatusWriter(cluster, options=options)

    async def reconcile(self, obj: JSON, *, now: datetime, write: bool = True) -> Outcome:
        meta, spec = obj.get("metadata", {}), with_default_metrics(obj.get("spec") or {})
        ns = str(meta.get("namespace", ""))
        status = self._status.base(obj)
        try:
            scale = await self._cluster.get_scale(ns, spec.get("scaleTargetRef") or {})
        except ClusterError as e:
            msg = f"the HPA controller was unable to get the target's current scale: {e}"
            await self._fail(obj, status, now, "FailedGetScale", msg, write=write)
            return Outcome(reason="FailedGetScale", error=str(e))
        metrics, pods = await self._gather(ns, spec, scale)
        doc = {
            "now": _now_text(now),
            "controller": self._options.document(),
            "autoscaler": {
                "metadata": _control_metadata(meta),
                "spec": spec,
                "status": _core_status(status),
            },
            "scale": scale.document(),
            "pods": pods,
            "metrics": metrics,
        }
        if status.get("history") is not None:
            doc["history"] = status["history"]
        # a follower's decisions are not written: it reads no history (a new leader's first
        # passes say NoHistory until its first reads land, seconds later)
        if write and self._history is not None and spec.get("predictive") is not None:
            # never waits for a read; a Pods metric's history is its target's pods'
            forecasts = self._history.forecasts(ns, spec, now, pod_selector=scale.selector)
            if forecasts is not None:
                doc["forecasts"] = forecasts
        conflict = self._conflict(obj)
        if conflict:
            doc["conflict"] = {"message": conflict}
        try:
            result = self._decide(doc)
        except ValueError as e:  # the core names the bad field; a user's spec is never a crash
            msg = f"invalid autoscaler: {e}"
            await self._fail(obj, status, now, "InvalidSpec", msg, write=write, active=True)
            return Outcome(reason="InvalidSpec", replicas=scale.replicas, error=str(e))
        return await self._act(obj, status, scale, metrics, result, now=now, write=write)

    def forget(self, key: str) -> None:
        """The Autoscaler `namespace/name` was deleted (or its shard left this replica)."""
        self._status.forget(key)

    async def flush(self, key: str) -> None:
        """Write the status a pass computed but skipped writing (a shard handoff)."""
        await self._status.flush(key)

    def _conflict(self, obj: JSON) -> str:
        """Why another scaler holds this one's target, or "" when this one may act."""
        claim = self._index.holder(obj) if self._index is not None else None
        target = target_key(obj)
        return describe(claim, target) if claim is not None and target is not None else ""

    async def _gather(
        self, ns: str, spec: Mapping[str, Any], scale: Scale
    ) -> tuple[list[JSON], list[JSON]]:
        """The metric entries in spec order, and the pods; never raises."""
        specs = list(spec.get("metrics") or [])
        pods: list[JSON] = []
        pods_error = ""
        if any(_needs_pods(m) for m in specs):
            try:
                pods = await self._cluster.list_pods(ns, scale.selector)
            except ClusterError as e:
                pods_error = f"unable to get pods: {e}"
        sel = scale.selector

        async def one(m: Mapping[str, Any]) -> JSON:
            if pods_error and _needs_pods(m):
                return failure("PodsUnavailable", pods_error)
            return await self._cluster.fetch_metric(ns, m, pod_selector=sel)

        if len(specs) == 1:  # the usual case: no task to gather
            return [await one(specs[0])], pods
        return list(await asyncio.gather(*(one(m) for m in specs))), pods

    async def _act(
        self,
        obj: JSON,
        old: JSON,
        scale: Scale,
        metrics: list[JSON],
        result: JSON,
        *,
        now: datetime,
        write: bool,
    ) -> Outcome:
        status = {**dict(result.get("status") or {}), "decision": _decision(result)}
        history = result.get("history")
        desired = int(result.get("desiredReplicas", scale.replicas))
        reason = _rescale_reason(result)
        if write:
            await self._metric_events(obj, metrics, result)
            for event in result.get("events") or []:  # the controls' transitions
                await self._event(obj, event["type"], event["reason"], event["message"])
        replicas, rescaled = scale.replicas, False
        ranked: CostPass | None = None
        if result.get("rescale") and write:
            if result.get("podDeletionCost") is not None:  # the core says: a scale-down
                ranked = await self._rank(obj, scale, result["podDeletionCost"], desired)
            try:
                await self._cluster.update_scale(scale, desired)
            except ClusterError as e:
                msg = f"New size: {desired}; reason: {reason}; error: {e}"
                await self._event(obj, WARNING, "FailedRescale", msg)
                status, history = failed_update(result, old, now, str(e))
                status["decision"] = {**_decision(result), "summary": f"{msg} (not written)"}
                await self._status.write(obj, old, status, history)
                return Outcome(
                    "FailedUpdateScale",
                    scale.replicas,
                    error=str(e),
                    metric_failures=_failures(metrics),
                    snapshot=snapshot(with_default_metrics(obj.get("spec") or {}), status),
                    deletion_cost=ranked,
                )
            replicas, rescaled = desired, True
            msg = f"New size: {desired}; reason: {reason}"
            await self._event(obj, NORMAL, "SuccessfulRescale", msg)
            log.info("rescaled %s: %s", _key(obj), msg, extra={"autoscaler": _key(obj)})
        if write:
            await self._status.write(obj, old, status, history)
        return Outcome(
            reason=_decision_reason(status, rescaled),
            replicas=replicas,
            rescaled=rescaled,
            at_zero_awake=replicas == 0 and _woken_at_zero(status),
            metric_failures=_failures(metrics),
            snapshot=snapshot(with_default_metrics(obj.get("spec") or {}), status),
            held=_held(scale, status),
            deletion_cost=ranked,
        )

    async def _rank(self, obj: JSON, scale: Scale, block: JSON, desired: int) -> CostPass:
        """podDeletionCost before a scale-down: rank the pods, then say what was written."""
        ref = (obj.get("spec") or {}).get("scaleTargetRef") or {}
        if not deletioncost.supported(ref):
            ranked = CostPass("Unsupported", message=deletioncost.unsupported_message(ref))
        else:
            ns = str(obj.get("metadata", {}).get("namespace", ""))
            budget = self._options.deletion_cost_budget
            ranked = await deletioncost.rank_pods(self._cluster, ns, scale, block, budget=budget)
        type_, reason, message = deletioncost.describe(ranked, block, scale.replicas, desired)
        if reason:
            await self._event(obj, type_, reason, message)
        extra = {"autoscaler": _key(obj), "outcome": ranked.outcome, "written": ranked.written}
        log.log(
            logging.WARNING if type_ == WARNING else logging.INFO,
            "pod-deletion-cost %s: %s",
            _key(obj),
            message,
            extra=extra,
        )
        return ranked

    async def _metric_events(self, obj: JSON, metrics: list[JSON], result: JSON) -> None:
        """FailedGet<Type>Metric per unreadable metric; FailedComputeMetricsReplicas when the
        core could not compute (upstream's reconcile error)."""
        specs = with_default_metrics(obj.get("spec") or {})["metrics"]
        for m, entry in zip(specs, metrics, strict=False):
            if "error" in entry:
                kind = str(m.get("type", ""))
                await self._event(obj, WARNING, f"FailedGet{kind}Metric", str(entry["error"]))
        error = result.get("computeError")
        if error:
            await self._event(obj, WARNING, "FailedComputeMetricsReplicas", str(error))

    async def _fail(
        self,
        obj: JSON,
        old: JSON,
        now: datetime,
        reason: str,
        message: str,
        *,
        write: bool,
        active: bool = False,
    ) -> None:
        """A pass that could not decide: condition + event, replicas untouched."""
        if not write:
            return
        event = "FailedComputeMetricsReplicas" if active else reason
        await self._event(obj, WARNING, event, message)
        conditions = list(old.get("conditions") or [])
        if active:  # the spec itself is wrong: scaling cannot be active
            conditions = set_condition(conditions, "ScalingActive", "False", reason, message, now)
        else:
            conditions = set_condition(conditions, "AbleToScale", "False", reason, message, now)
        decision = {"summary": f"no decision ({reason}): {message}"}
        await self._status.write(
            obj, old, {**old, "conditions": conditions, "decision": decision}, old.get("history")
        )

    async def _event(self, obj: JSON, type_: str, reason: str, message: str) -> None:
        await self._cluster.record_event(obj, type_=type_, reason=reason, message=message)


_NOW: list[tuple[int, str]] = [(0, format_time(datetime(1970, 1, 1, tzinfo=UTC)))]


def _now_text(now: datetime) -> str:
    """`format_time(now)`, formatted once per second: every pass stamps its document."""
    second = math.floor(now.timestamp())
    last = _NOW[0]
    if last[0] != second:
        last = _NOW[0] = (second, format_time(now))
    return last[1]


def _needs_pods(metric: Mapping[str, Any]) -> bool:
    """Pod-based metrics need the pods; so do Object/External Value targets, which multiply
    the ratio by the ready pod count (upstream getUsageRatioReplicaCount)."""
    kind = str(metric.get("type", ""))
    if kind in NEEDS_PODS:
        return True
    source = metric.get(kind[:1].lower() + kind[1:]) or {}
    return (source.get("target") or {}).get("type") == "Value"


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata", {})
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _control_metadata(meta: Mapping[str, Any]) -> JSON:
    """What the controls read from metadata: creationTimestamp and the pause annotations."""
    annotations = meta.get("annotations") or {}
    out: JSON = {"annotations": {a: annotations[a] for a in PAUSE_ANNOTATIONS if a in annotations}}
    if meta.get("creationTimestamp"):
        out["creationTimestamp"] = meta["creationTimestamp"]
    return out


def _failures(metrics: list[JSON]) -> tuple[str, ...]:
    return tuple(str(m.get("reason") or "Unknown") for m in metrics if "error" in m)


def _held(scale: Scale, status: Mapping[str, Any]) -> tuple[str, int] | None:
    """The target and N while paused-replicas holds it (to watch it for drift)."""
    held = status.get("pausedReplicas")
    return (scale.path, int(held)) if isinstance(held, int) else None


def _decision(result: Mapping[str, Any]) -> JSON:
    """The pass's decision for people (`kubectl describe pas`): the core's one-line summary and
    its explanation, one line per step."""
    return {
        "summary": str(result.get("summary") or ""),
        "explanation": [str(line) for line in result.get("explanation") or []],
    }


def _core_status(status: Mapping[str, Any]) -> JSON:
    """The HorizontalPodAutoscalerStatus part of our status (the core knows nothing else)."""
    ours = ("history", "observedGeneration", "reference", "targets", "decision")
    return {k: v for k, v in status.items() if k not in ours and v is not None}


def _condition(status: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    for c in status.get("conditions") or []:
        if c.get("type") == type_:
            return dict(c)
    return None


def _woken_at_zero(status: Mapping[str, Any]) -> bool:
    """At zero with ScaledToZero=True: the core would wake it, so poll fast (issue 6)."""
    cond = _condition(status, "ScaledToZero")
    return cond is not None and cond.get("status") == "True"


def _decision_reason(status: Mapping[str, Any], rescaled: bool) -> str:
    if rescaled:
        return "SucceededRescale"
    for type_ in ("ScalingActive", "AbleToScale"):
        cond = _condition(status, type_)
        if cond is not None and cond.get("status") == "False":
            return str(cond.get("reason", type_))
    cond = _condition(status, "AbleToScale")
    return str(cond.get("reason", "Unknown")) if cond else "Unknown"


def _rescale_reason(result: Mapping[str, Any]) -> str:
    """Upstream's rescale reason ("... above target"), else the core's summary."""
    for key in ("rescaleReason", "summary"):
        if isinstance(result.get(key), str) and result[key]:
            return str(result[key])
    return "metrics changed"
