"""A delaying work queue of keys, like client-go's workqueue with AddAfter.

- A key is in the queue at most once, at its earliest due time.
- A key is handed to one worker at a time; if it is added again while a worker holds it, it is
  re-queued when `done` is called, so a spec change during a pass is never lost.
- `get` waits until the earliest key is due; `due_at(key)` is kept for lag measurement.

Time is a monotonic clock passed in (seconds), so tests can drive it.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import Callable

__all__ = ["WorkQueue"]


class WorkQueue:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._heap: list[tuple[float, int, str]] = []
        self._due: dict[str, float] = {}
        self._active: set[str] = set()
        self._again: dict[str, float] = {}  # added while active: due time once done
        self._seq = itertools.count()
        self._wake = asyncio.Event()

    def __len__(self) -> int:
        return len(self._due)

    def add(self, key: str, *, delay: float = 0.0) -> None:
        """Queue `key` to be due after `delay` seconds (keeps an earlier due time)."""
        at = self._clock() + max(0.0, delay)
        if key in self._active:
            self._again[key] = min(at, self._again.get(key, at))
            return
        if key in self._due and self._due[key] <= at:
            return
        self._due[key] = at
        heapq.heappush(self._heap, (at, next(self._seq), key))
        self._wake.set()

    def forget(self, key: str) -> None:
        """Drop `key` (its object was deleted); stale heap entries are skipped later."""
        self._due.pop(key, None)
        self._again.pop(key, None)

    async def get(self) -> tuple[str, float]:
        """The next due key and the time it was due; the caller must call `done(key)`."""
        while True:
            while self._heap:
                at, _, key = self._heap[0]
                if self._due.get(key) != at:  # superseded or forgotten
                    heapq.heappop(self._heap)
                    continue
                wait = at - self._clock()
                if wait > 0:
                    break
                heapq.heappop(self._heap)
                del self._due[key]
                self._active.add(key)
                return key, at
            self._wake.clear()
            timeout = self._heap[0][0] - self._clock() if self._heap else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=timeout)

    def done(self, key: str, *, delay: float | None = None) -> None:
        """Release `key`; queue it again after `delay` seconds (None: only if re-added)."""
        self._active.discard(key)
        again = self._again.pop(key, None)
        if delay is not None:
            self.add(key, delay=delay)
        if again is not None:
            self.add(key, delay=max(0.0, again - self._clock()))
