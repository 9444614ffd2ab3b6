"""Kubernetes timestamps: RFC3339 in and out, as `metav1.Time` and `metav1.MicroTime` write them.

Two representations: tz-aware UTC `datetime` for display and I/O, and integer nanoseconds since
the Unix epoch for logic that must compare instants exactly (upstream compares `time.Time`
values at nanosecond precision; Go's zero time, year 1, is a valid and common input).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = [
    "TimeError",
    "format_micro_time",
    "format_time",
    "format_time_ns",
    "parse_time",
    "parse_time_ns",
]


class TimeError(ValueError):
    """Not an RFC3339 timestamp."""


_RFC3339 = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<clock>\d{2}:\d{2}:\d{2})"
    r"(?:\.(?P<frac>\d{1,9}))?(?P<zone>[Zz]|[+-]\d{2}:\d{2})$"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NS_PER_SECOND = 1_000_000_000


def _parts(text: str) -> tuple[datetime, int]:
    """The instant to the second (UTC) and the nanoseconds within that second."""
    if not isinstance(text, str):
        raise TimeError(f"time must be an RFC3339 string, not {type(text).__name__}")
    match = _RFC3339.match(text.strip())
    if match is None:
        raise TimeError(f"invalid time {text!r}: expected RFC3339 like 2026-01-01T00:00:00Z")
    zone = match.group("zone").upper()
    try:
        base = datetime.fromisoformat(f"{match.group('date')}T{match.group('clock')}")
        offset = timedelta(0)
        if zone != "Z":
            sign = 1 if zone[0] == "+" else -1
            offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        # subtracting the offset can step before year 1 for year-1 inputs with a + offset
        instant = base.replace(tzinfo=UTC) - offset
    except (ValueError, OverflowError) as err:
        raise TimeError(f"invalid time {text!r}: {err}") from err
    nanos = int((match.group("frac") or "0").ljust(9, "0"))
    return instant, nanos


def parse_time(text: str) -> datetime:
    """Parse RFC3339 into a tz-aware UTC datetime (fractions beyond microseconds dropped)."""
    instant, nanos = _parts(text)
    return instant + timedelta(microseconds=nanos // 1000)


def parse_time_ns(text: str) -> int:
    """Parse RFC3339 into integer nanoseconds since the Unix epoch (negative before 1970)."""
    instant, nanos = _parts(text)
    delta = instant - _EPOCH
    seconds = delta.days * 86_400 + delta.seconds
    return seconds * NS_PER_SECOND + nanos


def _from_ns(ns: int) -> tuple[datetime, int]:
    seconds, nanos = divmod(ns, NS_PER_SECOND)
    return _EPOCH + timedelta(seconds=seconds), nanos


def format_time(value: datetime) -> str:
    """`metav1.Time`: RFC3339 to the second, UTC, `Z` suffix."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ").rjust(20, "0")


def format_micro_time(value: datetime) -> str:
    """`metav1.MicroTime`: RFC3339 with six fractional digits."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ").rjust(27, "0")


def format_time_ns(ns: int) -> str:
    """Nanoseconds since the epoch as RFC3339 with the fraction Go would print (trailing zeros
    trimmed, none when whole)."""
    instant, nanos = _from_ns(ns)
    text = instant.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0")
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    return text + "Z"
