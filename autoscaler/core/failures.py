"""Failure counting per metric and per pass, with the fallback hysteresis.

A failed pass adds one to `consecutiveFailures` and zeroes `consecutiveSuccesses`; a good pass
does the opposite. With a fallback block a metric enters fallback once it has failed more than
`failureThreshold` passes in a row and leaves it once it has succeeded `recoveryThreshold`
passes in a row. The success count stops at the recovery threshold so a healthy metric's status
does not change on every pass (each change is a status write).
"""

from __future__ import annotations

from collections.abc import Sequence

from autoscaler.core.controls_model import Fallback, MetricHealth
from autoscaler.core.measure import Outcome
from autoscaler.core.model import MetricError, MetricInput, MetricSpec
from autoscaler.core.numeric import MAX_INT32
from autoscaler.core.proposal import MetricFailure

__all__ = ["count_failures"]


def count_failures(
    previous: Sequence[MetricHealth],
    specs: Sequence[MetricSpec],
    inputs: Sequence[MetricInput],
    outcomes: Sequence[Outcome] | None,
    *,
    fallback: Fallback | None,
    active: Sequence[bool | None],
) -> tuple[MetricHealth, ...]:
    """The new health of each spec metric. `outcomes` None: nothing was measured (the scale's
    selector is bad), so the counts stay as they were."""
    out = []
    for i, spec in enumerate(specs):
        old = _matching(previous, i, spec.name)
        if outcomes is None:
            out.append(old)
            continue
        outcome = outcomes[i]
        if isinstance(outcome, MetricFailure):
            out.append(_failed(old, outcome, inputs[i], fallback))
        else:
            out.append(_succeeded(old, fallback, active[i]))
    return tuple(out)


def _matching(previous: Sequence[MetricHealth], index: int, name: str) -> MetricHealth:
    """The previous entry for this metric; a fresh one when the spec changed under it."""
    for h in previous:
        if h.index == index and h.name == name:
            return h
    return MetricHealth(index, name)


def _failed(
    old: MetricHealth, failure: MetricFailure, data: MetricInput, fallback: Fallback | None
) -> MetricHealth:
    failures = min(old.consecutive_failures + 1, MAX_INT32)  # the status field is an int32
    in_fallback = fallback is not None and (old.fallback or failures > fallback.failure_threshold)
    reason = data.reason if isinstance(data, MetricError) and data.reason else failure.reason
    return MetricHealth(
        old.index,
        old.name,
        active=None,  # not measured on this pass
        consecutive_failures=failures,
        consecutive_successes=0,
        fallback=in_fallback,
        last_error=failure.error,
        last_reason=reason,
    )


def _succeeded(old: MetricHealth, fallback: Fallback | None, active: bool | None) -> MetricHealth:
    recovery = fallback.recovery_threshold if fallback is not None else 1
    successes = min(old.consecutive_successes + 1, recovery)
    in_fallback = fallback is not None and old.fallback and successes < recovery
    return MetricHealth(
        old.index,
        old.name,
        active=active,
        consecutive_failures=0,
        consecutive_successes=successes,
        fallback=in_fallback,
    )
