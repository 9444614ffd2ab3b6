"""The label index: candidates plus the selector find exactly the objects a scan finds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.labelindex import LabelIndex
from common.selectors import Selector, parse_selector

KEYS, VALUES = ("app", "tier", "zone"), ("a", "b", "c")
SELECTORS = [
    "",
    "app=a",
    "app==b",
    "app=a,tier=b",
    "app in (a,b)",
    "app in (a,b),zone=c",
    "app!=a",
    "app=a,zone!=c",
    "tier notin (a)",
    "zone",
    "!zone",
    "app=a,!tier",
    "app=missing",
]


def pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name, "labels": labels}}


labels_st = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
events_st = st.lists(
    st.tuples(
        st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), st.sampled_from("pqrst"), labels_st
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(events=events_st)
def test_index_agrees_with_a_scan(events: list[tuple[str, str, dict[str, str]]]) -> None:
    objects: dict[str, dict[str, Any]] = {}  # what the informer holds, fed the same events
    index: LabelIndex[str] = LabelIndex()
    for kind, name, labels in events:
        obj = pod(name, labels)
        if kind == "DELETED":
            objects.pop(name, None)
            index.drop(name)
        else:
            objects[name] = obj
            index.put(name, labels)
    for text in SELECTORS:
        sel = parse_selector(text)
        scan = [o for o in objects.values() if sel.matches(o["metadata"]["labels"])]
        assert sorted(map(_name, select(index, objects, sel))) == sorted(map(_name, scan)), text


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param("app=web", ["web-1", "web-2"], id="equality"),
        pytest.param("app in (web,db)", ["db-1", "web-1", "web-2"], id="in"),
        pytest.param("app=web,tier=front", ["web-1"], id="two-requirements"),
        pytest.param("app!=web", ["bare", "db-1"], id="not-equal-scans"),
        pytest.param("", ["bare", "db-1", "web-1", "web-2"], id="empty-scans"),
    ],
)
def test_select(selector: str, want: list[str]) -> None:
    objects = {
        "web-1": pod("web-1", {"app": "web", "tier": "front"}),
        "web-2": pod("web-2", {"app": "web"}),
        "db-1": pod("db-1", {"app": "db"}),
        "bare": {"metadata": {"namespace": "ns", "name": "bare"}},  # no labels at all
    }
    index: LabelIndex[str] = LabelIndex()
    for name, obj in objects.items():
        index.put(name, obj["metadata"].get("labels") or {})
    assert sorted(map(_name, select(index, objects, parse_selector(selector)))) == want


def test_relabelled_object_leaves_its_old_bucket() -> None:
    index: LabelIndex[str] = LabelIndex()
    index.put("p", {"app": "old"})
    index.put("p", {"app": "new"})
    assert index.candidates(parse_selector("app=old")) == set()
    assert index.candidates(parse_selector("app=new")) == {"p"}
    index.drop("p")
    assert index.candidates(parse_selector("app=new")) == set()


def test_scan_when_nothing_narrows() -> None:
    index: LabelIndex[str] = LabelIndex()
    index.put("p", {"app": "a"})
    assert index.candidates(parse_selector("app!=b")) is None


def select(
    index: LabelIndex[str], objects: dict[str, dict[str, Any]], sel: Selector
) -> list[dict[str, Any]]:
    keys = index.candidates(sel)
    found = objects.values() if keys is None else [objects[k] for k in keys]
    return [o for o in found if sel.matches(o["metadata"].get("labels") or {})]


def _name(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])
