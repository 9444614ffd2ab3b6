"""kube-controller-manager's HorizontalPodAutoscaler controller, for the sandbox only.

Every `sync_period` it lists the `autoscaling/v2` HPAs and reconciles each as upstream's
`reconcileAutoscaler` does (`pkg/controller/podautoscaler/horizontal.go`): read the target's
/scale (kind -> resource through discovery), the pods of its selector and the metrics (through
the API server's aggregation layer, see `hpa_client`), let the project's decision core decide,
write /scale when it says so, then events and the status (only when it changed). It acts over
HTTPS as `system:serviceaccount:kube-system:horizontal-pod-autoscaler` (`hpa_identity`), so
every read and write is authorized as the real controller's would be. Stabilization history is
kept in memory, as upstream; it goes when the HPA goes or the sandbox stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autoscaler.core import (
    ControllerOptions,
    Decision,
    DocumentError,
    History,
    Status,
    decide,
    parse_document,
    render_status,
    rescale_failed,
)
from common.kubetime import format_time
from sandbox.hpa_client import ApiClient, CallError, MetricsClient, RestMapper
from sandbox.hpa_events import EventRecorder

log = logging.getLogger(__name__)
Obj = dict[str, Any]
HPAS = "/apis/autoscaling/v2/horizontalpodautoscalers"
HPAS_IN = "/apis/autoscaling/v2/namespaces"
NEEDS_PODS = frozenset({"Resource", "ContainerResource", "Pods"})
WARNING, NORMAL = "Warning", "Normal"
# the core's explanation line for a failed metric: "metrics[i] failed (<reason>): <error>"
_FAILED = re.compile(r"^metrics\[(\d+)\] failed \((\w+)\): (.*)$")


@dataclass(frozen=True)
class HpaControllerConfig:
    """kube-controller-manager's HPA flags (same names, same defaults)."""

    sync_period: float = 15.0  # seconds; --horizontal-pod-autoscaler-sync-period
    tolerance: float = 0.1  # ratio; --horizontal-pod-autoscaler-tolerance
    downscale_stabilization: float = 300.0  # seconds; --...-downscale-stabilization
    cpu_initialization_period: float = 300.0  # seconds; --...-cpu-initialization-period
    initial_readiness_delay: float = 30.0  # seconds; --...-initial-readiness-delay
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), compare=False)

    def options(self) -> ControllerOptions:
        # HPAScaleToZero: beta and on in Kubernetes 1.37
        return ControllerOptions(
            tolerance=self.tolerance,
            cpu_initialization_period_seconds=int(self.cpu_initialization_period),
            initial_readiness_delay_seconds=int(self.initial_readiness_delay),
            downscale_stabilization_seconds=int(self.downscale_stabilization),
            scale_to_zero=True,
        )


