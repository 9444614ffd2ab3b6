"""How often Python's cycle collector runs in the bundle's programs (`--gc-threshold`).

CPython frees most objects by reference counting; the cycle collector runs on top of that. With
Python's thresholds (700, 10, 10) it runs a young pass every 700 net container allocations, and
every tenth of those a middle one, every tenth of those a full pass over every object alive
(unless few long-lived objects are new). A pass stops the event loop while it runs. The
controller, the adapter and the sandbox keep large, long-lived watch caches that hold almost no
cycles, so at 10,000 Autoscalers those passes took 18% of the controller's CPU and found next to
nothing (docs/scaling.md, "Garbage collection").

The bundle's default, 10,000 allocations between young passes with the same ratios above them,
lets reference counting free most temporaries before any pass sees them. `apply` also freezes
what exists at start-up (modules, classes, functions), so full passes do not walk it again.
"""

from __future__ import annotations

import argparse
import gc

__all__ = [
    "DEFAULT",
    "HELP",
    "PYTHON",
    "GCThresholdError",
    "add_flag",
    "apply",
    "argument",
    "parse",
]

DEFAULT = "10000,10,10"
PYTHON = "700,10,10"
HELP = (
    "the cycle collector's thresholds: allocations between young passes, then young passes per "
    f"middle one and middle passes per full one (default {DEFAULT}; Python's own are {PYTHON}; "
    "0 as the first turns the cycle collector off)"
)


class GCThresholdError(ValueError):
    """A --gc-threshold value that is not three non-negative integers."""


def parse(text: str) -> tuple[int, int, int]:
    """`"10000,10,10"` -> (10000, 10, 10); a message naming the part that is wrong otherwise."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise GCThresholdError(f"{text!r} is not three comma-separated integers, e.g. {DEFAULT}")
    values: list[int] = []
    for name, part in zip(("young", "middle", "full"), parts, strict=True):
        try:
            value = int(part)
        except ValueError:
            raise GCThresholdError(f"the {name} threshold {part!r} is not an integer") from None
        if value < 0:
            raise GCThresholdError(f"the {name} threshold {value} must not be negative")
        values.append(value)
    return values[0], values[1], values[2]


def argument(text: str) -> tuple[int, int, int]:
    """`parse` as an argparse `type`: a bad value is a usage error naming the flag."""
    try:
        return parse(text)
    except GCThresholdError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_flag(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--gc-threshold`, as every program of the bundle takes it."""
    parser.add_argument(
        "--gc-threshold",
        type=argument,
        default=DEFAULT,
        metavar="YOUNG,MIDDLE,FULL",
        help=HELP,
    )


def apply(threshold: tuple[int, int, int]) -> None:
    """Freeze the objects alive now (start-up's) and set the thresholds, before serving."""
    gc.collect()  # what start-up left as garbage goes now, not into the frozen generation
    gc.freeze()
    gc.set_threshold(*threshold)
