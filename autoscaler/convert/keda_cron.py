"""A KEDA `cron` trigger to an Autoscaler schedule.

KEDA's cron scaler (pkg/scalers/cron_scaler.go) is active while the next `end` firing comes
before the next `start` firing, reading both on the wall clock of `timezone`, and then asks for
`desiredReplicas`. For start and end firings that alternate, that is a window from each start
to the end after it: a schedule with the start as `schedule` and the gap as `duration`, and
`desiredReplicas` as the window's `minReplicas`. What a schedule cannot say is refused:
windows of different lengths (`0 8 * * 1-5` to `0 18 * * 1-4,6`), starts without an end
between them, and a window's length that changes with DST is named.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from autoscaler.convert.model import ConvertError, Note, as_int

__all__ = ["cron_schedule"]

HORIZON = timedelta(days=366)  # a year of firings: every weekday, month and leap day shows
MAX_WINDOWS = 20_000  # a cron firing every minute repeats within a day: enough of it
NAME = re.compile(r"[^a-z0-9-]+")


def cron_schedule(
    trigger: Mapping[str, Any], *, at: str, index: int, max_replicas: int, since: datetime
) -> tuple[dict[str, Any] | None, list[Note]]:
    """The schedule for one cron trigger (None when it cannot be said as one), and notes.
    `since` is the naive wall time the year of firings is checked from."""
    meta = trigger.get("metadata")
    if not isinstance(meta, Mapping):
        raise ConvertError(f"{at}.metadata: expected an object")
    zone_name, start, end = (_text(meta, k, at) for k in ("timezone", "start", "end"))
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError) as err:
        raise ConvertError(f"{at}.metadata.timezone: unknown time zone {zone_name!r}") from err
    desired = as_int(meta.get("desiredReplicas"), f"{at}.metadata.desiredReplicas")
    if desired < 1:
        raise ConvertError(f"{at}.metadata.desiredReplicas: must be at least 1")
    windows = list(_windows(start, end, at=at, since=since))
    lengths = {e - s for s, e in windows}
    if len(lengths) != 1 or timedelta(0) in lengths:
        if timedelta(0) in lengths:
            why = "a start is followed by another start before an end"
        else:
            why = "its windows are not all as long (" + ", ".join(map(_go, sorted(lengths))) + ")"
        return None, [
            Note(
                at,
                f"cron {start!r} to {end!r}: {why}; a schedule has one duration: "
                "not carried over (write one cron trigger per window length)",
                True,
            )
        ]
    (length,) = lengths
    # a schedule's name: the trigger's, as the CRD takes it (lowercase, at most 63 characters)
    name = NAME.sub("-", str(trigger.get("name") or f"cron-{index}").lower())[:63].strip("-")
    schedule = {
        "name": name or f"cron-{index}",
        "schedule": start,
        "timeZone": zone_name,
        "duration": _go(length),
        "minReplicas": min(desired, max_replicas),
    }
    notes = [
        Note(at, f"carried as spec.schedules[{name}]: {_go(length)} from each {start!r}", False)
    ]
    if desired > max_replicas:
        notes.append(
            Note(
                f"{at}.metadata.desiredReplicas",
                f"above maxReplicaCount: the window's floor is {max_replicas}, as "
                "KEDA's HPA caps it",
                False,
            )
        )
    shifted = [s for s, e in windows if _offset(zone, s) != _offset(zone, e)]
    if shifted:
        notes.append(
            Note(
                at,
                f"a window that a DST change in {zone_name} crosses (the first "
                f"from {shifted[0]:%Y-%m-%d %H:%M}) ends at start + {_go(length)}, "
                "an hour off KEDA's end on the wall clock",
                True,
            )
        )
    if trigger.get("metricType") not in (None, "AverageValue"):
        notes.append(Note(f"{at}.metricType", _VALUE, True))
    for key in meta:
        if key not in ("timezone", "start", "end", "desiredReplicas"):
            notes.append(Note(f"{at}.metadata.{key}", "not a cron field: dropped", True))
    return schedule, notes


_VALUE = (
    "with Value, KEDA's HPA multiplies the current replicas by desiredReplicas; the schedule "
    "sets a floor of desiredReplicas, as with AverageValue (KEDA's default)"
)


def _text(meta: Mapping[str, Any], key: str, at: str) -> str:
    value = meta.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConvertError(f"{at}.metadata.{key}: required")
    return value.strip()


def _windows(
    start: str, end: str, *, at: str, since: datetime
) -> Iterator[tuple[datetime, datetime]]:
    """(start, end) wall times of each window over the horizon, as KEDA opens them."""
    if start == end:
        raise ConvertError(f"{at}.metadata.end: must differ from start (as KEDA requires)")
    starts, ends = (
        _firings(start, f"{at}.metadata.start", since),
        _firings(end, f"{at}.metadata.end", since),
    )
    s, e = next(starts), next(ends)
    while e <= s:  # an end before the first start closes a window opened before `since`
        e = next(ends)
    for _ in range(MAX_WINDOWS):
        following = next(starts)
        if following < e:  # KEDA is inactive from s until `following`: not a plain window
            yield s, s  # an empty window: named below
            return
        yield s, e
        if s > since + HORIZON:
            return
        s = following
        while e <= s:
            e = next(ends)


def _firings(cron: str, field: str, since: datetime) -> Iterator[datetime]:
    if len(cron.split()) != 5:
        raise ConvertError(f"{field}: {cron!r} is not a five-field cron expression")
    try:
        return iter(CronSim(cron, since))
    except CronSimError as err:
        raise ConvertError(f"{field}: invalid cron expression {cron!r}: {err}") from err


def _offset(zone: ZoneInfo, wall: datetime) -> timedelta | None:
    return wall.replace(tzinfo=zone).utcoffset()


def _go(length: timedelta) -> str:
    """A Go duration: 10h, 90m, 1h30m."""
    minutes = int(length.total_seconds()) // 60
    hours, rest = divmod(minutes, 60)
    return (f"{hours}h" if hours else "") + (f"{rest}m" if rest or not hours else "")