class HorizontalController:
    """Runs until stopped; `sync_once()` is one pass over every HPA (tests call it)."""

    def __init__(self, config: HpaControllerConfig, *, url: str, ca_file: Path, token: str) -> None:
        self.config = config
        self._api = ApiClient(url, ca_file=ca_file, token=token)
        self._mapper = RestMapper(self._api)
        self._metrics = MetricsClient(self._api, self._mapper)
        self._events = EventRecorder(self._api, clock=config.clock)
        self._history: dict[str, History] = {}
        self._task: asyncio.Task[None] | None = None
        # one pass at a time per HPA, as upstream's work queue hands a key to one worker: an
        # HPA whose metrics backend hangs delays only itself
        self._inflight: dict[str, asyncio.Task[None]] = {}

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._run(), name="sandbox-hpa-controller")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for task in self._inflight.values():
            task.cancel()
        await asyncio.gather(*self._inflight.values(), return_exceptions=True)
        self._inflight.clear()
        await self._api.close()

    async def _run(self) -> None:
        while True:
            try:
                await self.sync_once()
            except Exception:  # one bad pass must not stop the controller
                log.exception("HPA sync failed")
            await asyncio.sleep(self.config.sync_period)

    async def sync_once(self) -> None:
        # HPAs whose pass is running now sit this round out, even when it ends during the
        # list: the listed object would predate that pass's status write (a 409)
        busy = {key for key, task in self._inflight.items() if not task.done()}
        try:
            hpas = (await self._api.call("GET", HPAS)).get("items") or []
        except CallError as err:
            log.warning("listing HPAs failed: %s", err)
            return
        keys = {_key(h) for h in hpas}
        for gone in set(self._history) - keys:
            del self._history[gone]  # upstream forgets a deleted HPA's recommendations
        started = []
        for hpa in hpas:
            key = _key(hpa)
            if key in busy:
                continue  # its previous pass is still waiting (a slow metrics backend)
            task = asyncio.get_running_loop().create_task(self._reconcile_logged(hpa))
            self._inflight[key] = task
            started.append(task)
        for key in [k for k, task in self._inflight.items() if task.done()]:
            del self._inflight[key]
        # wait for this pass's HPAs, but never longer than a sync period
        if started:
            await asyncio.wait(started, timeout=self.config.sync_period)

    async def _reconcile_logged(self, hpa: Obj) -> None:
        try:
            await self.reconcile(hpa)
        except Exception:
            log.exception("reconciling HPA %s failed", _key(hpa))

    # ---- one HPA -------------------------------------------------------------------------

    async def reconcile(self, hpa: Obj) -> None:
        """One pass of `reconcileAutoscaler` for one HPA."""
        now = self.config.clock()
        ns = str(hpa["metadata"].get("namespace", ""))
        original = dict(hpa.get("status") or {})
        try:
            scale, scale_path = await self._get_scale(ns, hpa["spec"].get("scaleTargetRef") or {})
        except CallError as err:
            await self._failed_get_scale(hpa, original, err.message, now)
            return
        try:
            step = parse_document(await self._document(hpa, ns, scale, now))
        except DocumentError as err:  # validation keeps these out; never crash on one
            await self._events.event(hpa, WARNING, "FailedComputeMetricsReplicas", str(err))
            return
        history = self._history.get(_key(hpa))
        decision = decide(
            *(step.spec, step.status, step.scale, step.pods, step.metrics, history),
            now=step.now,
            options=self.config.options(),
        )
        await self._metric_events(hpa, decision.explanation, decision.compute_error)
        status, self._history[_key(hpa)] = await self._rescale(hpa, scale, scale_path, decision)
        await self._update_status(hpa, original, render_status(status))

    async def _document(self, hpa: Obj, ns: str, scale: Obj, now: datetime) -> Obj:
        """The decision document: the scale, the pods and one entry per spec metric."""
        spec = hpa.get("spec") or {}
        selector = str((scale.get("status") or {}).get("selector") or "")
        metrics = list(spec.get("metrics") or [])
        pods = await self._pods(ns, selector) if _needs_pods(metrics) else []
        entries = [await self._metric_entry(ns, m, selector, pods) for m in metrics]
        replicas = int((scale.get("spec") or {}).get("replicas") or 0)
        seen = int((scale.get("status") or {}).get("replicas") or 0)
        return {
            "now": format_time(now),
            "autoscaler": {"spec": spec, "status": _core_status(hpa.get("status") or {})},
            "scale": {
                "spec": {"replicas": replicas},
                "status": {"replicas": seen, "selector": selector},
            },
            "pods": pods if isinstance(pods, list) else [],
            "metrics": entries,
        }

    async def _rescale(
        self, hpa: Obj, scale: Obj, path: str, decision: Decision
    ) -> tuple[Status, History]:
        """Write /scale when the decision says so; the status and history to keep."""
        if not decision.rescale:
            return decision.status, decision.history
        desired, reason = decision.desired_replicas, decision.rescale_reason
        body = {**scale, "spec": {**(scale.get("spec") or {}), "replicas": desired}}
        try:
            await self._api.call("PUT", path, body=body)
        except CallError as err:
            msg = f"New size: {desired}; reason: {reason}; error: {err.message}"
            await self._events.event(hpa, WARNING, "FailedRescale", msg)
            return rescale_failed(decision, message=err.message)
        msg = f"New size: {desired}; reason: {reason}"
        await self._events.event(hpa, NORMAL, "SuccessfulRescale", msg)
        log.info("rescaled %s: %s", _key(hpa), msg)
        return decision.status, decision.history

    async def _get_scale(self, ns: str, ref: Obj) -> tuple[Obj, str]:
        api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind", ""))
        if not api_version:
            # upstream parses the empty group version as core/v1 and finds no such kind there
            api_version = "v1"
        found = await self._mapper.find(api_version, kind)
        if found is None:
            raise CallError(404, f'no matches for kind "{kind}" in group "{_group(api_version)}"')
        name = str(ref.get("name", ""))
        path = f"{found.api_path}/namespaces/{ns}/{found.plural}/{name}/scale"
        return await self._api.call("GET", path), path

    async def _failed_get_scale(self, hpa: Obj, original: Obj, message: str, now: datetime) -> None:
        await self._events.event(hpa, WARNING, "FailedGetScale", message)
        text = f"the HPA controller was unable to get the target's current scale: {message}"
        status = {
            **original,
            "conditions": _set(original, "AbleToScale", "False", "FailedGetScale", text, now),
        }
        await self._update_status(hpa, original, status)

    async def _pods(self, ns: str, selector: str) -> list[Obj] | str:
        try:
            doc = await self._api.call(
                "GET", f"/api/v1/namespaces/{ns}/pods", query={"labelSelector": selector}
            )
        except CallError as err:
            return f"unable to get pods while calculating replica count: {err.message}"
        return list(doc.get("items") or [])

    async def _metric_entry(
        self, ns: str, metric: Obj, selector: str, pods: list[Obj] | str
    ) -> Obj:
        if isinstance(pods, str) and metric.get("type") in NEEDS_PODS:
            return {"error": pods}
        return await self._metrics.fetch(ns, metric, selector)

    async def _metric_events(self, hpa: Obj, lines: tuple[str, ...], error: str | None) -> None:
        """FailedGet<Type>Metric per failed metric (getUnableComputeReplicaCountCondition) and
        FailedComputeMetricsReplicas when no decision could be made."""
        for line in lines:
            m = _FAILED.match(line)
            if m:
                cause = m.group(3).split(" metric value: ", 1)[-1]
                await self._events.event(hpa, WARNING, m.group(2), cause)
        if error:
            await self._events.event(hpa, WARNING, "FailedComputeMetricsReplicas", error)

    async def _update_status(self, hpa: Obj, original: Obj, status: Obj) -> None:
        """updateStatusIfNeeded: PUT /status only when it changed."""
        if _same(original, status):
            return
        meta = hpa["metadata"]
        path = f"{HPAS_IN}/{meta['namespace']}/horizontalpodautoscalers/{meta['name']}/status"
        try:
            await self._api.call("PUT", path, body={**hpa, "status": status})
        except CallError as err:
            await self._events.event(hpa, WARNING, "FailedUpdateStatus", err.message)
            log.warning("status of %s not written: %s", _key(hpa), err)


