"""Refits from a memo (autoscaler/core/forecast_memo.py): at every call exactly what a full `fit`
answers (the verdict, the season, the error to the last bit, the message), whatever happened to
the history since the memo was made, and most of the work taken from the memo."""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.forecast import (
    ERROR_TOO_LARGE,
    HISTORY_TOO_SHORT,
    MAX_ERROR,
    READY,
    ModelFit,
    Series,
    baseline,
    combined_error,
    fit,
    origin_term,
)
from autoscaler.core.forecast_memo import BLOCK, FitMemo, refit

NS = 1_000_000_000
MINUTE = 60 * NS
DAY = 1440  # minutes
HORIZON = 5 * MINUTE
DAILY = 86400 * NS
WEEKLY = 7 * DAILY
SEASONS = (DAILY, WEEKLY)
FULL_BASELINES = 16_000  # about what a refit of 14 days, two seasons, computes without a memo


def same(got: ModelFit, want: ModelFit) -> None:
    """Equal fits, the error compared by its repr: to the last bit, NaN and -0.0 included."""
    assert (got.verdict, got.period, got.message) == (want.verdict, want.period, want.message)
    assert repr(got.error) == repr(want.error)
    if want.error is None or not math.isnan(want.error):
        assert got == want


def checked(
    series: Series,
    *,
    now: int,
    memo: FitMemo | None,
    horizon: int = HORIZON,
    seasonality: Sequence[int] = SEASONS,
    max_error: float = MAX_ERROR,
) -> tuple[ModelFit, FitMemo]:
    """refit's answer, once checked against fit's."""
    got, made = refit(
        series,
        now=now,
        horizon=horizon,
        seasonality=seasonality,
        max_error=max_error,
        memo=memo,
    )
    want = fit(series, now=now, horizon=horizon, seasonality=seasonality, max_error=max_error)
    same(got, want)
    return got, made


def signal(seed: int, n: int, *, nan_share: float = 0.0, per_day: int = DAY) -> list[float]:
    """A working-day cycle, weekends lower, correlated noise, some samples missing."""
    rng = random.Random(seed)
    noise, out = 0.0, []
    for i in range(n):
        day, hour = i // per_day, 24 * (i % per_day) / per_day
        level = 100 + 80 * math.sin(2 * math.pi * (hour - 6) / 24)
        noise = 0.9 * noise + rng.gauss(0, 3)
        v = level * (0.4 if day % 7 >= 5 else 1.0) + noise
        out.append(math.nan if rng.random() < nan_share else v)
    return out


@dataclass
class History:
    """A history as the controller holds it: its first minute and the minutes since, each
    refresh appending the new minutes and rewriting the last few; the oldest dropped."""

    source: list[float]  # the metric's value at each minute since 0
    start: int = 0  # minutes
    values: list[float] = field(default_factory=list)
    rng: random.Random = field(default_factory=lambda: random.Random(7))

    def series(self, step: int = MINUTE) -> Series:
        return Series(self.start * step, step, self.values)

    def end(self) -> int:
        return self.start + len(self.values)

    def read(self, upto: int, *, rewrite: int = 5, nan_share: float = 0.2) -> None:
        """The minutes up to `upto`, and the last `rewrite` held read again: changed values, a
        missing minute filled, a present one gone."""
        for i in range(max(self.start, self.end() - rewrite), self.end()):
            was = self.values[i - self.start]
            roll = self.rng.random()
            if roll < nan_share:
                now = math.nan if was == was else self.source[i]
            else:
                now = self.source[i] + self.rng.uniform(-2, 2)
            self.values[i - self.start] = now
        self.values += self.source[self.end() : upto]

    def keep(self, minutes: int) -> None:
        drop = max(0, len(self.values) - minutes)
        del self.values[:drop]
        self.start += drop

    def restart(self, at: int, upto: int) -> None:
        """After a gap, or a read that starts earlier than the history held: a fresh list."""
        self.start, self.values = at, list(self.source[at:upto])


