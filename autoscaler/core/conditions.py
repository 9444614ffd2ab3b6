"""Status conditions, with upstream's `setConditionInList` semantics and texts.

A condition of the same type is updated in place (so the order is first-set order after the
conditions the status already had); a new type is appended; `lastTransitionTime` moves to `now`
only when the status changes.
"""

from __future__ import annotations

from autoscaler.core.model import Condition

__all__ = ["ABLE_TO_SCALE", "SCALED_TO_ZERO", "SCALING_ACTIVE", "SCALING_LIMITED", "Conditions"]

ABLE_TO_SCALE = "AbleToScale"
SCALING_ACTIVE = "ScalingActive"
SCALING_LIMITED = "ScalingLimited"
SCALED_TO_ZERO = "ScaledToZero"

TRUE = "True"
FALSE = "False"

# upstream's messages, by reason
MESSAGES = {
    "SucceededGetScale": "the HPA controller was able to get the target's current scale",
    "ScalingDisabled": "scaling is disabled since the replica count of the target is zero",
    "ReadyForNewScale": "recommended size matches current size",
    "ScaleDownStabilized": (
        "recent recommendations were higher than current one, "
        "applying the highest recent recommendation"
    ),
    "ScaleUpStabilized": (
        "recent recommendations were lower than current one, "
        "applying the lowest recent recommendation"
    ),
    "DesiredWithinRange": "the desired count is within the acceptable range",
    "TooFewReplicas": "the desired replica count is less than the minimum replica count",
    "TooManyReplicas": "the desired replica count is more than the maximum replica count",
    "ScaleUpLimit": "the desired replica count is increasing faster than the maximum scale rate",
    "ScaleDownLimit": "the desired replica count is decreasing faster than the maximum scale rate",
    "ScaledToZero": "the HPA controller scaled the workload to zero",
    "NotScaledToZero": "the HPA controller did not scale the workload to zero",
    "InvalidSelectorMissing": "the HPA target's scale is missing a selector",
}


class Conditions:
    """A mutable working list of conditions for one step (never shared, never the input)."""

    __slots__ = ("_items", "_now")

    def __init__(self, initial: tuple[Condition, ...], *, now: int) -> None:
        self._items = list(initial)
        self._now = now

    def set(self, type_: str, status: str, reason: str, message: str | None = None) -> None:
        text = MESSAGES.get(reason, "") if message is None else message
        items = self._items
        for i, old in enumerate(items):
            if old.type == type_:
                if old.status == status:
                    if old.reason == reason and old.message == text:
                        return  # unchanged: keep the same value
                    items[i] = Condition(type_, status, reason, text, old.last_transition_time)
                else:
                    items[i] = Condition(type_, status, reason, text, self._now)
                return
        # a new condition starts with an empty status, so it always transitions
        items.append(Condition(type_, status, reason, text, self._now))

    def keep_since(self, type_: str, previous: Condition | None) -> None:
        """Give `type_` the transition time of `previous` (the persisted condition) when both
        have the same status: for a condition this step overrides after the upstream decision
        may have flipped it, the transition is measured against what was stored."""
        if previous is None:
            return
        for i, cur in enumerate(self._items):
            if cur.type == type_ and cur.status == previous.status:
                self._items[i] = Condition(
                    cur.type, cur.status, cur.reason, cur.message, previous.last_transition_time
                )
                return

    def remove(self, type_: str) -> None:
        self._items = [c for c in self._items if c.type != type_]

    def first(self, type_: str) -> Condition | None:
        for c in self._items:
            if c.type == type_:
                return c
        return None

    def snapshot(self) -> tuple[Condition, ...]:
        return tuple(self._items)
