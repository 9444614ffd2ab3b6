"""The values of predictive scaling (docs/predictive.md): what `spec.predictive` says and what a
pass reports in `status.predictive`. Frozen dataclasses; instants and durations are integer
nanoseconds, metric values thousandths."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FORECAST_ONLY",
    "MODES",
    "SCALE",
    "MetricForecast",
    "PredictiveReport",
    "PredictiveSpec",
]

SCALE = "Scale"
FORECAST_ONLY = "ForecastOnly"
MODES = (SCALE, FORECAST_ONLY)

HOUR = 3600 * 1_000_000_000


@dataclass(frozen=True, slots=True)
class PredictiveSpec:
    """spec.predictive."""

    mode: str = FORECAST_ONLY  # judge the forecast in status first, as AWS predictive scaling does
    horizon: int = 5 * 60 * 1_000_000_000  # at least the pods' start-up time
    history: int = 14 * 24 * HOUR  # two weekly seasons
    seasonality: tuple[int, ...] = (24 * HOUR, 168 * HOUR)  # a day and a week
    # the band the forecast's proposal ignores (both directions), as the tolerance does for
    # the measured value: narrower by default, a forecast being far less noisy than one sample
    tolerance: float = 0.05


@dataclass(frozen=True, slots=True)
class MetricForecast:
    """status.predictive.metrics[i]: one forecastable spec metric on this pass.

    verdict: the model's (Ready, HistoryTooShort, ErrorTooLarge), or NoHistory when the
    controller holds no history for it yet, or NotMeasured when its reactive value failed.
    value: the forecast of the metric's highest value over the horizon (thousandths).
    error: the model's recent error (a fraction; 0.12 is 12%); season: the season used (ns).
    reactive, proposal: the replicas the metric proposes from its value and from the forecast.
    """

    index: int
    name: str
    verdict: str
    message: str = ""
    value: int | None = None
    error: float | None = None
    season: int = 0
    reactive: int | None = None
    proposal: int | None = None


@dataclass(frozen=True, slots=True)
class PredictiveReport:
    """status.predictive: the pass's forecasts and whether they changed the decision.

    reactive_replicas / forecast_replicas: the recommendation (the max of the metrics'
    proposals, before stabilization and limits) without and with the forecasts.
    changed: in Scale mode, whether the replicas written differ from the reactive decision's.
    """

    mode: str
    horizon: int
    metrics: tuple[MetricForecast, ...] = ()
    reactive_replicas: int | None = None
    forecast_replicas: int | None = None
    changed: bool = False
