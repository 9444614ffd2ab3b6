"""Failure counting per pass and fallback (controls.md "Fallback"; decision-document.md rule 2):
more than failureThreshold failed passes enter fallback, recoveryThreshold good passes leave it,
the fallback proposal joins the max and then behaviour and min/max apply; without a fallback
block a failure never scales down."""

from __future__ import annotations

from typing import Any

import pytest

from tests.core.controls_loop import Loop, condition, external, fast_down, reasons


def spec(fallback: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "minReplicas": 1,
        "maxReplicas": 20,
        "metrics": [external(None)],
        "behavior": fast_down(),
    }
    if fallback is not None:
        s["fallback"] = fallback
    s.update(extra)
    return s


@pytest.mark.parametrize(
    ("threshold", "enters_on_pass"),
    [
        pytest.param(1, 2, id="threshold-1:second-failure"),
        pytest.param(3, 4, id="threshold-3:fourth-failure(more-than)"),
    ],
)
def test_fallback_after_more_than_failure_threshold_passes(
    threshold: int, enters_on_pass: int
) -> None:
    loop = Loop(spec({"failureThreshold": threshold, "replicas": 6}), replicas=2)
    got = loop.run([None] * 6)
    assert got == [2] * (enters_on_pass - 1) + [6] * (6 - enters_on_pass + 1)
    health = [r["status"]["metricHealth"][0] for r in loop.results]
    assert [h["consecutiveFailures"] for h in health] == [1, 2, 3, 4, 5, 6]
    assert [h["fallback"] for h in health].index(True) == enters_on_pass - 1
    assert reasons(loop.results[enters_on_pass - 1]) == ["FallbackActivated"]
    assert condition(loop.results[enters_on_pass - 1], "Fallback") == ("True", "MetricsFailing")
    assert health[-1]["lastReason"] == "Unavailable"


@pytest.mark.parametrize(
    ("behavior", "current", "expected"),
    [
        pytest.param("Static", 2, 6, id="Static:the-replicas"),
        pytest.param("CurrentReplicas", 3, 3, id="CurrentReplicas:holds"),
        pytest.param("CurrentReplicasIfHigher", 8, 8, id="IfHigher:current-above"),
        pytest.param("CurrentReplicasIfHigher", 2, 6, id="IfHigher:replicas-above"),
        pytest.param("CurrentReplicasIfLower", 8, 6, id="IfLower:replicas-below(by-policy)"),
        pytest.param("CurrentReplicasIfLower", 2, 2, id="IfLower:current-below"),
    ],
)
def test_fallback_behaviors(behavior: str, current: int, expected: int) -> None:
    fb = {"failureThreshold": 1, "replicas": 6, "behavior": behavior}
    loop = Loop(spec(fb), replicas=current)
    loop.run([None, None])
    assert loop.replicas == expected


def test_fallback_proposal_goes_through_scale_down_policies_and_max() -> None:
    fb = {"failureThreshold": 1, "replicas": 1}
    loop = Loop(spec(fb, maxReplicas=20), replicas=9)
    assert loop.run([None] * 6) == [9, 7, 5, 3, 1, 1]  # 2 pods per 15 s, as any recommendation


OTHER = {
    "type": "External",
    "external": {
        "metric": {"name": "other"},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
}


@pytest.mark.parametrize(
    ("healthy", "expected", "winner"),
    [
        pytest.param("90", 9, "external metric other(nil)", id="healthy-9-beats-fallback-4"),
        pytest.param("10", 4, "external metric queue_depth (fallback)", id="fallback-4-beats-1"),
    ],
)
def test_fallback_joins_the_max_with_healthy_metrics(
    healthy: str, expected: int, winner: str
) -> None:
    s = spec({"failureThreshold": 1, "replicas": 4})
    s["metrics"] = [external(None), OTHER]
    loop = Loop(s, replicas=4)
    loop.step(None, healthy)  # one failure: not yet in fallback (the healthy one may grow)
    result = loop.step(None, healthy)
    assert f"the highest proposal wins: {expected} ({winner})" in result["explanation"]
    assert loop.replicas == expected
    assert result["status"]["currentMetrics"][0] == {"type": ""}


def test_from_zero_a_fallback_proposal_wakes() -> None:
    s = spec({"failureThreshold": 1, "replicas": 3}, minReplicas=0)
    s["metrics"] = [external("5")]
    loop = Loop(s, replicas=0)
    assert loop.run([None, None]) == [0, 3]


@pytest.mark.parametrize(
    ("recovery", "back_on_pass"),
    [
        pytest.param(1, 1, id="recovery-1:first-good-pass"),
        pytest.param(3, 3, id="recovery-3:third-good-pass"),
    ],
)
def test_recovery_needs_recovery_threshold_good_passes(recovery: int, back_on_pass: int) -> None:
    fb = {"failureThreshold": 1, "recoveryThreshold": recovery, "replicas": 6}
    loop = Loop(spec(fb, behavior=fast_down()), replicas=2)
    loop.run([None, None])
    assert loop.replicas == 6
    got = loop.run(["10"] * 4)  # healthy: 1 replica wanted
    first_down = next(i for i, r in enumerate(got) if r < 6)
    assert first_down == back_on_pass - 1
    done = loop.results[2 + back_on_pass - 1]
    assert reasons(done) == ["FallbackDeactivated"]
    assert condition(done, "Fallback") == ("False", "MetricsRecovered")
    assert condition(loop.results[-1], "Fallback") == ("False", "MetricsRecovered")  # it stays
    assert condition(loop.results[0], "Fallback") == ("False", "MetricsHealthy")


def test_a_failure_while_recovering_restarts_the_recovery_count() -> None:
    fb = {"failureThreshold": 1, "recoveryThreshold": 2, "replicas": 6}
    loop = Loop(spec(fb), replicas=2)
    got = loop.run([None, None, "10", None, "10", "10", "10"])
    assert got[:5] == [2, 6, 6, 6, 6]
    assert got[5] < 6


def test_without_a_fallback_block_failures_never_scale_down() -> None:
    loop = Loop(spec(None, scaleToZero={"cooldownSeconds": 1}, minReplicas=0), replicas=5)
    assert loop.run([None] * 8) == [5] * 8
    assert loop.results[-1]["status"]["metricHealth"][0]["consecutiveFailures"] == 8
    assert "fallback" not in loop.results[-1]["status"]


def test_a_metric_failing_every_other_pass_never_enters_fallback_nor_flaps() -> None:
    fb = {"failureThreshold": 1, "recoveryThreshold": 2, "replicas": 10}
    loop = Loop(spec(fb), replicas=3)
    loop.run([None if i % 2 else "30" for i in range(20)])
    assert loop.writes == []
    assert not any(r["status"]["fallback"] for r in loop.results)


def test_success_count_stops_at_the_recovery_threshold() -> None:
    loop = Loop(spec({"replicas": 2, "recoveryThreshold": 3}), replicas=2)
    loop.run(["20"] * 6)
    counts = [r["status"]["metricHealth"][0]["consecutiveSuccesses"] for r in loop.results]
    assert counts == [1, 2, 3, 3, 3, 3]


def test_health_restarts_when_the_metric_at_an_index_changes() -> None:
    status = {
        "metricHealth": [
            {
                "index": 0,
                "name": "other",
                "consecutiveFailures": 7,
                "consecutiveSuccesses": 0,
                "fallback": True,
            }
        ]
    }
    loop = Loop(spec({"replicas": 9}), replicas=2, status=status)
    loop.step(None)
    assert loop.results[0]["status"]["metricHealth"][0]["consecutiveFailures"] == 1
    assert loop.replicas == 2
