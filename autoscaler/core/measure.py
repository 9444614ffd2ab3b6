"""Measuring the metrics: each spec metric's proposal or failure, before any decision.

`decide` measures the metrics itself; the controls measure them first (to count failures and
see which metrics are active) and hand the outcomes, with fallback proposals in place of the
metrics in fallback, to `decide` so nothing is computed twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from autoscaler.core.calculators import Context, MetricFailure, Proposal, propose
from autoscaler.core.model import ControllerOptions, MetricInput, Pod, Scale, Spec
from autoscaler.core.tolerances import Tolerances, tolerances_for
from common.selectors import SelectorError, parse_selector

__all__ = ["Outcome", "measure", "selector_problem"]

Outcome = Proposal | MetricFailure


def measure(
    spec: Spec,
    scale: Scale,
    pods: Sequence[Pod],
    metrics: Sequence[MetricInput],
    *,
    now: int,
    options: ControllerOptions,
    tolerances: Tolerances | None = None,
) -> tuple[Outcome, ...]:
    """One outcome per spec metric, in order (the scale's selector is not checked here);
    `tolerances` replaces the spec's and the controller's (a forecast's proposal has its own)."""
    ctx = Context(
        pods,
        now,
        options,
        tolerances_for(spec, options) if tolerances is None else tolerances,
        scale.spec_replicas,
        scale.status_replicas,
    )
    out: list[Outcome] = []
    for metric_spec, data in zip(spec.metrics, metrics, strict=True):
        try:
            out.append(propose(ctx, metric_spec, data))
        except MetricFailure as failure:
            out.append(failure)
    return tuple(out)


_SELECTORS: dict[str, str | None] = {}
# one selector per target: room for every target of a large cluster, or the memo fills up and
# the rest are parsed again on every pass (at 10,000 Autoscalers, 3% of the controller's CPU)
_SELECTORS_LIMIT = 65_536


def selector_problem(text: str) -> str | None:
    """Why a scale's selector does not parse, or None; memoized (targets keep their selector)."""
    if text in _SELECTORS:
        return _SELECTORS[text]
    try:
        parse_selector(text)
        problem = None
    except SelectorError as e:
        problem = str(e)
    if len(_SELECTORS) < _SELECTORS_LIMIT:
        _SELECTORS[text] = problem
    return problem
