"""Normalization: stabilization, the scale-up limit, behavior policies and scale events
(hpa-algorithm.md §9, §10), with their boundaries."""

from __future__ import annotations

from typing import Any

import pytest

from autoscaler.core import decide_document
from autoscaler.core.behavior import DEFAULT_SCALE_DOWN, DEFAULT_SCALE_UP, store_scale_event
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
from tests.core import builders as b


def propose(
    current: int,
    proposal: int,
    *,
    min_replicas: int = 1,
    max_replicas: int = 100,
    behavior: dict[str, Any] | None = None,
    history: dict[str, Any] | None = None,
    controller: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A step whose metric proposes exactly `proposal` (External AverageValue: ceil(usage/target),
    chosen outside the tolerance of `current`)."""
    doc = b.document(
        metrics_spec=[b.external_metric(average=1000)],
        metrics=[b.external_items([proposal * 1000])],
        current=current,
        pod_list=b.pods(current),
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        behavior=behavior,
        history=history if history is not None else {"recommendations": []},
        controller=controller if controller is not None else dict(b.UPSTREAM_CONTROLLER),
    )
    return decide_document(doc)


def recs(*pairs: tuple[int, float]) -> dict[str, Any]:
    return {"recommendations": [{"replicas": r, "timestamp": b.at(t)} for r, t in pairs]}


def limited(result: dict[str, Any]) -> tuple[str, str]:
    return b.conditions(result)["ScalingLimited"]


def test_first_pass_records_current_and_never_scales_down() -> None:
    result = propose(5, 2, history={})  # no recommendations at all: nil
    assert result["desiredReplicas"] == 5
    assert b.conditions(result)["AbleToScale"] == ("True", "ScaleDownStabilized")
    assert [r["replicas"] for r in result["history"]["recommendations"]] == [5, 2]


def test_empty_history_is_not_nil() -> None:
    result = propose(5, 2, history={"recommendations": []})
    assert result["desiredReplicas"] == 2
    assert b.conditions(result)["AbleToScale"] == ("True", "SucceededRescale")


@pytest.mark.parametrize(
    ("rec_at", "want"),
    [
        pytest.param(-300, 8, id="exactly-at-cutoff-counts"),
        pytest.param(-300.000000001, 2, id="1ns-older-does-not-count"),
        pytest.param(-10, 8, id="inside-window"),
    ],
)
def test_downscale_stabilization_window(rec_at: float, want: int) -> None:
    assert propose(8, 2, history=recs((8, rec_at)))["desiredReplicas"] == want


def test_stabilization_reuses_the_last_old_slot() -> None:
    result = propose(4, 2, history=recs((9, -400), (7, -350), (3, -10)))
    stored = [(r["replicas"], r["timestamp"]) for r in result["history"]["recommendations"]]
    assert stored == [(9, b.at(-400)), (2, b.at(0)), (3, b.at(-10))]
    assert result["desiredReplicas"] == 3


@pytest.mark.parametrize(
    ("current", "proposal", "max_replicas", "factor", "want", "reason"),
    [
        pytest.param(1, 50, 100, 2.0, 4, "ScaleUpLimit", id="minimum-4"),
        pytest.param(3, 50, 100, 2.0, 6, "ScaleUpLimit", id="factor-2"),
        pytest.param(3, 50, 5, 2.0, 5, "TooManyReplicas", id="max-below-limit"),
        pytest.param(3, 60, 100, 8.0, 24, "ScaleUpLimit", id="upstream-test-factor-8"),
        pytest.param(3, 60, 20, 8.0, 20, "TooManyReplicas", id="upstream-cap-greater-than-max"),
        pytest.param(3, 6, 100, 2.0, 6, "DesiredWithinRange", id="exactly-at-limit"),
    ],
)
def test_scale_up_limit_without_behavior(
    current: int, proposal: int, max_replicas: int, factor: float, want: int, reason: str
) -> None:
    controller = {**b.UPSTREAM_CONTROLLER, "scaleUpLimitFactor": factor}
    result = propose(current, proposal, max_replicas=max_replicas, controller=controller)
    assert result["desiredReplicas"] == want
    assert limited(result)[1] == reason
    assert limited(result)[0] == ("False" if reason == "DesiredWithinRange" else "True")


def test_too_few_replicas_without_behavior() -> None:
    result = propose(5, 1, min_replicas=3)
    assert result["desiredReplicas"] == 3
    assert limited(result) == ("True", "TooFewReplicas")


# ---- with behavior ---------------------------------------------------------------------

UP60 = {"scaleUp": {"stabilizationWindowSeconds": 60}}


@pytest.mark.parametrize(
    ("behavior", "history", "current", "proposal", "want", "able", "limit"),
    [
        pytest.param(
            {},
            None,
            3,
            20,
            7,
            "ReadyForNewScale",
            "ScaleUpLimit",
            id="defaults-pods-4-beat-percent-100",
        ),
        pytest.param(
            {},
            None,
            10,
            50,
            20,
            "ReadyForNewScale",
            "ScaleUpLimit",
            id="defaults-percent-100-beats-pods-4",
        ),
        pytest.param(
            UP60,
            recs((4, -30)),
            3,
            8,
            4,
            "ScaleUpStabilized",
            "DesiredWithinRange",
            id="scale-up-window-lowest-recent",
        ),
        pytest.param(
            UP60,
            recs((4, -60)),
            3,
            8,
            7,
            "ReadyForNewScale",
            "ScaleUpLimit",
            id="scale-up-window-cutoff-not-counted",
        ),
        pytest.param(
            {},
            recs((9, -299)),
            10,
            5,
            9,
            "ScaleDownStabilized",
            "DesiredWithinRange",
            id="scale-down-window-from-controller-flag",
        ),
        pytest.param(
            {},
            recs((9, -300)),
            10,
            5,
            5,
            "ReadyForNewScale",
            "DesiredWithinRange",
            id="scale-down-window-cutoff-not-counted",
        ),
        # float64 as upstream: 100 * (1 + 10/100) = 110.00000000000001, so the limit is 111
        pytest.param(
            {"scaleUp": {"policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}},
            None,
            100,
            200,
            111,
            "ReadyForNewScale",
            "ScaleUpLimit",
            id="percent-float-100x1.1-gives-111",
        ),
        pytest.param(
            {
                "scaleDown": {
                    "stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Percent", "value": 50, "periodSeconds": 60}],
                }
            },
            None,
            17,
            1,
            8,
            "ReadyForNewScale",
            "ScaleDownLimit",
            id="percent-down-truncates-8.5-to-8",
        ),
        pytest.param(
            {"scaleUp": {"selectPolicy": "Min"}},
            None,
            10,
            50,
            14,
            "ReadyForNewScale",
            "ScaleUpLimit",
            id="select-min-up",
        ),
        pytest.param(
            {
                "scaleDown": {
                    "stabilizationWindowSeconds": 0,
                    "selectPolicy": "Min",
                    "policies": [
                        {"type": "Pods", "value": 2, "periodSeconds": 60},
                        {"type": "Percent", "value": 50, "periodSeconds": 60},
                    ],
                }
            },
            None,
            10,
            1,
            8,
            "ReadyForNewScale",
            "ScaleDownLimit",
            id="select-min-down",
        ),
        pytest.param(
            {"scaleDown": {"stabilizationWindowSeconds": 0, "selectPolicy": "Disabled"}},
            None,
            10,
            1,
            10,
            "ReadyForNewScale",
            "ScaleDownLimit",
            id="scale-down-disabled",
        ),
        pytest.param(
            {"scaleUp": {"selectPolicy": "Disabled"}},
            None,
            10,
            50,
            10,
            "ReadyForNewScale",
            "ScaleUpLimit",
            id="scale-up-disabled",
        ),
        pytest.param(
            {"scaleUp": {"policies": []}},
            None,
            10,
            50,
            10,
            "ReadyForNewScale",
            "ScaleUpLimit",
            id="explicit-empty-policies-replace-defaults",
        ),
        pytest.param(
            {"scaleUp": {"policies": [{"type": "Pods", "value": 100, "periodSeconds": 15}]}},
            None,
            3,
            50,
            20,
            "ReadyForNewScale",
            "TooManyReplicas",
            id="large-pods-policy-capped-by-max",
        ),
        pytest.param(
            {"scaleDown": {"stabilizationWindowSeconds": 0}},
            None,
            10,
            1,
            2,
            "ReadyForNewScale",
            "TooFewReplicas",
            id="scale-down-to-min",
        ),
    ],
)
def test_behavior(
    behavior: dict[str, Any],
    history: dict[str, Any] | None,
    current: int,
    proposal: int,
    want: int,
    able: str,
    limit: str,
) -> None:
    max_replicas = 20 if "large-pods" in str(behavior) or limit == "TooManyReplicas" else 1000
    result = propose(
        current,
        proposal,
        behavior=behavior,
        history=history,
        min_replicas=2,
        max_replicas=max_replicas,
    )
    assert result["desiredReplicas"] == want, result["explanation"]
    if want != current:
        assert b.conditions(result)["AbleToScale"] == ("True", "SucceededRescale")
    else:
        assert b.conditions(result)["AbleToScale"] == ("True", able)
    assert limited(result)[1] == limit


def events(kind: str, *pairs: tuple[int, float]) -> dict[str, Any]:
    return {
        "recommendations": [],
        kind: [{"change": c, "timestamp": b.at(t), "outdated": False} for c, t in pairs],
    }


PODS4_60 = {"scaleUp": {"policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}]}}


@pytest.mark.parametrize(
    ("history", "want"),
    [
        pytest.param(events("scaleUpEvents", (4, -10)), 7, id="recent-scale-up-uses-the-budget"),
        pytest.param(
            events("scaleUpEvents", (4, -60)), 11, id="event-at-period-cutoff-not-counted"
        ),
        pytest.param(events("scaleUpEvents", (2, -10)), 9, id="partial-budget"),
        pytest.param(
            events("scaleDownEvents", (2, -10)), 13, id="scale-down-events-net-into-scale-up"
        ),
    ],
)
def test_scale_events_limit_rate(history: dict[str, Any], want: int) -> None:
    result = propose(7, 30, behavior=PODS4_60, history=history)
    assert result["desiredReplicas"] == want


def test_scale_up_limit_never_below_current() -> None:
    result = propose(7, 30, behavior=PODS4_60, history=events("scaleUpEvents", (10, -10)))
    assert result["desiredReplicas"] == 7
    assert result["rescale"] is False
    assert limited(result) == ("True", "ScaleUpLimit")


def test_rescale_stores_an_event_only_with_behavior() -> None:
    with_behavior = propose(3, 6, behavior={})
    assert [(e["change"], e["timestamp"]) for e in with_behavior["history"]["scaleUpEvents"]] == [
        (3, b.at(0))
    ]
    without = propose(3, 6)
    assert without["history"]["scaleUpEvents"] == []
    down = propose(6, 3, behavior={"scaleDown": {"stabilizationWindowSeconds": 0}})
    assert [e["change"] for e in down["history"]["scaleDownEvents"]] == [3]


def test_store_scale_event_marks_and_reuses_the_last_outdated() -> None:
    now = b.NOW_NS
    rules = ScalingRules(0, "Max", (ScalingPolicy("Pods", 1, 60), ScalingPolicy("Pods", 1, 30)))
    old = (
        ScaleEvent(1, now - 100 * NS),
        ScaleEvent(2, now - 90 * NS),
        ScaleEvent(3, now - 60 * NS),  # exactly at the cutoff: not outdated
        ScaleEvent(4, now - 5 * NS),
    )
    got = store_scale_event(old, 9, rules, now=now)
    assert got == (
        ScaleEvent(1, now - 100 * NS, True),
        ScaleEvent(9, now, False),
        ScaleEvent(3, now - 60 * NS, False),
        ScaleEvent(4, now - 5 * NS, False),
    )
    assert store_scale_event((), 2, rules, now=now) == (ScaleEvent(2, now),)


@pytest.mark.parametrize(
    ("current", "desired", "min_r", "max_r", "want", "reason"),
    [
        pytest.param(3, 3, 5, 10, 3, "DesiredWithinRange", id="equal-below-min-unchanged"),
        pytest.param(12, 12, 1, 10, 12, "DesiredWithinRange", id="equal-above-max-unchanged"),
        pytest.param(3, 4, 5, 10, 4, "DesiredWithinRange", id="scale-up-never-raised-to-min"),
        pytest.param(12, 11, 1, 10, 11, "DesiredWithinRange", id="scale-down-never-capped-to-max"),
    ],
)
def test_behavior_bounds_are_directional(
    current: int, desired: int, min_r: int, max_r: int, want: int, reason: str
) -> None:
    behavior = Behavior(DEFAULT_SCALE_UP, ScalingRules(0, "Max", DEFAULT_SCALE_DOWN.policies))
    got = normalize_with_behavior(
        History(recommendations=()),
        behavior,
        current=current,
        desired=desired,
        min_replicas=min_r,
        max_replicas=max_r,
        now=b.NOW_NS,
        options=ControllerOptions(),
    )
    assert (got.replicas, got.limited_reason) == (want, reason)


def test_behavior_stabilization_reuses_slot_only_when_older_than_both_windows() -> None:
    history = recs((5, -400), (6, -100), (7, -10))  # up window 0, down window 300
    result = propose(6, 6, behavior={}, history=history)
    stored = [r["replicas"] for r in result["history"]["recommendations"]]
    assert stored == [6, 6, 7]


@pytest.mark.parametrize(
    ("current", "factor", "want", "reason"),
    [
        # int32(math.Max(2 * 2^30, 4)): 2^31 does not fit an int32; amd64 gives MinInt32, so the
        # limit is below everything and the result is MinInt32 (hpa-algorithm.md §13)
        pytest.param(2**30, 2.0, -(2**31), "ScaleUpLimit", id="limit-2^31-out-of-int32"),
        pytest.param(2**30 - 1, 2.0, 2**30 + 5, "DesiredWithinRange", id="limit-2^31-2-fits"),
        pytest.param(3, 1e308 * 10, -(2**31), "ScaleUpLimit", id="infinite-factor-no-crash"),
    ],
)
def test_scale_up_limit_converts_to_int32_like_go(
    current: int, factor: float, want: int, reason: str
) -> None:
    from autoscaler.core.normalize import normalize_without_behavior

    got = normalize_without_behavior(
        History(()),
        current=current,
        desired=2**30 + 5,
        min_replicas=1,
        max_replicas=2**31 - 1,
        now=b.NOW_NS,
        options=ControllerOptions(scale_up_limit_factor=factor),
    )
    assert (got.replicas, got.limited_reason) == (want, reason)
