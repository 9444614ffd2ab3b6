"""The way to zero: activation's wake/sleep rule and the cooldowns, as a Shape on the upstream
recommendation (docs/decision-document.md, "The controls", rules 3 and 4).

- At 0 with activation blocks the target is asleep: it wakes (recommendation at least 1) iff a
  metric is active or a fallback proposal is above 0, else the recommendation is 0.
- At 2 or more the recommendation is at least 1: N -> 1 follows `behavior.scaleDown`.
- At exactly 1 it is 0 when nothing is active and both cooldowns and the scale-down window
  have passed, else at least 1.

The Shape bounds the *stabilized* recommendation and is never recorded in the history, so the
scale-down window and the cooldown run side by side: the window counts from the last pass that
recommended more than 0, not from the end of the cooldown. Without activation blocks that is the
window of the history itself (a recommendation above 0 is what "active" means there). With them,
a metric below its threshold may still recommend 1 or more, so the last step waits out the
window counted from `lastActiveTime` (from creation if nothing was ever active) and then goes to
0 whatever the idle metrics recommend.

`lastActiveTime` is the last pass on which something was active. While activity lasts it is
refreshed only every ACTIVE_REFRESH, so a busy Autoscaler's status does not change on every
pass; the first inactive pass sets it exactly, to the previous pass (the newest instant in the
history), which was the last active one.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoscaler.core.controls_model import Controls
from autoscaler.core.model import NS, History, Shape

__all__ = ["ACTIVE_REFRESH", "DownWindow", "last_active_time", "zero_shape"]

ACTIVE_REFRESH = 60 * NS  # at most one status change a minute for the refresh of an active pass


@dataclass(frozen=True, slots=True)
class DownWindow:
    """The scale-down stabilization window the last step waits out (normalize.scale_down_window).

    seconds: its length; counts_cutoff: whether a recommendation exactly at the cutoff still
    counts (upstream: yes without behavior, no with it).
    """

    seconds: int
    counts_cutoff: bool

    def holds(self, since: int, *, now: int) -> bool:
        """Whether a recommendation made at `since` is still inside the window at `now`."""
        cutoff = now - self.seconds * NS
        return since >= cutoff if self.counts_cutoff else since > cutoff


def zero_shape(
    controls: Controls,
    *,
    current: int,
    active: bool,
    waking_fallback: bool,
    last_active: int | None,
    now: int,
    window: DownWindow,
) -> Shape | None:
    """The controls' hold on the recommendation; None when neither activation blocks nor
    `scaleToZero` are present (upstream's zero rule stands)."""
    has_activation = controls.has_activation
    if not has_activation and controls.scale_to_zero is None:
        return None
    if current == 0:
        if not has_activation:
            return Shape()
        if active or waking_fallback:
            return Shape(asleep_at_zero=True, floor=1, lines=("asleep at 0: a metric is active",))
        return Shape(asleep_at_zero=True, ceiling=0, lines=("asleep at 0: no metric is active",))
    if current >= 2:
        return Shape(floor=1, lines=("to zero only from 1: at least 1 replica",))
    waiting = _waiting(controls, active=active, last_active=last_active, now=now)
    if waiting:
        return Shape(floor=1, lines=(waiting,))
    if not has_activation:  # the history's own window holds 1 until it has passed
        return Shape(lines=("nothing active and the cooldowns have passed",))
    since = last_active if last_active is not None else controls.created
    if since is not None and window.holds(since, now=now):
        line = f"scale-down window: {window.seconds}s since the last active pass have not passed"
        return Shape(floor=1, lines=(line,))
    return Shape(ceiling=0, lines=("nothing active and the cooldowns have passed: to zero",))


def _waiting(controls: Controls, *, active: bool, last_active: int | None, now: int) -> str:
    """Why 1 may not go to 0 now ("" when it may)."""
    if active:
        return "a metric is active: at least 1 replica"
    stz = controls.scale_to_zero
    if stz is None:
        return ""
    if last_active is not None and now < last_active + stz.cooldown_seconds * NS:
        return f"cooldown: {stz.cooldown_seconds}s since the last active pass have not passed"
    created = controls.created
    if created is not None and now < created + stz.initial_cooldown_seconds * NS:
        return f"initial cooldown: {stz.initial_cooldown_seconds}s since creation have not passed"
    return ""


def last_active_time(
    previous: int | None,
    *,
    was_active: bool | None,
    active: bool,
    history: History | None,
    now: int,
) -> int | None:
    """The new `lastActiveTime` (see the module docstring)."""
    if active:
        if previous is None or not was_active or now - previous >= ACTIVE_REFRESH:
            return now
        return previous
    if was_active:
        last_pass = _last_pass(history)
        if last_pass is not None and (previous is None or last_pass > previous):
            return last_pass
        return previous if previous is not None else now
    return previous


def _last_pass(history: History | None) -> int | None:
    """The previous pass's instant: every pass records a recommendation at its `now`."""
    if history is None or not history.recommendations:
        return None
    return max(r.timestamp for r in history.recommendations)
