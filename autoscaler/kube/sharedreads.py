"""One namespace-wide read of a Pods metric, shared by the passes that ask within a window.

Upstream's HPA controller asks the custom metrics API once per HPA and sync: `pods/*/{metric}`
with the HPA's pod selector. With thousands of Autoscalers on the same metric in a namespace
that is thousands of requests per sync period through the API server's aggregation layer to
the adapter, each costing far more than the handful of values it carries. With sharing on
(`--share-pod-metrics WINDOW`), a pass instead takes its pods' values from one request for the
whole namespace (`pods/*/{metric}` with no pod selector), made at most once per window for each
(namespace, metric, metric selector), and keeps the values of its own pods (the controller's
pod cache decides which those are, as its own selector match).

A namespace-wide answer carries every pod of the namespace, so it pays only when enough passes
share it. A key reads namespace-wide only when the window before saw at least two requests for
it and at least one per `PODS_PER_REQUEST` pods of the namespace; otherwise each pass reads its
own pods, exactly as upstream does. The constant comes from the controller benchmark
(bench/bench_controller.py): one request costs the stack (API server proxy, adapter,
controller) about 2-3 ms of CPU, one more pod in an answer a few microseconds, so a
namespace-wide read of N pods costs about what N/100 requests
of a few pods each do even at the conservative end.

Failures are not shared beyond the requests already waiting on them: the next pass asks again.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

__all__ = ["PODS_PER_REQUEST", "SharedReads"]

PODS_PER_REQUEST = 100
_MAX_KEYS = 4096  # (namespace, metric, selector) keys kept; more are dropped oldest first


@dataclass
class _Count:
    start: float  # the current window's start
    current: int  # requests in it so far
    previous: int  # requests in the window before (0 when that window is older)


@dataclass
class _Answer:
    started: float
    task: asyncio.Task[Any]


class SharedReads:
    """Decides per request whether to read namespace-wide, and shares those reads.

    `window` is in seconds (> 0); `clock` is monotonic seconds (a test's fake clock).
    """

    def __init__(self, window: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if window <= 0:
            raise ValueError("window must be positive")
        self.window = window
        self._clock = clock
        self._counts: dict[Hashable, _Count] = {}
        self._answers: dict[Hashable, _Answer] = {}
        self.wide_reads = 0  # namespace-wide requests sent
        self.shared = 0  # passes answered from a namespace-wide read
        self.own = 0  # passes that read their own pods

    def wide(self, key: Hashable, namespace_pods: int | None) -> bool:
        """Count one request for `key`; True when it should take its values from a
        namespace-wide read (`namespace_pods`: the pods the namespace has, None if unknown)."""
        now = self._clock()
        count = self._counts.get(key)
        if count is None:
            if len(self._counts) >= _MAX_KEYS:
                self._counts.pop(next(iter(self._counts)))
            count = self._counts[key] = _Count(now, 0, 0)
        elapsed = now - count.start
        if elapsed >= self.window:
            count.previous = count.current if elapsed < 2 * self.window else 0
            count.current, count.start = 0, now
        count.current += 1
        go_wide = (
            namespace_pods is not None
            and count.previous >= 2
            and count.previous * PODS_PER_REQUEST >= namespace_pods
        )
        if go_wide:
            self.shared += 1
        else:
            self.own += 1
        return go_wide

    async def read(self, key: Hashable, fetch: Callable[[], Awaitable[Any]]) -> Any:
        """The namespace-wide answer for `key`: the one started less than a window ago (waiting
        for it when still in flight), else a new one from `fetch()`. A failed read raises to
        every request waiting on it and is then forgotten."""
        now = self._clock()
        answer = self._answers.get(key)
        if answer is None or now - answer.started >= self.window:
            self._forget_older_than(now - 2 * self.window)  # a stale answer is only memory
            if len(self._answers) >= _MAX_KEYS:
                self._answers.pop(next(iter(self._answers)))
            task = asyncio.ensure_future(fetch())
            answer = self._answers[key] = _Answer(now, task)
            self.wide_reads += 1
            task.add_done_callback(functools.partial(self._done, key, answer))
        # shielded: a pass that times out does not cancel the read the others wait on
        return await asyncio.shield(answer.task)

    def _forget_older_than(self, when: float) -> None:
        stale = [k for k, a in self._answers.items() if a.started < when and a.task.done()]
        for k in stale:
            del self._answers[k]

    def _done(self, key: Hashable, answer: _Answer, task: asyncio.Task[Any]) -> None:
        failed = task.cancelled() or task.exception() is not None  # retrieved: not "never"
        if failed and self._answers.get(key) is answer:
            del self._answers[key]
