"""Benchmarks that compare ways of doing one thing, each measured in a fresh child process (so
one way's memory and collector state never reach the other's), alternating over rounds."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from typing import Any


def alternate(
    measure: Callable[..., None], ways: tuple[str, ...], rounds: int, *args: Any
) -> Iterator[tuple[Any, ...]]:
    """`measure(way, *args, queue)` in a spawned child per way and round, in turn; yields what
    each child put on its queue."""
    ctx = multiprocessing.get_context("spawn")
    for _ in range(rounds):
        for way in ways:
            q = ctx.Queue()
            proc = ctx.Process(target=measure, args=(way, *args, q))
            proc.start()
            result = q.get()
            proc.join()
            yield result
