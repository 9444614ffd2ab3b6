"""Activation and the way to zero (controls.md "Activation", "Cooldown"; decision-document.md
rules 3 and 4): strictly greater, wake iff a metric is active, N -> 1 under behavior.scaleDown,
1 -> 0 only after the cooldowns."""

from __future__ import annotations

from typing import Any

import pytest

from tests.core.controls_loop import NS, T0, Loop, external, fast_down


def spec(**extra: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "minReplicas": 0,
        "maxReplicas": 20,
        "metrics": [external("5")],
        "behavior": fast_down(),
    }
    s.update(extra)
    return s


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("0", 0, id="zero-stays-asleep"),
        pytest.param("4999m", 0, id="below-threshold-stays"),
        pytest.param("5", 0, id="at-threshold-stays(strictly-greater)"),
        pytest.param("5001m", 1, id="one-milli-above-wakes-to-1"),
        pytest.param("80", 4, id="far-above-wakes-to-the-scale-up-limit-4"),
    ],
)
def test_at_zero_wakes_iff_strictly_above_threshold(value: str, expected: int) -> None:
    loop = Loop(spec(), replicas=0)
    result = loop.step(value)
    assert loop.replicas == expected
    assert result["rescale"] is (expected > 0)
    assert result["status"]["active"] is (expected > 0)
    assert result["status"]["metricHealth"][0]["active"] is (expected > 0)


def test_below_threshold_at_zero_holds_for_ten_passes_even_when_upstream_says_one() -> None:
    # 4 over target 10 is a recommendation of 1 upstream; the activation threshold keeps 0
    loop = Loop(spec(), replicas=0)
    assert loop.run(["4"] * 10) == [0] * 10
    assert loop.writes == []


def test_wake_goes_to_the_recommendation_not_just_one() -> None:
    loop = Loop(spec(), replicas=0)
    loop.step("35")  # 35 / 10 -> 4 replicas (the scale-up limit allows 4 from 0)
    assert loop.replicas == 4


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # 6 replicas, active at t=0; scaleDown allows 2 pods per 15 s, so 6 -> 4 -> 2 -> 1, then
        # 0 once the 60 s cooldown since the last active pass (t=0) has passed (t=60)
        pytest.param(
            ["60"] + ["0"] * 6, [6, 4, 2, 1, 0, 0, 0], id="metric-zero:N->1-by-policy-then-0"
        ),
        pytest.param(
            ["60"] + ["3"] * 6, [6, 4, 2, 1, 0, 0, 0], id="between-0-and-threshold-goes-to-0"
        ),
        pytest.param(["60"] + ["6"] * 6, [6, 4, 2, 1, 1, 1, 1], id="active-keeps-1"),
    ],
)
def test_n_to_one_follows_scale_down_then_zero_after_cooldown(
    values: list[str], expected: list[int]
) -> None:
    loop = Loop(spec(scaleToZero={"cooldownSeconds": 60}), replicas=6)
    assert loop.run(values) == expected


@pytest.mark.parametrize(
    ("cooldown", "zero_at"),
    [
        pytest.param(30, 2, id="cooldown-30s:zero-on-the-pass-at-30s"),
        pytest.param(31, 3, id="cooldown-31s:one-pass-later"),
        pytest.param(45, 3, id="cooldown-45s:exactly-at-the-boundary-passes"),
    ],
)
def test_cooldown_counts_from_the_last_active_pass(cooldown: int, zero_at: int) -> None:
    loop = Loop(spec(scaleToZero={"cooldownSeconds": cooldown}), replicas=1)
    got = loop.run(["6", "0", "0", "0", "0"])  # active at t=0, passes every 15 s
    assert got.index(0) == zero_at
    assert loop.results[1]["status"]["lastActiveTime"] == "2026-03-02T06:00:00Z"


def test_initial_cooldown_counts_from_creation() -> None:
    stz = {"cooldownSeconds": 1, "initialCooldownSeconds": 60}
    loop = Loop(spec(scaleToZero=stz), replicas=1, created=T0 - 30 * NS)
    got = loop.run(["0"] * 4)  # t = 0, 15, 30, 45 -> since creation 30, 45, 60, 75
    assert got == [1, 1, 0, 0]


def test_without_activation_a_cooldown_still_holds_the_last_step() -> None:
    s = spec(scaleToZero={"cooldownSeconds": 30})
    s["metrics"] = [external(None)]
    loop = Loop(s, replicas=3)
    # t=0 recommends 1 (active): 3 -> 1; upstream would take 1 -> 0 at t=15, the cooldown
    # holds it until 30 s after the last active pass
    assert loop.run(["6", "0", "0", "0", "0"]) == [1, 1, 0, 0, 0]


