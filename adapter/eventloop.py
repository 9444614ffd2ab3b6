"""Which asyncio event loop runs the adapter: uvloop where it is installed, else the standard
library's.

The standard loop's TLS transport (`asyncio.sslproto`) and callback queue are Python; uvloop
(libuv, with that transport in Cython) does the same work in C. Measured on the adapter's
floor (aiohttp + TLS answering a 19 KB body, `bench/bench_adapter_callgrind.py`): 21% fewer
instructions per request (0.46 M -> 0.37 M) and about a quarter less CPU time; 5% fewer on the
whole wildcard request, whose cost is mostly Python (docs/scaling.md). It is a dependency on
Linux and macOS; `--event-loop asyncio` keeps the standard loop (e.g. to rule it out).
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Coroutine
from typing import Any, TypeVar

from adapter.errors import ConfigError

T = TypeVar("T")
EVENT_LOOPS = ("auto", "uvloop", "asyncio")


def chosen(name: str, *, installed: bool | None = None) -> str:
    """`uvloop` or `asyncio` for the --event-loop value `name` (`auto`: uvloop if installed;
    `installed` says whether it is, found out when None)."""
    if name not in EVENT_LOOPS:
        raise ConfigError(f"--event-loop: {name!r} is not one of {', '.join(EVENT_LOOPS)}")
    if installed is None:
        installed = importlib.util.find_spec("uvloop") is not None
    if name == "uvloop" and not installed:
        raise ConfigError("--event-loop uvloop: the uvloop package is not installed")
    if name == "auto":
        return "uvloop" if installed else "asyncio"
    return name


def run(main: Coroutine[Any, Any, T], *, loop: str) -> T:
    """Run `main` to completion on a new event loop of kind `loop` (see `chosen`)."""
    if chosen(loop) == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
