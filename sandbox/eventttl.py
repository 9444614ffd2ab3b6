"""Events expire, as kube-apiserver's `--event-ttl` makes them (default one hour).

Upstream stores each Event in etcd under a lease of the TTL, renewed by every write of that
Event; when the lease runs out etcd deletes the key and watchers see a DELETED event. Here a
store listener notes the deadline of each write and a sweep removes what is overdue, through
the store, so watchers see the same DELETED.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import time
from collections.abc import Callable

from sandbox.store import Change, Store

__all__ = ["EVENT_TTL", "EventExpiry"]

EVENT_TTL = 3600.0  # seconds: kube-apiserver's --event-ttl default (1h0m0s)
EVENTS = ("", "events")  # core/v1 and events.k8s.io/v1 Events share this storage
SWEEP_EVERY = 1.0  # seconds between sweeps; an Event may outlive its TTL by this much


class EventExpiry:
    """Deadlines of stored Events, and the task that deletes the overdue ones."""

    def __init__(
        self, store: Store, *, ttl: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store, self.ttl, self.clock = store, ttl, clock
        self._deadline: dict[tuple[str, str], float] = {}  # (namespace, name) -> when due
        self._heap: list[tuple[float, tuple[str, str]]] = []  # may hold superseded deadlines
        self._task: asyncio.Task[None] | None = None
        store.add_listener(self.on_change)

    def on_change(self, change: Change) -> None:
        if change.key != EVENTS:
            return
        meta = change.obj["metadata"]
        ident = (str(meta.get("namespace", "")), str(meta["name"]))
        if change.type == "DELETED":
            self._deadline.pop(ident, None)
            return
        due = self.clock() + self.ttl  # every write renews the lease
        self._deadline[ident] = due
        heapq.heappush(self._heap, (due, ident))

    def sweep(self) -> int:
        """Delete every Event whose deadline has passed; returns how many."""
        now, removed = self.clock(), 0
        while self._heap and self._heap[0][0] <= now:
            due, ident = heapq.heappop(self._heap)
            if self._deadline.get(ident) != due:
                continue  # renewed or deleted since this deadline was pushed
            del self._deadline[ident]
            if self.store.remove(EVENTS, *ident) is not None:
                removed += 1
        return removed

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="event-ttl")

    async def stop(self) -> None:
        self.store.remove_listener(self.on_change)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_EVERY)
            self.sweep()