def test_a_failed_metric_at_one_never_goes_to_zero() -> None:
    loop = Loop(spec(scaleToZero={"cooldownSeconds": 1}), replicas=1)
    assert loop.run([None] * 5) == [1] * 5


def test_a_failed_metric_at_zero_does_not_wake() -> None:
    loop = Loop(spec(), replicas=0)
    assert loop.run([None] * 3) == [0] * 3


def test_manual_zero_with_activation_is_asleep_not_disabled() -> None:
    # upstream disables autoscaling at 0 without ScaledToZero; with activation it may wake
    loop = Loop(spec(), replicas=0, status={})
    loop.step("9")
    assert loop.replicas == 1


def test_last_active_time_is_refreshed_at_most_once_a_minute_while_active() -> None:
    loop = Loop(spec(), replicas=1)
    loop.run(["6"] * 9)  # t = 0 .. 120
    times = [r["status"]["lastActiveTime"] for r in loop.results]
    assert sorted(set(times)) == [
        "2026-03-02T06:00:00Z",
        "2026-03-02T06:01:00Z",
        "2026-03-02T06:02:00Z",
    ]
    loop.step("0")  # the first inactive pass records the previous (active) pass exactly
    assert loop.results[-1]["status"]["lastActiveTime"] == "2026-03-02T06:02:00Z"


OTHER = {
    "type": "External",
    "external": {
        "metric": {"name": "other"},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
    "activation": {"threshold": "20"},
}


@pytest.mark.parametrize(
    ("values", "wakes"),
    [
        pytest.param(("5", "20"), False, id="both-at-threshold:stays"),
        pytest.param(("6", "0"), True, id="first-active:wakes"),
        pytest.param(("0", "21"), True, id="second-active:wakes"),
        pytest.param((None, "21"), True, id="one-failed-one-active:wakes"),
        pytest.param((None, "0"), False, id="one-failed-one-idle:stays"),
    ],
)
def test_wake_iff_some_metric_is_active(values: tuple[str | None, str], wakes: bool) -> None:
    loop = Loop(spec(metrics=[external("5"), OTHER]), replicas=0)
    loop.step(*values)
    assert (loop.replicas > 0) is wakes


@pytest.mark.parametrize(
    ("items", "active"),
    [
        pytest.param(["3", "2"], False, id="external-sum-5:not-above-5"),
        pytest.param(["3", "3"], True, id="external-sum-6:active(the-total-not-an-item)"),
    ],
)
def test_external_activation_compares_the_total(items: list[str], active: bool) -> None:
    loop = Loop(spec(), replicas=0)
    doc = loop.document(["0"])
    doc["metrics"] = [{"items": [{"value": v} for v in items]}]
    from autoscaler.core import decide_document

    assert decide_document(doc)["status"]["active"] is active


@pytest.mark.parametrize(
    ("value", "active"),
    [pytest.param("5", False, id="object-at-threshold"), pytest.param("5001m", True, id="above")],
)
def test_object_activation_compares_the_value(value: str, active: bool) -> None:
    metric = {
        "type": "Object",
        "object": {
            "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
            "metric": {"name": "rps"},
            "target": {"type": "Value", "value": "10"},
        },
        "activation": {"threshold": "5"},
    }
    loop = Loop(spec(metrics=[metric]), replicas=0)
    doc = loop.document(["0"])
    doc["metrics"] = [{"items": [{"describedObject": {"name": "web"}, "value": value}]}]
    from autoscaler.core import decide_document

    assert decide_document(doc)["status"]["active"] is active


PLAIN_OTHER = {**OTHER}
PLAIN_OTHER.pop("activation")


@pytest.mark.parametrize(
    ("values", "wakes"),
    [
        pytest.param(("0", "0"), False, id="idle-and-zero:stays"),
        pytest.param(("0", "1m"), True, id="no-block-above-0-wakes(threshold-0)"),
        pytest.param(("5", "0"), False, id="blocked-at-threshold-no-block-zero:stays"),
    ],
)
def test_an_object_or_external_metric_without_a_block_has_threshold_zero(
    values: tuple[str, str], wakes: bool
) -> None:
    loop = Loop(spec(metrics=[external("5"), PLAIN_OTHER]), replicas=0)
    result = loop.step(*values)
    assert (loop.replicas > 0) is wakes
    assert result["status"]["metricHealth"][1]["active"] is wakes
