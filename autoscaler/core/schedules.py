"""Schedules: which windows are open at an instant, and the bounds they make effective.

A window opens at each firing of a five-field cron expression, read on the wall clock of the
schedule's IANA zone, and stays open for `duration`. Over DST transitions (contract,
docs/decision-document.md): a firing whose wall time does not exist (a skipped hour) starts at
the next wall minute that does, the end of the gap; a firing in a repeated hour starts once, at
its first occurrence. cronsim evaluates the expression on naive wall times; the mapping to
instants is ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from autoscaler.core.controls_model import ActiveSchedule, Schedule
from autoscaler.core.model import NS

__all__ = ["effective_bounds", "open_windows", "schedule_problem"]

_MINUTE = timedelta(minutes=1)
_SECOND = timedelta(seconds=1)
_HOUR = timedelta(hours=1)
_MAX_GAP_MINUTES = 24 * 60  # no zone has skipped more than a day (Samoa, 2011)
_MAX_SKIPPED_FIRINGS = 10_000  # firings after `now` seen when starting past a repeated hour
_EPOCH = datetime(1970, 1, 1)


@lru_cache(maxsize=4096)
def schedule_problem(cron: str, zone: str) -> tuple[str, str] | None:
    """(field, why) when the cron expression or the zone is not valid, else None."""
    if len(cron.split()) != 5:
        return "schedule", f"must be a five-field cron expression, not {cron!r}"
    try:
        CronSim(cron, datetime(2000, 1, 1))
    except CronSimError as e:
        return "schedule", f"invalid cron expression {cron!r}: {e}"
    if _zone(zone) is None:
        return "timeZone", f"unknown time zone {zone!r}: expected an IANA name like Europe/Berlin"
    return None


@lru_cache(maxsize=512)
def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):  # ValueError: a malformed key such as "../x"
        return None


def open_windows(schedules: Sequence[Schedule], *, now: int) -> tuple[ActiveSchedule, ...]:
    """The windows open at `now` (ns), in spec order."""
    out = []
    for s in schedules:
        start = latest_start(s, now=now)
        if start is not None and now < start + s.duration:
            end = start + s.duration
            out.append(ActiveSchedule(s.name, start, end, s.min_replicas, s.max_replicas))
    return tuple(out)


_SPANS: dict[tuple[str, str], tuple[int, int, int | None]] = {}
_SPANS_LIMIT = 4096  # distinct (cron, zone) pairs remembered


def latest_start(s: Schedule, *, now: int) -> int | None:
    """The instant (ns) of the last firing at or before `now`, None if there is none.

    Memoized per (cron, zone) as the span [from, until) of instants that share the answer, so
    passes between two firings (most of them) cost a dictionary lookup."""
    key = (s.schedule, s.time_zone)
    span = _SPANS.get(key)
    if span is not None and span[0] <= now < span[1]:
        return span[2]
    start = _latest_start(s, now=now)
    until = _next_start(s, now=now)
    if until is not None and len(_SPANS) < _SPANS_LIMIT:
        _SPANS[key] = (start if start is not None else now, until, start)
    return start


def _next_start(s: Schedule, *, now: int) -> int | None:
    """The instant of the first firing after `now` (None if there is none)."""
    zone = _zone(s.time_zone)
    if zone is None:
        return None
    # from two hours of wall clock back, so a repeated hour's firings are not missed
    firings = CronSim(s.schedule, _wall(now, zone).replace(microsecond=0) - 2 * _HOUR)
    for _ in range(_MAX_SKIPPED_FIRINGS):
        try:
            instant = instant_of(next(firings), zone)
        except StopIteration:
            return None
        if instant > now:
            return instant
    return None


def _latest_start(s: Schedule, *, now: int) -> int | None:
    zone = _zone(s.time_zone)
    if zone is None:
        return None
    wall = _wall(now, zone)
    # in the second pass of a repeated hour the wall clock went back: look from the later wall
    # time so the first pass's firings after this wall time are seen
    start = wall + timedelta(microseconds=(now - _instant_fold0(wall, zone)) // 1000)
    # cronsim's reverse iteration excludes its starting second: start one second later
    firings = CronSim(s.schedule, start.replace(microsecond=0) + _SECOND, reverse=True)
    for _ in range(_MAX_SKIPPED_FIRINGS):
        try:
            firing = next(firings)
        except StopIteration:
            return None
        instant = instant_of(firing, zone)
        if instant <= now:
            return instant
    return None


def _wall(now: int, zone: ZoneInfo) -> datetime:
    seconds, rest = divmod(now, NS)
    aware = datetime.fromtimestamp(seconds, UTC).astimezone(zone)
    return aware.replace(tzinfo=None, microsecond=rest // 1000)


def _instant_fold0(wall: datetime, zone: ZoneInfo) -> int:
    aware = wall.replace(tzinfo=zone, fold=0).astimezone(UTC).replace(tzinfo=None)
    delta = aware - _EPOCH
    return (delta.days * 86400 + delta.seconds) * NS + delta.microseconds * 1000


def instant_of(wall: datetime, zone: ZoneInfo) -> int:
    """The instant of a firing's wall time: its first occurrence, or the end of a gap."""
    for _ in range(_MAX_GAP_MINUTES):
        if _exists(wall, zone):
            return _instant_fold0(wall, zone)
        wall = (wall + _MINUTE).replace(second=0, microsecond=0)
    return _instant_fold0(wall, zone)


def _exists(wall: datetime, zone: ZoneInfo) -> bool:
    aware = wall.replace(tzinfo=zone, fold=0)
    return aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == wall


def effective_bounds(
    min_replicas: int, max_replicas: int, windows: Sequence[ActiveSchedule]
) -> tuple[int, int, tuple[str, ...]]:
    """The effective (min, max): the largest min and the smallest max of the spec and the open
    windows; when they cross, the max wins (a cap is what keeps a cost bound)."""
    low, high = min_replicas, max_replicas
    lines = []
    for w in windows:
        low = max(low, w.min_replicas)
        if w.max_replicas is not None:
            high = min(high, w.max_replicas)
        bound = f"min {w.min_replicas}" + (
            f", max {w.max_replicas}" if w.max_replicas is not None else ""
        )
        lines.append(f"schedule {w.name} is open ({bound})")
    if low > high:
        lines.append(f"the schedules' min {low} is above their max {high}: the max wins")
        low = high
    if windows:
        lines.append(f"effective replicas range [{low}, {high}]")
    return low, high, tuple(lines)
