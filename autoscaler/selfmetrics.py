"""The controller's own metrics, and the /metrics, /healthz, /readyz endpoints.

A private `CollectorRegistry` per controller, so two controllers in one process (tests, the
failover e2e) never collide on metric names.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol, cast

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.utils import floatToGoString

from autoscaler.kube.sharedreads import SharedReads
from common.runtimemetrics import register_build_info, register_runtime

__all__ = [
    "PLAIN_GAUGES",
    "HistoryFigures",
    "SelfMetrics",
    "Snapshot",
    "serving_context",
    "start_health_server",
]

# prometheus_client's own number format for the text exposition (the library leaves it untyped)
_number = cast(Callable[[float], str], floatToGoString)

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# every status a condition gauge has a series for, as kube-state-metrics writes them
CONDITION_STATUSES = ("True", "False", "Unknown")


# the per-Autoscaler gauges with one series each: `promscaler_autoscaler_<key>`, in the order of
# `Snapshot.plain()`
PLAIN_GAUGES = (
    ("paused", "1 while the Autoscaler is paused by annotation."),
    ("in_fallback", "1 while some metric of the Autoscaler is in fallback."),
    ("current_replicas", "The target's replicas as last seen."),
    ("desired_replicas", "The replicas the last pass decided."),
    ("min_replicas", "The effective minReplicas (after active schedules)."),
    ("max_replicas", "The effective maxReplicas (after active schedules)."),
)


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
    # spec.predictive: (metric, forecast, recent error) of each forecast metric
    forecasts: tuple[tuple[str, float | None, float | None], ...] = ()
    forecast_changed: bool = False  # the pass wrote other replicas than the reactive rule would

    def plain(self) -> tuple[float | None, ...]:
        """The values of `PLAIN_GAUGES`, in order (None: no series)."""
        return (
            float(self.paused),
            float(self.in_fallback),
            self.current_replicas,
            self.desired_replicas,
            self.min_replicas,
            self.max_replicas,
        )


@dataclass
class SelfMetrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        # `registry` holds everything (what tests and `get_sample_value` read); /metrics renders
        # the per-Autoscaler series itself and the rest from `_base` (`exposition`)
        r = self._base = CollectorRegistry()
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
        self.deletion_cost = Counter(
            "promscaler_autoscaler_pod_deletion_cost_rankings_total",
            "Scale-downs preceded by a podDeletionCost ranking, by outcome (Written, Unchanged, "
            "MetricFailed, PodsUnavailable, PatchFailed, Timeout, Unsupported).",
            ["outcome"],
            registry=r,
        )
        self.deletion_cost_writes = Counter(
            "promscaler_autoscaler_pod_deletion_cost_writes_total",
            "pod-deletion-cost annotations written on pods, by result (success, failure).",
            ["result"],
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
        self.forecast_changed = Counter(
            "promscaler_autoscaler_forecast_changed_decisions_total",
            "Passes whose replicas written differ, because of spec.predictive's forecast, from "
            "what the reactive rule would have written.",
            registry=r,
        )
        self.history_refreshes = Counter(
            "promscaler_autoscaler_history_refreshes_total",
            "Reads of a metric's history for spec.predictive, by result (success, failure).",
            ["result"],
            registry=r,
        )
        register_runtime(r, prefix="promscaler_autoscaler")
        register_build_info(r, prefix="promscaler_autoscaler")
        self.per_autoscaler = PerAutoscaler()
        self.registry.register(self._base)
        self.registry.register(self.per_autoscaler)

    def count_history_refresh(self, result: str) -> None:
        self.history_refreshes.labels(result).inc()

    def count_histories(self, histories: HistoryFigures) -> None:
        """Expose what spec.predictive's history cache holds and has queued."""
        self._base.register(_HistoriesCollector(histories))

    def count_shared_reads(self, reads: SharedReads) -> None:
        """Expose how Pods metrics were read with `--share-pod-metrics` on."""
        self._base.register(_SharedReadsCollector(reads))

    async def exposition(self) -> bytes:
        """The body of /metrics: the text format `generate_latest(self.registry)` gives, with
        the per-Autoscaler series rendered by `PerAutoscaler.exposition`: prometheus_client
        spends about 20 us on a sample, 3-5 s of the event loop per scrape at 10,000
        Autoscalers (`bench/bench_selfmetrics.py`)."""
        return generate_latest(self._base) + await self.per_autoscaler.exposition()

    def observe(self, namespace: str, name: str, snapshot: Snapshot) -> None:
        self.per_autoscaler.show(namespace, name, snapshot)

    def forget(self, namespace: str, name: str) -> None:
        """Drop every series of a deleted Autoscaler."""
        self.per_autoscaler.remove(namespace, name)


