"""The controller: watch Autoscalers, reconcile each on a schedule with bounded concurrency.

- Every Autoscaler is reconciled every `sync_period` (jittered), at once when its generation
  changes, and every `zero_poll_interval` while its target is at zero but may wake (fast 0 -> N).
- `workers` passes run at a time; each pass has a deadline, so one slow autoscaler holds one
  worker at most that long and never delays the others beyond it.
- A failed pass backs off per object (1s doubling up to the sync period), never globally.
- Only the leader reconciles (with leader election on); losing the lease stops the workers at
  once, so a follower never writes.
- Conflicts: every Autoscaler and HPA event updates the index of scalers by target; when the
  claims on a target change (one deleted, one added), its Autoscalers are reconciled at once,
  so deleting the one that acts hands control to the next within a pass.
- Pause annotations are read at once too: they change no generation.
"""

from __future__ import annotations

import asyncio
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

    # ---- events from the store and the elector -------------------------------------------
    def on_event(self, kind: str, obj: JSON) -> None:
        """An Autoscaler was added, modified or deleted (informer callback)."""
        key = key_of(obj)
        if kind == "DELETED":
            self.queue.forget(key)
            self._generations.pop(key, None)
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
            if self._generations.get(key, object()) != seen:
                self._generations[key] = seen
                self._failures.pop(key, None)
                if self.leading:  # a follower only remembers; leading starts a full round
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
        if self.leading and key in self._store.objects:
            self.queue.add(key, urgent=True)

    def _wake(self, targets: set[TargetKey], *, skip: str = "") -> None:
        """Reconcile at once the Autoscalers of targets whose claims changed."""
        if not self.leading:
            return
        for target in targets:
            for key in self.index.claimants(target, "Autoscaler"):
                if key != skip and key in self._store.objects:
                    self.queue.add(key, urgent=True)

    def set_leading(self, leading: bool) -> None:
        """Start the workers on gaining leadership, cancel them on losing it."""
        if leading == self.leading:
            return
        self.leading = leading
        self.metrics.leader.set(1 if leading else 0)
        if leading:
            keys = list(self._store.objects)
            # a new leader starts with a full round; with many autoscalers it is spread over
            # one sync period, or every later round stays one burst that lags behind
            spread = self.config.sync_period if len(keys) > self.config.spread_above else 0.0
            for key in keys:
                self.queue.add(key, delay=random.uniform(0, spread))
            self._term += 1
            self._workers = [
                asyncio.create_task(self._work(self._term), name=f"worker-{i}")
                for i in range(self.config.workers)
            ]
        else:
            self._end_term()
            if self.holder is not None:  # a follower repairs nothing
                for key in list(self._store.objects):
                    self.holder.release(key)

    def _end_term(self) -> list[asyncio.Task[None]]:
        """Stop this term's workers: they check the term on every loop too, because a library
        that turns a cancellation into a timeout must not keep a follower writing."""
        self._term += 1
        workers, self._workers = self._workers, []
        for task in workers:
            task.cancel()
        return workers

    async def stop(self) -> None:
        self.leading = False
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
        if obj is None:
            return None  # deleted meanwhile
        start = self._monotonic()
        self.metrics.lag.observe(max(0.0, start - due))
        try:
            async with asyncio.timeout(self.config.pass_timeout):
                outcome = await self._reconciler.reconcile(obj, now=self._clock())
        except TimeoutError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # a cancellation, not our deadline
                raise asyncio.CancelledError from None
            outcome = Outcome(reason="Timeout", error=f"pass took over {self.config.pass_timeout}s")
        except Exception as e:  # a bug must not kill the worker; log it with the object's name
            log.exception("reconcile %s failed", key, extra={"autoscaler": key})
            outcome = Outcome(reason="InternalError", error=str(e))
        self.metrics.duration.observe(self._monotonic() - start)
        self.passes += 1
        return self._account(key, outcome)

    def _account(self, key: str, outcome: Outcome) -> tuple[float, bool]:
        """Record the outcome; return when this autoscaler is due next (seconds) and whether
        that pass goes in the fast lane (a target asleep at zero)."""
        self.metrics.decisions.labels(outcome.reason).inc()
        for reason in outcome.metric_failures:
            self.metrics.metric_failures.labels(reason).inc()
        if outcome.snapshot is not None:
            namespace, _, name = key.partition("/")
            self.metrics.observe(namespace, name, outcome.snapshot)
        if self.holder is not None:
            if outcome.held is None:
                self.holder.release(key)
            else:
                self.holder.hold(key, *outcome.held)
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
