"""A memo that starts afresh when full.

The values worth remembering (metric values, time instants, quantity texts) keep coming, most of
them seen once: a memo that kept the first ones seen would stay full of what never comes again,
while one emptied when full holds what is in use now, at the cost of one miss per entry after
each clearing.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["remember"]

K = TypeVar("K")
V = TypeVar("V")


def remember(memo: dict[K, V], key: K, value: V, *, limit: int) -> None:
    """Keep `value` for `key` in `memo`, emptying it first when it holds `limit` entries."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
