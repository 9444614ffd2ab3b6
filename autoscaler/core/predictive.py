"""Predictive scaling in the decision (docs/predictive.md "The decision").

For each forecastable metric (Object, External, and Pods, whose target is always an AverageValue)
with a Ready forecast, the forecast value gives a proposal computed like the reactive one (the same
calculator, with the forecast in place of the measured value and spec.predictive.tolerance in place
of the measured value's tolerance), and the metric proposes the higher of the two. So a forecast
never scales in below the reactive rule. An Object/External metric whose forecast is above its
activation threshold counts as active (it may wake a target at 0 or keep it at 1); a forecast below
it never does. In ForecastOnly mode the proposals are computed and reported, and nothing else
changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from autoscaler.core.conditions import FALSE, TRUE, Conditions
from autoscaler.core.forecast import READY, Forecast
from autoscaler.core.measure import Outcome, measure
from autoscaler.core.model import (
    EXTERNAL,
    OBJECT,
    PODS,
    ControllerOptions,
    MetricInput,
    MetricItems,
    MetricSpec,
    Pod,
    Scale,
    Spec,
)
from autoscaler.core.predictive_model import SCALE, MetricForecast, PredictiveReport, PredictiveSpec
from autoscaler.core.proposal import Proposal, format_milli
from autoscaler.core.tolerances import Tolerances

__all__ = ["PREDICTIVE", "Predicted", "forecastable", "predict", "predictive_condition"]

PREDICTIVE = "Predictive"
NO_HISTORY = "NoHistory"
NOT_MEASURED = "NotMeasured"
FORECASTABLE = (OBJECT, EXTERNAL, PODS)


def forecastable(spec: MetricSpec) -> bool:
    """Object/External metrics and Pods metrics with an AverageValue target."""
    if spec.type == PODS:
        return spec.target.average_value is not None
    return spec.type in (OBJECT, EXTERNAL)


@dataclass(frozen=True, slots=True)
class Predicted:
    """What the forecasts do to one pass: the outcomes and activity flags to decide with (in
    ForecastOnly mode, the reactive ones), and the report for the status."""

    outcomes: tuple[Outcome, ...]
    flags: tuple[bool | None, ...]
    report: PredictiveReport
    raised: bool  # Scale mode and some outcome or flag differs from the reactive one


def predict(
    settings: PredictiveSpec,
    spec: Spec,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    outcomes: Sequence[Outcome],
    flags: Sequence[bool | None],
    forecasts: Sequence[Forecast | None],
    *,
    thresholds: Sequence[int | None],
    in_fallback: Sequence[bool],
    now: int,
    options: ControllerOptions,
) -> Predicted:
    """The outcomes with each Ready forecast's proposal maxed in, and the report."""
    scaling = settings.mode == SCALE
    out = list(outcomes)
    new_flags = list(flags)
    lines: list[MetricForecast] = []
    for i, m in enumerate(spec.metrics):
        if not forecastable(m):
            continue
        reactive = outcomes[i]
        given = forecasts[i] if i < len(forecasts) else None
        if not isinstance(reactive, Proposal) or in_fallback[i]:
            lines.append(MetricForecast(i, m.name, NOT_MEASURED, "its value failed this pass"))
            continue
        if given is None:
            lines.append(MetricForecast(i, m.name, NO_HISTORY, "no history read yet"))
            continue
        model = given.fit
        if given.value is None or model.verdict != READY:
            lines.append(
                MetricForecast(
                    i,
                    m.name,
                    model.verdict,
                    model.message,
                    None,
                    model.error,
                    model.period,
                    reactive.replicas,
                )
            )
            continue
        value = math.ceil(given.value * 1000)
        proposal = _proposal(
            spec,
            m,
            scale,
            pods,
            metrics[i],
            value,
            now=now,
            options=options,
            tolerance=settings.tolerance,
        )
        lines.append(
            MetricForecast(
                i,
                m.name,
                READY,
                model.message,
                value,
                model.error,
                model.period,
                reactive.replicas,
                proposal,
            )
        )
        if not scaling:
            continue
        if proposal is not None and proposal > reactive.replicas:
            detail = (
                f"{reactive.detail}; forecast {format_milli(value)} within "
                f"{given.horizon // 1_000_000_000}s proposes {proposal} replicas"
            )
            out[i] = Proposal(proposal, reactive.status, f"{reactive.name} (forecast)", detail)
        threshold = thresholds[i] if i < len(thresholds) else None
        if flags[i] is False and m.type in (OBJECT, EXTERNAL) and value > (threshold or 0):
            new_flags[i] = True  # the forecast itself crosses the activation threshold
    report = PredictiveReport(
        settings.mode,
        settings.horizon,
        tuple(lines),
        _highest(outcomes),
        _highest([*outcomes, *(_as_outcome(f) for f in lines)]),
    )
    raised = scaling and (out != list(outcomes) or new_flags != list(flags))
    if not scaling:
        return Predicted(tuple(outcomes), tuple(flags), report, False)
    return Predicted(tuple(out), tuple(new_flags), report, raised)


