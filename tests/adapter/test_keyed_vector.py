"""`keyed_vector`, the custom metrics' one-loop reading of Prometheus' answer, gives the points
the former two-step reading gave (Samples through `query`, then the provider's loop), and
turns any malformed answer into PrometheusQueryError, never another exception."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.errors import PrometheusQueryError
from adapter.prometheus import _parse_vector, keyed_vector
from adapter.provider.prometheus_provider import _quantity, _quantity_text, _time


def _former(data: Any, label: str) -> tuple[dict[str, Any], int]:
    """What the provider built before: Samples from `_parse_vector`, then name -> (time,
    Quantity) for the finite ones, the others counted."""
    points: dict[str, Any] = {}
    dropped = 0
    for labels, timestamp, value in _parse_vector(data):
        if value.is_finite():
            points[labels.get(label, "")] = (_time(timestamp), _quantity(value))
        else:
            dropped += 1
    return points, dropped


TEXTS = st.sampled_from(
    ["0", "1", "1.5", "-3", "0.0001", "1e3", "2.5E-2", "-0", "NaN", "+Inf", "-Inf", "12345.6789"]
) | st.decimals(allow_nan=False, allow_infinity=False, places=4).map(str)
TIMES = st.floats(0, 4_000_000_000, allow_nan=False) | st.integers(0, 4_000_000_000)
NAMES = st.sampled_from(["web-0", "web-1", "web-2", ""])
ITEMS = st.fixed_dictionaries(
    {
        "metric": st.one_of(
            st.fixed_dictionaries({"pod": NAMES}, optional={"__name__": st.just("g")}),
            st.fixed_dictionaries({"other": NAMES}),
            st.just({}),
        ),
        "value": st.tuples(TIMES, TEXTS).map(list),
    }
)
VECTORS = st.lists(ITEMS, max_size=8).map(lambda r: {"resultType": "vector", "result": r})
SCALARS = st.tuples(TIMES, TEXTS).map(lambda v: {"resultType": "scalar", "result": list(v)})


@settings(max_examples=300)
@given(VECTORS | SCALARS, st.sampled_from(["pod", "other", "absent"]))
def test_the_points_are_those_of_the_former_reading(data, label) -> None:
    keyed = keyed_vector(data, label, _time, _quantity_text)
    assert (keyed.points, keyed.dropped) == _former(data, label)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
SHAPED = st.fixed_dictionaries(
    {"resultType": st.sampled_from(["vector", "scalar", "matrix"]), "result": JSON}
) | st.fixed_dictionaries(
    {
        "resultType": st.just("vector"),
        "result": st.lists(
            st.fixed_dictionaries({"metric": JSON, "value": JSON})
            | st.fixed_dictionaries({"value": st.lists(JSON, max_size=3)})
        ),
    }
)


@settings(max_examples=400)
@given(JSON | SHAPED)
def test_a_malformed_answer_is_a_query_error_and_nothing_else(data) -> None:
    try:
        keyed = keyed_vector(data, "pod", _time, _quantity_text)
    except PrometheusQueryError:
        return
    for point in keyed.points.values():  # what was kept is well formed
        assert point is not None
        assert isinstance(point[1], str)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"resultType": "vector", "result": [{"value": [1, 5]}]}, id="number-value"),
        pytest.param({"resultType": "vector", "result": [{"value": [1, "x"]}]}, id="not-a-number"),
        pytest.param({"resultType": "vector", "result": [{"value": ["t", "1"]}]}, id="bad-time"),
        pytest.param({"resultType": "vector", "result": [{"value": [None, "1"]}]}, id="null-time"),
        pytest.param(
            {"resultType": "vector", "result": [{"metric": ["pod"], "value": [1, "1"]}]},
            id="labels-not-a-map",
        ),
        pytest.param({"resultType": "string", "result": [1, "a"]}, id="string-result"),
        pytest.param([], id="not-an-object"),
    ],
)
def test_malformed_answers_are_query_errors(data) -> None:
    with pytest.raises(PrometheusQueryError):
        keyed_vector(data, "pod", _time, _quantity_text)
