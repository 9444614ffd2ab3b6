"""Predictive scaling in the decision (docs/predictive.md "The decision"): max(reactive,
forecast) per metric, never below the reactive rule, activation honoured, ignored with a reason
when the model is not Ready, ForecastOnly changes nothing; strict validation of spec.predictive."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from autoscaler.core import decide_document, parse_document, parse_spec
from autoscaler.core.controls_document import parse_controls, render_control_status
from autoscaler.core.fields import DocumentError
from autoscaler.core.forecast import ERROR_TOO_LARGE, HISTORY_TOO_SHORT, READY, Forecast, ModelFit
from autoscaler.core.model import (
    Decision,
    MetricError,
    MetricInput,
    MetricItems,
    MetricSample,
    Pod,
    Scale,
    Status,
)
from autoscaler.core.orchestrate import decide_controlled
from tests.core.builders import external_metric, object_metric, pods_metric

NS = 1_000_000_000
NOW = 1_800_000_000 * NS
DAY = 86400 * NS
HORIZON = 300 * NS


def fc(value: float | None, verdict: str = READY, error: float | None = 0.1) -> Forecast:
    message = {READY: "season 1d, recent error 10%"}.get(verdict, f"{verdict} for the test")
    return Forecast(
        value, HORIZON, ModelFit(verdict, DAY if error is not None else 0, error, message)
    )


@dataclass
class Case:
    metric: dict[str, Any]
    replicas: int
    value: str | None  # the measured value (thousandths as a quantity), None: the metric failed
    forecast: Forecast | None
    want: int
    condition: tuple[str, str]
    mode: str = "Scale"
    changed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def autoscaler(metric: dict[str, Any], mode: str | None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 20,
        "metrics": [metric],
    }
    if mode is not None:
        spec["predictive"] = {"mode": mode, "horizon": "5m"}
    spec.update(extra)
    return {"metadata": {}, "spec": spec}


def ready_pods(n: int) -> list[Pod]:
    return [Pod(f"p{i}", ready="True", start_time=0, ready_transition=0) for i in range(n)]


def inputs(metric: dict[str, Any], replicas: int, value: str | None) -> list[MetricInput]:
    if value is None:
        return [MetricError("unavailable")]
    milli = int(value)
    if metric["type"] == "Pods":  # the value is the total, spread over the ready pods
        return [
            MetricItems(
                tuple(MetricSample(milli // replicas, NOW, f"p{i}") for i in range(replicas))
            )
        ]
    return [MetricItems((MetricSample(milli, NOW),))]


def run(case: Case) -> Decision:
    obj = autoscaler(case.metric, case.mode, **case.extra)
    spec = parse_spec(obj["spec"], "autoscaler.spec")
    controls = parse_controls({}, obj)
    return decide_controlled(
        spec,
        Status(current_replicas=case.replicas, desired_replicas=case.replicas),
        Scale(case.replicas, case.replicas, "app=web"),
        ready_pods(case.replicas),
        inputs(case.metric, case.replicas, case.value),
        now=NOW,
        controls=controls,
        forecasts=[case.forecast],
    )


EXT = external_metric(average=10_000)  # AverageValue 10 per replica


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            Case(EXT, 5, "50000", fc(80), 8, ("True", "ForecastApplied"), changed=True),
            id="forecast-above-reactive-scales-up-ahead",
        ),
        pytest.param(
            Case(EXT, 5, "50000", fc(20), 5, ("True", "ForecastBelowReactive")),
            id="forecast-below-reactive-changes-nothing",
        ),
        pytest.param(
            Case(EXT, 5, "50000", fc(0), 5, ("True", "ForecastBelowReactive")),
            id="forecast-of-zero-never-scales-in",
        ),
        pytest.param(
            Case(EXT, 5, "50000", fc(80), 5, ("True", "ForecastOnly"), mode="ForecastOnly"),
            id="forecast-only-reports-and-changes-nothing",
        ),
        pytest.param(
            Case(
                EXT, 5, "50000", fc(None, HISTORY_TOO_SHORT, None), 5, ("False", HISTORY_TOO_SHORT)
            ),
            id="history-too-short-ignored",
        ),
        pytest.param(
            Case(EXT, 5, "50000", fc(None, ERROR_TOO_LARGE, 0.9), 5, ("False", ERROR_TOO_LARGE)),
            id="error-too-large-ignored",
        ),
        pytest.param(
            Case(EXT, 5, "50000", None, 5, ("False", "NoHistory")), id="no-history-yet-ignored"
        ),
        pytest.param(
            Case(EXT, 5, None, fc(80), 5, ("False", "NotMeasured")),
            id="failed-metric-is-not-forecast",
        ),
        pytest.param(
            Case(
                pods_metric(10_000),
                4,
                "40000",
                fc(80),
                8,
                ("True", "ForecastApplied"),
                changed=True,
            ),
            id="pods-total-forecast-scales-like-the-reactive-rule",
        ),
        pytest.param(
            Case(
                object_metric(value=10_000),
                4,
                "10000",
                fc(20),
                8,
                ("True", "ForecastApplied"),
                changed=True,
            ),
            id="object-value-target-ratio-times-ready-pods",
        ),
        pytest.param(
            Case(EXT, 5, "50000", fc(52), 5, ("True", "ForecastBelowReactive")),
            id="forecast-within-its-tolerance-proposes-current",
        ),
        pytest.param(
            Case(EXT, 5, "50000", fc(54), 6, ("True", "ForecastApplied"), changed=True),
            id="forecast-beyond-its-default-tolerance-but-within-upstreams",
        ),
        pytest.param(
            Case(
                EXT,
                5,
                "50000",
                fc(54),
                5,
                ("True", "ForecastBelowReactive"),
                extra={"predictive": {"mode": "Scale", "horizon": "5m", "tolerance": "0.1"}},
            ),
            id="forecast-within-a-wider-tolerance-set-in-the-spec",
        ),
        pytest.param(
            Case(
                EXT,
                5,
                "50000",
                fc(50.1),
                6,
                ("True", "ForecastApplied"),
                changed=True,
                extra={"predictive": {"mode": "Scale", "horizon": "5m", "tolerance": 0}},
            ),
            id="tolerance-zero-any-forecast-above-capacity-scales",
        ),
        pytest.param(
            Case(
                EXT,
                5,
                "56000",
                fc(56),
                6,
                ("True", "ForecastApplied"),
                changed=True,
                extra={"behavior": {"scaleUp": {"tolerance": "0.2"}}},
            ),
            id="measured-value-keeps-the-behavior-tolerance-forecast-its-own",
        ),
    ],
)
def test_forecast_in_the_decision(case: Case) -> None:
    d = run(case)
    assert d.desired_replicas == case.want
    by_type = {c.type: (c.status, c.reason) for c in d.status.conditions}
    assert by_type["Predictive"] == case.condition
    assert d.controls is not None
    assert d.controls.predictive is not None
    assert d.controls.predictive.changed is case.changed


@pytest.mark.parametrize(
    ("replicas", "value", "forecast", "want"),
    [
        pytest.param(0, "2000", fc(3), 0, id="asleep-forecast-below-threshold-stays-asleep"),
        pytest.param(0, "2000", fc(5), 0, id="asleep-forecast-at-threshold-stays-asleep"),
        pytest.param(0, "2000", fc(30), 3, id="asleep-forecast-above-threshold-wakes"),
        pytest.param(0, "2000", fc(30, ERROR_TOO_LARGE, 0.9), 0, id="asleep-unfit-forecast-no"),
    ],
)
def test_activation_keeps_asleep_unless_the_forecast_crosses(
    replicas: int, value: str, forecast: Forecast, want: int
) -> None:
    metric = {**EXT, "activation": {"threshold": "5"}}
    case = Case(metric, replicas, value, forecast, want, ("", ""), extra={"minReplicas": 0})
    assert run(case).desired_replicas == want


def test_forecast_only_status_says_what_it_would_do() -> None:
    d = run(Case(EXT, 5, "50000", fc(80), 5, ("", ""), mode="ForecastOnly"))
    assert d.controls is not None
    rendered = render_control_status(d.controls)["predictive"]
    assert rendered == {
        "mode": "ForecastOnly",
        "horizonSeconds": 300,
        "metrics": [
            {
                "index": 0,
                "name": "queue",
                "verdict": "Ready",
                "message": "season 1d, recent error 10%",
                "forecast": "80",
                "recentError": "0.1000",
                "seasonSeconds": 86400,
                "reactiveReplicas": 5,
                "forecastReplicas": 8,
            }
        ],
        "changedDecision": False,
        "reactiveReplicas": 5,
        "forecastReplicas": 8,
    }


def test_removing_predictive_drops_the_condition() -> None:
    first = run(Case(EXT, 5, "50000", fc(80), 8, ("", "")))
    obj = autoscaler(EXT, None)
    d = decide_controlled(
        parse_spec(obj["spec"], "autoscaler.spec"),
        first.status,
        Scale(8, 8, "app=web"),
        ready_pods(8),
        inputs(EXT, 8, "80000"),
        now=NOW + 15 * NS,
        controls=parse_controls({}, obj),
        state=first.controls or pytest.fail("no memory"),
        forecasts=[fc(80)],
    )
    assert "Predictive" not in {c.type for c in d.status.conditions}


@pytest.mark.parametrize(
    ("predictive", "metric", "path", "problem"),
    [
        pytest.param(
            {"mode": "Auto"},
            EXT,
            ".mode",
            "must be one of Scale, ForecastOnly, not 'Auto'",
            id="bad-mode",
        ),
        pytest.param(
            {"horizon": "0s"}, EXT, ".horizon", "must be greater than 0", id="zero-horizon"
        ),
        pytest.param(
            {"horizon": "25h", "seasonality": ["168h"], "history": "336h"},
            EXT,
            ".horizon",
            "must be at most 24h",
            id="horizon-over-a-day",
        ),
        pytest.param(
            {"horizon": 300},
            EXT,
            ".horizon",
            "must be a duration such as 5m or 336h",
            id="horizon-number",
        ),
        pytest.param(
            {"history": "14d"},
            EXT,
            ".history",
            "must be a Go duration such as 336h (no d or w unit), not '14d'",
            id="prometheus-day-unit",
        ),
        pytest.param(
            {"history": "10x"},
            EXT,
            ".history",
            "invalid duration '10x': expected a Go duration such as 30s or 1m0s",
            id="garbage-history",
        ),
        pytest.param(
            {"history": "48h"},
            EXT,
            ".history",
            "must be at least the longest season plus 24h30m (192h30m): the model "
            "judges a season on the last day",
            id="history-shorter-than-week-plus-day",
        ),
        pytest.param(
            {"history": "900h"},
            EXT,
            ".history",
            "must be at most 840h",
            id="history-over-five-weeks",
        ),
        pytest.param(
            {"seasonality": []}, EXT, ".seasonality", "must list 1 to 4 seasons", id="no-season"
        ),
        pytest.param(
            {"seasonality": ["24h", "24h"]},
            EXT,
            ".seasonality[1]",
            "duplicate season '24h'",
            id="duplicate-season",
        ),
        pytest.param(
            {"seasonality": ["30m"]},
            EXT,
            ".seasonality[0]",
            "must be between 1h and 840h",
            id="season-under-an-hour",
        ),
        pytest.param(
            {"horizon": "2h", "seasonality": ["1h"], "history": "48h"},
            EXT,
            ".seasonality[0]",
            "must be longer than the horizon (2h)",
            id="season-not-longer-than-horizon",
        ),
        pytest.param(
            {},
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50},
                },
            },
            "",
            "needs at least one metric of type Object, External or Pods",
            id="cpu-only",
        ),
        pytest.param(
            {"tolerance": "-0.1"},
            EXT,
            ".tolerance",
            "must not be negative",
            id="negative-tolerance",
        ),
        pytest.param(
            {"tolerance": "5%"},
            EXT,
            ".tolerance",
            "invalid quantity '5%': expected a number with an optional suffix such as 500m, 2, "
            "1.5k, 128Mi or 1e3",
            id="tolerance-not-a-quantity",
        ),
        pytest.param("Scale", EXT, "", "must be an object", id="not-an-object"),
    ],
)
def test_validation_names_the_field(
    predictive: Any, metric: dict[str, Any], path: str, problem: str
) -> None:
    obj = autoscaler(metric, None, predictive=predictive)
    with pytest.raises(DocumentError) as e:
        parse_controls({}, obj)
    assert (e.value.path, e.value.problem) == (f"autoscaler.spec.predictive{path}", problem)


def test_defaults() -> None:
    controls = parse_controls({}, autoscaler(EXT, None, predictive={}))
    p = controls.predictive
    assert p is not None
    assert (p.mode, p.horizon, p.history, p.seasonality, p.tolerance) == (
        "ForecastOnly",
        300 * NS,
        336 * 3600 * NS,
        (24 * 3600 * NS, 168 * 3600 * NS),
        0.05,
    )


def test_the_crds_default_tolerance_is_the_cores() -> None:
    # the API server stores the CRD's default ("0.05"); decide without the field must agree
    explicit = parse_controls({}, autoscaler(EXT, None, predictive={"tolerance": "0.05"}))
    implicit = parse_controls({}, autoscaler(EXT, None, predictive={}))
    assert explicit.predictive is not None
    assert implicit.predictive is not None
    assert explicit.predictive.tolerance == implicit.predictive.tolerance


def document(forecasts: Any) -> dict[str, Any]:
    obj = autoscaler(EXT, "Scale")
    return {
        "now": "2027-01-15T10:00:00Z",
        "autoscaler": {**obj, "status": {}},
        "scale": {"spec": {"replicas": 5}, "status": {"replicas": 5, "selector": "app=web"}},
        "pods": [],
        "metrics": [{"items": [{"value": "50"}]}],
        "forecasts": forecasts,
    }


def test_decide_document_takes_the_controllers_forecasts() -> None:
    ready = {"verdict": "Ready", "value": "80", "horizon": "5m", "error": 0.1, "season": "24h"}
    result = decide_document(document([ready]))
    assert result["desiredReplicas"] == 8
    assert result["status"]["predictive"]["changedDecision"] is True
    short = {"verdict": "HistoryTooShort", "message": "1d of history"}
    result = decide_document(document([short]))
    assert result["desiredReplicas"] == 5
    by_type = {c["type"]: c for c in result["status"]["conditions"]}
    assert by_type["Predictive"]["reason"] == "HistoryTooShort"
    assert "1d of history" in by_type["Predictive"]["message"]


@pytest.mark.parametrize(
    ("forecasts", "path", "problem"),
    [
        pytest.param({}, "forecasts", "must be a list", id="not-a-list"),
        pytest.param([], "forecasts", "has 0 entries: give one per spec metric (1)", id="count"),
        pytest.param(["x"], "forecasts[0]", "must be an object or null", id="not-an-object"),
        pytest.param(
            [{"verdict": "Sure"}],
            "forecasts[0].verdict",
            "must be one of Ready, HistoryTooShort, ErrorTooLarge, NoHistory",
            id="verdict",
        ),
        pytest.param(
            [{"verdict": "Ready"}],
            "forecasts[0].value",
            "is required when the verdict is Ready",
            id="ready-without-value",
        ),
        pytest.param(
            [{"verdict": "NoHistory", "value": "80"}],
            "forecasts[0].value",
            "must be absent when the verdict is NoHistory",
            id="no-history-with-value",
        ),
        pytest.param(
            [{"verdict": "Ready", "value": "80", "error": -1}],
            "forecasts[0].error",
            "must be a number >= 0",
            id="negative-error",
        ),
    ],
)
def test_bad_forecasts_name_the_field(forecasts: Any, path: str, problem: str) -> None:
    with pytest.raises(DocumentError) as e:
        parse_document(document(forecasts))
    assert (e.value.path, e.value.problem) == (path, problem)


def test_forecast_only_never_wakes_a_sleeping_target() -> None:
    metric = {**EXT, "activation": {"threshold": "5"}}
    case = Case(
        metric, 0, "2000", fc(30), 0, ("", ""), mode="ForecastOnly", extra={"minReplicas": 0}
    )
    d = run(case)
    assert d.desired_replicas == 0
    assert d.controls is not None
    assert d.controls.predictive is not None
    assert d.controls.predictive.forecast_replicas == 3  # what Scale would have proposed