def small(memo: FitMemo, share: float, terms_share: float | None = None) -> bool:
    """The refit computed at most `share` of the baselines a refit without a memo computes
    (FULL_BASELINES) and at most `terms_share` (default `share`) of its terms."""
    s = memo.stats
    terms_share = share if terms_share is None else terms_share
    return (
        s.baselines_computed <= share * FULL_BASELINES
        and s.terms_computed <= terms_share * (s.terms_computed + s.terms_reused)
        and s.terms_reused > 0
    )


# ---- as the callers call it ------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """Refits every `every` minutes of a history of at most `keep` minutes, from `first`."""

    seed: int
    first: int  # minutes of history at the first refit
    calls: int
    every: int = 30
    keep: int = 14 * DAY
    rewrite: int = 5
    nan_share: float = 0.0
    seasonality: tuple[int, ...] = SEASONS
    verdicts: frozenset[str] = frozenset({READY})  # those the run must see
    share: float = 0.05  # at most this share of the baselines computed on a refit
    terms_share: float = 0.05  # and of the terms


@pytest.mark.parametrize(
    "run",
    [
        pytest.param(Run(1, 14 * DAY, 6), id="fourteen-days-two-seasons"),
        pytest.param(Run(2, 14 * DAY, 6, nan_share=0.1), id="missing-minutes"),
        pytest.param(Run(3, 9 * DAY, 6, seasonality=(WEEKLY, DAILY)), id="growing-history"),
        pytest.param(
            # 35 minutes apart: the forecasts judged every 5 minutes fall where the last refit's
            # did, those compared every 30 do not (computed again, with all their baselines)
            Run(4, 14 * DAY, 5, every=35, rewrite=9, share=1.5, terms_share=0.75),
            id="refits-off-the-strides",
        ),
        pytest.param(Run(5, 20 * DAY, 4, keep=20 * DAY), id="the-week-is-compared"),
        pytest.param(
            Run(
                6,
                2 * DAY - 60,
                5,
                seasonality=(DAILY,),
                verdicts=frozenset({HISTORY_TOO_SHORT, READY}),
            ),
            id="too-short-then-ready",
        ),
    ],
)
def test_refits_as_the_controller_makes_them(run: Run) -> None:
    h = History(signal(run.seed, run.first + run.calls * run.every + 10, nan_share=run.nan_share))
    h.read(run.first)
    memo, seen, last = None, set(), None
    for _ in range(run.calls):
        now = (h.end() + 1) * MINUTE  # the last minute read is complete, the next one is not
        got, memo = checked(h.series(), now=now, memo=memo, seasonality=run.seasonality)
        seen.add(got.verdict)
        if last == got.verdict == READY:
            assert small(memo, run.share, run.terms_share), memo.stats
        last = got.verdict
        h.read(h.end() + run.every, rewrite=run.rewrite, nan_share=0.3)
        h.keep(run.keep)
    assert run.verdicts <= seen


def test_the_first_refit_computes_everything() -> None:
    h = History(signal(1, 14 * DAY))
    h.read(14 * DAY)
    _, memo = checked(h.series(), now=h.end() * MINUTE, memo=None)
    assert memo.stats.terms_reused == 0
    assert memo.stats.baselines_computed > FULL_BASELINES


def test_a_memo_is_never_changed_by_a_refit() -> None:
    """The same memo, given twice, gives the same work (the benchmark relies on it)."""
    h = History(signal(8, 15 * DAY))
    h.read(14 * DAY)
    _, memo = checked(h.series(), now=h.end() * MINUTE, memo=None)
    h.read(h.end() + 30)
    h.keep(14 * DAY)
    a, first = checked(h.series(), now=h.end() * MINUTE, memo=memo)
    b, second = checked(h.series(), now=h.end() * MINUTE, memo=memo)
    assert a == b
    assert first.stats == second.stats
    assert small(first, 0.05)


