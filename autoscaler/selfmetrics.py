"""The controller's own metrics, and the /metrics, /healthz, /readyz endpoints.

A private `CollectorRegistry` per controller, so two controllers in one process (tests, the
failover e2e) never collide on metric names.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from common.runtimemetrics import register_runtime

__all__ = ["SelfMetrics", "Snapshot", "serving_context", "start_health_server"]

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# every status a condition gauge has a series for, as kube-state-metrics writes them
CONDITION_STATUSES = ("True", "False", "Unknown")


@dataclass(frozen=True)
class Snapshot:
    """What the per-Autoscaler gauges show after a pass (`autoscaler.statusview.snapshot`)."""

    conditions: tuple[tuple[str, str], ...]  # (type, status)
    paused: bool
    in_fallback: bool
    current_replicas: int | None
    desired_replicas: int | None
    min_replicas: int  # effective: after schedules
    max_replicas: int
    metrics: tuple[tuple[str, float | None, float | None], ...]  # (metric, value, target)


@dataclass
class SelfMetrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.duration = Histogram(
            "promscaler_autoscaler_reconcile_duration_seconds",
            "Time one reconcile pass took (gather, decide, act).",
            buckets=_BUCKETS,
            registry=r,
        )
        self.lag = Histogram(
            "promscaler_autoscaler_reconcile_lag_seconds",
            "How late a pass started after it was due.",
            buckets=_BUCKETS,
            registry=r,
        )
        self.errors = Counter(
            "promscaler_autoscaler_reconcile_errors_total",
            "Passes that failed, by reason.",
            ["reason"],
            registry=r,
        )
        self.scale_writes = Counter(
            "promscaler_autoscaler_scale_writes_total",
            "Writes of a target's /scale, by result (success, failure).",
            ["result"],
            registry=r,
        )
        self.decisions = Counter(
            "promscaler_autoscaler_decisions_total",
            "Decisions, by reason (SucceededRescale, ReadyForNewScale, ScalingDisabled, ...).",
            ["reason"],
            registry=r,
        )
        self.autoscalers = Gauge(
            "promscaler_autoscaler_autoscalers", "Autoscalers watched.", registry=r
        )
        self.leader = Gauge(
            "promscaler_autoscaler_leader", "1 while this instance is the leader.", registry=r
        )
        self.metric_failures = Counter(
            "promscaler_autoscaler_metric_failures_total",
            "Metrics that could not be had on a pass, by reason (NotFound, Timeout, "
            "ServiceUnavailable, Unavailable, Empty, InvalidValue, ...).",
            ["reason"],
            registry=r,
        )
        self.shards_held = Gauge(
            "promscaler_autoscaler_shards_held",
            "Shards this instance holds and reconciles (1 for a leader without sharding).",
            registry=r,
        )
        self.shard_handoffs = Counter(
            "promscaler_autoscaler_shard_handoffs",
            "Shards taken (direction=in) and given up or lost (direction=out).",
            ["direction"],
            registry=r,
        )
        self.shard_autoscalers = Gauge(
            "promscaler_autoscaler_shard_autoscalers",
            "Autoscalers in each shard this instance holds (summed over instances: all).",
            ["shard"],
            registry=r,
        )
        self.per_autoscaler = PerAutoscaler(r)
        register_runtime(r, prefix="promscaler_autoscaler")

    def observe(self, namespace: str, name: str, snapshot: Snapshot) -> None:
        self.per_autoscaler.show(namespace, name, snapshot)

    def forget(self, namespace: str, name: str) -> None:
        """Drop every series of a deleted Autoscaler."""
        self.per_autoscaler.remove(namespace, name)


class PerAutoscaler:
    """The gauges labelled by Autoscaler, and which label sets each one has, so that a
    vanished condition or metric (and a deleted Autoscaler) loses its series."""

    def __init__(self, r: CollectorRegistry) -> None:
        ids = ["namespace", "name"]
        self.condition = Gauge(
            "promscaler_autoscaler_condition",
            "1 for the current status of each condition type, 0 for the other statuses.",
            [*ids, "type", "status"],
            registry=r,
        )
        self.plain = {
            key: Gauge(f"promscaler_autoscaler_{key}", text, ids, registry=r)
            for key, text in (
                ("paused", "1 while the Autoscaler is paused by annotation."),
                ("in_fallback", "1 while some metric of the Autoscaler is in fallback."),
                ("current_replicas", "The target's replicas as last seen."),
                ("desired_replicas", "The replicas the last pass decided."),
                ("min_replicas", "The effective minReplicas (after active schedules)."),
                ("max_replicas", "The effective maxReplicas (after active schedules)."),
            )
        }
        self.value = Gauge(
            "promscaler_autoscaler_metric_value",
            "Each metric's current value as the target compares it (absent when unread).",
            [*ids, "metric"],
            registry=r,
        )
        self.target = Gauge(
            "promscaler_autoscaler_metric_target",
            "Each metric's target value (utilization in percent).",
            [*ids, "metric"],
            registry=r,
        )
        self._labels: dict[tuple[str, str], set[tuple[Any, tuple[str, ...]]]] = {}
        self._shown: dict[tuple[str, str], Snapshot] = {}  # the gauges as last set

    def show(self, namespace: str, name: str, snap: Snapshot) -> None:
        ids = (namespace, name)
        if self._shown.get(ids) == snap:
            return  # most passes change nothing: no label lookups (5% of a pass's CPU)
        self._shown[ids] = snap
        new: set[tuple[Any, tuple[str, ...]]] = set()

        def put(gauge: Gauge, labels: tuple[str, ...], value: float) -> None:
            gauge.labels(*labels).set(value)
            new.add((gauge, labels))

        for type_, status in snap.conditions:
            for option in CONDITION_STATUSES:
                put(self.condition, (*ids, type_, option), 1.0 if status == option else 0.0)
        values = {
            "paused": float(snap.paused),
            "in_fallback": float(snap.in_fallback),
            "current_replicas": snap.current_replicas,
            "desired_replicas": snap.desired_replicas,
            "min_replicas": snap.min_replicas,
            "max_replicas": snap.max_replicas,
        }
        for key, number in values.items():
            if number is not None:
                put(self.plain[key], ids, float(number))
        for metric, value, target in snap.metrics:
            if value is not None:
                put(self.value, (*ids, metric), value)
            if target is not None:
                put(self.target, (*ids, metric), target)
        self._drop(self._labels.get(ids, set()) - new)
        self._labels[ids] = new

    def remove(self, namespace: str, name: str) -> None:
        self._shown.pop((namespace, name), None)
        self._drop(self._labels.pop((namespace, name), set()))

    @staticmethod
    def _drop(series: set[tuple[Any, tuple[str, ...]]]) -> None:
        for gauge, labels in series:
            with contextlib.suppress(KeyError):  # already gone
                gauge.remove(*labels)


async def start_health_server(
    metrics: SelfMetrics,
    *,
    host: str,
    port: int,
    ready: Callable[[], bool],
    ssl_context: ssl.SSLContext | None = None,
) -> web.AppRunner:
    """Serve /metrics, /healthz and /readyz (ready: the Autoscaler cache has synced), over
    HTTPS when `ssl_context` is given."""

    async def prom(_: web.Request) -> web.Response:
        body = generate_latest(metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        return web.Response(text="ok") if ready() else web.Response(status=503, text="not ready")

    app = web.Application()
    app.router.add_get("/metrics", prom)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port, ssl_context=ssl_context).start()
    return runner


def serving_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """A TLS 1.2+ server context from PEM files; OSError/ssl.SSLError name a bad file."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    return context
