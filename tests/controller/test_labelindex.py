"""The pods' label index finds exactly the pods a scan of the watch cache finds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.kube.labelindex import LabelIndex
from common.selectors import parse_selector

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
    index = LabelIndex()
    for kind, name, labels in events:
        obj = pod(name, labels)
        if kind == "DELETED":
            objects.pop(f"ns/{name}", None)
        else:
            objects[f"ns/{name}"] = obj
        index.update(kind, obj)
    for text in SELECTORS:
        sel = parse_selector(text)
        scan = [o for o in objects.values() if sel.matches(o["metadata"]["labels"])]
        assert sorted(map(_name, index.select(objects, sel))) == sorted(map(_name, scan)), text


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
        "ns/web-1": pod("web-1", {"app": "web", "tier": "front"}),
        "ns/web-2": pod("web-2", {"app": "web"}),
        "ns/db-1": pod("db-1", {"app": "db"}),
        "ns/bare": {"metadata": {"namespace": "ns", "name": "bare"}},  # no labels at all
    }
    index = LabelIndex()
    for obj in objects.values():
        index.update("ADDED", obj)
    assert sorted(map(_name, index.select(objects, parse_selector(selector)))) == want


def test_relabelled_pod_leaves_its_old_bucket() -> None:
    index = LabelIndex()
    index.update("ADDED", pod("p", {"app": "old"}))
    moved = pod("p", {"app": "new"})
    index.update("MODIFIED", moved)
    objects = {"ns/p": moved}
    assert index.select(objects, parse_selector("app=old")) == []
    assert index.select(objects, parse_selector("app=new")) == [moved]


def _name(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])
