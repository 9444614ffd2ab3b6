"""spec.predictive in a decide document (or an Autoscaler) to the model, and
status.predictive back: strict, with errors naming the field, as the CRD words them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autoscaler.core.fields import DocumentError, as_list, as_str, duration_ns, milli
from autoscaler.core.forecast import ERROR_TOO_LARGE, HISTORY_TOO_SHORT, READY, Forecast, ModelFit
from autoscaler.core.model import NS
from autoscaler.core.predictive import NO_HISTORY
from autoscaler.core.predictive_model import (
    MODES,
    MetricForecast,
    PredictiveReport,
    PredictiveSpec,
)
from autoscaler.core.proposal import format_milli
from autoscaler.core.tolerances import parse_tolerance

__all__ = ["parse_forecasts", "parse_predictive", "render_predictive"]

HOUR = 3600 * NS
MAX_HORIZON = 24 * HOUR  # further than a day ahead the forecast is a season's echo, not a forecast
MAX_HISTORY = 35 * 24 * HOUR  # five weeks: bounded memory per metric (50,400 one-minute samples)
MIN_SEASON = HOUR  # shorter cycles are noise at a one-minute resolution
MAX_SEASONS = 4
JUDGING = 24 * HOUR + 30 * 60 * NS  # a season is judged on the last day plus the level window
FORECASTABLE_TYPES = ("Object", "External", "Pods")


def parse_predictive(spec: Mapping[str, Any], path: str) -> PredictiveSpec | None:
    """spec.predictive, None when absent; `spec` is the Autoscaler spec, `path` its path."""
    obj = spec.get("predictive")
    if obj is None:
        return None
    ppath = f"{path}.predictive"
    if not isinstance(obj, dict):
        raise DocumentError(ppath, "must be an object")
    d = PredictiveSpec()
    mode = as_str(obj, "mode", ppath, default=d.mode)
    if mode not in MODES:
        raise DocumentError(f"{ppath}.mode", f"must be one of {', '.join(MODES)}, not {mode!r}")
    horizon = _duration(obj, "horizon", ppath, d.horizon, low=1, high=MAX_HORIZON)
    history = _duration(obj, "history", ppath, d.history, low=1, high=MAX_HISTORY)
    seasons = _seasons(obj, ppath, d.seasonality)
    for i, season in enumerate(seasons):
        if season <= horizon:
            raise DocumentError(
                f"{ppath}.seasonality[{i}]", f"must be longer than the horizon ({_text(horizon)})"
            )
    longest = max(seasons)
    if history < longest + JUDGING:
        raise DocumentError(
            f"{ppath}.history",
            f"must be at least the longest season plus 24h30m ({_text(longest + JUDGING)}): "
            "the model judges a season on the last day",
        )
    metrics = spec.get("metrics")
    if not isinstance(metrics, list) or not any(
        isinstance(m, dict) and m.get("type") in FORECASTABLE_TYPES for m in metrics
    ):
        raise DocumentError(ppath, "needs at least one metric of type Object, External or Pods")
    tolerance = d.tolerance
    if obj.get("tolerance") is not None:
        tolerance = parse_tolerance(obj["tolerance"], f"{ppath}.tolerance")
    return PredictiveSpec(mode, horizon, history, seasons, tolerance)


def _duration(
    obj: Mapping[str, Any], key: str, path: str, default: int, *, low: int, high: int
) -> int:
    raw = obj.get(key)
    if raw is None:
        return default
    if not isinstance(raw, str):
        raise DocumentError(f"{path}.{key}", "must be a duration such as 5m or 336h")
    value = _go_duration(raw, f"{path}.{key}")
    if value < low:
        raise DocumentError(f"{path}.{key}", "must be greater than 0")
    if value > high:
        raise DocumentError(f"{path}.{key}", f"must be at most {_text(high)}")
    return value


def _go_duration(raw: str, path: str) -> int:
    if raw.endswith(("d", "w")):  # Prometheus units are not Go's; say what to write instead
        raise DocumentError(
            path, f"must be a Go duration such as 336h (no d or w unit), not {raw!r}"
        )
    return duration_ns(raw, path)


def _seasons(obj: Mapping[str, Any], path: str, default: tuple[int, ...]) -> tuple[int, ...]:
    if obj.get("seasonality") is None:
        return default
    items = as_list(obj, "seasonality", path)
    if not 1 <= len(items) <= MAX_SEASONS:
        raise DocumentError(f"{path}.seasonality", f"must list 1 to {MAX_SEASONS} seasons")
    out: list[int] = []
    for i, raw in enumerate(items):
        ipath = f"{path}.seasonality[{i}]"
        if not isinstance(raw, str):
            raise DocumentError(ipath, "must be a duration such as 24h")
        season = _go_duration(raw, ipath)
        if season < MIN_SEASON or season > MAX_HISTORY:
            raise DocumentError(ipath, f"must be between 1h and {_text(MAX_HISTORY)}")
        if season in out:
            raise DocumentError(ipath, f"duplicate season {raw!r}")
        out.append(season)
    return tuple(out)


def _text(ns: int) -> str:
    seconds = ns // NS
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    if seconds % 60 == 0:
        return (
            f"{seconds // 3600}h{seconds % 3600 // 60}m" if seconds >= 3600 else f"{seconds // 60}m"
        )
    return f"{seconds}s"


# NoHistory: the controller holds no history, and its message says why (a failed read)
VERDICTS = (READY, HISTORY_TOO_SHORT, ERROR_TOO_LARGE, NO_HISTORY)


def parse_forecasts(raw: Any, count: int, path: str) -> tuple[Forecast | None, ...]:
    """The document's `forecasts`: one entry per spec metric (null: no history for it yet), as
    the controller computes them from its cached history, so `decide` replays them."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise DocumentError(path, "must be a list")
    if len(raw) != count:
        raise DocumentError(path, f"has {len(raw)} entries: give one per spec metric ({count})")
    return tuple(None if f is None else _forecast(f, f"{path}[{i}]") for i, f in enumerate(raw))


