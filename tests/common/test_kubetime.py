from datetime import UTC, datetime

import pytest

from common.kubetime import (
    TimeError,
    format_micro_time,
    format_time,
    format_time_ns,
    parse_time,
    parse_time_ns,
)


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        pytest.param("1970-01-01T00:00:00Z", 0, id="epoch"),
        pytest.param("1970-01-01T00:00:01.5Z", 1_500_000_000, id="fraction"),
        pytest.param("1970-01-01T00:00:00.000000001Z", 1, id="nanosecond"),
        pytest.param("1970-01-01T01:00:00+01:00", 0, id="offset"),
        pytest.param("0001-01-01T00:00:00Z", -62135596800 * 10**9, id="go-zero-time"),
    ],
)
def test_parse_time_ns(text, ns):
    assert parse_time_ns(text) == ns


def test_round_trips():
    for text in ["2026-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "2026-01-01T00:00:00.25Z"]:
        assert format_time_ns(parse_time_ns(text)) == text
    moment = parse_time("2026-03-04T05:06:07.123456789Z")
    assert moment == datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)
    assert format_time(moment) == "2026-03-04T05:06:07Z"
    assert format_micro_time(moment) == "2026-03-04T05:06:07.123456Z"
    assert format_time(parse_time("0001-01-01T00:00:00Z")) == "0001-01-01T00:00:00Z"


@pytest.mark.parametrize("text", ["", "2026-01-01", "2026-13-01T00:00:00Z", "yesterday", "5"])
def test_rejects_non_rfc3339(text):
    with pytest.raises(TimeError):
        parse_time_ns(text)