def _proposal(
    spec: Spec,
    m: MetricSpec,
    scale: Scale,
    pods: Sequence[Pod],
    data: MetricInput,
    value: int,
    *,
    now: int,
    options: ControllerOptions,
    tolerance: float,
) -> int | None:
    """The replicas the metric's own calculator proposes with the forecast as its value, with
    the forecast's tolerance (spec.predictive.tolerance) in place of the measured value's."""
    forecast_data = _with_value(m, data, value)
    if forecast_data is None:
        return None
    (outcome,) = measure(
        replace(spec, metrics=(m,)),
        scale,
        pods,
        (forecast_data,),
        now=now,
        options=options,
        tolerances=Tolerances(scale_down=tolerance, scale_up=tolerance),
    )
    return outcome.replicas if isinstance(outcome, Proposal) else None


def _with_value(m: MetricSpec, data: MetricInput, value: int) -> MetricInput | None:
    """The measured input with the forecast in place of its value: an External metric's items
    summed, an Object metric's first item, a Pods metric's per-pod values scaled to the
    forecast total (history of a Pods metric is the sum over the pods)."""
    if not isinstance(data, MetricItems) or not data.items:
        return None
    first = data.items[0]
    if m.type in (OBJECT, EXTERNAL):
        return MetricItems((replace(first, value=value),))
    total = sum(s.value for s in data.items)
    n = len(data.items)
    if total <= 0:
        share = math.ceil(value / n)
        return MetricItems(tuple(replace(s, value=share) for s in data.items))
    return MetricItems(
        tuple(replace(s, value=math.ceil(s.value * value / total)) for s in data.items)
    )


def _as_outcome(line: MetricForecast) -> Outcome | None:
    if line.proposal is None:
        return None
    return Proposal(line.proposal, {}, line.name, "")


def _highest(outcomes: Sequence[Outcome | None]) -> int | None:
    found = [o.replicas for o in outcomes if isinstance(o, Proposal)]
    return max(found) if found else None


def predictive_condition(conds: Conditions, report: PredictiveReport) -> None:
    """Predictive True when some forecast is Ready (reason ForecastApplied, ForecastBelowReactive
    or ForecastOnly); else False with the first metric's verdict as the reason."""
    ready = [f for f in report.metrics if f.verdict == READY]
    if not report.metrics:
        conds.set(PREDICTIVE, FALSE, "NoForecastableMetric", "no Object, External or Pods metric")
        return
    if not ready:
        first = report.metrics[0]
        conds.set(
            PREDICTIVE,
            FALSE,
            first.verdict,
            f"metrics[{first.index}] {first.name}: {first.message}; the forecast is ignored",
        )
        return
    parts = [
        f"metrics[{f.index}] {f.name}: forecast {format_milli(f.value or 0)} "
        f"({f.message}) proposes {f.proposal}, reactive {f.reactive}"
        for f in ready
    ]
    ignored = [
        f"metrics[{f.index}] {f.name}: {f.verdict}" for f in report.metrics if f not in ready
    ]
    text = "; ".join(parts + ignored)
    if report.mode != SCALE:
        conds.set(PREDICTIVE, TRUE, "ForecastOnly", f"forecast only, no effect: {text}")
    elif (report.forecast_replicas or 0) > (report.reactive_replicas or 0):
        conds.set(PREDICTIVE, TRUE, "ForecastApplied", text)
    else:
        conds.set(PREDICTIVE, TRUE, "ForecastBelowReactive", text)
