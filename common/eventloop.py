"""Which asyncio event loop runs a process: uvloop where it is installed, else the standard
library's (`--event-loop` of the adapter, the controller and the sandbox).

The standard loop's TLS transport (`asyncio.sslproto`) and callback queue are Python; uvloop
(libuv, with that transport in Cython) does the same work in C. Every process of the bundle
talks TLS on every request, so this is CPU saved on each one: measured on the adapter's floor
(aiohttp + TLS answering a 19 KB body, `bench/bench_adapter_callgrind.py`), 21% fewer
instructions per request (see docs/benchmarks.md). uvloop is a dependency on
Linux and macOS; `--event-loop asyncio` keeps the standard loop (e.g. to rule it out).
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["EVENT_LOOPS", "EventLoopError", "chosen", "run"]

T = TypeVar("T")
EVENT_LOOPS = ("auto", "uvloop", "asyncio")
HELP = (
    "asyncio event loop: uvloop (libuv; its TLS transport and callbacks in C, less CPU per "
    "request), asyncio (the standard library's), or auto: uvloop when installed"
)


class EventLoopError(ValueError):
    """An --event-loop value that cannot be honoured."""


def chosen(name: str, *, installed: bool | None = None) -> str:
    """`uvloop` or `asyncio` for the --event-loop value `name` (`auto`: uvloop if installed;
    `installed` says whether it is, found out when None)."""
    if name not in EVENT_LOOPS:
        raise EventLoopError(f"--event-loop: {name!r} is not one of {', '.join(EVENT_LOOPS)}")
    if installed is None:
        installed = importlib.util.find_spec("uvloop") is not None
    if name == "uvloop" and not installed:
        raise EventLoopError("--event-loop uvloop: the uvloop package is not installed")
    if name == "auto":
        return "uvloop" if installed else "asyncio"
    return name


def run(main: Coroutine[Any, Any, T], *, loop: str) -> T:
    """Run `main` to completion on a new event loop of kind `loop` (see `chosen`)."""
    if chosen(loop) == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
