"""A delaying work queue of keys, like client-go's workqueue with AddAfter, plus a fast lane.

- A key is in the queue at most once, at its earliest due time.
- A key is handed to one worker at a time; if it is added again while a worker holds it, it is
  re-queued when `done` is called, so a spec change during a pass is never lost.
- Urgent keys (a spec change, a target asleep at zero) go first among those due: when the
  routine round runs late under overload, waking a target does not wait behind the backlog.
- `get` returns the key and when it was due, for lag measurement.
- Idle workers wait in line and are woken one at a time: by `add` when something is due, else
  by one timer set for the earliest due time. (Waking every idle worker on every add, and all
  of them when a key fell due, cost some 13% of the controller's CPU with 32 workers at a few
  hundred passes a second, in wake-ups that found nothing to do.)
- That timer is coalesced: it rings at the end of the slot, on a grid of the clock, in which
  the earliest key falls due, so the keys due within one slot start together, after one
  wake-up of the event loop instead of one each. A key's slot is a tenth of the wait it was
  added with, at most `slack` (50 ms by default): a routine pass 15 s away may start up to
  50 ms late, a 100 ms back-off up to 10 ms (up to 50 when a key with a longer slot falls due
  just before it: the timer follows the heads of the two lanes only), and a key due now (an
  urgent one, a spec change) is handed out at once. Each idle-to-busy turn of the event loop
  costs CPU of its own (bench/bench_adapter.py prints what a wait costs on the machine).

Time is a monotonic clock passed in (seconds), so tests can drive it.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import time
from collections import deque
from collections.abc import Callable

__all__ = ["WorkQueue"]

Entry = tuple[float, int, str]

SLACK = 0.05  # seconds; see the module's docstring


class WorkQueue:
    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, slack: float = SLACK
    ) -> None:
        self._clock = clock
        self._slack = slack  # seconds: the timer's longest slot (0: ring at the due time)
        self._lanes: tuple[list[Entry], list[Entry]] = ([], [])  # (urgent, routine)
        self._due: dict[str, tuple[float, bool]] = {}  # key -> (due, urgent)
        self._rings: dict[str, float] = {}  # key -> when a timer for it rings (its slot's end)
        self._active: set[str] = set()
        self._again: dict[str, tuple[float, bool]] = {}  # added while active
        self._seq = itertools.count()
        self._waiters: deque[asyncio.Future[None]] = deque()  # idle workers, first in line first
        self._timer: asyncio.TimerHandle | None = None  # wakes one waiter at `_timer_at`
        self._timer_at = math.inf

    def __len__(self) -> int:
        return len(self._due)

    def add(self, key: str, *, delay: float = 0.0, urgent: bool = False) -> None:
        """Queue `key` to be due after `delay` seconds (keeps an earlier due time)."""
        at = self._clock() + max(0.0, delay)
        if key in self._active:
            old = self._again.get(key)
            if old is None or at < old[0]:
                self._again[key] = (at, urgent or (old is not None and old[1]))
            return
        old = self._due.get(key)
        if old is not None and old[0] <= at and (old[1] or not urgent):
            return
        if old is not None and old[0] <= at:
            at = old[0]  # becomes urgent, keeps its earlier due time
        self._due[key] = (at, urgent)
        # the slot is set by the wait asked for now, not by what is left when a timer is armed
        # (right after a ring the next key is always close, and would get a slot of nothing)
        self._rings[key] = self._slot_end(at, self._clock())
        heapq.heappush(self._lanes[0 if urgent else 1], (at, next(self._seq), key))
        self._kick()

    def forget(self, key: str) -> None:
        """Drop `key` (its object was deleted); stale heap entries are skipped later."""
        self._due.pop(key, None)
        self._rings.pop(key, None)
        self._again.pop(key, None)

    def _head(self, lane: int) -> Entry | None:
        heap = self._lanes[lane]
        while heap:
            at, _, key = heap[0]
            if self._due.get(key) == (at, lane == 0):
                return heap[0]
            heapq.heappop(heap)  # superseded or forgotten
        return None

    async def get(self) -> tuple[str, float]:
        """The next due key (urgent first) and when it was due; the caller calls `done(key)`."""
        while True:
            taken = self._take()
            if taken is not None:
                self._kick()  # more may be due: the next waiter in line takes it
                return taken
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            self._kick()
            try:
                await waiter
            finally:
                with contextlib.suppress(ValueError):  # woken (already out of line)
                    self._waiters.remove(waiter)

    def _take(self) -> tuple[str, float] | None:
        now = self._clock()
        for lane in (0, 1):
            head = self._head(lane)
            if head is not None and head[0] <= now:
                heapq.heappop(self._lanes[lane])
                del self._due[head[2]]
                self._rings.pop(head[2], None)
                self._active.add(head[2])
                return head[2], head[0]
        return None

    def _kick(self) -> None:
        """Wake one waiter if a key is due; else see that the timer rings when one falls due."""
        if not self._waiters:
            return
        heads = [h for h in (self._head(0), self._head(1)) if h is not None]
        if not heads:
            return
        now = self._clock()
        if min(h[0] for h in heads) <= now:
            self._wake_one()
            return
        at = min(self._rings[h[2]] for h in heads)
        if at < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = at
            self._timer = asyncio.get_running_loop().call_later(at - now, self._ring)

    def _slot_end(self, at: float, now: float) -> float:
        """When a timer for a key due at `at` rings: the end of its slot (module docstring)."""
        slot = min(self._slack, (at - now) / 10)
        if slot <= 0:
            return at
        # less a hair, so that a time on the grid, as floats have it, stays in its own slot;
        # never before `at` (a float's end of slot may fall a hair short of it)
        return max(at, math.ceil(at / slot - 1e-6) * slot)

    def _ring(self) -> None:
        self._timer, self._timer_at = None, math.inf
        self._wake_one()  # it takes the key, or (woken early, or beaten to it) waits again

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def done(self, key: str, *, delay: float | None = None, urgent: bool = False) -> None:
        """Release `key`; queue it again after `delay` seconds (None: only if re-added)."""
        self._active.discard(key)
        again = self._again.pop(key, None)
        if delay is not None:
            self.add(key, delay=delay, urgent=urgent)
        if again is not None:
            self.add(key, delay=max(0.0, again[0] - self._clock()), urgent=again[1])
