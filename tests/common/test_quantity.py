from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.quantity import (
    QuantityError,
    format_milli,
    format_quantity,
    milli_value,
    parse_quantity,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("500m", Decimal("0.5"), id="milli"),
        pytest.param("1.5", Decimal("1.5"), id="fraction"),
        pytest.param("128Mi", Decimal(128 * 2**20), id="binary-mebi"),
        pytest.param("1Ki", Decimal(1024), id="binary-kibi"),
        pytest.param("1e3", Decimal(1000), id="exponent"),
        pytest.param("1E-3", Decimal("0.001"), id="negative-exponent"),
        pytest.param("2k", Decimal(2000), id="kilo"),
        pytest.param(".5", Decimal("0.5"), id="leading-dot"),
        pytest.param("5.", Decimal(5), id="trailing-dot"),
        pytest.param("-1.5", Decimal("-1.5"), id="negative"),
        pytest.param("+3", Decimal(3), id="explicit-plus"),
        pytest.param("100n", Decimal("0.0000001"), id="nano"),
        pytest.param("7u", Decimal("0.000007"), id="micro"),
        pytest.param("1E", Decimal(10**18), id="exa-suffix-not-exponent"),
    ],
)
def test_parse_accepts_every_suffix(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "text", ["", "abc", "1K", "1.2.3", "1 m", "m", "1mi", "--1", "1e", "NaN", "Inf", "1ki"]
)
def test_parse_rejects_what_the_api_rejects(text):
    with pytest.raises(QuantityError, match="invalid quantity"):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        pytest.param("1", 1000, id="whole"),
        pytest.param("1.0001", 1001, id="rounds-up-like-MilliValue"),
        pytest.param("100n", 1, id="tiny-rounds-up-to-one-milli"),
        pytest.param("0", 0, id="zero"),
        pytest.param("301m", 301, id="exact-milli"),
        pytest.param("-1.5m", -2, id="negative-rounds-away-from-zero"),
        pytest.param("-1.0001", -1001, id="negative-fraction-away-from-zero"),
    ],
)
def test_milli_value_rounds_away_from_zero_like_MilliValue(text, milli):
    assert milli_value(text) == milli


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(0.5, "500m", id="half"),
        pytest.param(1.5, "1500m", id="one-and-a-half"),
        pytest.param(42, "42", id="integer"),
        pytest.param(1000, "1k", id="thousand-is-kilo"),
        pytest.param(1500, "1500", id="no-fraction-in-kilo"),
        pytest.param(0, "0", id="zero"),
        pytest.param(0.0004, "0", id="below-half-milli-rounds-to-zero"),
        pytest.param(0.0005, "1m", id="half-milli-rounds-up"),
        pytest.param(2.0006, "2001m", id="rounds-not-truncates"),
        pytest.param(-0.25, "-250m", id="negative"),
        pytest.param(3_000_000, "3M", id="mega"),
        pytest.param(1e20, "100E", id="exa"),
    ],
)
def test_format_is_canonical_decimal_si(value, text):
    assert format_quantity(value) == text


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_format_refuses_non_finite(value):
    with pytest.raises(QuantityError):
        format_quantity(value)


@given(st.integers(min_value=-(2**62), max_value=2**62))
def test_milli_round_trip(milli):
    assert milli_value(format_milli(milli)) == milli


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False))
def test_formatted_value_is_within_half_a_milli(value):
    text = format_quantity(value)
    assert abs(parse_quantity(text) - Decimal(repr(value))) <= Decimal("0.0005")
