"""behavior.scaleDown.podDeletionCost in the Autoscaler CRD: accepted and refused (structural
schema + CEL through cel-python) as the decision core's parser accepts and refuses it."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core import DocumentError, parse_spec
from tests.controller.crdcheck import validate
from tests.controller.test_crd import ext, obj


def with_cost(block: Any, direction: str = "scaleDown") -> dict[str, Any]:
    return obj(metrics=[ext()], behavior={direction: {"podDeletionCost": block}})


ACCEPTED = [
    pytest.param({"metric": {"name": "inflight"}}, id="name-only"),
    pytest.param(
        {"metric": {"name": "inflight", "selector": {"matchLabels": {"queue": "jobs"}}}},
        id="with-selector",
    ),
    pytest.param(
        {
            "metric": {
                "name": "inflight",
                "selector": {"matchExpressions": [{"key": "q", "operator": "Exists"}]},
            }
        },
        id="with-expression",
    ),
]

REJECTED = [
    pytest.param(with_cost({}), "metric", id="no-metric"),
    pytest.param(with_cost({"metric": {}}), "name", id="no-name"),
    pytest.param(with_cost({"metric": {"name": ""}}), "name", id="empty-name"),
    pytest.param(
        with_cost({"metric": {"name": "x", "selector": {"matchExpressions": [{"key": "a"}]}}}),
        "operator",
        id="expression-without-operator",
    ),
    pytest.param(with_cost({"metric": {"name": "x"}}, "scaleUp"), "podDeletionCost", id="up"),
]


@pytest.mark.parametrize("block", ACCEPTED)
def test_the_crd_and_the_core_accept(block: dict[str, Any]) -> None:
    autoscaler = with_cost(block)
    defaulted, errors = validate(autoscaler)
    assert errors == []
    spec = parse_spec(defaulted["spec"], "autoscaler.spec")
    assert spec.pod_deletion_cost is not None
    assert spec.pod_deletion_cost.as_json() == block


@pytest.mark.parametrize(("autoscaler", "says"), REJECTED)
def test_the_crd_and_the_core_refuse(autoscaler: dict[str, Any], says: str) -> None:
    _, errors = validate(autoscaler)
    assert any(says in e for e in errors), errors
    with pytest.raises(DocumentError) as e:
        parse_spec(autoscaler["spec"], "autoscaler.spec")
    assert "podDeletionCost" in e.value.path
