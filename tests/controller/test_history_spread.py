"""Histories first asked for at the same instant (a controller's restart) read and refit at their
own phases afterwards, not in one burst; every refit runs on the one worker thread."""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import autoscaler.history as history
from autoscaler.core.forecast import HISTORY_TOO_SHORT, ModelFit
from autoscaler.history import REFIT, REFRESH, HistoryCache

NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)
HISTORIES = 150
PREDICTIVE = {"mode": "Scale", "horizon": "5m", "history": "26h", "seasonality": ["1h"]}


class Reader:
    """Answers at once with a flat history, and notes when each metric was read."""

    def __init__(self) -> None:
        self.reads: dict[str, list[int]] = {}

    async def read_history(
        self, namespace: str, metric: Any, *, start: int, end: int, pod_selector: str = ""
    ) -> tuple[int, list[float | None]]:
        self.reads.setdefault(metric["external"]["metric"]["name"], []).append(end)
        first = start - start % 60
        return first, [1.0] * ((end - first) // 60 + 1)


def spec(i: int) -> dict[str, Any]:
    metric = {"name": f"queue-{i}"}
    target = {"type": "AverageValue", "averageValue": "10"}
    return {
        "metrics": [{"type": "External", "external": {"metric": metric, "target": target}}],
        "predictive": PREDICTIVE,
    }


@dataclass(frozen=True)
class Refit:
    at: int  # unix seconds of the pass that made it
    now: int  # unix seconds the history was judged up to
    history: int  # which history (the id of its values)
    thread: str


CLOCK = [0]  # unix seconds of the passes being settled


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[Refit]:
    """The refits made; the model itself is not what this file tests, so a refit answers at
    once (and a forecast then has nothing to do)."""
    made: list[Refit] = []

    def refit(
        series: Any, *, now: int, horizon: int, seasonality: Any, memo: Any
    ) -> tuple[ModelFit, None]:
        thread = threading.current_thread().name
        made.append(Refit(CLOCK[0], now // 10**9, id(series.values), thread))
        return ModelFit(HISTORY_TOO_SHORT, 0, None, "not judged here"), None

    monkeypatch.setattr(history, "refit", refit)
    return made


async def passes(minutes: int) -> tuple[Reader, HistoryCache]:
    """A pass a minute over every history for `minutes`, all first asked for at NOW."""
    reader = Reader()
    cache = HistoryCache(reader)
    specs = [spec(i) for i in range(HISTORIES)]
    for minute in range(minutes + 1):
        at = NOW + timedelta(minutes=minute)
        CLOCK[0] = int(at.timestamp())
        for s in specs:
            cache.forecasts("default", s, at)
        await cache.settled()
    await cache.close()
    return reader, cache


async def test_reads_after_the_first_are_spread_over_the_refresh_period(fits: Any) -> None:
    reader, _ = await passes(30)
    start = int(NOW.timestamp())
    assert len(reader.reads) == HISTORIES
    for ends in reader.reads.values():
        assert ends[0] == start  # the first read is never delayed
        assert len(ends) >= 6, ends
        gaps = {b - a for a, b in itertools.pairwise(ends[1:])}
        assert gaps == {REFRESH}, ends  # then one each 5 minutes
        assert 0 < ends[1] - start <= REFRESH
    # which minute of the 5 each history's turn falls in: all five are used, none by a crowd
    turns = Counter((ends[1] - start) // 60 % 5 for ends in reader.reads.values())
    fair = HISTORIES / 5
    assert len(turns) == 5
    assert max(turns.values()) <= 2 * fair, turns


async def test_refits_after_the_first_are_spread_over_the_refit_period(fits: Any) -> None:
    await passes(95)
    start = int(NOW.timestamp())
    assert {f.thread for f in fits} == {"promscaler-refit_0"}  # one worker, never the loop
    by_minute = Counter(f.at - start for f in fits)  # by second (a pass each minute)
    assert by_minute[0] == HISTORIES  # every first fit at once: nothing delays it
    later = {m: n for m, n in by_minute.items() if m > 0}
    # in each refit period every history is refitted once, at its own phase: the busiest
    # minute holds a few times the fair share, not all of them
    fair = HISTORIES / (REFIT / 60)
    # once every history had its second fit (at its first read past its refit phase, up to
    # REFRESH later), any REFIT-long stretch holds one refit of each
    steady = REFIT + REFRESH
    assert sum(n for m, n in later.items() if steady <= m < steady + REFIT) == HISTORIES
    assert max(later.values()) <= 3 * fair, sorted(later.items())
    assert len({m for m in later if m <= REFIT}) >= REFIT / 60 / 2


async def test_a_historys_refits_judge_it_whole_periods_apart(fits: Any) -> None:
    """Each refit judges the history up to the start of its refit period (never past the pass,
    at most a period before it): a history's refits are whole periods apart, so the memo's judged
    forecasts fall where the next refit judges them (autoscaler/core/forecast_memo.py)."""
    await passes(95)
    by_history: dict[int, list[int]] = {}
    for f in fits:
        assert f.at - REFIT < f.now <= f.at
        by_history.setdefault(f.history, []).append(f.now)
    assert len(by_history) == HISTORIES
    phases = set()
    for nows in by_history.values():
        assert len(nows) >= 3, nows
        assert {(b - a) % REFIT for a, b in itertools.pairwise(nows)} == {0}, nows
        phases.add(nows[0] % REFIT)
    assert len(phases) > HISTORIES / 2  # and each at its own phase
