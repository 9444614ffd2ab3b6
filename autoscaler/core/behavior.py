"""Scaling behavior: API defaults, policy rate limits and the scale-event memory (horizontal.go,
pkg/apis/autoscaling/v2/defaults.go)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from autoscaler.core.model import NS, ScaleEvent, ScalingPolicy, ScalingRules
from autoscaler.core.numeric import MAX_INT32, MIN_INT32, trunc_int32, wrap_int32

__all__ = [
    "DEFAULT_SCALE_DOWN",
    "DEFAULT_SCALE_UP",
    "changes_in_period",
    "scale_down_limit",
    "scale_up_limit",
    "store_scale_event",
]

# GenerateHPAScaleUpRules / GenerateHPAScaleDownRules
DEFAULT_SCALE_UP = ScalingRules(
    stabilization_window_seconds=0,
    select_policy="Max",
    policies=(ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)),
)
DEFAULT_SCALE_DOWN = ScalingRules(
    stabilization_window_seconds=None,  # the controller's downscale-stabilization flag at use time
    select_policy="Max",
    policies=(ScalingPolicy("Percent", 100, 15),),
)


def changes_in_period(period_seconds: int, events: Sequence[ScaleEvent], *, now: int) -> int:
    """getReplicasChangePerPeriod: events strictly After now - period count (outdated too).
    The sum is an int32, as upstream's."""
    cutoff = now - period_seconds * NS
    total = 0
    for e in events:
        if e.timestamp > cutoff:
            total = wrap_int32(total + e.change)
    return total


def scale_up_limit(
    current: int,
    up: Sequence[ScaleEvent],
    down: Sequence[ScaleEvent],
    rules: ScalingRules,
    *,
    now: int,
) -> int:
    """calculateScaleUpLimitWithScalingRules: the highest count the policies allow now."""
    if rules.select_policy == "Disabled":
        return current
    pick_min = rules.select_policy == "Min"
    result = MAX_INT32 if pick_min else MIN_INT32
    proposed = 0  # an unknown policy type keeps the previous policy's proposal
    for p in rules.policies:
        # int32 arithmetic as upstream's: a sum past MaxInt32 wraps around (Go never traps)
        start = wrap_int32(
            wrap_int32(current - changes_in_period(p.period_seconds, up, now=now))
            + changes_in_period(p.period_seconds, down, now=now)
        )
        if p.type == "Pods":
            proposed = wrap_int32(start + p.value)
        elif p.type == "Percent":
            # rounded up so that a small target can always grow; float64 as upstream (10*1.07 -> 11)
            proposed = trunc_int32(math.ceil(float(start) * (1 + float(p.value) / 100)))
        result = min(result, proposed) if pick_min else max(result, proposed)
    return result


def scale_down_limit(
    current: int,
    up: Sequence[ScaleEvent],
    down: Sequence[ScaleEvent],
    rules: ScalingRules,
    *,
    now: int,
) -> int:
    """calculateScaleDownLimitWithBehaviors: the lowest count the policies allow now."""
    if rules.select_policy == "Disabled":
        return current
    pick_min = rules.select_policy == "Min"  # the smallest change is the highest floor
    result = MIN_INT32 if pick_min else MAX_INT32
    proposed = 0
    for p in rules.policies:
        # int32 arithmetic as upstream's: a sum past MaxInt32 wraps around (Go never traps)
        start = wrap_int32(
            wrap_int32(current - changes_in_period(p.period_seconds, up, now=now))
            + changes_in_period(p.period_seconds, down, now=now)
        )
        if p.type == "Pods":
            proposed = wrap_int32(start - p.value)
        elif p.type == "Percent":
            proposed = trunc_int32(float(start) * (1 - float(p.value) / 100))  # truncates: 8.5 -> 8
        result = max(result, proposed) if pick_min else min(result, proposed)
    return result


def _longest_period(rules: ScalingRules) -> int:
    longest = 0
    for p in rules.policies:
        longest = max(longest, p.period_seconds)
    return longest


def store_scale_event(
    events: tuple[ScaleEvent, ...], change: int, rules: ScalingRules, *, now: int
) -> tuple[ScaleEvent, ...]:
    """storeScaleEvent for one direction: mark events Before now - longest period outdated,
    then replace the last outdated one with the new event, or append it."""
    cutoff = now - _longest_period(rules) * NS
    marked = [
        ScaleEvent(e.change, e.timestamp, True) if e.timestamp < cutoff else e for e in events
    ]
    new = ScaleEvent(change, now, False)
    for i in range(len(marked) - 1, -1, -1):
        if marked[i].outdated:
            marked[i] = new
            return tuple(marked)
    marked.append(new)
    return tuple(marked)
