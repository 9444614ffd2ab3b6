"""The chart grants `patch` on pods only when podDeletionCost is enabled (busy-aware scale-in)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.charts.helm import Helm, RenderError

AUTOSCALER = "promscaler-autoscaler"


def pod_verbs(rules: list[dict[str, Any]]) -> set[str]:
    return {
        verb
        for r in rules
        if "" in r["apiGroups"] and "pods" in r["resources"]
        for verb in r["verbs"]
    }


@pytest.mark.parametrize(
    ("values", "patch"),
    [
        pytest.param(None, False, id="default-off"),
        pytest.param({"autoscaler": {"podDeletionCost": {"enabled": False}}}, False, id="off"),
        pytest.param({"autoscaler": {"podDeletionCost": {"enabled": True}}}, True, id="on"),
    ],
)
def test_patch_on_pods_only_when_enabled(helm: Helm, values: Any, patch: bool) -> None:
    rendered = helm.template(values) if values else helm.template()
    rules = rendered.get("ClusterRole", AUTOSCALER)["rules"]
    verbs = pod_verbs(rules)
    assert {"get", "list", "watch"} <= verbs
    assert ("patch" in verbs) is patch
    assert not {"update", "delete", "create"} & verbs  # never more than the annotation needs


def test_the_schema_refuses_a_misspelt_switch(helm: Helm) -> None:
    with pytest.raises(RenderError, match="podDeletionCost"):
        helm.template({"autoscaler": {"podDeletionCost": {"enable": True}}})
