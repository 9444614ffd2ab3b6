"""Busy-aware scale-in: `behavior.scaleDown.podDeletionCost`, parsed and planned, purely.

Before a scale-down the controller reads a Pods metric for the target's pods and writes
`controller.kubernetes.io/pod-deletion-cost` on them, busiest highest, so that the ReplicaSet
controller (which deletes the lowest cost first) removes the idle pods. This module holds the
two pure halves: the spec block (validated like the rest of the document) and the plan (which
pods get which cost, and which of those writes are needed at all). The reads and the patches
are the controller's (`autoscaler/deletioncost.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from autoscaler.core.fields import DocumentError, as_obj, as_str
from common.selectors import SelectorError, selector_from_label_selector

__all__ = [
    "ANNOTATION",
    "PodDeletionCost",
    "costs_by_busyness",
    "parse_pod_deletion_cost",
    "plan_writes",
    "refuse_in_scale_up",
]

ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


@dataclass(frozen=True, slots=True)
class PodDeletionCost:
    """`behavior.scaleDown.podDeletionCost`: the Pods metric that says how busy each pod is."""

    metric: Mapping[str, Any]  # the MetricIdentifier as given: {name, selector?}

    @property
    def name(self) -> str:
        return str(self.metric["name"])

    def as_json(self) -> dict[str, Any]:
        """The block as the decision result carries it (`podDeletionCost`)."""
        return {"metric": dict(self.metric)}


def parse_pod_deletion_cost(behavior: Any, path: str) -> PodDeletionCost | None:
    """The podDeletionCost block of a spec's `behavior` (None when absent); raises
    DocumentError naming the field, as the CRD refuses the same documents."""
    if not isinstance(behavior, dict):
        return None
    refuse_in_scale_up(behavior.get("scaleUp"), f"{path}.scaleUp")
    rules = behavior.get("scaleDown")
    if not isinstance(rules, dict) or rules.get("podDeletionCost") is None:
        return None
    bpath = f"{path}.scaleDown.podDeletionCost"
    block = as_obj(rules, "podDeletionCost", f"{path}.scaleDown")
    metric = as_obj(block, "metric", bpath, required=True)
    mpath = f"{bpath}.metric"
    name = as_str(metric, "name", mpath, required=True)
    if not name:
        raise DocumentError(f"{mpath}.name", "must not be empty")
    selector = metric.get("selector")
    try:
        selector_from_label_selector(selector)
    except SelectorError as e:
        raise DocumentError(f"{mpath}.selector", str(e)) from e
    kept: dict[str, Any] = {"name": name}
    if selector is not None:
        kept["selector"] = selector
    return PodDeletionCost(metric=kept)


def refuse_in_scale_up(rules: Any, path: str) -> None:
    """Deletion cost steers which pods go on a scale-down; scaling up deletes none."""
    if isinstance(rules, dict) and rules.get("podDeletionCost") is not None:
        raise DocumentError(f"{path}.podDeletionCost", "is allowed only in behavior.scaleDown")


def costs_by_busyness(values: Mapping[str, int | None]) -> dict[str, int]:
    """Each pod's cost from its metric value (milli-units): the dense rank of its value, idle
    (and unmeasured) pods 0 and each busier value one higher. Ranks, not the values: a write
    is needed only when the order changes, not on every small change of load."""
    # a pod with no sample counts as idle: a Pods metric usually has no series for a pod
    # that has served nothing yet (the controller reports how many had none)
    measured = {pod: max(0, v or 0) for pod, v in values.items()}
    levels = sorted(set(measured.values()))
    rank = {level: i for i, level in enumerate(levels)}  # the least busy get 0, idle or not
    return {pod: rank[v] for pod, v in measured.items()}


def plan_writes(costs: Mapping[str, int], current: Mapping[str, str | None]) -> dict[str, str]:
    """The annotation values to write: only where the pod's present value differs (an int32
    string, as the API server validates it)."""
    return {pod: str(cost) for pod, cost in sorted(costs.items()) if current.get(pod) != str(cost)}