@pytest.mark.parametrize(
    ("back", "seasonality"),
    [(DAY, SEASONS), (2 * DAY - 7, SEASONS), (8 * DAY + 13, (WEEKLY,))],
    ids=["1d", "2d", "8d"],
)
def test_a_value_changed_far_back_is_noticed(back: int, seasonality: tuple[int, ...]) -> None:
    """A stretch rewritten a day ago changes what was judged, two days ago a day's baselines,
    eight days ago the week's (judged alone: the daily season never reads that far): the memo
    must not hide it."""
    h = History(signal(9, 15 * DAY))
    h.read(14 * DAY)
    now = h.end() * MINUTE
    _, memo = checked(h.series(), now=now, memo=None, seasonality=seasonality)
    before = fit(h.series(), now=now, horizon=HORIZON, seasonality=seasonality)
    for i in range(len(h.values) - back, len(h.values) - back + 30):
        h.values[i] = 5 * h.values[i]
    got, again = checked(h.series(), now=now, memo=memo, seasonality=seasonality)
    assert got.error != before.error
    assert again.stats.terms_computed > 0


def test_a_value_changed_in_the_first_partly_held_block_is_noticed() -> None:
    """No digest covers the values before the first whole block: the terms that read them are
    computed again (here the week's, judged over its eighth day, reads the first day)."""
    h = History(signal(18, 10 * DAY))
    h.restart(10, 10 + 8 * DAY + 35)  # a start off the blocks' boundaries; just judged
    assert h.start % BLOCK
    now = h.end() * MINUTE
    _, memo = checked(h.series(), now=now, memo=None, seasonality=(WEEKLY,))
    before = fit(h.series(), now=now, horizon=HORIZON, seasonality=(WEEKLY,))
    for i in range(BLOCK - 10):  # the first block's values held
        h.values[i] = 5 * h.values[i]
    got, again = checked(h.series(), now=now, memo=memo, seasonality=(WEEKLY,))
    assert got.error != before.error
    assert again.stats.terms_reused > 0


def test_a_gap_starts_afresh() -> None:
    h = History(signal(10, 40 * DAY))
    h.read(14 * DAY)
    _, memo = checked(h.series(), now=h.end() * MINUTE, memo=None)
    h.restart(20 * DAY, 34 * DAY)  # nothing in common with what the memo holds
    got, memo = checked(h.series(), now=h.end() * MINUTE, memo=memo)
    assert memo.stats.terms_reused == 0
    assert got.verdict == READY


@pytest.mark.parametrize("moved", [-3 * DAY, -1, 1, 45, 2 * DAY], ids=lambda m: f"start{m:+}")
def test_a_start_moved_by_whole_minutes(moved: int) -> None:
    """A fresh list starting earlier (its first read reaches further back), or a front drop
    beyond the usual: the values entering or leaving the history change the baselines."""
    h = History(signal(11, 30 * DAY))
    h.restart(5 * DAY, 19 * DAY)
    _, memo = checked(h.series(), now=h.end() * MINUTE, memo=None)
    h.restart(5 * DAY + moved, 19 * DAY + 30)
    _, memo = checked(h.series(), now=h.end() * MINUTE, memo=memo)
    assert memo.stats.terms_reused > 0


def test_another_grid_reuses_nothing() -> None:
    h = History(signal(12, 15 * DAY))
    h.read(14 * DAY)
    _, memo = checked(h.series(), now=h.end() * MINUTE, memo=None)
    shifted = Series(h.start * MINUTE + 1, MINUTE, h.values)  # half a step: not the same grid
    _, again = checked(shifted, now=h.end() * MINUTE, memo=memo)
    assert again.stats.terms_reused == 0


