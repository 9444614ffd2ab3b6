"""A small result cache in front of Prometheus: TTL, coalescing of identical calls, bounded.

The same PromQL asked within `ttl` seconds is one Prometheus query; identical requests that
arrive while one is in flight wait for it instead of sending their own (so 100 HPAs asking at
once cost one query even with the cache disabled). Failures are shared with the waiters but
never cached.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge

V = TypeVar("V")


class CacheMetrics:
    """Cache self-metrics."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.hits = Counter(
            "promscaler_adapter_cache_hits_total",
            "Metric queries answered from the result cache (kind cached), from a batch window's "
            "shared answer (batched) or by joining one in flight (coalesced).",
            ["kind"],
            registry=registry,
        )
        self.misses = Counter(
            "promscaler_adapter_cache_misses_total",
            "Metric queries sent to Prometheus.",
            registry=registry,
        )
        self.in_flight = Gauge(
            "promscaler_adapter_cache_in_flight",
            "Distinct Prometheus queries in flight (each may serve several requests).",
            registry=registry,
        )
        # the children of `hits`, looked up once (`labels()` locks on every call)
        self.hit = {kind: self.hits.labels(kind) for kind in ("cached", "batched", "coalesced")}


class ResultCache(Generic[V]):
    """Results by key for `ttl` seconds (0: no caching, but still coalescing), at most
    `max_entries` kept (least recently used evicted)."""

    def __init__(
        self,
        *,
        ttl: float,
        max_entries: int = 4096,
        clock: Callable[[], float] = time.monotonic,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._ttl = ttl
        self._max = max_entries
        self._clock = clock
        self._done: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()
        self._flying: dict[Hashable, asyncio.Future[V]] = {}
        self.metrics = CacheMetrics(registry)

    async def get(
        self, key: Hashable, fetch: Callable[[], Awaitable[V]], *, ttl: float | None = None
    ) -> V:
        """The cached value for `key`, or the result of `fetch()`, shared by concurrent callers;
        `ttl` (seconds) overrides the cache's for this key (batched queries keep theirs for
        the batch window)."""
        kind = "cached" if ttl is None else "batched"
        ttl = self._ttl if ttl is None else ttl
        if ttl > 0:
            hit = self._done.get(key)
            if hit is not None and hit[0] > self._clock():
                self._done.move_to_end(key)
                self.metrics.hit[kind].inc()
                return hit[1]
        flying = self._flying.get(key)
        if flying is not None:
            self.metrics.hit["coalesced"].inc()
            # shield: one waiter's cancellation must not cancel the shared call
            return await asyncio.shield(flying)
        return await self._fetch(key, fetch, ttl)

    async def _fetch(self, key: Hashable, fetch: Callable[[], Awaitable[V]], ttl: float) -> V:
        self.metrics.misses.inc()
        # the call runs as its own task so the first caller's cancellation (a client that
        # went away) does not fail the others waiting on it
        task: asyncio.Task[V] = asyncio.ensure_future(fetch())
        self._flying[key] = task
        self.metrics.in_flight.inc()
        task.add_done_callback(lambda t: self._landed(key, t, ttl))
        return await asyncio.shield(task)

    def _landed(self, key: Hashable, task: asyncio.Task[V], ttl: float) -> None:
        self._flying.pop(key, None)
        self.metrics.in_flight.dec()
        if not task.cancelled() and task.exception() is None:
            self._store(key, task.result(), ttl)

    def _store(self, key: Hashable, value: V, ttl: float) -> None:
        if ttl <= 0:
            return
        self._done[key] = (self._clock() + ttl, value)
        self._done.move_to_end(key)
        while len(self._done) > self._max:
            self._done.popitem(last=False)

    def clear(self) -> None:
        self._done.clear()

    def __len__(self) -> int:
        return len(self._done)
