"""Normalization of the metrics' proposal: stabilization and rate limits, without behavior
(`normalizeDesiredReplicas`) and with it (`normalizeDesiredReplicasWithBehaviors`).

The controls' `Shape` (None: upstream, bit for bit) bounds the stabilized recommendation, before
the rate limits and min/max; the history records the recommendation as the metrics computed it,
so a hold of 1 during a cooldown never enters the scale-down window (controls.md, "Cooldown")."""

from __future__ import annotations

from dataclasses import dataclass

from autoscaler.core.behavior import scale_down_limit, scale_up_limit
from autoscaler.core.model import NS, Behavior, ControllerOptions, History, Recommendation, Shape
from autoscaler.core.numeric import trunc_int32

__all__ = [
    "Normalized",
    "normalize_with_behavior",
    "normalize_without_behavior",
    "scale_down_window",
]


@dataclass(frozen=True, slots=True)
class Normalized:
    replicas: int
    stabilized: int  # after the controls' hold, if any (ScalingLimited compares with it)
    able_reason: str  # ReadyForNewScale, ScaleDownStabilized or ScaleUpStabilized
    limited_reason: str  # DesiredWithinRange or the limiting reason
    recommendations: tuple[Recommendation, ...]
    lines: tuple[str, ...]


def _record(
    recs: tuple[Recommendation, ...], index: int, desired: int, now: int
) -> tuple[Recommendation, ...]:
    new = Recommendation(desired, now)
    if index < 0:
        return (*recs, new)
    return (*recs[:index], new, *recs[index + 1 :])


def scale_down_window(behavior: Behavior | None, options: ControllerOptions) -> int:
    """The scale-down stabilization window in seconds: behavior's, else the controller flag
    (maybeInitScaleDownStabilizationWindow; also the window without behavior)."""
    if behavior is None or behavior.scale_down.stabilization_window_seconds is None:
        return options.downscale_stabilization_seconds
    return behavior.scale_down.stabilization_window_seconds


def _held(shape: Shape | None, stabilized: int, lines: list[str]) -> int:
    """The controls' floor and ceiling on the stabilized recommendation (not recorded)."""
    if shape is None:
        return stabilized
    held = max(stabilized, shape.floor)
    if shape.ceiling is not None:
        held = min(held, shape.ceiling)
    lines.extend(shape.lines)
    if held != stabilized:
        lines.append(f"the controls make the recommendation {held} instead of {stabilized}")
    return held


def normalize_without_behavior(
    history: History,
    *,
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    now: int,
    options: ControllerOptions,
    shape: Shape | None = None,
) -> Normalized:
    recs = history.recommendations or ()
    window = options.downscale_stabilization_seconds
    cutoff = now - window * NS
    stabilized = desired
    old = -1
    for i, rec in enumerate(recs):
        if rec.timestamp < cutoff:
            old = i  # the last entry older than the window is reused
        elif rec.replicas > stabilized:
            stabilized = rec.replicas  # an entry exactly at the cutoff still counts
    lines = []
    if stabilized != desired:
        able = "ScaleDownStabilized"
        lines.append(
            f"downscale stabilization ({window}s window) keeps {stabilized}, "
            f"the highest recommendation since then, instead of {desired}"
        )
    else:
        able = "ReadyForNewScale"
    stabilized = _held(shape, stabilized, lines)
    # calculateScaleUpLimit: int32(math.Max(...)); out of int32 (or Inf) is MinInt32 on amd64
    limit = trunc_int32(
        max(options.scale_up_limit_factor * float(current), options.scale_up_limit_minimum)
    )
    if max_replicas > limit:
        max_allowed, max_reason = limit, "ScaleUpLimit"
    else:
        max_allowed, max_reason = max_replicas, "TooManyReplicas"
    if stabilized < min_replicas:
        replicas, limited = min_replicas, "TooFewReplicas"
        lines.append(f"raised to minReplicas {min_replicas}")
    elif stabilized > max_allowed:
        replicas, limited = max_allowed, max_reason
        if max_reason == "ScaleUpLimit":
            lines.append(
                f"scale-up limit: at most max({options.scale_up_limit_factor:g} x {current}, "
                f"{options.scale_up_limit_minimum:g}) = {limit} replicas in one step"
            )
        else:
            lines.append(f"capped at maxReplicas {max_replicas}")
    else:
        replicas, limited = stabilized, "DesiredWithinRange"
    return Normalized(
        replicas, stabilized, able, limited, _record(recs, old, desired, now), tuple(lines)
    )