def test_seasons_horizon_and_max_error_may_change() -> None:
    """A baseline depends on the season, a term on the season and the horizon, the verdict on
    max_error: each call's answer is fit's, and what still applies is reused."""
    h = History(signal(13, 16 * DAY))
    h.read(14 * DAY)
    memo = None
    calls: list[tuple[tuple[int, ...], int, float]] = [
        (SEASONS, HORIZON, MAX_ERROR),
        ((DAILY,), HORIZON, MAX_ERROR),
        ((WEEKLY, DAILY), 10 * MINUTE, MAX_ERROR),
        ((DAILY, 2 * DAILY), 10 * MINUTE, 0.01),  # ErrorTooLarge
        (SEASONS, HORIZON, 0.01),
        (SEASONS, HORIZON, MAX_ERROR),
    ]
    verdicts = []
    for seasonality, horizon, max_error in calls:
        got, memo = checked(
            h.series(),
            now=h.end() * MINUTE,
            memo=memo,
            horizon=horizon,
            seasonality=seasonality,
            max_error=max_error,
        )
        verdicts.append(got.verdict)
        h.read(h.end() + 30)
        h.keep(14 * DAY)
    assert ERROR_TOO_LARGE in verdicts
    assert READY in verdicts
    assert memo is not None
    assert small(memo, 0.05)  # the last call is the first one's settings again, 30 minutes on


def test_an_all_zero_history() -> None:
    h = History([0.0] * 16 * DAY)
    h.read(14 * DAY)
    memo = None
    for _ in range(3):
        got, memo = checked(h.series(), now=h.end() * MINUTE, memo=memo)
        assert (got.verdict, got.error) == (READY, 0.0)
        h.read(h.end() + 30, nan_share=1.0)  # the rewritten minutes: missing, then 0 again
        h.keep(14 * DAY)


def test_a_history_mostly_missing() -> None:
    """Too few judged forecasts: HistoryTooShort, from a memo as from scratch."""
    h = History(signal(14, 16 * DAY, nan_share=0.92))
    h.read(14 * DAY)
    memo, seen = None, set()
    for _ in range(4):
        got, memo = checked(h.series(), now=h.end() * MINUTE, memo=memo)
        seen.add(got.verdict)
        h.read(h.end() + 30, nan_share=0.5)
        h.keep(14 * DAY)
    assert HISTORY_TOO_SHORT in seen


def test_an_unforecastable_history() -> None:
    rng = random.Random(15)
    h = History([1000.0 if rng.random() < 0.05 else 0.0 for _ in range(16 * DAY)])
    h.read(14 * DAY)
    memo = None
    for _ in range(3):
        got, memo = checked(h.series(), now=h.end() * MINUTE, memo=memo)
        assert got.verdict == ERROR_TOO_LARGE
        h.read(h.end() + 30)
        h.keep(14 * DAY)
    assert small(memo, 0.05)


def test_the_error_is_summed_in_fits_order() -> None:
    """The day's terms summed in another order give another error in the last bits: refit's
    equality with fit (checked above) holds only because it adds them in fit's order."""
    h = History(signal(16, 15 * DAY))
    h.read(14 * DAY)
    _, memo = checked(h.series(), now=h.end() * MINUTE, memo=None)
    h.read(h.end() + 30)
    h.keep(14 * DAY)
    got, again = checked(h.series(), now=h.end() * MINUTE, memo=memo)
    end = len(h.values)
    assert small(again, 0.05)
    p, steps, level = got.period // MINUTE, HORIZON // MINUTE, 30
    lo = end - DAY - level
    base = [baseline(h.values, j, p) for j in range(lo, end)]
    origins = range(end - DAY, end - steps, 5)
    terms = [origin_term(h.values, base, lo, o, p=p, steps=steps, level=level) for o in origins]
    assert combined_error(terms, planned=len(terms)) == got.error
    assert combined_error(reversed(terms), planned=len(terms)) != got.error


def memo_bytes(memo: FitMemo) -> int:
    return sys.getsizeof(memo.digests) + sum(
        sys.getsizeof(t.wrong) + sys.getsizeof(t.total) + sys.getsizeof(t.judged)
        for t in memo.terms.values()
    )


