"""spec.predictive in the Autoscaler CRD (docs/predictive.md "The API"): what the schema and
CEL accept and refuse, the defaults, and that the core's parser (what `decide` and `simulate`
use) refuses exactly what the CRD refuses."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core.controls_document import parse_controls
from autoscaler.core.fields import DocumentError
from tests.controller.crdcheck import validate
from tests.controller.test_crd import cpu, ext, obj


def pred(metrics: list[dict[str, Any]] | None = None, **predictive: Any) -> dict[str, Any]:
    return obj(metrics=metrics or [ext()], predictive=predictive)


ACCEPTED = [
    pytest.param(
        pred(mode="Scale", horizon="5m", history="336h", seasonality=["24h", "168h"]),
        id="the-issue-example-in-go-durations",
    ),
    pytest.param(pred(), id="all-defaults"),
    pytest.param(pred(horizon="90s", seasonality=["1h"], history="25h30m"), id="hourly-minimal"),
    pytest.param(pred(horizon="24h", seasonality=["168h"], history="840h"), id="the-maxima"),
    pytest.param(pred(tolerance=0), id="tolerance-zero-as-an-integer"),
    pytest.param(pred(tolerance="150m"), id="tolerance-as-a-milli-quantity"),
]

REJECTED = [
    pytest.param(pred(mode="Auto"), "mode", id="bad-mode"),
    pytest.param(pred(history="14d"), "Go duration", id="prometheus-day-unit"),
    pytest.param(pred(horizon="0s"), "greater than 0", id="zero-horizon"),
    pytest.param(pred(horizon="25h", seasonality=["168h"]), "at most 24h", id="horizon-over-day"),
    pytest.param(pred(history="900h"), "at most 840h", id="history-over-five-weeks"),
    pytest.param(pred(history="48h"), "longest season plus 24h30m", id="history-too-short"),
    pytest.param(pred(seasonality=[]), "seasonality", id="no-season"),
    pytest.param(pred(seasonality=["30m"]), "between 1h and 840h", id="season-under-an-hour"),
    pytest.param(pred(seasonality=["24h", "1440m"]), "distinct", id="duplicate-season"),
    pytest.param(
        pred(horizon="2h", seasonality=["1h"], history="48h"),
        "longer than the horizon",
        id="season-not-longer-than-horizon",
    ),
    pytest.param(pred(metrics=[cpu()]), "at least one metric of type Object", id="cpu-only"),
    pytest.param(pred(tolerance="-0.1"), "tolerance", id="negative-tolerance"),
    pytest.param(pred(tolerance="5%"), "tolerance", id="tolerance-not-a-quantity"),
]


@pytest.mark.parametrize("autoscaler", ACCEPTED)
def test_accepted_by_the_crd_and_the_core(autoscaler: dict[str, Any]) -> None:
    defaulted, errors = validate(autoscaler)
    assert errors == []
    assert parse_controls({}, defaulted).predictive is not None


@pytest.mark.parametrize(("autoscaler", "says"), REJECTED)
def test_refused_by_the_crd_and_the_core(autoscaler: dict[str, Any], says: str) -> None:
    _, errors = validate(autoscaler)
    assert any(says in e for e in errors), errors
    with pytest.raises(DocumentError) as e:
        parse_controls({}, autoscaler)
    assert e.value.path.startswith("autoscaler.spec.predictive")


def test_defaults() -> None:
    defaulted, errors = validate(pred())
    assert errors == []
    assert defaulted["spec"]["predictive"] == {
        "mode": "ForecastOnly",
        "horizon": "5m",
        "history": "336h",
        "seasonality": ["24h", "168h"],
        "tolerance": "0.05",
    }
