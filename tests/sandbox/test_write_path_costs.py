"""The cheaper write path keeps its behaviour: body copies are independent, binding unchanged."""

import datetime

import pytest

from sandbox import nodes
from sandbox.bodies import copy_json

WHEN = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"a": [1, 2.5, True, None, "x"], "b": {"c": {}}}, id="json"),
        pytest.param([{"k": [[1], [2]]}], id="nested-lists"),
        pytest.param({"at": WHEN, "tags": {"a", "b"}}, id="yaml-timestamp-and-set"),
        pytest.param("text", id="scalar"),
    ],
)
def test_a_copy_equals_its_original_and_shares_nothing_mutable(value):
    copied = copy_json(value)
    assert copied == value
    if isinstance(value, dict | list):
        assert copied is not value
        inner = value["b"] if isinstance(value, dict) and "b" in value else None
        if inner is not None:
            copied["b"]["c"]["new"] = 1
            assert inner == {"c": {}}


def test_a_set_from_yaml_is_copied_not_shared():
    value = {"tags": {"a"}}
    copy_json(value)["tags"].add("b")
    assert value == {"tags": {"a"}}


def _node(name, *, ready=True, unschedulable=False):
    status = "True" if ready else "False"
    return {
        "metadata": {"name": name},
        "spec": {"unschedulable": unschedulable} if unschedulable else {},
        "status": {"conditions": [{"type": "Ready", "status": status}]},
    }


def _pods_on(*names):
    return [{"spec": {"nodeName": n}} for n in names]


def _never():
    raise AssertionError("pods were listed although there was no choice to make")


@pytest.mark.parametrize(
    ("node_list", "pods", "want"),
    [
        pytest.param([_node("a")], _never, "a", id="one-node-lists-no-pods"),
        pytest.param([_node("a"), _node("b", ready=False)], _never, "a", id="one-ready"),
        pytest.param([_node("a", unschedulable=True)], _never, None, id="none-usable"),
        pytest.param(
            [_node("a"), _node("b")], lambda: _pods_on("a", "a", "b"), "b", id="fewest-pods"
        ),
        pytest.param([_node("b"), _node("a")], lambda: _pods_on(), "a", id="tie-first-name"),
    ],
)
def test_choose_node(node_list, pods, want):
    chosen = nodes.choose_node(node_list, pods)
    assert (chosen["metadata"]["name"] if chosen else None) == want