def _forecast(obj: Any, path: str) -> Forecast:
    if not isinstance(obj, dict):
        raise DocumentError(path, "must be an object or null")
    verdict = as_str(obj, "verdict", path, required=True)
    if verdict not in VERDICTS:
        raise DocumentError(f"{path}.verdict", f"must be one of {', '.join(VERDICTS)}")
    raw_value = obj.get("value")
    if verdict == READY and raw_value is None:
        raise DocumentError(f"{path}.value", "is required when the verdict is Ready")
    if verdict == NO_HISTORY and raw_value is not None:
        raise DocumentError(f"{path}.value", "must be absent when the verdict is NoHistory")
    value = None if raw_value is None else milli(raw_value, f"{path}.value") / 1000
    error = obj.get("error")
    if error is not None and (
        not isinstance(error, int | float) or isinstance(error, bool) or error < 0
    ):
        raise DocumentError(f"{path}.error", "must be a number >= 0")
    horizon = duration_ns(obj.get("horizon", "5m"), f"{path}.horizon")
    season = duration_ns(obj.get("season", "0s"), f"{path}.season")
    message = as_str(obj, "message", path)
    model = ModelFit(verdict, season, None if error is None else float(error), message)
    return Forecast(value, horizon, model)


def render_predictive(r: PredictiveReport) -> dict[str, Any]:
    """status.predictive."""
    out: dict[str, Any] = {
        "mode": r.mode,
        "horizonSeconds": r.horizon // NS,
        "metrics": [_render_metric(m) for m in r.metrics],
        "changedDecision": r.changed,
    }
    if r.reactive_replicas is not None:
        out["reactiveReplicas"] = r.reactive_replicas
    if r.forecast_replicas is not None:
        out["forecastReplicas"] = r.forecast_replicas
    return out


def _render_metric(m: MetricForecast) -> dict[str, Any]:
    out: dict[str, Any] = {"index": m.index, "name": m.name, "verdict": m.verdict}
    if m.message:
        out["message"] = m.message
    if m.value is not None:
        out["forecast"] = format_milli(m.value)
    if m.error is not None:
        out["recentError"] = "inf" if m.error == float("inf") else f"{m.error:.4f}"
    if m.season:
        out["seasonSeconds"] = m.season // NS
    if m.reactive is not None:
        out["reactiveReplicas"] = m.reactive
    if m.proposal is not None:
        out["forecastReplicas"] = m.proposal
    return out