def normalize_with_behavior(
    history: History,
    behavior: Behavior,
    *,
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    now: int,
    options: ControllerOptions,
    shape: Shape | None = None,
) -> Normalized:
    up_rules = behavior.scale_up
    up_window = up_rules.stabilization_window_seconds or 0
    down_window = scale_down_window(behavior, options)
    recs = history.recommendations or ()
    up_cutoff = now - up_window * NS
    down_cutoff = now - down_window * NS
    up_rec = down_rec = desired
    old = -1
    for i, rec in enumerate(recs):
        ts = rec.timestamp
        if ts > up_cutoff:  # strict After: an entry exactly at a cutoff is neither counted
            up_rec = min(up_rec, rec.replicas)
        if ts > down_cutoff:
            down_rec = max(down_rec, rec.replicas)
        if ts < up_cutoff and ts < down_cutoff:  # ... nor reused
            old = i
    stabilized = max(current, up_rec)
    stabilized = min(stabilized, down_rec)
    lines: list[str] = []
    if stabilized != desired:
        if desired >= current:
            able = "ScaleUpStabilized"
            lines.append(
                f"scale-up stabilization ({up_window}s window) keeps {stabilized}, "
                f"the lowest recommendation since then, instead of {desired}"
            )
        else:
            able = "ScaleDownStabilized"
            lines.append(
                f"scale-down stabilization ({down_window}s window) keeps {stabilized}, "
                f"the highest recommendation since then, instead of {desired}"
            )
    else:
        able = "ReadyForNewScale"
    stabilized = _held(shape, stabilized, lines)
    replicas, limited, line = _rate_limit(
        history, behavior, current, stabilized, min_replicas, max_replicas, now
    )
    if line:
        lines.append(line)
    return Normalized(
        replicas, stabilized, able, limited, _record(recs, old, desired, now), tuple(lines)
    )


def _rate_limit(
    history: History,
    behavior: Behavior,
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    now: int,
) -> tuple[int, str, str]:
    """convertDesiredReplicasWithBehaviorRate: directional bounds only."""
    up, down = history.scale_up_events, history.scale_down_events
    if desired > current:
        rules = behavior.scale_up
        limit = scale_up_limit(current, up, down, rules, now=now)
        limit = max(limit, current)  # never below current until old events age out
        if max_replicas > limit:
            allowed, reason = limit, "ScaleUpLimit"
        else:
            allowed, reason = max_replicas, "TooManyReplicas"
        if desired > allowed:
            if reason == "ScaleUpLimit":
                return (
                    allowed,
                    reason,
                    (
                        f"scale-up policies (selectPolicy {rules.select_policy}) "
                        f"allow at most {allowed} now"
                    ),
                )
            return allowed, reason, f"capped at maxReplicas {max_replicas}"
    elif desired < current:
        rules = behavior.scale_down
        limit = scale_down_limit(current, up, down, rules, now=now)
        limit = min(limit, current)
        if min_replicas < limit:
            allowed, reason = limit, "ScaleDownLimit"
        else:
            allowed, reason = min_replicas, "TooFewReplicas"
        if desired < allowed:
            if reason == "ScaleDownLimit":
                return (
                    allowed,
                    reason,
                    (
                        f"scale-down policies (selectPolicy {rules.select_policy}) "
                        f"allow no fewer than {allowed} now"
                    ),
                )
            return allowed, reason, f"raised to minReplicas {min_replicas}"
    return desired, "DesiredWithinRange", ""
