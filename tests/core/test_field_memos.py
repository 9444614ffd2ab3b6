"""The core's memos of quantities, time instants and durations: bounded, and holding what is in
use now once full (metric values and instants keep coming; most are seen once)."""

import pytest

from autoscaler.core import fields

NS = 1_000_000_000


@pytest.fixture(autouse=True)
def _small_memos(monkeypatch):
    monkeypatch.setattr(fields, "_CACHE_LIMIT", 100)
    for name in ("_MILLI_CACHE", "_TIME_CACHE", "_FORMATTED", "_DURATIONS"):
        memo = getattr(fields, name)
        monkeypatch.setattr(fields, name, {})
        memo.clear()


def instants(n, start=0):
    return [
        f"2026-12-01T{(start + i) // 3600:02d}:{(start + i) // 60 % 60:02d}:{(start + i) % 60:02d}Z"
        for i in range(n)
    ]


def test_a_full_memo_keeps_the_instants_now_in_use():
    for text in instants(250):  # a long run: every second a new instant
        fields.time_ns(text, "now")
    assert len(fields._TIME_CACHE) <= 100
    recent = instants(10, start=240)
    assert all(t in fields._TIME_CACHE for t in recent), "the latest instants are remembered"


def test_values_are_right_before_and_after_the_memo_starts_afresh():
    texts = [f"{i}m" for i in range(1, 301)]
    first = [fields.milli(t, "v") for t in texts]
    again = [fields.milli(t, "v") for t in texts]
    assert first == again == list(range(1, 301))
    assert len(fields._MILLI_CACHE) <= 100
    stamps = [fields.history_time(i * NS + 5) for i in range(300)]
    assert stamps[1] == "1970-01-01T00:00:01.000000005Z"
    assert len(fields._FORMATTED) <= 100
    durations = [fields.duration_ns(f"{i}s", "d") for i in range(300)]
    assert durations == [i * NS for i in range(300)]
    assert len(fields._DURATIONS) <= 100
