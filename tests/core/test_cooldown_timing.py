"""The exact second a target with `minReplicas: 0` reaches 0 (controls.md "Cooldown"): the floor
of 1 the cooldown imposes is applied after stabilization and never recorded, so the scale-down
window and the cooldown run side by side. With nothing active the target reaches 0 on the first
pass at or after the later of `lastActiveTime + cooldownSeconds` and the end of the window that
began with the last active pass; from N the step N -> 1 comes first, by `behavior.scaleDown`,
and 1 -> 0 on the next pass. (Before, the two added up: about 600 s at the defaults.)

Passes every 15 s from t=0; "active" is a queue of 6 over an AverageValue target of 10 (one
replica's worth) or 35 (four replicas'); idle is 0, or 3 under an activation threshold of 5 (a
value that still recommends 1 replica, so only `lastActiveTime` can say when the window began).
Without `behavior` upstream counts a recommendation exactly at the window's cutoff (so the
window of 300 s ends at the pass after 300 s); with it, it does not (the pass at 300 s).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.core.controls_loop import NS, T0, Loop, external

PERIOD = 15
PASSES = 60  # 900 s: twice what the slowest case needs, so "never" would show
BEHAVIOR_300 = {"scaleDown": {"stabilizationWindowSeconds": 300}}  # default window, strict cutoff
BEHAVIOR_0 = {"scaleDown": {"stabilizationWindowSeconds": 0}}


@dataclass(frozen=True)
class Case:
    replicas: int  # at t=0
    active: tuple[int, ...] = (0,)  # the seconds of the passes on which the queue is active
    busy: str = "6"  # the active value (6: one replica over a target of 10; 35: four)
    idle: str = "0"  # the value on every other pass
    activation: str | None = None  # the metric's activation threshold (None: no block)
    behavior: dict[str, Any] | None = None
    scale_to_zero: dict[str, Any] = field(default_factory=dict)  # defaults: 300 s, 0 s
    created: int = 0  # creationTimestamp, seconds from t=0
    zero_at: int = -1  # the second the target reaches 0


CASES = [
    # --- at 1, the default window (300 s) and the default cooldown (300 s) run side by side
    pytest.param(Case(1, zero_at=315), id="at-1:defaults:zero-at-315(window-counts-its-cutoff)"),
    pytest.param(Case(1, behavior=BEHAVIOR_300, zero_at=300), id="at-1:behavior-300s:zero-at-300"),
    pytest.param(
        Case(1, idle="3", activation="5", zero_at=315),
        id="at-1:activation,idle-value-recommends-1:zero-at-315",
    ),
    pytest.param(
        Case(1, idle="3", activation="5", behavior=BEHAVIOR_300, zero_at=300),
        id="at-1:activation,behavior-300s:zero-at-300",
    ),
    # --- at N: N -> 1 when the window ends, 1 -> 0 on the next pass (cooldown long passed)
    pytest.param(Case(4, busy="35", zero_at=330), id="at-4:defaults:1-at-315,zero-at-330"),
    pytest.param(
        Case(4, busy="35", behavior=BEHAVIOR_300, zero_at=315),
        id="at-4:behavior-300s:1-at-300,zero-at-315",
    ),
    pytest.param(
        Case(4, busy="35", idle="3", activation="5", zero_at=330),
        id="at-4:activation:1-at-315,zero-at-330",
    ),
    # --- the later of the two wins
    pytest.param(
        Case(1, scale_to_zero={"cooldownSeconds": 600}, zero_at=600),
        id="at-1:cooldown-600s-outlasts-the-window:zero-at-600",
    ),
    pytest.param(
        Case(1, scale_to_zero={"cooldownSeconds": 60}, zero_at=315),
        id="at-1:cooldown-60s-inside-the-window:zero-at-315",
    ),
    # --- cooldown 0: as soon as nothing is active (and the window allows)
    pytest.param(
        Case(1, scale_to_zero={"cooldownSeconds": 0}, zero_at=315),
        id="cooldown-0:default-window:zero-at-315",
    ),
    pytest.param(
        Case(1, scale_to_zero={"cooldownSeconds": 0}, behavior=BEHAVIOR_0, zero_at=15),
        id="cooldown-0:window-0:zero-on-the-first-idle-pass-15",
    ),
    pytest.param(
        Case(
            1,
            scale_to_zero={"cooldownSeconds": 0},
            idle="3",
            activation="5",
            behavior=BEHAVIOR_0,
            zero_at=15,
        ),
        id="cooldown-0:activation,window-0:zero-at-15",
    ),
    # --- initialCooldownSeconds: nothing ever active, created at t=0
    pytest.param(
        Case(1, active=(), scale_to_zero={"initialCooldownSeconds": 600}, zero_at=600),
        id="never-active:initial-cooldown-600s:zero-at-600",
    ),
    pytest.param(
        Case(1, active=(), scale_to_zero={"initialCooldownSeconds": 60}, zero_at=315),
        id="never-active:initial-cooldown-60s:window-from-the-first-pass:zero-at-315",
    ),
    pytest.param(
        Case(
            1,
            active=(),
            idle="3",
            activation="5",
            scale_to_zero={"initialCooldownSeconds": 60},
            created=-100,
            zero_at=210,
        ),
        id="never-active:activation,created-at--100:window-from-creation:zero-at-210",
    ),
    # --- active again during the cooldown: both clocks restart from the new last active pass
    pytest.param(
        Case(1, active=(0, 150), zero_at=465), id="active-again-at-150:defaults:zero-at-465"
    ),
    pytest.param(
        Case(1, active=(0, 150), behavior=BEHAVIOR_300, zero_at=450),
        id="active-again-at-150:behavior-300s:zero-at-450",
    ),
    pytest.param(
        Case(1, active=(0, 150), idle="3", activation="5", zero_at=465),
        id="active-again-at-150:activation:zero-at-465",
    ),
]


def _loop(case: Case) -> Loop:
    spec: dict[str, Any] = {
        "minReplicas": 0,
        "maxReplicas": 20,
        "metrics": [external(case.activation)],
        "scaleToZero": case.scale_to_zero,
    }
    if case.behavior is not None:
        spec["behavior"] = case.behavior
    return Loop(spec, replicas=case.replicas, created=T0 + case.created * NS)


def _run(case: Case) -> list[tuple[int, int]]:
    """(second, replicas after the pass) for every pass."""
    loop = _loop(case)
    out = []
    for i in range(PASSES):
        t = i * PERIOD
        loop.step(case.busy if t in case.active else case.idle)
        out.append((t, loop.replicas))
    return out


@pytest.mark.parametrize("case", CASES)
def test_the_second_the_target_reaches_zero(case: Case) -> None:
    timeline = _run(case)
    first_zero = next((t for t, r in timeline if r == 0), None)
    assert first_zero == case.zero_at
    # once at 0 with nothing active it stays there, and it only ever stepped down through 1
    assert all(r == 0 for t, r in timeline if t >= case.zero_at)
    before = [r for t, r in timeline if t < case.zero_at]
    assert before[-1] == 1


@pytest.mark.parametrize(
    ("case", "one_at"),
    [
        pytest.param(Case(4, busy="35"), 315, id="defaults:N->1-when-the-window-ends"),
        pytest.param(Case(4, busy="35", behavior=BEHAVIOR_300), 300, id="behavior-300s"),
    ],
)
def test_n_to_one_is_the_window_not_the_cooldown(case: Case, one_at: int) -> None:
    timeline = dict(_run(case))
    assert timeline[one_at - PERIOD] == 4
    assert timeline[one_at] == 1


def test_n_to_one_follows_the_scale_down_policies_then_zero() -> None:
    # docs/autoscaler.md's example: one pod a minute from 5, window 0, cooldown 300 s
    behavior = {
        "scaleDown": {
            "stabilizationWindowSeconds": 0,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
        }
    }
    timeline = _run(Case(5, busy="45", behavior=behavior))
    previous = [5] + [r for _, r in timeline[:-1]]
    changes = [(t, r) for (t, r), before in zip(timeline, previous, strict=True) if r != before]
    assert changes == [(15, 4), (75, 3), (135, 2), (195, 1), (300, 0)]


def test_the_cooldown_floor_is_not_recorded_in_the_history() -> None:
    loop = _loop(Case(1))
    loop.step("6")
    loop.step("0")  # held at 1 by the cooldown (and the window)
    assert loop.replicas == 1
    assert [r["replicas"] for r in loop.history["recommendations"]] == [1, 1, 0]
    assert (
        "cooldown: 300s since the last active pass have not passed"
        in loop.results[-1]["explanation"]
    )