def _key(hpa: Obj) -> str:
    meta = hpa.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _needs_pods(metrics: list[Obj]) -> bool:
    """Pod metrics need the pods; so do Value targets of Object/External metrics (readiness)."""
    for m in metrics:
        kind = str(m.get("type", ""))
        source = m.get(kind[:1].lower() + kind[1:]) or {}
        if kind in NEEDS_PODS or (source.get("target") or {}).get("type") == "Value":
            return True
    return False


def _core_status(status: Obj) -> Obj:
    return {k: v for k, v in status.items() if v is not None}


def _same(old: Obj, new: Obj) -> bool:
    """Semantic equality: unset and empty are the same (currentMetrics null vs [])."""

    def norm(s: Obj) -> Obj:
        return {k: v for k, v in s.items() if v not in (None, [], {})}

    return norm(old) == norm(new)


def _set(
    status: Obj, type_: str, value: str, reason: str, message: str, now: datetime
) -> list[Obj]:
    """setCondition: in place (the transition time moves only with the status) or appended."""
    out = [dict(c) for c in status.get("conditions") or []]
    for c in out:
        if c.get("type") == type_:
            if c.get("status") != value:
                c["lastTransitionTime"] = format_time(now)
            c.update(status=value, reason=reason, message=message)
            return out
    out.append(
        {
            "type": type_,
            "status": value,
            "lastTransitionTime": format_time(now),
            "reason": reason,
            "message": message,
        }
    )
    return out
