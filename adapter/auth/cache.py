"""A small TTL cache with request coalescing, for TokenReview and SubjectAccessReview answers.

Like k8s.io/apiserver's token cache and cached webhook authorizer: an answer is kept for a TTL
that depends on the answer (allowed vs denied), concurrent look-ups of the same key share one
call in flight, and errors are never cached (the next request tries again).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

Clock = Callable[[], float]


class TTLCache(Generic[K, V]):
    """Maps keys to answers for `ttl(answer)` seconds of `clock`; at most `max_entries` kept."""

    def __init__(
        self,
        *,
        ttl: Callable[[V], float],
        clock: Clock,
        max_entries: int = 10_000,  # bounds memory under a flood of distinct tokens or paths
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._max = max_entries
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._inflight: dict[K, asyncio.Future[V]] = {}
        self.hits = 0
        self.misses = 0

    def peek(self, key: K) -> V | None:
        """The cached answer if still fresh, without calling anything."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if expires <= self._clock():
            del self._entries[key]
            return None
        return value

    async def get(self, key: K, compute: Callable[[], Awaitable[V]]) -> V:
        """The fresh cached answer, else the answer of one shared `compute()` call."""
        value = self.peek(key)
        if value is not None:
            self.hits += 1
            return value
        self.misses += 1
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            value = await compute()
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                # waiters see the error; mark it retrieved so an unwaited future does not warn
                future.exception()
            raise
        finally:
            self._inflight.pop(key, None)
        future.set_result(value)
        self._store(key, value)
        return value

    def _store(self, key: K, value: V) -> None:
        ttl = self._ttl(value)
        if ttl <= 0:
            return
        self._entries[key] = (self._clock() + ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