class PerAutoscaler:
    """The series labelled by Autoscaler, rendered at scrape time from each one's last
    `Snapshot` (prometheus_client's pattern for state held elsewhere: a custom collector).

    A pass only stores its snapshot; nothing per series lives between scrapes. With a
    `Gauge` child per series (about 20 per Autoscaler) a 10,000-Autoscaler controller held
    some 200,000 of them, each with its lock, and Python's cycle collector walked them all on
    every full pass. A vanished condition or metric has no series on the next scrape, and a
    forgotten Autoscaler (deleted, or its shard gone) none at all.
    """

    _CONDITION = (
        "promscaler_autoscaler_condition",
        "1 for the current status of each condition type, 0 for the other statuses.",
    )
    _VALUE = (
        "promscaler_autoscaler_metric_value",
        "Each metric's current value as the target compares it (absent when unread).",
    )
    _TARGET = (
        "promscaler_autoscaler_metric_target",
        "Each metric's target value (utilization in percent).",
    )
    _FORECAST = (
        "promscaler_autoscaler_forecast_value",
        "spec.predictive: each metric's forecast of its highest value over the horizon.",
    )
    _ERROR = (
        "promscaler_autoscaler_forecast_recent_error",
        "spec.predictive: each metric's model recent error (a fraction: 0.12 is 12%).",
    )

    def __init__(self) -> None:
        self._shown: dict[tuple[str, str], Snapshot] = {}

    def show(self, namespace: str, name: str, snap: Snapshot) -> None:
        self._shown[(namespace, name)] = snap

    def remove(self, namespace: str, name: str) -> None:
        self._shown.pop((namespace, name), None)

    def describe(self) -> list[GaugeMetricFamily]:
        """The families without samples: what the registry checks names against, so that
        registering does not render every series."""
        return self._families()

    def collect(self) -> list[GaugeMetricFamily]:
        families = self._families()
        for (namespace, name), snap in list(self._shown.items()):
            for index, labels, number in _series(snap):
                families[index].add_metric([namespace, name, *labels], number)
        return families

    async def exposition(self, *, pause_every: int = 200) -> bytes:
        """The families of `collect`, in the text format exactly as prometheus_client's
        `generate_latest` writes them (`tests/controller/test_selfmetrics.py` compares the
        bytes), at a fifth of its cost or less, letting the event loop run after every
        `pause_every` Autoscalers."""
        lines: list[list[str]] = [[] for _ in range(11)]
        # a copy: passes go on storing snapshots while this one waits for its turn
        for done, ((namespace, name), snap) in enumerate(list(self._shown.items()), 1):
            ids = f'name="{_escape(name)}",namespace="{_escape(namespace)}"'
            for index, labels, number in _series(snap):
                if index == 0:  # labels sorted by name, as prometheus_client writes them
                    text = f'{{{ids},status="{labels[1]}",type="{_escape(labels[0])}"}}'
                elif labels:
                    text = f'{{metric="{_escape(labels[0])}",{ids}}}'
                else:
                    text = f"{{{ids}}}"
                lines[index].append(f"{text} {_number(number)}\n")
            if done % pause_every == 0:
                await asyncio.sleep(0)
        out: list[str] = []
        for family, samples in zip(self._families(), lines, strict=True):
            help_text = family.documentation.replace("\\", r"\\").replace("\n", r"\n")
            out.append(f"# HELP {family.name} {help_text}\n# TYPE {family.name} gauge\n")
            out.extend(family.name + line for line in samples)
        return "".join(out).encode()

    def _families(self) -> list[GaugeMetricFamily]:
        ids = ["namespace", "name"]
        return [  # the order the former gauges were registered in
            GaugeMetricFamily(*self._CONDITION, labels=[*ids, "type", "status"]),
            *(
                GaugeMetricFamily(f"promscaler_autoscaler_{key}", text, labels=ids)
                for key, text in PLAIN_GAUGES
            ),
            GaugeMetricFamily(*self._VALUE, labels=[*ids, "metric"]),
            GaugeMetricFamily(*self._TARGET, labels=[*ids, "metric"]),
            GaugeMetricFamily(*self._FORECAST, labels=[*ids, "metric"]),
            GaugeMetricFamily(*self._ERROR, labels=[*ids, "metric"]),
        ]


