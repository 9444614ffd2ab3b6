"""The history a replay gives the predictive model, with no peeking (docs/predictive.md
"simulate"): each spec metric's values are kept on the model's grid (one sample a minute, the
highest value seen in that minute), a minute enters the history only once it is over, the model
is refitted every REFIT of replay time (as the controller is to refit it), and the
forecast of each pass reads only what came before that pass. A forecast is computed once per
grid minute (it reads nothing finer), as a controller would keep it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import overload

from autoscaler.core.forecast import Forecast, ModelFit, Series, forecast
from autoscaler.core.forecast_memo import FitMemo, refit
from autoscaler.core.model import NS, MetricSpec
from autoscaler.core.predictive import forecastable
from autoscaler.core.predictive_model import PredictiveSpec

__all__ = ["GRID", "REFIT", "ReplayHistory"]

GRID = 60 * NS  # the model's resolution, as the controller's range queries' step
REFIT = 30 * 60 * NS  # choosing and judging the season: costly, and its answer moves slowly


@dataclass(slots=True)
class _Track:
    start: int | None = None  # the first minute's start (ns)
    values: list[float] = field(default_factory=list)  # complete minutes only
    minute: int | None = None  # the minute being filled
    highest: float = math.nan
    model: ModelFit | None = None
    memo: FitMemo | None = None  # what the last refit leaves the next: the same fit, cheaper
    fitted_at: int | None = None
    last: tuple[tuple[int, int, int], Forecast] | None = None  # the forecast of this minute


class ReplayHistory:
    """Per spec metric, the past of a replay on the model's grid, and forecasts from it."""

    def __init__(self, settings: PredictiveSpec, metrics: Sequence[MetricSpec]) -> None:
        self.settings = settings
        self._tracks = [_Track() if forecastable(m) else None for m in metrics]

    def forecasts(self, now: int) -> tuple[Forecast | None, ...]:
        """Each forecastable metric's forecast at `now` from what was observed before it."""
        return tuple(self._forecast(t, now) if t is not None else None for t in self._tracks)

    def observe(self, now: int, values: Sequence[float | None]) -> None:
        """Record a pass's values (after its decision: the pass itself never saw them)."""
        for track, value in zip(self._tracks, values, strict=True):
            if track is not None:
                _record(track, now, value)

    def _forecast(self, track: _Track, now: int) -> Forecast | None:
        if track.start is None:
            return None
        s = self.settings
        first = max(track.start, now - s.history)  # the model reads `history`, no more
        skip = max(0, (first - track.start) // GRID)
        series = Series(track.start + skip * GRID, GRID, _Window(track.values, skip))
        if track.model is None or track.fitted_at is None or now - track.fitted_at >= REFIT:
            track.model, track.memo = refit(
                series, now=now, horizon=s.horizon, seasonality=s.seasonality, memo=track.memo
            )
            track.fitted_at = now
            track.last = None
        # the forecast reads whole minutes: it changes only when a minute starts or ends
        key = (series.start, len(series.values), series.position(now))
        if track.last is None or track.last[0] != key:
            track.last = (key, forecast(series, track.model, now=now, horizon=s.horizon))
        return track.last[1]


def _record(track: _Track, now: int, value: float | None) -> None:
    minute = now - now % GRID
    if track.minute is None:
        track.start = track.minute = minute
    while track.minute < minute:  # close the minute(s) that ended; gaps stay NaN
        track.values.append(track.highest)
        track.highest = math.nan
        track.minute += GRID
    if value is not None and not math.isnan(value):
        track.highest = value if math.isnan(track.highest) else max(track.highest, value)


class _Window(Sequence[float]):
    """values[skip:] without copying (the history grows by one minute at a time)."""

    __slots__ = ("_skip", "_values")

    def __init__(self, values: list[float], skip: int) -> None:
        self._values = values
        self._skip = skip

    def __len__(self) -> int:
        return len(self._values) - self._skip

    @overload
    def __getitem__(self, i: int) -> float: ...
    @overload
    def __getitem__(self, i: slice) -> list[float]: ...
    def __getitem__(self, i: int | slice) -> float | list[float]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            return self._values[start + self._skip : stop + self._skip : step]
        if i < 0:
            i += len(self)
        return self._values[i + self._skip]
