"""Activation: whether each Object or External metric is active on this pass.

Only when some metric has an `activation` block. A metric is active when its value is strictly
greater than its threshold, both in thousandths; an Object or External metric without a block
has the threshold 0 (KEDA's default activation threshold), so any work it reports keeps the
target up or wakes it. Resource and Pods metrics are never active (they have no value at 0).
The value is what the target compares before dividing by replicas: an External metric's items
summed (as upstream's external metrics client sums them), an Object metric's first item.
"""

from __future__ import annotations

from collections.abc import Sequence

from autoscaler.core.measure import Outcome
from autoscaler.core.model import EXTERNAL, OBJECT, MetricInput, MetricItems, MetricSpec
from autoscaler.core.proposal import Proposal

__all__ = ["active_flags", "metric_value"]


def active_flags(
    specs: Sequence[MetricSpec],
    inputs: Sequence[MetricInput],
    outcomes: Sequence[Outcome],
    thresholds: Sequence[int | None],
) -> tuple[bool | None, ...]:
    """Per metric: True/False when it is an Object/External metric and was measured, None
    otherwise (and for every metric when no metric has an activation block)."""
    if not thresholds:
        return (None,) * len(specs)
    out: list[bool | None] = []
    for spec, data, outcome, threshold in zip(specs, inputs, outcomes, thresholds, strict=True):
        if spec.type not in (OBJECT, EXTERNAL) or not isinstance(outcome, Proposal):
            out.append(None)
            continue
        value = metric_value(spec, data)
        out.append(None if value is None else value > (threshold or 0))
    return tuple(out)


def metric_value(spec: MetricSpec, data: MetricInput) -> int | None:
    """The value an Object or External target compares (thousandths), None if there is none."""
    if not isinstance(data, MetricItems) or not data.items:
        return None
    if spec.type == EXTERNAL:
        return sum(item.value for item in data.items)
    return data.items[0].value
