"""The predictive model (docs/predictive.md): a seasonal naive forecast with a level correction.

Pure: the history and `now` are inputs; no clock, no I/O. The history is a regular grid
(`Series`); a missing sample is NaN. For a season of P steps, the baseline at index j is the
median of the values one to `CYCLES` seasons before j; the level correction is the mean of
(value - baseline) over the last `LEVEL` before now; the forecast at j is baseline + correction.
The forecast of a window is the highest forecast in it.

`fit` settles, at each refresh of the history, which season to use (the one with the smallest
recent error) and its verdict; `forecast` then answers each pass cheaply. Only values before
`now` are read: the model cannot peek, whatever the series holds after `now`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from autoscaler.core.model import NS

__all__ = [
    "ERROR_TOO_LARGE",
    "HISTORY_TOO_SHORT",
    "MAX_ERROR",
    "READY",
    "Baselines",
    "ErrorMeasure",
    "Forecast",
    "ModelFit",
    "Series",
    "baseline",
    "combined_error",
    "fit",
    "forecast",
    "origin_term",
    "settle",
]

READY = "Ready"
HISTORY_TOO_SHORT = "HistoryTooShort"
ERROR_TOO_LARGE = "ErrorTooLarge"

CYCLES = 4  # seasons the median reads: one odd day (a spike, a holiday) cannot move it
LEVEL = 30 * 60 * NS  # the recent stretch the level correction averages over
ERROR_WINDOW = 24 * 3600 * NS  # the recent error is measured over the last day
ERROR_STRIDE = 5 * 60 * NS  # one evaluated forecast every 5 minutes of that day
COMPARE_WINDOW = 7 * 24 * 3600 * NS  # seasons are compared over up to the last week
COMPARE_STRIDE = 30 * 60 * NS  # one compared forecast every 30 minutes of it
MAX_ERROR = 0.5  # a recent error above 50% makes the forecast unfit to act on
MIN_EVALUATED = 0.5  # at least half the day's forecasts must have had data to be judged


@dataclass(frozen=True, slots=True)
class Series:
    """Samples on a regular grid: values[i] is the metric at start + i * step (ns); NaN: none."""

    start: int
    step: int
    values: Sequence[float]

    def position(self, at: int) -> int:
        """The grid index of the first instant at or after `at` (may lie past the samples)."""
        return max(0, -((self.start - at) // self.step))

    def index(self, at: int) -> int:
        """How many samples lie strictly before `at` (the end of what the model may read)."""
        return min(len(self.values), self.position(at))


@dataclass(frozen=True, slots=True)
class ModelFit:
    """What a refresh settles: the verdict, the season used (ns; 0 when none) and the recent
    error (sum |forecast - actual| / sum |actual| over the last day; None when not measured)."""

    verdict: str
    period: int
    error: float | None
    message: str


@dataclass(frozen=True, slots=True)
class Forecast:
    """The highest value expected in [now, now + horizon] (None when the fit is not Ready)."""

    value: float | None
    horizon: int  # ns
    fit: ModelFit


def fit(
    series: Series,
    *,
    now: int,
    horizon: int,
    seasonality: Sequence[int],
    max_error: float = MAX_ERROR,
) -> ModelFit:
    """Choose a season, then judge it, with no peeking: each forecast judged is made from the
    values before its own instant and compared with the highest value that then came in its
    horizon (all of it before `now`). The seasons are compared over the longest stretch all of
    them can be judged on, up to a week (every 30 minutes): one odd day must not decide between
    a daily and a weekly cycle. The chosen season's recent error is its error over the last day
    (every 5 minutes)."""
    return settle(
        series,
        now=now,
        horizon=horizon,
        seasonality=seasonality,
        max_error=max_error,
        measure=_error,
    )


class Baselines(Protocol):
    """What a forecast reads of the point baselines: the one at an index (a list of them, or
    autoscaler/core/forecast_memo.py's, which computes each when first read)."""

    def __getitem__(self, i: int, /) -> float: ...


class ErrorMeasure(Protocol):
    """How `settle` measures a season's error: `_error`'s contract (`fit` measures it afresh,
    autoscaler/core/forecast_memo.py reuses the previous refit's work)."""

    def __call__(
        self,
        series: Series,
        end: int,
        period: int,
        steps: int,
        level: int,
        window: int,
        stride: int,
    ) -> float | None: ...


def settle(
    series: Series,
    *,
    now: int,
    horizon: int,
    seasonality: Sequence[int],
    max_error: float,
    measure: ErrorMeasure,
) -> ModelFit:
    """`fit`'s decisions, with each season's error measured by `measure`."""
    end = series.index(now)
    steps = _steps(series, horizon)
    level = max(1, LEVEL // series.step)
    day = ERROR_WINDOW // series.step
    usable = [
        period
        for period in seasonality
        if steps < period // series.step and end >= day + period // series.step + level
    ]
    if not usable:
        longest = max(seasonality) if seasonality else 0
        return ModelFit(HISTORY_TOO_SHORT, 0, None, _short_message(series, end, longest))
    period = usable[0]
    if len(usable) > 1:  # compare them on a common stretch
        span = min(COMPARE_WINDOW // series.step, *(end - q // series.step - level for q in usable))
        compared = [
            (e, q)
            for q in usable
            if (e := measure(series, end, q, steps, level, span, COMPARE_STRIDE)) is not None
        ]
        if compared:
            period = min(compared)[1]
    error = measure(series, end, period, steps, level, day, ERROR_STRIDE)
    if error is None:
        return ModelFit(HISTORY_TOO_SHORT, 0, None, _short_message(series, end, period))
    if error > max_error:
        why = f"recent error {error:.0%} exceeds {max_error:.0%} (season {_fmt(period)})"
        return ModelFit(ERROR_TOO_LARGE, period, error, why)
    return ModelFit(READY, period, error, f"season {_fmt(period)}, recent error {error:.0%}")


def forecast(series: Series, model: ModelFit, *, now: int, horizon: int) -> Forecast:
    """The highest value the model expects in [now, now + horizon], from values before now.

    The series may end before `now` (the controller refreshes it every few minutes): the window
    still starts at `now`, and the level correction uses the latest samples there are."""
    if model.verdict != READY:
        return Forecast(None, horizon, model)
    at = series.position(now)
    end = min(at, len(series.values))
    p = model.period // series.step
    level = max(1, LEVEL // series.step)
    lo = end - level
    base = _baselines(series.values, lo, end, p)
    steps = _steps(series, horizon)
    value = _predict_from(series.values, base, lo, end=end, at=at, p=p, steps=steps, level=level)
    return Forecast(value, horizon, model)


def _steps(series: Series, horizon: int) -> int:
    return max(0, -(-horizon // series.step))


def baseline(values: Sequence[float], j: int, p: int, limit: int | None = None) -> float:
    """The median of the values one to CYCLES seasons before j (NaN when none), reading only
    indices below `limit` (default j: a baseline never reads its own instant or later)."""
    seen = []
    top = j if limit is None else min(j, limit)
    for k in range(1, CYCLES + 1):
        i = j - k * p
        if i < 0:
            break
        if i >= top:
            continue
        v = values[i]
        if v == v:  # not NaN
            seen.append(v)
    if not seen:
        return math.nan
    seen.sort()
    n = len(seen)
    return seen[n // 2] if n % 2 else (seen[n // 2 - 1] + seen[n // 2]) / 2


def _window_baseline(values: Sequence[float], at: int, p: int, steps: int, limit: int) -> float:
    """The median over the seasons before of the highest value of the window [at, at + steps]
    one to CYCLES seasons back (reading only indices below `limit`; NaN when none)."""
    highs = []
    for k in range(1, CYCLES + 1):
        lo = at - k * p
        if lo < 0:
            break
        hi = min(lo + steps + 1, limit)
        seen = [v for v in values[lo:hi] if v == v]
        if seen:
            highs.append(max(seen))
    if not highs:
        return math.nan
    highs.sort()
    n = len(highs)
    return highs[n // 2] if n % 2 else (highs[n // 2 - 1] + highs[n // 2]) / 2


def _baselines(values: Sequence[float], lo: int, hi: int, p: int) -> list[float]:
    """The baseline at each index of [lo, hi) (indices below 0 give NaN)."""
    return [baseline(values, j, p) if j >= 0 else math.nan for j in range(lo, hi)]


def _predict_from(
    values: Sequence[float],
    base: Baselines,
    lo: int,
    *,
    end: int,
    at: int,
    p: int,
    steps: int,
    level: int,
) -> float | None:
    """The forecast of the window [at, at + steps] from values[:end] (at >= end): the window
    baseline plus the mean offset of the last `level` values from their point baselines
    (base[i] is the point baseline at index lo + i)."""
    offsets = [
        values[j] - b
        for j in range(max(0, end - level), end)
        if values[j] == values[j] and (b := base[j - lo]) == b
    ]
    ahead = _window_baseline(values, at, p, steps, end)
    if ahead != ahead:  # NaN: no season before holds data for the window
        return None
    correction = sum(offsets) / len(offsets) if offsets else 0.0
    return ahead + correction


def _error(
    series: Series, end: int, period: int, steps: int, level: int, window: int, stride: int
) -> float | None:
    """The season's error over the `window` samples before `end`, one forecast every
    `stride` (ns)."""
    return _recent_error(
        series.values, end, period // series.step, steps, level, window, stride // series.step
    )


def _recent_error(
    values: Sequence[float], end: int, p: int, steps: int, level: int, window: int, stride: int
) -> float | None:
    stride = max(1, stride)
    lo = end - window - level
    base = _baselines(values, lo, end, p)  # once: a baseline never reads past j - p
    origins = range(end - window, end - steps, stride)
    terms = (origin_term(values, base, lo, o, p=p, steps=steps, level=level) for o in origins)
    return combined_error(terms, planned=len(origins))


def origin_term(
    values: Sequence[float],
    base: Baselines,
    lo: int,
    origin: int,
    *,
    p: int,
    steps: int,
    level: int,
) -> tuple[float, float] | None:
    """One judged forecast: (|forecast - highest actual|, |highest actual|) for the window
    [origin, origin + steps], forecast from the values before `origin` (base[i]: the point
    baseline at lo + i, lo <= origin - level); None when there is no actual or no forecast."""
    actual = [v for v in values[origin : origin + steps + 1] if v == v]
    predicted = _predict_from(
        values, base, lo, end=origin, at=origin, p=p, steps=steps, level=level
    )
    if not actual or predicted is None:
        return None
    high = max(actual)
    return abs(predicted - high), abs(high)


def combined_error(terms: Iterable[tuple[float, float] | None], *, planned: int) -> float | None:
    """sum |forecast - actual| / sum |actual| over the terms, added in their order (a float
    sum depends on it); None when fewer than MIN_EVALUATED of the `planned` were judged."""
    wrong = total = 0.0
    judged = 0
    for term in terms:
        if term is None:
            continue
        judged += 1
        wrong += term[0]
        total += term[1]
    if planned == 0 or judged < planned * MIN_EVALUATED:
        return None
    if total == 0.0:
        return 0.0 if wrong == 0.0 else math.inf
    return wrong / total


def _short_message(series: Series, end: int, longest: int) -> str:
    have = end * series.step
    return (
        f"{_fmt(have)} of history before now; a season needs itself plus "
        f"{_fmt(ERROR_WINDOW + LEVEL)} to be judged"
        + (f" ({_fmt(longest)} needs {_fmt(longest + ERROR_WINDOW + LEVEL)})" if longest else "")
    )


def _fmt(ns: int) -> str:
    seconds = ns // NS
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds // 60}m"
    return f"{seconds}s"