def test_a_memos_size_is_as_documented() -> None:
    """The module's docstring: about 20 kB for 14 days of one-minute history, two seasons."""
    h = History(signal(17, 15 * DAY))
    h.read(14 * DAY)
    _, memo = checked(h.series(), now=h.end() * MINUTE, memo=None)
    assert 15_000 < memo_bytes(memo) < 25_000
    assert len(memo.digests) == 16 * (14 * DAY // BLOCK)


# ---- any sequence of changes, on coarser grids -----------------------------------------------

Change = Callable[[History, random.Random, int], None]  # per_day: samples a day


def _append(h: History, rng: random.Random, per_day: int) -> None:
    h.read(h.end() + rng.randint(1, per_day // 8), rewrite=rng.randint(0, 8), nan_share=0.3)


def _rewrite_tail(h: History, rng: random.Random, per_day: int) -> None:
    h.read(h.end(), rewrite=rng.randint(1, 12), nan_share=0.5)


def _rewrite_back(h: History, rng: random.Random, per_day: int) -> None:
    """Not what the controller does: a stretch anywhere read again (a backfilled rule)."""
    at = rng.randrange(len(h.values))
    for i in range(at, min(len(h.values), at + rng.randint(1, 12))):
        h.values[i] = math.nan if rng.random() < 0.3 else rng.uniform(0, 300)


def _drop(h: History, rng: random.Random, per_day: int) -> None:
    h.keep(max(1, len(h.values) - rng.randint(1, per_day // 8)))


def _restart(h: History, rng: random.Random, per_day: int) -> None:
    at = max(0, h.start + rng.randint(-per_day // 4, per_day))
    h.restart(at, min(len(h.source), max(at + 1, h.end() + rng.randint(-per_day // 8, per_day))))


CHANGES: dict[str, Change] = {
    "append": _append,
    "rewrite": _rewrite_tail,
    "rewrite-back": _rewrite_back,
    "drop": _drop,
    "restart": _restart,
}


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    step=st.sampled_from([5 * MINUTE, 60 * MINUTE]),
    nan_share=st.sampled_from([0.0, 0.1, 0.6]),
    days=st.sampled_from([2, 8, 10, 14]),
    keep=st.sampled_from([5, 9, 14]),  # days
    calls=st.lists(
        st.tuples(
            st.lists(st.sampled_from(sorted(CHANGES)), min_size=1, max_size=3),
            st.sampled_from([(DAILY,), SEASONS, (WEEKLY, DAILY), (DAILY, 2 * DAILY)]),
            st.sampled_from([1, 2, 3]),  # horizon in steps
            st.sampled_from([0.05, MAX_ERROR]),
        ),
        min_size=2,
        max_size=6,
    ),
)
def test_any_sequence_of_changes(
    seed: int,
    step: int,
    nan_share: float,
    days: int,
    keep: int,
    calls: list[tuple[list[str], tuple[int, ...], int, float]],
) -> None:
    """On a grid of 5 minutes or an hour (where the compared and judged forecasts fall on the
    same stride): appends, rewrites, front drops, restarts, other settings; at each call fit's
    answer. Indices here are in grid steps."""
    rng = random.Random(seed)
    per_day = DAY * MINUTE // step
    h = History(signal(seed, 20 * per_day, nan_share=nan_share, per_day=per_day), rng=rng)
    h.read(days * per_day)
    memo = None
    for changes, seasonality, horizon, max_error in calls:
        for name in changes:
            CHANGES[name](h, rng, per_day)
        h.keep(keep * per_day)
        now = (h.end() + rng.randint(0, 2)) * step
        _, memo = checked(
            h.series(step),
            now=now,
            memo=memo,
            horizon=horizon * step,
            seasonality=seasonality,
            max_error=max_error,
        )
