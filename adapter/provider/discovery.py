"""Metric discovery: relist every seriesQuery on a schedule and swap in a new planner.

Fixes the peer's discovery quirks: every call has a timeout; a failing seriesQuery keeps its
last good result while the others update (the peer keeps the whole old list); readiness waits
for the first pass; only compact per-query summaries are kept, never the raw label sets.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from adapter.errors import AdapterError
from adapter.provider.engine import PreparedQuery, QueryPlanner, RuleEngine
from adapter.provider.seams import CustomMetricInfo, ExternalMetricInfo
from adapter.rules.resources import ResourceInfo
from common.selectors import Selector

log = logging.getLogger(__name__)


class SeriesSource(Protocol):
    """The part of the Prometheus client discovery uses."""

    async def series(
        self,
        matchers: Sequence[str],
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        time_limit: float | None = None,
    ) -> list[dict[str, str]]: ...


class EmptyPlanner:
    """The planner before the first pass: nothing discovered."""

    custom: Sequence[CustomMetricInfo] = ()
    external: Sequence[ExternalMetricInfo] = ()

    def custom_query(
        self,
        resource: ResourceInfo,
        metric: str,
        *,
        namespace: str | None,
        names: Sequence[str],
        metric_selector: Selector,
    ) -> PreparedQuery | None:
        return None

    def external_query(
        self, metric: str, *, namespace: str, selector: Selector
    ) -> PreparedQuery | None:
        return None


@dataclass(frozen=True)
class DiscoveryOptions:
    interval: float = 600.0  # seconds between passes (--metrics-relist-interval, peer: 10m)
    max_age: float = 600.0  # look back this far for series (--metrics-max-age, peer: = interval)
    timeout: float = 30.0  # seconds per series call; series calls are heavier than queries
    parallel: int = 4  # concurrent series calls; enough to overlap latency, gentle on Prometheus


class DiscoveryMetrics:
    """Discovery self-metrics."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.runs = Counter(
            "promscaler_adapter_discovery_runs_total", "Discovery passes.", registry=registry
        )
        self.failures = Counter(
            "promscaler_adapter_discovery_failures_total",
            "Failed seriesQuery calls (their last good result is kept).",
            registry=registry,
        )
        self.duration = Histogram(
            "promscaler_adapter_discovery_duration_seconds",
            "Duration of a discovery pass.",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=registry,
        )
        self.last_success = Gauge(
            "promscaler_adapter_discovery_last_success_timestamp_seconds",
            "Unix time of the last pass in which every seriesQuery succeeded (0: none yet).",
            registry=registry,
        )
        self.metrics = Gauge(
            "promscaler_adapter_discovered_metrics",
            "Metrics currently served, by API.",
            ["api"],
            registry=registry,
        )


class Discovery:
    """Owns the current QueryPlanner; `run_once` refreshes it, `run` does so forever."""

    def __init__(
        self,
        source: SeriesSource,
        engine: RuleEngine,
        *,
        options: DiscoveryOptions,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._source = source
        self._engine = engine
        self._options = options
        self._parts: dict[str, object] = {}
        self.planner: QueryPlanner = EmptyPlanner()
        self.ready = False  # True once the first pass has finished, whatever its outcome
        self.metrics = DiscoveryMetrics(registry)

    def replace_engine(self, engine: RuleEngine) -> None:
        """Use a reloaded rule file from the next pass on (old parts are dropped)."""
        self._engine = engine
        self._parts = {}

    async def run_once(self, *, now: datetime) -> None:
        started = time.perf_counter()
        engine = self._engine
        queries = list(engine.series_queries)
        gate = asyncio.Semaphore(self._options.parallel)
        start = now - timedelta(seconds=self._options.max_age)

        async def one(query: str) -> bool:
            async with gate:
                try:
                    series = await self._source.series(
                        [query], start=start, end=now, time_limit=self._options.timeout
                    )
                except AdapterError as err:
                    self.metrics.failures.inc()
                    log.warning("discovery: seriesQuery %r failed (%s); keeping last", query, err)
                    return False
                self._parts[query] = engine.index_part(query, series)
                return True

        if all(await asyncio.gather(*(one(q) for q in queries))):
            self.metrics.last_success.set(now.timestamp())
        parts = {q: self._parts[q] for q in queries if q in self._parts}
        self.planner = engine.combine(parts)
        self.ready = True
        self.metrics.runs.inc()
        self.metrics.duration.observe(time.perf_counter() - started)
        self.metrics.metrics.labels("custom").set(len(self.planner.custom))
        self.metrics.metrics.labels("external").set(len(self.planner.external))
        log.info(
            "discovery: %d custom, %d external metrics in %.3fs",
            len(self.planner.custom),
            len(self.planner.external),
            time.perf_counter() - started,
        )

    async def run(self, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        """Relist forever, every `interval` seconds; cancel the task to stop."""
        while True:
            try:
                await self.run_once(now=clock())
            except Exception:  # a bug in one pass must not end discovery for good
                log.exception("discovery pass failed")
            await asyncio.sleep(self._options.interval)
