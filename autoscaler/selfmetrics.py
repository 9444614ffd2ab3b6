"""The controller's own metrics, and the /metrics, /healthz, /readyz endpoints.

A private `CollectorRegistry` per controller, so two controllers in one process (tests, the
failover e2e) never collide on metric names.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from common.runtimemetrics import register_asyncio_tasks

__all__ = ["SelfMetrics", "serving_context", "start_health_server"]

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


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
        register_asyncio_tasks(r, prefix="promscaler_autoscaler")


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
