"""Go's integer and float semantics where upstream's arithmetic depends on them.

Python integers never overflow and `//` floors; Go's int64 wraps, its `/` truncates toward zero,
float division by zero gives ±Inf or NaN, and `int32(math.Ceil(x))` of an out-of-range value is
implementation-defined (amd64 yields MinInt32). These helpers reproduce exactly those behaviours.
"""

from __future__ import annotations

import math

MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)

__all__ = [
    "MAX_INT32",
    "MAX_INT64",
    "MIN_INT32",
    "ceil_int32",
    "clamp_int32",
    "fdiv",
    "tdiv",
    "wrap_int32",
    "wrap_int64",
]


def tdiv(a: int, b: int) -> int:
    """Go integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def fdiv(a: float, b: float) -> float:
    """IEEE float division as Go does it: x/0 is ±Inf, 0/0 is NaN."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.inf if (a > 0) == (math.copysign(1.0, b) > 0) else -math.inf


def ceil_int32(x: float) -> int:
    """`int32(math.Ceil(x))`; out of range (or NaN) gives MinInt32, as on amd64."""
    if math.isnan(x) or math.isinf(x):
        return MIN_INT32
    value = math.ceil(x)
    return value if MIN_INT32 <= value <= MAX_INT32 else MIN_INT32


def trunc_int32(x: float) -> int:
    """`int32(x)` for a float: truncation toward zero; out of range gives MinInt32."""
    if math.isnan(x) or math.isinf(x):
        return MIN_INT32
    value = int(x)
    return value if MIN_INT32 <= value <= MAX_INT32 else MIN_INT32


def clamp_int32(value: int) -> int:
    return MAX_INT32 if value > MAX_INT32 else MIN_INT32 if value < MIN_INT32 else value


def wrap_int32(value: int) -> int:
    """Two's complement int32 wrap-around (Go's int32 `+` and `-` overflow silently)."""
    return ((value - MIN_INT32) % 2**32) + MIN_INT32


def wrap_int64(value: int) -> int:
    """Two's complement int64 wrap-around."""
    return ((value - MIN_INT64) % 2**64) + MIN_INT64
