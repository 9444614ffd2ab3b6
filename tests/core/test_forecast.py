"""The predictive model (docs/predictive.md "The model"): seasonal naive with a level
correction; the season chosen by its recent error; the verdicts; no peeking past `now`."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.forecast import (
    ERROR_TOO_LARGE,
    HISTORY_TOO_SHORT,
    READY,
    Series,
    fit,
    forecast,
)

NS = 1_000_000_000
STEP = 60 * NS  # one sample a minute
DAY = 1440  # samples
HORIZON = 5 * 60 * NS
DAILY = 86400 * NS
WEEKLY = 7 * DAILY


def daily(i: int) -> float:
    return 100 + 80 * math.sin(2 * math.pi * i / DAY)


def noisy(seed: int) -> Callable[[int], float]:
    rng = random.Random(seed)
    return lambda i: daily(i) + rng.gauss(0, 5)


def bursts(seed: int) -> Callable[[int], float]:
    rng = random.Random(seed)
    return lambda i: 1000.0 if rng.random() < 0.02 else 0.0


def shifted(i: int) -> float:
    # the last 3 hours run 50 above the usual day
    return daily(i) + (50 if i >= 7 * DAY - 180 else 0)


def spiked(i: int) -> float:
    # a one-off spike exactly one day before the forecast window
    return daily(i) + (500 if 6 * DAY <= i < 6 * DAY + 10 else 0)


def weekly(i: int) -> float:
    # weekdays follow the daily cycle; the weekend (days 5 and 6 of each week) runs at a third
    return daily(i) / (3 if (i // DAY) % 7 >= 5 else 1)


@dataclass(frozen=True)
class Case:
    make: Callable[[int], float]
    days: float  # history length
    seasonality: tuple[int, ...]
    verdict: str
    period: int = 0
    near: float | None = None  # the forecast is within 10% of this


def series(make: Callable[[int], float], n: int) -> Series:
    return Series(0, STEP, [make(i) for i in range(n)])


def truth(make: Callable[[int], float], end: int) -> float:
    return max(make(i) for i in range(end, end + HORIZON // STEP + 1))


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(Case(daily, 7, (DAILY,), READY, DAILY, daily(7 * DAY)), id="clean-daily"),
        pytest.param(Case(noisy(1), 7, (DAILY,), READY, DAILY, daily(7 * DAY)), id="noisy-daily"),
        pytest.param(Case(daily, 1.5, (DAILY,), HISTORY_TOO_SHORT), id="under-two-days-too-short"),
        pytest.param(Case(daily, 7, (WEEKLY,), HISTORY_TOO_SHORT), id="weekly-needs-eight-days"),
        pytest.param(Case(bursts(2), 7, (DAILY,), ERROR_TOO_LARGE, DAILY), id="bursts-unfit"),
        pytest.param(
            Case(shifted, 7, (DAILY,), READY, DAILY, daily(7 * DAY) + 50), id="level-corrected"
        ),
        pytest.param(Case(spiked, 7, (DAILY,), READY, DAILY, daily(7 * DAY)), id="spike-ignored"),
        pytest.param(
            Case(weekly, 15, (DAILY, WEEKLY), READY, WEEKLY, weekly(15 * DAY)),
            id="weekend-picks-the-week",
        ),
    ],
)
def test_fit_and_forecast(case: Case) -> None:
    n = int(case.days * DAY)
    s = series(case.make, n)
    now = n * STEP
    model = fit(s, now=now, horizon=HORIZON, seasonality=case.seasonality)
    assert (model.verdict, model.period) == (case.verdict, case.period), model.message
    result = forecast(s, model, now=now, horizon=HORIZON)
    if case.verdict != READY:
        assert result.value is None
        return
    assert model.error is not None
    assert model.error < 0.5
    assert case.near is not None
    assert result.value is not None
    assert result.value == pytest.approx(case.near, rel=0.1)


def test_forecast_is_the_highest_value_of_the_window() -> None:
    # at the rising edge the window's end is higher than its start
    end = 7 * DAY + DAY // 8
    s = series(daily, end)
    model = fit(s, now=end * STEP, horizon=HORIZON, seasonality=(DAILY,))
    value = forecast(s, model, now=end * STEP, horizon=HORIZON).value
    assert value == pytest.approx(truth(daily, end), abs=0.01)
    assert value is not None
    assert value > daily(end) + 1


def test_gaps_are_skipped() -> None:
    s = series(noisy(3), 7 * DAY)
    values = list(s.values)
    for i in range(0, len(values), 7):
        values[i] = math.nan
    model = fit(Series(0, STEP, values), now=7 * DAY * STEP, horizon=HORIZON, seasonality=(DAILY,))
    assert model.verdict == READY


def test_message_says_what_history_is_missing() -> None:
    s = series(daily, DAY)
    model = fit(s, now=DAY * STEP, horizon=HORIZON, seasonality=(DAILY, WEEKLY))
    assert model.message == (
        "1d of history before now; a season needs itself plus 24.5h to be judged (7d needs 192.5h)"
    )


@settings(max_examples=25, deadline=None)
@given(
    cut=st.integers(min_value=2 * DAY, max_value=3 * DAY),
    future=st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=50),
)
def test_no_peeking_past_now(cut: int, future: list[float]) -> None:
    """Whatever the series holds at or after `now` changes neither the fit nor the forecast."""
    past = [noisy(4)(i) for i in range(cut)]
    now = cut * STEP
    plain = Series(0, STEP, past)
    leaked = Series(0, STEP, past + future)
    a = fit(plain, now=now, horizon=HORIZON, seasonality=(DAILY,))
    b = fit(leaked, now=now, horizon=HORIZON, seasonality=(DAILY,))
    assert a == b
    assert forecast(plain, a, now=now, horizon=HORIZON) == forecast(
        leaked, b, now=now, horizon=HORIZON
    )


def test_a_stale_series_still_forecasts_from_now() -> None:
    """The controller refreshes its history every few minutes: the window moves with `now`."""
    end = 7 * DAY + DAY // 8  # on the rising edge
    s = series(daily, end)
    model = fit(s, now=end * STEP, horizon=HORIZON, seasonality=(DAILY,))
    later = end + 4  # four minutes after the last sample
    value = forecast(s, model, now=later * STEP, horizon=HORIZON).value
    assert value == pytest.approx(truth(daily, later), abs=0.05)
