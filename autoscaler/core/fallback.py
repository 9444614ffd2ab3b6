"""Fallback: what a metric in fallback proposes, put in place of its failed outcome so it joins
the other metrics' proposals in the max (then stabilization, policies and min/max apply as to
any recommendation)."""

from __future__ import annotations

from collections.abc import Sequence

from autoscaler.core.controls_model import (
    CURRENT,
    CURRENT_IF_HIGHER,
    CURRENT_IF_LOWER,
    ControlEvent,
    Fallback,
    MetricHealth,
)
from autoscaler.core.measure import Outcome
from autoscaler.core.model import MetricSpec
from autoscaler.core.proposal import Proposal, label

__all__ = ["fallback_events", "fallback_replicas", "with_fallback"]


def fallback_replicas(fallback: Fallback, current: int) -> int:
    """The proposal of a metric in fallback, by `behavior`."""
    if fallback.behavior == CURRENT:
        return current
    if fallback.behavior == CURRENT_IF_HIGHER:
        return max(current, fallback.replicas)
    if fallback.behavior == CURRENT_IF_LOWER:
        return min(current, fallback.replicas)
    return fallback.replicas  # Static


def with_fallback(
    outcomes: Sequence[Outcome],
    health: Sequence[MetricHealth],
    specs: Sequence[MetricSpec],
    fallback: Fallback | None,
    *,
    current: int,
) -> tuple[Outcome, ...]:
    """The outcomes with each metric in fallback replaced by its fallback proposal."""
    if fallback is None or not any(h.fallback for h in health):
        return tuple(outcomes)
    replicas = fallback_replicas(fallback, current)
    out: list[Outcome] = []
    for outcome, h, spec in zip(outcomes, health, specs, strict=True):
        if not h.fallback:
            out.append(outcome)
            continue
        detail = (
            f"is in fallback ({h.consecutive_failures} failed, {h.consecutive_successes} good "
            f"passes in a row): proposes {replicas} replicas ({fallback.behavior})"
        )
        # upstream leaves a failed metric's status slot empty; a fallback metric is one
        out.append(Proposal(replicas, {"type": ""}, f"{label(spec)} (fallback)", detail))
    return tuple(out)


def fallback_events(
    was: bool | None, now_in: bool, health: Sequence[MetricHealth], fallback: Fallback, current: int
) -> tuple[ControlEvent, ...]:
    """FallbackActivated / FallbackDeactivated when the Autoscaler's fallback state flips."""
    if now_in and not was:
        names = ", ".join(f"metrics[{h.index}] {h.name}" for h in health if h.fallback)
        errors = "; ".join(h.last_error for h in health if h.fallback and h.last_error)
        message = (
            f"{names} failed more than {fallback.failure_threshold} passes in a row: "
            f"proposing {fallback_replicas(fallback, current)} replicas ({fallback.behavior})"
            + (f"; last error: {errors}" if errors else "")
        )
        return (ControlEvent("Warning", "FallbackActivated", message),)
    if was and not now_in:
        message = f"metrics recovered ({fallback.recovery_threshold} good passes in a row)"
        return (ControlEvent("Normal", "FallbackDeactivated", message),)
    return ()
