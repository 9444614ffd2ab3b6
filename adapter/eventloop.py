"""Which asyncio event loop runs the adapter (`--event-loop`): `common.eventloop`, with a bad
value reported as the adapter's ConfigError."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from adapter.errors import ConfigError
from common import eventloop as _loops

__all__ = ["EVENT_LOOPS", "chosen", "run"]

T = TypeVar("T")
EVENT_LOOPS = _loops.EVENT_LOOPS


def chosen(name: str, *, installed: bool | None = None) -> str:
    """`uvloop` or `asyncio` for the --event-loop value `name` (see `common.eventloop.chosen`)."""
    try:
        return _loops.chosen(name, installed=installed)
    except _loops.EventLoopError as e:
        raise ConfigError(str(e)) from e


def run(main: Coroutine[Any, Any, T], *, loop: str) -> T:
    """Run `main` on a new event loop of kind `loop`."""
    return _loops.run(main, loop=chosen(loop))
