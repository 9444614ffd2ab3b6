"""spec.predictive at scale: what the controller's history cache (autoscaler/history.py) does
with many histories, counted.

- Scheduling: HISTORIES distinct External-metric histories, all first asked for in the same
  minute (a controller's restart), a pass a minute over each for SIM_MINUTES of simulated time.
  The reader answers at once and the model's fit is replaced by a counter: what is counted is
  when reads and refits happen, not what they cost. Counted: range queries and refits per
  history per period, and the busiest minute's reads and refits after the first, against the
  fair share (an even spread) and against a control run of the same code with every history's
  phase at 0 (every history reading and refitting at the same moment, as when the phase was the
  first pass's).
- Memory: the bytes the cache holds per 14-day history (the minutes, the model and the memo its
  next refit starts from), measured
  with tracemalloc over a few histories read and fitted for real, against a list of Python
  floats of the same minutes (the control).

What one refit costs in instructions is bench_predictive's count; docs/predictive.md combines
the two. Every figure here is a deterministic count or a ratio; the wall time is context.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import sys
import time
import tracemalloc
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import autoscaler.history as history
from autoscaler.core.forecast import HISTORY_TOO_SHORT, ModelFit
from autoscaler.history import REFIT, REFRESH, HistoryCache
from bench import record

HISTORIES = 10_000
SIM_MINUTES = 120  # the first read, then three and a half refit periods
STEADY_FROM = int(REFIT + REFRESH)  # seconds: by then every history had its second fit
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
MEMORY_HISTORIES = 8
DAYS = 14
SETTINGS = {"mode": "Scale", "horizon": "5m", "history": "336h", "seasonality": ["24h", "168h"]}


class Reader:
    """The adapter's history group, answering at once; counts reads by simulated minute."""

    def __init__(self, load: Any = None) -> None:
        self.by_minute: Counter[int] = Counter()
        self.load = load or (lambda t: 1.0)

    async def read_history(
        self, namespace: str, metric: Any, *, start: int, end: int, pod_selector: str = ""
    ) -> tuple[int, list[float | None]]:
        self.by_minute[(end - int(START.timestamp())) // 60] += 1
        first = start - start % 60
        return first, [self.load(t) for t in range(first, end + 1, 60)]


def spec(i: int, settings: dict[str, Any]) -> dict[str, Any]:
    metric = {"name": "queue_depth", "selector": {"matchLabels": {"queue": f"q{i}"}}}
    target = {"type": "AverageValue", "averageValue": "10"}
    return {
        "metrics": [{"type": "External", "external": {"metric": metric, "target": target}}],
        "predictive": settings,
    }


async def schedule(*, phased: bool) -> tuple[Counter[int], Counter[int], float]:
    """Reads and refits by simulated minute, and the wall seconds the passes took."""
    fits: Counter[int] = Counter()
    clock = [0]  # the simulated minute being settled

    def counted(
        series: Any, *, now: int, horizon: int, seasonality: Any, memo: Any
    ) -> tuple[ModelFit, None]:
        fits[clock[0]] += 1
        return ModelFit(HISTORY_TOO_SHORT, 0, None, "not judged here"), None

    reader = Reader()
    cache = HistoryCache(reader, parallel=64)
    # the shortest valid history: the reads' size is moot here
    settings = {**SETTINGS, "history": "26h", "seasonality": ["1h"]}
    specs = [spec(i, settings) for i in range(HISTORIES)]
    began = time.perf_counter()
    try:
        with mock.patch.object(history, "refit", counted):
            for minute in range(SIM_MINUTES + 1):
                at = START + timedelta(minutes=minute)
                clock[0] = minute
                for s in specs:
                    cache.forecasts("default", s, at)
                if not phased and minute == 0:
                    for track in cache._tracks.values():  # the control: one phase for all
                        track.read_phase = track.refit_phase = 0.0
                await cache.settled()
    finally:
        await cache.close()
    return reader.by_minute, fits, time.perf_counter() - began


def busiest(by_minute: Counter[int], *, since: int) -> int:
    return max((n for m, n in by_minute.items() if m * 60 >= since), default=0)


def per_period(by_minute: Counter[int], period: float, *, since: int) -> float:
    """Events per history per period, over the whole periods from `since` to the end."""
    periods = (SIM_MINUTES * 60 - since) // int(period)
    until = since + periods * int(period)
    n = sum(c for m, c in by_minute.items() if since <= m * 60 < until)
    return n / HISTORIES / periods


async def memory() -> tuple[float, float, float]:
    """Bytes held per 14-day history (minutes, model, memo) by the cache, the bytes of a list of
    floats of those minutes (the control) and the minutes held per history."""

    def load(t: int) -> float:  # a daily cycle with a fractional part: every float distinct
        return 50.0 + 40.0 * math.sin(2 * math.pi * (t % 86400) / 86400) + (t % 997) / 1000

    now = START + timedelta(days=DAYS)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    cache = HistoryCache(Reader(load), parallel=4)
    specs = [spec(i, SETTINGS) for i in range(MEMORY_HISTORIES)]
    for s in specs:
        cache.forecasts("default", s, now)
    await cache.settled()
    for s in specs:  # the model is fitted; a pass keeps this minute's forecast too
        cache.forecasts("default", s, now + timedelta(seconds=15))
    gc.collect()
    held = (tracemalloc.get_traced_memory()[0] - before) / MEMORY_HISTORIES
    minutes = sum(len(t.values) for t in cache._tracks.values()) / MEMORY_HISTORIES
    tracemalloc.stop()
    await cache.close()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    control = [[load(60 * i + k) for i in range(int(minutes))] for k in range(MEMORY_HISTORIES)]
    as_list = (tracemalloc.get_traced_memory()[0] - before) / MEMORY_HISTORIES
    tracemalloc.stop()
    del control
    return held, as_list, minutes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)

    reads, fits, wall = asyncio.run(schedule(phased=True))
    control_reads, control_fits, _ = asyncio.run(schedule(phased=False))
    if not (reads and fits and control_reads and control_fits):
        raise SystemExit("no history was read or fitted: the specs are not valid predictive specs")
    fair_reads, fair_fits = HISTORIES / (REFRESH / 60), HISTORIES / (REFIT / 60)
    rows = {
        "reads_per_history_per_refresh": (
            per_period(reads, REFRESH, since=STEADY_FROM),
            f"range queries per history per {REFRESH / 60:.0f} minutes, after the first",
            "queries",
            "count",
        ),
        "refits_per_history_per_refit": (
            per_period(fits, REFIT, since=STEADY_FROM),
            f"refits per history per {REFIT / 60:.0f} minutes, after the first",
            "refits",
            "count",
        ),
        "first_minute_reads": (
            reads[0],
            f"reads in the first minute after a restart, {HISTORIES:,} histories",
            "queries",
            "count",
        ),
        "first_minute_fits": (
            fits[0],
            f"fits in the first minute after a restart, {HISTORIES:,} histories",
            "refits",
            "count",
        ),
        "busiest_minute_reads": (
            busiest(reads, since=STEADY_FROM),
            f"reads in the busiest minute after the first fits (fair share {fair_reads:,.0f})",
            "queries",
            "count",
        ),
        "busiest_minute_refits": (
            busiest(fits, since=STEADY_FROM),
            f"refits in the busiest minute after the first fits (fair share {fair_fits:,.0f})",
            "refits",
            "count",
        ),
        "busiest_minute_reads_same_phase": (
            busiest(control_reads, since=STEADY_FROM),
            "the control, every history at the same phase: reads in the busiest minute",
            "queries",
            "count",
        ),
        "busiest_minute_refits_same_phase": (
            busiest(control_fits, since=STEADY_FROM),
            "the control, every history at the same phase: refits in the busiest minute",
            "refits",
            "count",
        ),
    }
    for key, (value, label, unit, kind) in rows.items():
        run.figure(key, label, value, unit, kind=kind)  # type: ignore[arg-type]
        print(f"{label}: {value:,.3f}".rstrip("0").rstrip("."))
    spread = rows["busiest_minute_refits"][0] / fair_fits
    run.figure(
        "busiest_minute_refits_over_fair",
        "refits in the busiest minute against the fair share",
        round(spread, 3),
        "x",
        kind="ratio",
        decides="spread",
    )
    run.goal(
        "spread",
        "after a restart, no minute holds more than twice its fair share of refits",
        met=spread <= 2.0,
        figure="busiest_minute_refits_over_fair",
    )
    run.figure(
        "schedule_wall",
        f"wall time of {SIM_MINUTES} simulated minutes of passes over {HISTORIES:,} histories",
        round(wall, 1),
        "s",
        kind="time",
    )
    print(f"schedule: {wall:.1f} s of wall time (context)")

    held, as_list, minutes = asyncio.run(memory())
    run.figure(
        "bytes_per_history",
        f"bytes the cache holds per {DAYS}-day history ({minutes:,.0f} minutes, with its model)",
        round(held),
        "bytes",
        kind="size",
    )
    run.figure(
        "bytes_per_history_as_list",
        "the control: the same minutes as a list of Python floats",
        round(as_list),
        "bytes",
        kind="size",
    )
    run.figure(
        "bytes_held_over_list",
        "bytes held per history against the list of floats",
        round(held / as_list, 3),
        "x",
        kind="ratio",
    )
    print(f"bytes per history: {held:,.0f} (a list of floats: {as_list:,.0f})")
    run.note(
        f"{HISTORIES:,} histories first asked for in the same minute, a pass a minute over each "
        f"for {SIM_MINUTES} simulated minutes; the fit replaced by a counter; steady state from "
        f"minute {STEADY_FROM // 60}. Memory: {MEMORY_HISTORIES} histories of {DAYS} days read "
        "and fitted for real, under tracemalloc"
    )
    run.write()


if __name__ == "__main__":
    main()
