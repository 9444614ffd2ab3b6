"""behavior.scaleDown.podDeletionCost in the decision core: strict parsing that names the field,
the busyness ranking, the writes planned, and the result saying "rank the pods" only on a
pass that scales down (absent: the result is upstream's, key for key)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from autoscaler.core import DocumentError, decide_document
from autoscaler.core.deletioncost import costs_by_busyness, plan_writes
from tests.core import builders as b

COST = {"metric": {"name": "inflight", "selector": {"matchLabels": {"queue": "jobs"}}}}


def doc_with(scale_down: dict[str, Any] | None, *, values: list[int], current: int) -> Any:
    """A Pods metric at 1000m per pod target; `values` (milli) per pod; `current` replicas."""
    doc = b.document(
        metrics_spec=[b.pods_metric(1000)],
        metrics=[b.pods_items(values)],
        current=current,
        pod_list=b.pods(len(values)),
    )
    spec = doc["autoscaler"]["spec"]
    behavior: dict[str, Any] = {"scaleDown": {"stabilizationWindowSeconds": 0}}
    if scale_down is not None:
        behavior["scaleDown"].update(scale_down)
    spec["behavior"] = behavior
    return doc


@pytest.mark.parametrize(
    ("block", "path", "problem"),
    [
        pytest.param({}, "podDeletionCost.metric", "is required", id="no-metric"),
        pytest.param({"metric": {}}, "podDeletionCost.metric.name", "is required", id="no-name"),
        pytest.param(
            {"metric": {"name": ""}}, "podDeletionCost.metric.name", "must not be empty", id="empty"
        ),
        pytest.param(
            {"metric": {"name": 7}}, "podDeletionCost.metric.name", "must be a string", id="int"
        ),
        pytest.param("inflight", "podDeletionCost", "must be an object", id="a-string"),
        pytest.param(
            {"metric": {"name": "x", "selector": {"matchExpressions": [{"key": "a"}]}}},
            "podDeletionCost.metric.selector",
            "operator: must be one of",
            id="bad-selector",
        ),
        pytest.param(
            {"metric": {"name": "x", "selector": {"matchLabel": {"a": "b"}}}},
            "podDeletionCost.metric.selector",
            "unknown field 'matchLabel'",
            id="misspelt-selector",
        ),
    ],
)
def test_a_bad_block_is_an_error_naming_the_field(block: Any, path: str, problem: str) -> None:
    doc = doc_with({"podDeletionCost": block}, values=[100, 100], current=2)
    with pytest.raises(DocumentError) as e:
        decide_document(doc)
    assert e.value.path == f"autoscaler.spec.behavior.scaleDown.{path}"
    assert problem in e.value.problem


def test_scale_up_refuses_the_block() -> None:
    doc = doc_with(None, values=[100, 100], current=2)
    doc["autoscaler"]["spec"]["behavior"]["scaleUp"] = {"podDeletionCost": COST}
    with pytest.raises(DocumentError, match=r"scaleUp.podDeletionCost: is allowed only in"):
        decide_document(doc)


@dataclass(frozen=True)
class Pass:
    values: list[int]  # milli per pod, target 1000m
    current: int
    down: bool  # whether the result asks for the ranking


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(Pass([100] * 5, 5, True), id="scale-down-5-to-1"),
        pytest.param(Pass([3000, 3000], 2, False), id="scale-up"),
        pytest.param(Pass([1000, 1000], 2, False), id="steady"),
    ],
)
def test_the_result_names_the_metric_only_on_a_scale_down(case: Pass) -> None:
    result = decide_document(
        doc_with({"podDeletionCost": COST}, values=case.values, current=case.current)
    )
    scaled_down = result["rescale"] and result["desiredReplicas"] < case.current
    assert scaled_down is case.down
    if case.down:
        assert result["podDeletionCost"] == COST
    else:
        assert "podDeletionCost" not in result


@pytest.mark.parametrize(
    "values",
    [pytest.param([100] * 5, id="down"), pytest.param([3000] * 2, id="up")],
)
def test_with_the_block_the_decision_is_otherwise_identical(values: list[int]) -> None:
    plain = doc_with(None, values=values, current=len(values))
    with_cost = copy.deepcopy(plain)
    with_cost["autoscaler"]["spec"]["behavior"]["scaleDown"]["podDeletionCost"] = COST
    got = decide_document(with_cost)
    got.pop("podDeletionCost", None)
    assert got == decide_document(plain)


@pytest.mark.parametrize(
    ("values", "want"),
    [
        pytest.param({"a": 0, "b": 5000, "c": 0}, {"a": 0, "b": 1, "c": 0}, id="idle-and-busy"),
        pytest.param(
            {"a": 3, "b": 1, "c": 2, "d": 2}, {"a": 2, "b": 0, "c": 1, "d": 1}, id="dense-ranks"
        ),
        pytest.param({"a": None, "b": 7}, {"a": 0, "b": 1}, id="no-sample-counts-as-idle"),
        pytest.param({"a": -5, "b": 0}, {"a": 0, "b": 0}, id="negative-is-idle"),
        pytest.param({"a": 9, "b": 9}, {"a": 0, "b": 0}, id="all-alike"),
        pytest.param({}, {}, id="no-pods"),
    ],
)
def test_costs_rank_busyness(values: dict[str, int | None], want: dict[str, int]) -> None:
    assert costs_by_busyness(values) == want


@pytest.mark.parametrize(
    ("current", "want"),
    [
        pytest.param({}, {"a": "0", "b": "1"}, id="none-yet"),
        pytest.param({"a": "0", "b": "1"}, {}, id="unchanged-no-write"),
        pytest.param({"a": "1", "b": "0"}, {"a": "0", "b": "1"}, id="swapped"),
        pytest.param({"a": "0", "b": "01"}, {"b": "1"}, id="same-number-other-text"),
        pytest.param({"a": "0", "b": None}, {"b": "1"}, id="one-missing"),
    ],
)
def test_only_changed_costs_are_written(
    current: dict[str, str | None], want: dict[str, str]
) -> None:
    assert plan_writes({"a": 0, "b": 1}, current) == want
