"""Metric discovery: relist every (backend, seriesQuery) call on a schedule and swap in a new
planner.

Fixes the peer's discovery quirks: every call has a timeout; a failing call keeps its last
good result while the others update (the peer keeps the whole old list), and says so in a
self-metric and the log; each backend has its own concurrency gate and publishes its results
as soon as its calls are done, so a hung backend delays nobody else's metrics; readiness waits
for the first pass of every backend; only compact per-call summaries are kept, never the raw
label sets. A reload keeps the summaries of unchanged rules and re-discovers only the rest.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from prometheus_client import CollectorRegistry

from adapter.errors import AdapterError
from adapter.provider.discovery_metrics import DiscoveryMetrics
from adapter.provider.engine import Backends, PreparedQuery, QueryPlanner, RuleEngine
from adapter.provider.seams import CustomMetricInfo, ExternalMetricInfo
from adapter.rules.config import SeriesCall
from adapter.rules.resources import ResourceInfo
from common.selectors import Selector

log = logging.getLogger(__name__)


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
        batch: bool = False,
        name_regex: str | None = None,
    ) -> PreparedQuery | None:
        return None

    def external_query(
        self, metric: str, *, namespace: str, selector: Selector, batch: bool = False
    ) -> PreparedQuery | None:
        return None


@dataclass(frozen=True)
class DiscoveryOptions:
    interval: float = 600.0  # seconds between passes (--metrics-relist-interval, peer: 10m)
    # look back this far for series (--metrics-max-age); the CLI defaults it to
    # max(2 x interval, 5 min) so a series with a sample in that span never drops out
    max_age: float = 1200.0
    timeout: float = 30.0  # seconds per series call; series calls are heavier than queries
    parallel: int = 4  # concurrent calls per backend; overlaps latency, gentle on Prometheus


class Discovery:
    """Owns the current QueryPlanner; `run_once` refreshes it, `run` does so forever."""

    def __init__(
        self,
        backends: Backends,
        engine: RuleEngine,
        *,
        options: DiscoveryOptions,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._backends = backends
        self._engine = engine
        self._options = options
        self._parts: dict[SeriesCall, object] = {}
        self._last_ok: dict[SeriesCall, datetime] = {}  # time of each call's last good answer
        self._stale: set[SeriesCall] = set()  # calls whose latest attempt failed
        self._generation = 0  # bumped by replace_engine; older passes' results are dropped
        self._started: set[str] = set()  # backends whose first pass has ended
        self._ready = False
        self._gates: dict[str, asyncio.Semaphore] = {}
        self.planner: QueryPlanner = EmptyPlanner()
        self.metrics = DiscoveryMetrics(registry)

    @property
    def ready(self) -> bool:
        """True once every backend's first pass has ended, whatever its outcome; it stays
        true (a backend failing later only makes its own rules stale)."""
        return self._ready

    def replace_engine(self, engine: RuleEngine) -> list[SeriesCall]:
        """Use a reloaded rule file: unchanged calls keep their parts (re-pointed at the new
        rules); the calls returned must be discovered, which `run_once(only=...)` does. The
        current planner serves until then, so nothing disappears in between."""
        previous, self._engine = self._engine, engine
        self._generation += 1
        kept: dict[SeriesCall, object] = {}
        for call in engine.series_calls:
            part = self._parts.get(call)
            moved = None if part is None else engine.carry_over(part, previous=previous)
            if moved is not None:
                kept[call] = moved
        self._parts = kept
        self._stale &= set(kept)
        self._last_ok = {c: t for c, t in self._last_ok.items() if c in kept}
        return [call for call in engine.series_calls if call not in kept]

    def run_once(
        self, *, now: datetime, only: Collection[SeriesCall] | None = None
    ) -> Coroutine[None, None, None]:
        """One pass over every call (or those in `only`); each backend publishes when done.
        The rules are those current when this is called, not when the coroutine first runs: a
        pass scheduled before a reload must not publish the reloaded rules without their parts."""
        return self._run(self._engine, self._generation, now, only)

    async def _run(
        self,
        engine: RuleEngine,
        generation: int,
        now: datetime,
        only: Collection[SeriesCall] | None,
    ) -> None:
        started = time.perf_counter()
        calls = [c for c in engine.series_calls if only is None or c in only]
        by_backend: dict[str, list[SeriesCall]] = {}
        for call in calls:
            by_backend.setdefault(call.backend, []).append(call)
        if not by_backend:
            self._publish(engine, generation)
        await asyncio.gather(
            *(self._pass(engine, generation, name, its, now) for name, its in by_backend.items())
        )
        if not self._ready and self._started >= {c.backend for c in engine.series_calls}:
            self._ready = True
        self.metrics.runs.inc()
        self.metrics.duration.observe(time.perf_counter() - started)
        log.info(
            "discovery: %d custom, %d external metrics in %.3fs",
            len(self.planner.custom),
            len(self.planner.external),
            time.perf_counter() - started,
        )

    async def _pass(
        self,
        engine: RuleEngine,
        generation: int,
        backend: str,
        calls: Sequence[SeriesCall],
        now: datetime,
    ) -> None:
        results = await asyncio.gather(*(self._call(engine, call, now) for call in calls))
        self._started.add(backend)
        if generation != self._generation:
            return  # a reload happened meanwhile: this engine's results are obsolete
        for call, part in zip(calls, results, strict=True):
            if part is None:
                self._stale.add(call)
                continue
            self._parts[call] = part
            self._stale.discard(call)
            self._last_ok[call] = now
        self.metrics.observe_backend(backend, self._stale, self._last_ok)
        self._publish(engine, generation)

    async def _call(self, engine: RuleEngine, call: SeriesCall, now: datetime) -> object | None:
        gate = self._gates.setdefault(call.backend, asyncio.Semaphore(self._options.parallel))
        start = now - timedelta(seconds=self._options.max_age)
        async with gate:
            try:
                client = self._backends.client(call.backend)
                series = await client.series(
                    [call.series_query],
                    start=start,
                    end=now,
                    time_limit=self._options.timeout,
                    rule=f"seriesQuery {call.series_query!r}",
                )
            except AdapterError as err:
                self.metrics.failures.labels(call.backend).inc()
                last = self._last_ok.get(call)
                log.warning(
                    "discovery: seriesQuery %r on backend %r failed (%s); keeping its last good "
                    "list (%s)",
                    call.series_query,
                    call.backend,
                    err,
                    f"from {last:%Y-%m-%dT%H:%M:%SZ}" if last else "none yet",
                )
                return None
        return engine.index_part(call, series)

    def _publish(self, engine: RuleEngine, generation: int) -> None:
        if generation != self._generation:
            return
        parts = {c: self._parts[c] for c in engine.series_calls if c in self._parts}
        self.planner = engine.combine(parts)
        self.metrics.metrics.labels("custom").set(len(self.planner.custom))
        self.metrics.metrics.labels("external").set(len(self.planner.external))

    async def run(self, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        """Relist forever, every `interval` seconds; cancel the task to stop."""
        while True:
            try:
                await self.run_once(now=clock())
            except Exception:  # a bug in one pass must not end discovery for good
                log.exception("discovery pass failed")
            await asyncio.sleep(self._options.interval)
