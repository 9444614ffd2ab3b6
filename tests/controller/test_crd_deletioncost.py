"""behavior.scaleDown.podDeletionCost in the Autoscaler CRD: accepted and refused (structural
schema + CEL through cel-python) as the decision core's parser accepts and refuses it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from autoscaler.core import DocumentError, parse_spec
from tests.controller.crdcheck import CRD_PATH, validate
from tests.controller.test_crd import ext, obj
from tests.controller.test_crd_kubectl import kubectl, named


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


@pytest.mark.kubectl
async def test_kubectl_refusals_name_the_field() -> None:
    """Through the real kubectl against the sandbox's CRD handling: each refusal names the
    field under spec.behavior.scaleDown.podDeletionCost (or the unknown field under scaleUp)."""
    from sandbox.server import Sandbox, SandboxConfig

    async with Sandbox(SandboxConfig(simulate_kubelet=False)) as sb:
        kc = sb.kubeconfig
        out = await asyncio.to_thread(kubectl, kc, "apply", "--validate=false", "-f", str(CRD_PATH))
        assert out.returncode == 0, out.stderr
        good = named([pytest.param(with_cost(p.values[0]), id=p.id) for p in ACCEPTED], "ok")
        bad = named(REJECTED, "no")
        for id_, obj in good.items():
            out = await asyncio.to_thread(kubectl, kc, "create", "-f", "-", stdin=json.dumps(obj))
            assert out.returncode == 0, (id_, out.stderr)
        where = {
            "no-metric": "spec.behavior.scaleDown.podDeletionCost.metric: Required value",
            "no-name": "spec.behavior.scaleDown.podDeletionCost.metric.name: Required value",
            "empty-name": "spec.behavior.scaleDown.podDeletionCost.metric.name: Invalid value",
            "expression-without-operator": (
                "spec.behavior.scaleDown.podDeletionCost.metric.selector.matchExpressions[0]"
                ".operator: Required value"
            ),
            "up": 'unknown field "spec.behavior.scaleUp.podDeletionCost"',
        }
        for id_, obj in bad.items():
            out = await asyncio.to_thread(kubectl, kc, "create", "-f", "-", stdin=json.dumps(obj))
            assert out.returncode != 0, id_
            assert where[id_] in out.stderr, (id_, out.stderr)
