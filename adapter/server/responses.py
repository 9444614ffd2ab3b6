"""A short-lived cache of rendered metric answers, keyed by the request's path and query.

An HPA controller asks the same questions every 15 s from every replica; within `--cache-ttl`
an identical request gets the identical body without touching the provider or re-encoding JSON
(the provider's own cache already made the values identical). Authentication and authorization
still run for every request: the guard is in the middleware, before any handler. Only 200
answers are kept, never errors.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class ResponseCache:
    """Rendered bodies by key for `ttl` seconds (0 disables), at most `max_entries`."""

    def __init__(
        self,
        *,
        ttl: float,
        max_entries: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, str, bytes]] = OrderedDict()

    def get(self, key: str) -> tuple[str, bytes] | None:
        """(route name, body) when a fresh answer is kept."""
        if self.ttl <= 0:
            return None
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self._clock():
            del self._entries[key]
            return None
        return entry[1], entry[2]

    def put(self, key: str, route: str, body: bytes) -> None:
        if self.ttl <= 0:
            return
        # a copy of its own size: orjson's output keeps up to 2.5 times its length allocated
        body = bytes(memoryview(body))
        self._entries[key] = (self._clock() + self.ttl, route, body)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
