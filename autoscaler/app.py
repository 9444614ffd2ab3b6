"""Wire the controller to a cluster and run it until stopped (what `run` starts)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, cast

from autoscaler.conflicts import TargetIndex
from autoscaler.controller import Controller, ControllerConfig
from autoscaler.decisionlog import DecisionLog, DecisionLogSettings, logged
from autoscaler.history import HistoryCache
from autoscaler.kube import KubeCluster, KubeError, connect
from autoscaler.kube.client import KubeClient
from autoscaler.kube.cluster import AUTOSCALERS
from autoscaler.kube.discovery import Discovery
from autoscaler.kube.informer import Informer
from autoscaler.kube.lease import LeaderElector, LeaseConfig
from autoscaler.kube.shardlease import ShardElector
from autoscaler.kube.targets import TargetWatcher
from autoscaler.reconcile import ControllerOptions, Reconciler
from autoscaler.selfmetrics import SelfMetrics, serving_context, start_health_server

__all__ = ["Informers", "Settings", "serve"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
HPA_API = "autoscaling/v2"  # the HPA version whose objects may hold a target (controls.md)


@dataclass(frozen=True)
class Settings:
    kubeconfig: str | None = None  # None: the pod's service account (in-cluster)
    namespaces: tuple[str, ...] = ()  # empty: all namespaces
    controller: ControllerConfig = field(default_factory=ControllerConfig)
    options: ControllerOptions = field(default_factory=ControllerOptions)
    leader_elect: bool = False
    shards: int = 1  # > 1: shard Leases instead of one leader (autoscaler.kube.shardlease)
    lease: LeaseConfig = field(default_factory=LeaseConfig)
    metrics_host: str = "0.0.0.0"  # a pod serves its probes on all its interfaces
    metrics_port: int = 8080  # 0 disables the /metrics, /healthz, /readyz server
    tls_cert_file: str = ""  # with tls_key_file: serve them over HTTPS (PEM files)
    tls_key_file: str = ""
    request_timeout: float = 10.0  # seconds per API request
    decision_log: DecisionLogSettings | None = None  # None: no decision log
    share_pod_metrics: float = 0.0  # > 0: Pods metrics read namespace-wide, shared per window


class Informers:
    """One Autoscaler informer per watched namespace (or one for all); `objects` merges them."""

    def __init__(
        self,
        kube: Any,
        namespaces: tuple[str, ...],
        on_event: Callable[[str, JSON], None],
        *,
        group: str = AUTOSCALERS,
        plural: str = "autoscalers",
    ):
        paths = [f"{group}/namespaces/{ns}/{plural}" for ns in namespaces] or [f"{group}/{plural}"]
        self.informers = [Informer(kube, p, on_event=on_event) for p in paths]

    @property
    def objects(self) -> dict[str, JSON]:
        if len(self.informers) == 1:
            return self.informers[0].objects
        merged: dict[str, JSON] = {}
        for informer in self.informers:
            merged.update(informer.objects)
        return merged

    def synced(self) -> bool:
        return all(i.synced.is_set() for i in self.informers)


def _decide() -> Callable[[JSON], JSON]:
    """The core's `decide_document` (issue 3's JSON contract)."""
    core = import_module("autoscaler.core")
    return cast("Callable[[JSON], JSON]", core.decide_document)


async def serve(settings: Settings, *, stop: asyncio.Event) -> None:
    """Run until `stop` is set; then step down (release the lease) and close everything."""
    kube = await connect(settings.kubeconfig, request_timeout=settings.request_timeout)
    identity = settings.lease.identity or _identity()
    kube.set_user_agent(f"promscaler-autoscaler ({identity})")  # one replica in audit logs
    cluster = KubeCluster(kube, share_pod_metrics=settings.share_pod_metrics)
    metrics = SelfMetrics()
    if cluster.shared_reads is not None:
        metrics.count_shared_reads(cluster.shared_reads)
    index = TargetIndex()
    decide = _decide()
    decisions = DecisionLog(settings.decision_log) if settings.decision_log else None
    if decisions is not None:
        decide = logged(decide, decisions)
    history = HistoryCache(cluster, on_refresh=metrics.count_history_refresh)
    metrics.count_histories(history)
    reconciler = Reconciler(
        cluster, options=settings.options, decide=decide, index=index, history=history
    )
    holder: list[Controller] = []
    store = Informers(kube, settings.namespaces, lambda k, o: holder[0].on_event(k, o))
    controller = Controller(
        reconciler,
        store,
        config=settings.controller,
        metrics=metrics,
        index=index,
        shards=settings.shards,
    )
    holder.append(controller)
    targets = TargetWatcher(kube, controller.on_drift)
    controller.holder = targets
    hpas = await _hpa_informers(
        kube, cluster.discovery, settings.namespaces, controller.on_hpa_event
    )
    runner = None
    if settings.metrics_port:
        tls = None
        if settings.tls_cert_file:
            tls = serving_context(settings.tls_cert_file, settings.tls_key_file)
        runner = await start_health_server(
            metrics,
            host=settings.metrics_host,
            port=settings.metrics_port,
            ready=store.synced,
            ssl_context=tls,
        )
    for informer in [*store.informers, *hpas]:
        informer.start()
    elector_task = None
    try:
        await _synced_or_stopped(store, stop)  # plan the first round from the complete list
        lease = LeaseConfig(**{**settings.lease.__dict__, "identity": identity})
        if settings.shards > 1:
            sharder = ShardElector(
                kube,
                lease,
                shards=settings.shards,
                on_gain=controller.gain_shards,
                on_lose=controller.lose_shards,
            )
            elector_task = asyncio.create_task(sharder.run(stop))
        elif settings.leader_elect:
            elector = LeaderElector(kube, lease, on_change=controller.set_leading)
            elector_task = asyncio.create_task(elector.run(stop))
        else:
            controller.set_leading(True)
        await stop.wait()
    finally:
        await controller.stop()
        if elector_task is not None:
            await elector_task
        for informer in [*store.informers, *hpas]:
            await informer.stop()
        await targets.close()
        await history.close()
        await cluster.close()
        if runner is not None:
            await runner.cleanup()
        await kube.close()
        if decisions is not None:
            await asyncio.to_thread(decisions.close)  # the queued lines reach the file


async def _hpa_informers(
    kube: KubeClient,
    discovery: Discovery,
    namespaces: tuple[str, ...],
    on_event: Callable[[str, JSON], None],
) -> list[Informer]:
    """Watch autoscaling/v2 HPAs for conflicts, where the cluster serves them; where it does
    not (or discovery fails), that half of the conflict check is skipped, and the log says so."""
    try:
        found = await discovery.find(HPA_API, "HorizontalPodAutoscaler")
    except KubeError as e:
        log.warning("HPA conflict check off: discovery of %s failed: %s", HPA_API, e)
        return []
    if found is None:
        log.info("HPA conflict check off: the cluster does not serve %s HPAs", HPA_API)
        return []
    return Informers(
        kube, namespaces, on_event, group=found.api_path, plural=found.plural
    ).informers


async def _synced_or_stopped(store: Informers, stop: asyncio.Event) -> None:
    synced: asyncio.Future[Any] = asyncio.gather(*(i.synced.wait() for i in store.informers))
    stopped: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    await asyncio.wait([synced, stopped], return_when=asyncio.FIRST_COMPLETED)
    for future in (synced, stopped):
        future.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await synced


def _identity() -> str:
    return f"{socket.gethostname()}_{os.getpid()}"