class HistoryFigures(Protocol):
    """What `autoscaler.history.HistoryCache` tells of itself."""

    refits_pending: int

    def __len__(self) -> int: ...

    def minutes(self) -> int: ...


class _HistoriesCollector:
    """The history cache's gauges, read at scrape time (on the event loop, as the cache is)."""

    def __init__(self, histories: HistoryFigures) -> None:
        self._histories = histories

    def describe(self) -> list[GaugeMetricFamily]:
        return self.collect()

    def collect(self) -> list[GaugeMetricFamily]:
        h = self._histories
        return [
            GaugeMetricFamily(
                "promscaler_autoscaler_histories",
                "Metric histories held for spec.predictive (Autoscalers sharing a metric share "
                "one).",
                value=len(h),
            ),
            GaugeMetricFamily(
                "promscaler_autoscaler_history_minutes",
                "One-minute values held over every history, 8 bytes each (each history's model "
                "adds about 20 kB).",
                value=h.minutes(),
            ),
            GaugeMetricFamily(
                "promscaler_autoscaler_history_refits_pending",
                "Refits queued for or running on the refit thread (after a restart, one per "
                "history until the first fits are done; forecasts wait for them).",
                value=h.refits_pending,
            ),
        ]


class _SharedReadsCollector:
    """`promscaler_autoscaler_pod_metric_reads_total{read}`, from `SharedReads`' counters."""

    def __init__(self, reads: SharedReads) -> None:
        self._reads = reads

    def describe(self) -> list[CounterMetricFamily]:
        return self.collect()

    def collect(self) -> list[CounterMetricFamily]:
        family = CounterMetricFamily(
            "promscaler_autoscaler_pod_metric_reads",
            "Pods metric reads with --share-pod-metrics: read=own (a pass asked for its own "
            "pods), shared (a pass took its pods from a namespace-wide answer), namespace "
            "(namespace-wide requests sent).",
            labels=["read"],
        )
        r = self._reads
        for read, value in (("own", r.own), ("shared", r.shared), ("namespace", r.wide_reads)):
            family.add_metric([read], value)
        return [family]


def _series(snap: Snapshot) -> Iterator[tuple[int, tuple[str, ...], float]]:
    """One Autoscaler's samples: (the family's index in `PerAutoscaler._families`, the label
    values after namespace and name, the value)."""
    for type_, status in snap.conditions:
        for option in CONDITION_STATUSES:
            yield 0, (type_, option), 1.0 if status == option else 0.0
    for index, number in enumerate(snap.plain(), 1):
        if number is not None:
            yield index, (), float(number)
    for metric, current, wanted in snap.metrics:
        if current is not None:
            yield 7, (metric,), current
        if wanted is not None:
            yield 8, (metric,), wanted
    for metric, value, error in snap.forecasts:
        if value is not None:
            yield 9, (metric,), value
        if error is not None:
            yield 10, (metric,), error


def _escape(value: str) -> str:
    """A label value as the text format quotes it (backslash, newline, double quote)."""
    if "\\" in value or "\n" in value or '"' in value:
        return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
    return value


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
        body = await metrics.exposition()
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
