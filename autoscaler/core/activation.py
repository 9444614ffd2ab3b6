"""Activation: whether each metric with an `activation` block is active on this pass.

A metric is active when its value is strictly greater than its threshold, both in thousandths.
The value is what the target compares before dividing by replicas: an External metric's items
summed (as upstream's external metrics client sums them), an Object metric's first item.
"""

from __future__ import annotations

from collections.abc import Sequence

from autoscaler.core.measure import Outcome
from autoscaler.core.model import EXTERNAL, MetricInput, MetricItems, MetricSpec
from autoscaler.core.proposal import Proposal

__all__ = ["active_flags", "metric_value"]


def active_flags(
    specs: Sequence[MetricSpec],
    inputs: Sequence[MetricInput],
    outcomes: Sequence[Outcome],
    thresholds: Sequence[int | None],
) -> tuple[bool | None, ...]:
    """Per metric: True/False when it has a block and was measured, None otherwise."""
    if not thresholds:
        return (None,) * len(specs)
    out: list[bool | None] = []
    for spec, data, outcome, threshold in zip(specs, inputs, outcomes, thresholds, strict=True):
        value = metric_value(spec, data) if isinstance(outcome, Proposal) else None
        out.append(None if threshold is None or value is None else value > threshold)
    return tuple(out)


def metric_value(spec: MetricSpec, data: MetricInput) -> int | None:
    """The value an Object or External target compares (thousandths), None if there is none."""
    if not isinstance(data, MetricItems) or not data.items:
        return None
    if spec.type == EXTERNAL:
        return sum(item.value for item in data.items)
    return data.items[0].value
