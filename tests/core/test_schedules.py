"""Schedules (controls.md "Schedules"): windows from cron firings on a zone's wall clock, DST
transitions (a skipped hour starts at the next valid minute, a repeated hour starts once), the
effective bounds of overlapping windows, and a floor that wakes a target at 0."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.controls_model import ActiveSchedule, Schedule
from autoscaler.core.schedules import effective_bounds, latest_start, open_windows, schedule_problem
from common.kubetime import format_time_ns, parse_time_ns
from tests.core.controls_loop import Loop, external, reasons

NS = 1_000_000_000
MIN = 60 * NS


def sched(
    cron: str, zone: str, minutes: int = 60, low: int = 2, high: int | None = None
) -> Schedule:
    return Schedule("s", cron, minutes * MIN, low, high, zone)


@pytest.mark.parametrize(
    ("cron", "zone", "now", "start"),
    [
        # Europe/Berlin springs forward on 2026-03-29: 02:00 CET -> 03:00 CEST (01:00Z)
        pytest.param(
            "30 2 * * *",
            "Europe/Berlin",
            "2026-03-29T01:00:00Z",
            "2026-03-29T01:00:00Z",
            id="berlin-spring:02:30-starts-at-03:00",
        ),
        pytest.param(
            "30 2 * * *",
            "Europe/Berlin",
            "2026-03-29T00:59:59Z",
            "2026-03-28T01:30:00Z",
            id="berlin-spring:not-before-the-gap-ends",
        ),
        pytest.param(
            "*/15 2 * * *",
            "Europe/Berlin",
            "2026-03-29T01:20:00Z",
            "2026-03-29T01:00:00Z",
            id="berlin-spring:four-firings-in-the-gap-start-once",
        ),
        # Europe/Berlin falls back on 2026-10-25: 03:00 CEST -> 02:00 CET (01:00Z)
        pytest.param(
            "30 2 * * *",
            "Europe/Berlin",
            "2026-10-25T01:45:00Z",
            "2026-10-25T00:30:00Z",
            id="berlin-fall:repeated-02:30-starts-once(first)",
        ),
        pytest.param(
            "50 2 * * *",
            "Europe/Berlin",
            "2026-10-25T01:10:00Z",
            "2026-10-25T00:50:00Z",
            id="berlin-fall:in-the-second-02:10-sees-first-02:50",
        ),
        pytest.param(
            "0 8 * * 1-5",
            "Europe/Berlin",
            "2026-03-02T07:00:00Z",
            "2026-03-02T07:00:00Z",
            id="berlin:firing-exactly-now-counts",
        ),
        pytest.param(
            "0 8 * * 1-5",
            "Europe/Berlin",
            "2026-03-02T06:59:59Z",
            "2026-02-27T07:00:00Z",
            id="berlin:a-second-before-is-fridays",
        ),
        # America/New_York: 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z)
        pytest.param(
            "30 2 * * *",
            "America/New_York",
            "2026-03-08T07:05:00Z",
            "2026-03-08T07:00:00Z",
            id="new-york-spring:02:30-starts-at-03:00",
        ),
        # 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z): 01:00-02:00 happens twice
        pytest.param(
            "30 1 * * *",
            "America/New_York",
            "2026-11-01T06:40:00Z",
            "2026-11-01T05:30:00Z",
            id="new-york-fall:repeated-01:30-starts-once",
        ),
        pytest.param(
            "0 * * * *",
            "America/New_York",
            "2026-11-01T06:30:00Z",
            "2026-11-01T05:00:00Z",
            id="new-york-fall:hourly-skips-the-second-01:00",
        ),
        pytest.param(
            "0 * * * *",
            "America/New_York",
            "2026-11-01T07:00:00Z",
            "2026-11-01T07:00:00Z",
            id="new-york-fall:02:00-EST-fires",
        ),
        pytest.param("0 9 * * *", "UTC", "2026-03-02T09:30:00Z", "2026-03-02T09:00:00Z", id="utc"),
    ],
)
def test_latest_start_over_dst(cron: str, zone: str, now: str, start: str) -> None:
    got = latest_start(sched(cron, zone), now=parse_time_ns(now))
    assert got is not None
    assert format_time_ns(got) == start


@pytest.mark.parametrize(
    ("cron", "zone", "minutes", "now", "open_"),
    [
        pytest.param(
            "30 2 * * *",
            "Europe/Berlin",
            30,
            "2026-03-29T01:29:59Z",
            True,
            id="gap-window-runs-its-full-duration-from-03:00",
        ),
        pytest.param(
            "30 2 * * *", "Europe/Berlin", 30, "2026-03-29T01:30:00Z", False, id="end-is-exclusive"
        ),
        pytest.param(
            "30 2 * * *",
            "Europe/Berlin",
            30,
            "2026-10-25T01:35:00Z",
            False,
            id="no-second-window-in-the-repeated-hour",
        ),
        # duration is elapsed time: 10 h from 00:00 CET on the spring day ends at 11:00 CEST
        pytest.param(
            "0 0 * * *",
            "Europe/Berlin",
            600,
            "2026-03-29T08:59:00Z",
            True,
            id="duration-is-elapsed-time:open",
        ),
        pytest.param(
            "0 0 * * *",
            "Europe/Berlin",
            600,
            "2026-03-29T09:00:00Z",
            False,
            id="duration-is-elapsed-time:closed",
        ),
        pytest.param(
            "*/5 * * * *",
            "UTC",
            10,
            "2026-03-02T09:03:00Z",
            True,
            id="overlapping-firings-of-one-schedule-stay-open",
        ),
    ],
)
def test_window_open(cron: str, zone: str, minutes: int, now: str, open_: bool) -> None:
    windows = open_windows([sched(cron, zone, minutes)], now=parse_time_ns(now))
    assert bool(windows) is open_


@pytest.mark.parametrize(
    ("spec_min", "spec_max", "windows", "expected"),
    [
        pytest.param(1, 20, [], (1, 20), id="none-open:the-spec"),
        pytest.param(1, 20, [(4, None)], (4, 20), id="floor"),
        pytest.param(1, 20, [(4, 40)], (4, 20), id="a-window-max-above-the-spec-max"),
        pytest.param(1, 20, [(4, 10), (8, 30)], (8, 10), id="overlap:max-of-mins,min-of-maxes"),
        pytest.param(1, 20, [(0, 5)], (1, 5), id="a-cap"),
        pytest.param(1, 20, [(12, None), (2, 6)], (6, 6), id="crossing:the-max-wins"),
        pytest.param(0, 20, [(3, None)], (3, 20), id="floor-above-zero"),
    ],
)
def test_effective_bounds(
    spec_min: int, spec_max: int, windows: list[tuple[int, int | None]], expected: tuple[int, int]
) -> None:
    active = [ActiveSchedule(f"w{i}", 0, 1, lo, hi) for i, (lo, hi) in enumerate(windows)]
    low, high, _ = effective_bounds(spec_min, spec_max, active)
    assert (low, high) == expected


@pytest.mark.parametrize(
    ("cron", "zone", "field"),
    [
        pytest.param("0 8 * *", "UTC", "schedule", id="four-fields"),
        pytest.param("0 8 * * * *", "UTC", "schedule", id="six-fields"),
        pytest.param("61 8 * * *", "UTC", "schedule", id="minute-61"),
        pytest.param("0 8 * * 1-5", "Europe/Berlim", "timeZone", id="unknown-zone"),
        pytest.param("0 8 * * 1-5", "../etc/passwd", "timeZone", id="path-as-zone"),
        pytest.param("0 8 * * 1-5", "", "timeZone", id="empty-zone"),
    ],
)
def test_schedule_problems_name_the_field(cron: str, zone: str, field: str) -> None:
    problem = schedule_problem(cron, zone)
    assert problem is not None
    assert problem[0] == field


def loop_spec(schedules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "minReplicas": 1,
        "maxReplicas": 20,
        "metrics": [external(None)],
        "schedules": schedules,
    }
    s.update(extra)
    return s


def test_a_window_raises_the_floor_when_it_opens_and_lowers_it_when_it_closes() -> None:
    # the loop starts Monday 06:00Z, passes every 15 s; the window opens at 06:01Z for 1 min
    window = {"name": "rush", "schedule": "1 6 * * *", "duration": "1m", "minReplicas": 5}
    loop = Loop(loop_spec([window]), replicas=1)
    got = loop.run(["1"] * 10)  # t = 0 .. 135 s
    assert got == [1, 1, 1, 1, 5, 5, 5, 5, 1, 1]
    assert reasons(loop.results[4]) == ["ScheduleStarted"]
    assert loop.results[4]["status"]["schedules"][0]["name"] == "rush"
    assert reasons(loop.results[8]) == ["ScheduleEnded"]
    assert loop.results[8]["status"]["schedules"] == []


def test_a_floor_wakes_a_target_at_zero() -> None:
    window = {"name": "warm", "schedule": "0 6 * * *", "duration": "1h", "minReplicas": 3}
    s = loop_spec([window], minReplicas=0)
    s["metrics"] = [external("5")]
    loop = Loop(s, replicas=0)
    loop.step("0")  # nothing active, but the window's floor is 3
    assert loop.replicas == 3


def test_a_cap_lowers_a_running_target() -> None:
    window = {
        "name": "night",
        "schedule": "0 6 * * *",
        "duration": "1h",
        "minReplicas": 0,
        "maxReplicas": 4,
    }
    loop = Loop(loop_spec([window]), replicas=10)
    loop.step("200")
    assert loop.replicas == 4


def brute_latest_start(cron: str, zone: str, now: int) -> int | None:
    """A slow reference: walk the firings forward from eight days earlier (wall clock) and
    keep the last instant at or before `now` (every cron used fires at least weekly)."""
    from datetime import timedelta
    from zoneinfo import ZoneInfo

    from cronsim import CronSim

    from autoscaler.core.schedules import instant_of

    tz = ZoneInfo(zone)
    begin = datetime.fromtimestamp(now // NS - 8 * 86400, UTC).astimezone(tz).replace(tzinfo=None)
    last = None
    for wall in CronSim(cron, begin - timedelta(hours=3)):
        instant = instant_of(wall, tz)
        if instant > now:
            return last
        last = instant
    return last


CRONS = ["30 2 * * *", "*/20 1-3 * * *", "0 * * * *", "45 0 * * 0", "15,45 2 * * *"]
ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC"]
DST_DAYS = [
    parse_time_ns(t)
    for t in ("2026-03-08T00:00:00Z", "2026-03-29T00:00:00Z", "2026-10-04T00:00:00Z")
] + [parse_time_ns(t) for t in ("2026-10-25T00:00:00Z", "2026-11-01T00:00:00Z")]


@settings(max_examples=25, deadline=None)
@given(
    cron=st.sampled_from(CRONS),
    zone=st.sampled_from(ZONES),
    day=st.sampled_from(DST_DAYS),
    offsets=st.lists(st.integers(0, 36 * 3600), min_size=1, max_size=8),
)
def test_latest_start_matches_a_brute_force_walk(
    cron: str, zone: str, day: int, offsets: list[int]
) -> None:
    s = sched(cron, zone)
    for offset in sorted(offsets):  # increasing instants: the memoized span is reused
        now = day + offset * NS
        assert latest_start(s, now=now) == brute_latest_start(cron, zone, now), format_time_ns(now)
