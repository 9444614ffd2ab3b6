"""The controller: watch Autoscalers, reconcile each on a schedule with bounded concurrency.

- Every Autoscaler is reconciled every `sync_period` (jittered), at once when its generation
  changes, and every `zero_poll_interval` while its target is at zero but may wake (fast 0 -> N).
- `workers` passes run at a time; each pass has a deadline, so one slow autoscaler holds one
  worker at most that long and never delays the others beyond it.
- A failed pass backs off per object (1s doubling up to the sync period), never globally.
- Only the leader reconciles (with leader election on); losing the lease stops the workers at
  once, so a follower never writes.
- Sharded (`shards` > 1): only the Autoscalers of the shards this replica holds are reconciled.
  `lose_shards` stops their passes (cancels those in flight and waits for them) before the
  elector gives the Leases up, so two replicas never write one object in a lease term.
- Conflicts: every Autoscaler and HPA event updates the index of scalers by target; when the
  claims on a target change (one deleted, one added), its Autoscalers are reconciled at once,
  so deleting the one that acts hands control to the next within a pass.
- Pause annotations are read at once too: they change no generation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from autoscaler.conflicts import HPA, TargetIndex, TargetKey
from autoscaler.queue import WorkQueue
from autoscaler.reconcile import PAUSE_ANNOTATIONS, Outcome, Reconciler
from autoscaler.selfmetrics import SelfMetrics
from autoscaler.sharding import shard_of

__all__ = ["Controller", "ControllerConfig", "key_of"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]


@dataclass(frozen=True)
class ControllerConfig:
    sync_period: float = 15.0  # seconds between passes per autoscaler; kube-controller-manager's
    jitter: float = 0.1  # fraction of sync_period added at random, so passes do not bunch up
    zero_poll_interval: float = 1.0  # seconds between passes while a target sleeps at zero
    workers: int = 8  # passes at a time
    pass_timeout: float = 30.0  # seconds one pass may take before it is abandoned
    min_backoff: float = 1.0  # seconds after a first failure; doubles per failure
    spread_above: int = 100  # autoscalers; above this a new leader's first round is spread


class Store(Protocol):
    """Where Autoscalers come from (informers in production): key -> object."""

    @property
    def objects(self) -> dict[str, JSON]: ...


class Holder(Protocol):
    """Watches held targets (`autoscaler.kube.targets.TargetWatcher`)."""

    def hold(self, key: str, scale_path: str, replicas: int) -> None: ...

    def release(self, key: str) -> None: ...


def key_of(obj: JSON) -> str:
    meta = obj.get("metadata", {})
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class Controller:
    def __init__(
        self,
        reconciler: Reconciler,
        store: Store,
        *,
        config: ControllerConfig,
        metrics: SelfMetrics | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
        index: TargetIndex | None = None,
        shards: int = 1,
    ) -> None:
        self._reconciler = reconciler
        self._store = store
        self.config = config
        self.metrics = metrics or SelfMetrics()
        self._clock = clock
        self._monotonic = monotonic
        self.queue = WorkQueue(clock=monotonic)
        self.index = index if index is not None else TargetIndex()
        self.holder: Holder | None = None  # set by the app once the watcher exists
        self._generations: dict[str, Any] = {}
        self._failures: dict[str, int] = {}
        self._workers: list[asyncio.Task[None]] = []
        self._term = 0  # leadership terms; a worker stops when its term is over
        self.leading = False
        self.passes = 0  # completed passes, for tests and benchmarks
        self.shards = shards  # how many shards the Autoscalers are split into (1: a leader)
        self.owned: frozenset[int] = frozenset()  # the shards this replica reconciles
        self._inflight: dict[str, asyncio.Task[Outcome]] = {}  # key -> its running pass
        self._per_shard: dict[int, int] = {}  # shard -> Autoscalers in it (all shards)

    def shard(self, key: str) -> int:
        return shard_of(key, self.shards)

    def owns(self, key: str) -> bool:
        """Whether this replica reconciles `key` now."""
        return self.leading and self.shard(key) in self.owned

    # ---- events from the store and the elector -------------------------------------------
    def on_event(self, kind: str, obj: JSON) -> None:
        """An Autoscaler was added, modified or deleted (informer callback)."""
        key = key_of(obj)
        if kind == "DELETED":
            self.queue.forget(key)
            if self._generations.pop(key, None) is not None:
                self._count(key, -1)
            self._failures.pop(key, None)
            meta = obj.get("metadata", {})
            self.metrics.forget(str(meta.get("namespace", "")), str(meta.get("name", "")))
            if self.holder is not None:
                self.holder.release(key)
            self._reconciler.forget(key)
            self._wake(self.index.remove("Autoscaler", obj))
        else:
            self._wake(self.index.update("Autoscaler", obj), skip=key)
            meta = obj.get("metadata", {})
            pause = tuple((meta.get("annotations") or {}).get(a) for a in PAUSE_ANNOTATIONS)
            seen = (meta.get("generation"), pause)
            if key not in self._generations:
                self._count(key, +1)
            if self._generations.get(key, object()) != seen:
                self._generations[key] = seen
                self._failures.pop(key, None)
                if self.owns(key):  # a follower only remembers; leading starts a full round
                    self.queue.add(key, urgent=True)  # new, spec or pause changed: at once
        self.metrics.autoscalers.set(len(self._store.objects))

    def on_hpa_event(self, kind: str, obj: JSON) -> None:
        """An autoscaling/v2 HPA was added, modified or deleted (HPA informer callback)."""
        if kind == "DELETED":
            self._wake(self.index.remove(HPA, obj))
        else:
            self._wake(self.index.update(HPA, obj))

    def on_drift(self, key: str) -> None:
        """A held target's replicas moved (target watch): repair it now."""
        if self.owns(key) and key in self._store.objects:
            self.queue.add(key, urgent=True)

    def _wake(self, targets: set[TargetKey], *, skip: str = "") -> None:
        """Reconcile at once the Autoscalers of targets whose claims changed."""
        if not self.leading:
            return
        for target in targets:
            for key in self.index.claimants(target, "Autoscaler"):
                if key != skip and key in self._store.objects and self.owns(key):
                    self.queue.add(key, urgent=True)

    def set_leading(self, leading: bool) -> None:
        """Start the workers on gaining leadership, cancel them on losing it."""
        if leading == self.leading:
            return
        if leading:
            self.gain_shards(frozenset(range(self.shards)))
        else:
            self._lose_all()

    def gain_shards(self, shards: frozenset[int]) -> None:
        """Start reconciling the Autoscalers of `shards` (their Leases are now ours)."""
        new = shards - self.owned
        if not new:
            return
        self.owned |= new
        self._show_shards(direction="in", moved=new)
        keys = [k for k in self._store.objects if self.shard(k) in new]
        # a new holder starts with a full round; with many autoscalers it is spread over
        # one sync period, or every later round stays one burst that lags behind
        spread = self.config.sync_period if len(keys) > self.config.spread_above else 0.0
        for key in keys:
            self.queue.add(key, delay=random.uniform(0, spread))
        if not self.leading:
            self.leading = True
            self.metrics.leader.set(1)
            self._term += 1
            self._workers = [
                asyncio.create_task(self._work(self._term), name=f"worker-{i}")
                for i in range(self.config.workers)
            ]

    async def lose_shards(self, shards: frozenset[int], *, flush: bool = False) -> None:
        """Stop writing for `shards`: no new pass starts, the running ones are cancelled and
        waited for (bounded by the pass deadline). With `flush` (a handoff while the Leases are
        still ours), the statuses whose writes were skipped are written first, so the next
        holder starts from exactly what this one knew (statuswrite.py). Returns once nothing
        of theirs is written any more."""
        gone = shards & self.owned
        if not gone:
            return
        keys = [k for k in self._store.objects if self.shard(k) in gone]
        if gone == self.owned:  # all of them: end the term (its workers stop)
            workers = self._lose_all(drop=False)
            if workers:
                await asyncio.wait(workers, timeout=self.config.pass_timeout + 1)
        else:
            self.owned -= gone
            self._show_shards(direction="out", moved=gone)
            running = []
            for key in keys:
                self.queue.forget(key)
                task = self._inflight.get(key)
                if task is not None:
                    task.cancel()
                    running.append(task)
            if running:
                await asyncio.wait(running, timeout=self.config.pass_timeout + 1)
        if flush:
            await self._flush(keys)
        for key in keys:
            self._drop_key(key)

    async def _flush(self, keys: list[str]) -> None:
        """Write the skipped statuses of `keys`, `workers` at a time, within one pass deadline
        (a slow API server must not hold the handoff past the lease)."""
        limit = asyncio.Semaphore(self.config.workers)

        async def one(key: str) -> None:
            async with limit:
                await self._reconciler.flush(key)

        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.config.pass_timeout):
                await asyncio.gather(*(one(k) for k in keys))

    def _lose_all(self, *, drop: bool = True) -> list[asyncio.Task[None]]:
        gone, self.owned = self.owned, frozenset()
        self.leading = False
        self.metrics.leader.set(0)
        self._show_shards(direction="out", moved=gone)
        workers = self._end_term()
        for key in list(self._store.objects):  # a follower repairs nothing
            if drop:
                self._drop_key(key)
            else:
                self.queue.forget(key)
        return workers

    def _drop_key(self, key: str) -> None:
        """Forget what this replica knew of `key` beyond its spec: whoever holds its shard
        next starts from the persisted status, and so does this one if the shard comes back."""
        self.queue.forget(key)
        if self.holder is not None:
            self.holder.release(key)
        namespace, _, name = key.partition("/")
        self.metrics.forget(namespace, name)  # its owner exports it now; ours would go stale
        if self.shards > 1:  # one leader keeps its memory across terms, as before sharding
            self._reconciler.forget(key)

    def _count(self, key: str, delta: int) -> None:
        shard = self.shard(key)
        self._per_shard[shard] = self._per_shard.get(shard, 0) + delta
        if shard in self.owned:
            self.metrics.shard_autoscalers.labels(str(shard)).set(self._per_shard[shard])

    def _show_shards(self, *, direction: str, moved: frozenset[int]) -> None:
        self.metrics.shards_held.set(len(self.owned))
        self.metrics.shard_handoffs.labels(direction).inc(len(moved))
        for shard in moved:
            if direction == "in":
                self.metrics.shard_autoscalers.labels(str(shard)).set(self._per_shard.get(shard, 0))
            else:
                self.metrics.shard_autoscalers.remove(str(shard))

    def _end_term(self) -> list[asyncio.Task[None]]:
        """Stop this term's workers: they check the term on every loop too, because a library
        that turns a cancellation into a timeout must not keep a follower writing."""
        self._term += 1
        workers, self._workers = self._workers, []
        for task in workers:
            task.cancel()
        return workers

    async def stop(self) -> None:
        self.leading, self.owned = False, frozenset()
        workers = self._end_term()
        if workers:
            # bounded: a worker stuck in a request still ends within one pass deadline
            await asyncio.wait(workers, timeout=self.config.pass_timeout + 1)

    # ---- the work loop ------------------------------------------------------------------
    async def _work(self, term: int) -> None:
        while term == self._term:
            key, due = await self.queue.get()
            if term != self._term:
                self.queue.done(key, delay=0.0)  # not ours any more: hand it back
                return
            next_: tuple[float, bool] | None = None
            try:
                next_ = await self._pass(key, due)
            finally:
                if next_ is None:
                    self.queue.done(key)
                else:
                    self.queue.done(key, delay=next_[0], urgent=next_[1])

    async def _pass(self, key: str, due: float) -> tuple[float, bool] | None:
        """One pass; returns (seconds until the next, urgent) or None when deleted."""
        obj = self._store.objects.get(key)
        if obj is None or not self.owns(key):
            return None  # deleted meanwhile, or its shard was given up
        start = self._monotonic()
        self.metrics.lag.observe(max(0.0, start - due))
        running = asyncio.ensure_future(self._reconciler.reconcile(obj, now=self._clock()))
        self._inflight[key] = running  # so that giving its shard up can cancel it
        try:
            async with asyncio.timeout(self.config.pass_timeout):
                outcome = await running
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if (task is not None and task.cancelling()) or not running.cancelled():
                raise
            return None  # its shard was given up mid-pass (lose_shards)
        except TimeoutError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # a cancellation, not our deadline
                raise asyncio.CancelledError from None
            outcome = Outcome(reason="Timeout", error=f"pass took over {self.config.pass_timeout}s")
        except Exception as e:  # a bug must not kill the worker; log it with the object's name
            log.exception("reconcile %s failed", key, extra={"autoscaler": key})
            outcome = Outcome(reason="InternalError", error=str(e))
        finally:
            self._inflight.pop(key, None)
        self.metrics.duration.observe(self._monotonic() - start)
        self.passes += 1
        return self._account(key, outcome)

    def _account(self, key: str, outcome: Outcome) -> tuple[float, bool]:
        """Record the outcome; return when this autoscaler is due next (seconds) and whether
        that pass goes in the fast lane (a target asleep at zero)."""
        self.metrics.decisions.labels(outcome.reason).inc()
        for reason in outcome.metric_failures:
            self.metrics.metric_failures.labels(reason).inc()
        if outcome.snapshot is not None and outcome.snapshot.forecast_changed:
            self.metrics.forecast_changed.inc()
        if outcome.snapshot is not None and self.owns(key):  # not for a shard given up
            namespace, _, name = key.partition("/")
            self.metrics.observe(namespace, name, outcome.snapshot)
        if self.holder is not None:
            if outcome.held is None:
                self.holder.release(key)
            else:
                self.holder.hold(key, *outcome.held)
        ranked = outcome.deletion_cost
        if ranked is not None:
            self.metrics.deletion_cost.labels(ranked.outcome).inc()
            self.metrics.deletion_cost_writes.labels("success").inc(ranked.written)
            self.metrics.deletion_cost_writes.labels("failure").inc(ranked.failed)
        if outcome.rescaled:
            self.metrics.scale_writes.labels("success").inc()
        if outcome.reason == "FailedUpdateScale":
            self.metrics.scale_writes.labels("failure").inc()
        if outcome.error is not None:
            self.metrics.errors.labels(outcome.reason).inc()
            n = self._failures.get(key, 0)
            self._failures[key] = n + 1
            extra = {"autoscaler": key, "reason": outcome.reason}
            log.warning("reconcile %s: %s: %s", key, outcome.reason, outcome.error, extra=extra)
            return float(min(self.config.min_backoff * 2**n, self.config.sync_period)), False
        self._failures.pop(key, None)
        if outcome.at_zero_awake:
            return self.config.zero_poll_interval, True
        return self.config.sync_period * (1 + random.uniform(0, self.config.jitter)), False
