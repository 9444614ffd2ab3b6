"""The core checks each target's selector on every pass; the memo must hold one per target of a
large cluster, or past its size every pass parses again."""

import pytest

from autoscaler.core import measure


def test_ten_thousand_targets_selectors_are_parsed_once_each(monkeypatch):
    texts = [f"app=web-{i},tier in (a,b)" for i in range(10_000)]
    assert [measure.selector_problem(t) for t in texts] == [None] * len(texts)

    def no_more_parsing(text):
        raise AssertionError(f"parsed again: {text}")

    monkeypatch.setattr(measure, "parse_selector", no_more_parsing)
    assert [measure.selector_problem(t) for t in texts] == [None] * len(texts)


def test_a_bad_selector_is_remembered_with_its_problem():
    problem = measure.selector_problem("app in (web")
    assert problem
    assert measure.selector_problem("app in (web") == problem


@pytest.fixture(autouse=True)
def _empty_memo(monkeypatch):
    monkeypatch.setattr(measure, "_SELECTORS", {})
