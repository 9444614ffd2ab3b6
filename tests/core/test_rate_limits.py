"""Behavior rate limits: upstream's TestScalingWithRules table (horizontal_test.go), ported.

Events are spread as upstream's generateEventsUniformDistribution does (n events over the last
`period` seconds, each in the middle of its segment, whole seconds), and are a millisecond older
than that, as they are by the time upstream's test reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from autoscaler.core.behavior import DEFAULT_SCALE_DOWN, DEFAULT_SCALE_UP
from autoscaler.core.model import (
    NS,
    Behavior,
    ControllerOptions,
    History,
    ScaleEvent,
    ScalingPolicy,
    ScalingRules,
)
from autoscaler.core.normalize import normalize_with_behavior
from tests.core.builders import NOW_NS


def rules(
    pods: int, pods_period: int, percent: int, percent_period: int, window: int
) -> ScalingRules:
    policies = []
    if pods:
        policies.append(ScalingPolicy("Pods", pods, pods_period))
    if percent:
        policies.append(ScalingPolicy("Percent", percent, percent_period))
    return ScalingRules(window, "Max", tuple(policies))


def spread(changes: list[int], period: int) -> tuple[ScaleEvent, ...]:
    segment = period / len(changes)
    out = []
    for i, change in enumerate(changes):
        ago = int(period - segment * (i + 1) + segment / 2)  # Go's time.Duration(float) truncates
        out.append(ScaleEvent(change, NOW_NS - ago * NS - NS // 1000))
    return tuple(out)


@dataclass(frozen=True)
class Case:
    current: int
    desired: int
    min_r: int
    max_r: int
    want: int
    reason: str
    up: ScalingRules | None = None
    down: ScalingRules | None = None
    up_events: tuple[ScaleEvent, ...] = ()
    down_events: tuple[ScaleEvent, ...] = ()


E159 = [1, 5, 9]
E4 = [8, 12, 9, 11]

CASES = [
    pytest.param(Case(5, 7, 3, 8, 7, "DesiredWithinRange"), id="within-range"),
    pytest.param(Case(3, 1, 2, 8, 2, "TooFewReplicas"), id="below-min"),
    pytest.param(Case(1, 0, 0, 10, 0, "DesiredWithinRange"), id="to-zero-with-min-0"),
    pytest.param(Case(20, 1000, 1, 10, 10, "TooManyReplicas"), id="max-below-scale-up-limit"),
    pytest.param(Case(100, 1000, 100, 150, 150, "TooManyReplicas"), id="more-than-max"),
    pytest.param(
        Case(3, 1000, 1, 2000, 4, "ScaleUpLimit", up=rules(0, 0, 1, 60, 0)), id="user-percent-1"
    ),
    pytest.param(
        Case(1000, 3, 3, 2000, 980, "ScaleDownLimit", down=rules(20, 60, 0, 0, 0)),
        id="user-pods-down-20",
    ),
    pytest.param(Case(10, 50, 1, 1000, 20, "ScaleUpLimit"), id="default-up"),
    pytest.param(
        Case(10, 500, 1, 1000, 110, "ScaleUpLimit", up=rules(100, 60, 100, 60, 0)),
        id="pods-beat-percent",
    ),
    pytest.param(
        Case(10, 500, 1, 1000, 20, "ScaleUpLimit", up=rules(2, 60, 100, 60, 0)),
        id="percent-beats-pods",
    ),
    pytest.param(
        Case(10, 50, 1, 1000, 50, "DesiredWithinRange", up=rules(100, 60, 0, 0, 0)),
        id="large-pods-policy",
    ),
    pytest.param(
        Case(10, 50, 1, 1000, 50, "DesiredWithinRange", up=rules(10000, 60, 0, 0, 0)),
        id="huge-pods-policy",
    ),
    pytest.param(
        Case(10, 50, 1, 1000, 40, "ScaleUpLimit", up=rules(30, 60, 0, 0, 0)), id="pods-limit"
    ),
    pytest.param(
        Case(10, 50, 1, 1000, 30, "ScaleUpLimit", up=rules(0, 0, 200, 60, 0)), id="percent-limit"
    ),
    pytest.param(
        Case(100, 2, 1, 1000, 80, "ScaleDownLimit", down=rules(20, 60, 1, 60, 300)),
        id="down-pods-beat-percent",
    ),
    pytest.param(
        Case(100, 2, 1, 1000, 98, "ScaleDownLimit", down=rules(2, 60, 1, 60, 300)),
        id="down-percent-beats-pods",
    ),
    pytest.param(
        Case(10, 0, 1, 1000, 1, "TooFewReplicas", down=rules(100, 60, 0, 0, 300)),
        id="down-large-pods-to-min",
    ),
    pytest.param(
        Case(10, 2, 5, 1000, 5, "TooFewReplicas", down=rules(0, 0, 100, 60, 300)),
        id="down-large-percent-to-min",
    ),
    pytest.param(
        Case(10, 2, 1, 1000, 5, "ScaleDownLimit", down=rules(5, 60, 0, 0, 300)),
        id="down-pods-limit",
    ),
    pytest.param(
        Case(10, 5, 1, 1000, 5, "DesiredWithinRange", down=rules(0, 0, 50, 60, 300)),
        id="down-percent-exact",
    ),
    pytest.param(
        Case(
            100,
            500,
            1,
            200,
            200,
            "TooManyReplicas",
            up=rules(300, 60, 0, 0, 0),
            up_events=spread(E159, 120),
        ),
        id="events-large-pods-capped-by-max",
    ),
    pytest.param(
        Case(
            100,
            500,
            1,
            200,
            200,
            "TooManyReplicas",
            up=rules(0, 0, 10000, 60, 0),
            up_events=spread(E159, 120),
        ),
        id="events-large-percent-capped-by-max",
    ),
    pytest.param(
        Case(
            100,
            500,
            1,
            1000,
            100,
            "ScaleUpLimit",
            up=rules(5, 120, 0, 0, 0),
            up_events=spread(E159, 120),
        ),
        id="events-limit-never-below-current",
    ),
    pytest.param(
        Case(
            100,
            500,
            1,
            1000,
            235,
            "ScaleUpLimit",
            up=rules(150, 120, 0, 0, 0),
            up_events=spread(E159, 120),
        ),
        id="events-pods",
    ),
    pytest.param(
        Case(
            100,
            500,
            1,
            1000,
            255,
            "ScaleUpLimit",
            up=rules(0, 0, 200, 120, 0),
            up_events=spread(E159, 120),
        ),
        id="events-percent",
    ),
    pytest.param(
        Case(
            6,
            24,
            1,
            1000,
            16,
            "ScaleUpLimit",
            up=rules(0, 0, 300, 300, 0),
            up_events=spread([4], 120),
            down_events=spread([2], 120),
        ),
        id="events-up-and-down-net-for-scale-up",
    ),
    pytest.param(
        Case(10, 5, 1, 1000, 5, "DesiredWithinRange", down_events=spread(E159, 120)),
        id="down-default-events",
    ),
    pytest.param(
        Case(
            100,
            0,
            1,
            1000,
            1,
            "TooFewReplicas",
            down=rules(115, 120, 0, 0, 300),
            down_events=spread(E159, 120),
        ),
        id="down-events-large-pods-to-min",
    ),
    pytest.param(
        Case(
            100,
            0,
            5,
            1000,
            5,
            "TooFewReplicas",
            down=rules(130, 120, 0, 0, 300),
            down_events=spread(E159, 120),
        ),
        id="down-events-larger-pods-to-min",
    ),
    pytest.param(
        Case(
            100,
            2,
            5,
            1000,
            5,
            "TooFewReplicas",
            down=rules(0, 0, 100, 120, 300),
            down_events=spread(E159, 120),
        ),
        id="down-events-percent-100-to-min",
    ),
    pytest.param(
        Case(
            100,
            2,
            1,
            1000,
            100,
            "ScaleDownLimit",
            down=rules(5, 120, 0, 0, 300),
            down_events=spread(E159, 120),
        ),
        id="down-events-pods-limit-never-above-current",
    ),
    pytest.param(
        Case(
            100,
            0,
            1,
            1000,
            56,
            "ScaleDownLimit",
            down=rules(0, 0, 50, 120, 300),
            down_events=spread([2, 4, 6], 120),
        ),
        id="down-events-percent",
    ),
    pytest.param(
        Case(
            10,
            1,
            1,
            1000,
            6,
            "ScaleDownLimit",
            down=rules(0, 0, 50, 180, 0),
            up_events=spread([2], 120),
            down_events=spread([4], 120),
        ),
        id="down-events-up-and-down-net",
    ),
    pytest.param(
        Case(
            100,
            0,
            1,
            1000,
            100,
            "ScaleDownLimit",
            down=rules(0, 0, 10, 120, 300),
            down_events=spread([10, 10, 10], 120),
        ),
        id="down-events-prevent-further-scale-down",
    ),
    pytest.param(
        Case(
            10,
            5,
            1,
            1000,
            5,
            "DesiredWithinRange",
            down=rules(0, 0, 1000, 120, 300),
            down_events=spread([10, 10, 10], 120),
        ),
        id="down-events-below-zero-allows-desired",
    ),
    pytest.param(
        Case(
            100,
            200,
            1,
            1000,
            200,
            "DesiredWithinRange",
            up=rules(1000, 60, 0, 0, 0),
            up_events=spread(E4, 120),
        ),
        id="outdated-one-policy-up",
    ),
    pytest.param(
        Case(
            100,
            200,
            1,
            1000,
            200,
            "DesiredWithinRange",
            up=rules(1000, 120, 100, 60, 0),
            up_events=spread(E4, 120),
        ),
        id="two-policies-up",
    ),
    pytest.param(
        Case(
            100,
            5,
            1,
            1000,
            5,
            "DesiredWithinRange",
            down=rules(1000, 60, 0, 0, 300),
            down_events=spread(E4, 120),
        ),
        id="outdated-one-policy-down",
    ),
    pytest.param(
        Case(
            100,
            5,
            1,
            1000,
            5,
            "DesiredWithinRange",
            down=rules(1000, 30, 100, 60, 300),
            down_events=spread(E4, 120),
        ),
        id="two-policies-down",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_scaling_with_rules(case: Case) -> None:
    behavior = Behavior(case.up or DEFAULT_SCALE_UP, case.down or DEFAULT_SCALE_DOWN)
    got = normalize_with_behavior(
        History((), case.up_events, case.down_events),
        behavior,
        current=case.current,
        desired=case.desired,
        min_replicas=case.min_r,
        max_replicas=case.max_r,
        now=NOW_NS,
        options=ControllerOptions(),
    )
    assert (got.replicas, got.limited_reason) == (case.want, case.reason)


def test_min_select_policy_scale_down_limit() -> None:
    # upstream TestCalculateScaleDownLimitWithSelectPolicy: Min of Pods 2 and Percent 50 from 5 is 3
    down = ScalingRules(
        300, "Min", (ScalingPolicy("Pods", 2, 60), ScalingPolicy("Percent", 50, 60))
    )
    got = normalize_with_behavior(
        History(()),
        Behavior(DEFAULT_SCALE_UP, down),
        current=5,
        desired=0,
        min_replicas=0,
        max_replicas=10,
        now=NOW_NS,
        options=ControllerOptions(),
    )
    assert (got.replicas, got.limited_reason) == (3, "ScaleDownLimit")


def ago(seconds: int) -> int:
    return NOW_NS - seconds * NS


@pytest.mark.parametrize(
    ("rule", "previous", "want", "change_in_60s"),
    [
        pytest.param(rules(10, 60, 100, 60, 0), (), [(5, 0, False)], 0, id="empty"),
        pytest.param(
            rules(10, 60, 100, 60, 0), ((7, 61),), [(5, 0, False)], 0, id="outdated-replaced"
        ),
        pytest.param(
            rules(10, 60, 100, 60, 0),
            ((7, 58),),
            [(7, 58, False), (5, 0, False)],
            7,
            id="actual-kept",
        ),
        pytest.param(
            rules(10, 60, 0, 0, 0),
            ((7, 61), (6, 59)),
            [(5, 0, False), (6, 59, False)],
            6,
            id="two-one-replaced",
        ),
        pytest.param(
            rules(10, 60, 100, 30, 0),
            ((8, 29), (6, 59), (7, 61), (9, 61)),
            [(8, 29, False), (6, 59, False), (7, 61, True), (5, 0, False)],
            14,
            id="last-outdated-replaced-others-marked",
        ),
        pytest.param(
            rules(10, 120, 100, 30, 0),
            ((7, 58), (6, 59)),
            [(7, 58, False), (6, 59, False), (5, 0, False)],
            13,
            id="longest-period-keeps-both",
        ),
    ],
)
def test_store_scale_events(
    rule: ScalingRules,
    previous: tuple[tuple[int, int], ...],
    want: list[tuple[int, int, bool]],
    change_in_60s: int,
) -> None:
    # upstream TestStoreScaleEvents
    from autoscaler.core.behavior import changes_in_period, store_scale_event

    events = tuple(ScaleEvent(c, ago(s)) for c, s in previous)
    assert changes_in_period(60, events, now=NOW_NS) == change_in_60s
    got = store_scale_event(events, 5, rule, now=NOW_NS)
    assert got == tuple(ScaleEvent(c, ago(s), o) for c, s, o in want)


MAX32 = 2**31 - 1


@pytest.mark.parametrize(
    "case",
    [
        # Go adds int32s: 10 + MaxInt32 wraps to a negative limit, which is then raised to current
        pytest.param(
            Case(10, 50, 1, 1000, 10, "ScaleUpLimit", up=rules(MAX32, 60, 0, 0, 0)),
            id="up-pods-max-int32-wraps-to-current",
        ),
        pytest.param(
            Case(10, 50, 1, 1000, 10, "ScaleUpLimit", up=rules(MAX32 - 9, 60, 0, 0, 0)),
            id="up-pods-one-past-max-int32-wraps",
        ),
        pytest.param(
            Case(10, 50, 1, 1000, 50, "DesiredWithinRange", up=rules(MAX32 - 10, 60, 0, 0, 0)),
            id="up-pods-exactly-max-int32-no-wrap",
        ),
        pytest.param(
            Case(10, 50, 1, 1000, 20, "ScaleUpLimit", up=rules(MAX32, 60, 100, 60, 0)),
            id="up-wrapped-pods-loses-to-percent",
        ),
        # start = 5 - 10 = -5; -5 - MaxInt32 wraps to a large positive floor, lowered to current
        pytest.param(
            Case(
                5,
                2,
                1,
                10,
                5,
                "ScaleDownLimit",
                down=rules(MAX32, 60, 0, 0, 0),
                up_events=(ScaleEvent(10, NOW_NS - 30 * NS),),
            ),
            id="down-pods-underflow-wraps-to-current",
        ),
    ],
)
def test_policy_arithmetic_wraps_like_go_int32(case: Case) -> None:
    # calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors work in int32
    test_scaling_with_rules(case)
