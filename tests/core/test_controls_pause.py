"""Pause and conflicts (controls.md "Pause", "Conflicts"): status keeps reporting while nothing
is written; paused-replicas sets N and repairs drift; bad values are reported, never guessed; a
conflict writes nothing and says why."""

from __future__ import annotations

from typing import Any

import pytest

from tests.core.controls_loop import Loop, condition, external, reasons

PAUSED = "promscaler.dev/paused"
PAUSED_REPLICAS = "promscaler.dev/paused-replicas"


def spec() -> dict[str, Any]:
    return {"minReplicas": 1, "maxReplicas": 20, "metrics": [external(None)]}


@pytest.mark.parametrize("value", ["true", "1", "t", "T", "TRUE", "True"])
def test_paused_writes_nothing_while_status_reports(value: str) -> None:
    loop = Loop(spec(), replicas=2, annotations={PAUSED: value})
    for _ in range(3):
        result = loop.step("90")
        assert result["rescale"] is False
        assert result["desiredReplicas"] == 4  # what it would do (2 -> 4: the scale-up limit)
        assert result["status"]["desiredReplicas"] == 4
        assert "lastScaleTime" not in result["status"]
        assert result["history"]["scaleUpEvents"] == []
        assert result["status"]["paused"] is True
        assert condition(result, "Paused") == ("True", "PausedByAnnotation")
    assert loop.writes == []
    assert [reasons(r) for r in loop.results] == [["Paused"], [], []]


def test_unpause_resumes_and_says_so() -> None:
    loop = Loop(spec(), replicas=2, annotations={PAUSED: "true"})
    loop.step("90")
    loop.metadata["annotations"] = {}
    result = loop.step("90")
    assert result["rescale"] is True
    assert reasons(result) == ["Unpaused"]
    assert condition(result, "Paused") == ("False", "Unpaused")
    assert "paused" not in result["status"]


@pytest.mark.parametrize("value", ["false", "0", "f", "F", "FALSE", "False"])
def test_paused_false_is_not_paused_and_adds_no_condition(value: str) -> None:
    loop = Loop(spec(), replicas=2, annotations={PAUSED: value})
    result = loop.step("90")
    assert result["rescale"] is True
    assert condition(result, "Paused") is None
    assert reasons(result) == []


def test_paused_replicas_sets_n_then_holds_and_repairs_drift() -> None:
    loop = Loop(spec(), replicas=2, annotations={PAUSED_REPLICAS: "3"})
    first = loop.step("90")
    assert (first["rescale"], first["desiredReplicas"]) == (True, 3)
    assert first["status"]["pausedReplicas"] == 3
    assert first["history"]["scaleUpEvents"] == []  # not the autoscaler's own scale event
    held = loop.step("90")
    assert held["rescale"] is False
    loop.replicas = 7  # someone else scales the target
    repaired = loop.step("90")
    assert (repaired["rescale"], repaired["desiredReplicas"]) == (True, 3)
    assert loop.writes == [3, 3]


def test_paused_replicas_wins_over_paused_false() -> None:
    loop = Loop(spec(), replicas=5, annotations={PAUSED: "false", PAUSED_REPLICAS: "0"})
    loop.step("90")
    assert loop.replicas == 0


@pytest.mark.parametrize(
    ("annotations", "previously_paused", "paused", "field"),
    [
        pytest.param({PAUSED: "yes"}, False, False, PAUSED, id="paused-yes:kept-unpaused"),
        pytest.param({PAUSED: "yes"}, True, True, PAUSED, id="paused-yes:kept-paused"),
        pytest.param({PAUSED_REPLICAS: "-1"}, False, False, PAUSED_REPLICAS, id="negative"),
        pytest.param({PAUSED_REPLICAS: "3.5"}, False, False, PAUSED_REPLICAS, id="fraction"),
        pytest.param({PAUSED_REPLICAS: " 3"}, False, False, PAUSED_REPLICAS, id="space"),
        pytest.param(
            {PAUSED_REPLICAS: "2147483648"}, False, False, PAUSED_REPLICAS, id="beyond-int32"
        ),
        pytest.param(
            {PAUSED_REPLICAS: "x", PAUSED: "true"}, False, True, PAUSED_REPLICAS, id="bad-n+paused"
        ),
    ],
)
def test_a_bad_value_is_reported_once_and_never_guessed(
    annotations: dict[str, str], previously_paused: bool, paused: bool, field: str
) -> None:
    status = {"paused": True} if previously_paused else {}
    loop = Loop(spec(), replicas=2, annotations=annotations, status=status)
    first = loop.step("90")
    second = loop.step("90")
    assert first["rescale"] is not paused
    assert "InvalidAnnotation" in reasons(first)
    assert "InvalidAnnotation" not in reasons(second)  # once per bad value
    cond = next(c for c in first["status"]["conditions"] if c["type"] == "Paused")
    assert cond["reason"] == "InvalidAnnotation"
    assert field in cond["message"]
    assert cond["status"] == ("True" if paused else "False")


def test_conflict_writes_nothing_and_says_why_once() -> None:
    loop = Loop(spec(), replicas=2)
    msg = "Autoscaler default/first already targets Deployment/web"
    first = loop.step("90", conflict=msg)
    second = loop.step("90", conflict=msg)
    assert first["rescale"] is False
    assert second["rescale"] is False
    able = next(c for c in first["status"]["conditions"] if c["type"] == "AbleToScale")
    assert (able["status"], able["reason"], able["message"]) == ("False", "AmbiguousTarget", msg)
    assert reasons(first) == ["AmbiguousTarget"]
    assert reasons(second) == []
    resumed = loop.step("90")  # the first Autoscaler was deleted: this one takes over
    assert resumed["rescale"] is True
    assert condition(resumed, "AbleToScale") == ("True", "SucceededRescale")


def test_a_lasting_conflict_keeps_its_transition_time_so_status_stays_unchanged() -> None:
    """The losing Autoscaler's AbleToScale=False/AmbiguousTarget is the same condition pass
    after pass: its lastTransitionTime stays, so its status does not change (and is not
    written) on every pass."""
    loop = Loop(spec(), replicas=2)
    msg = "Autoscaler default/first already targets Deployment/web"
    first = loop.step("90", conflict=msg)
    later = [loop.step("90", conflict=msg) for _ in range(3)]

    def able(result):
        return next(c for c in result["status"]["conditions"] if c["type"] == "AbleToScale")

    assert {able(r)["lastTransitionTime"] for r in later} == {able(first)["lastTransitionTime"]}


def test_conflict_wins_over_paused_replicas() -> None:
    loop = Loop(spec(), replicas=2, annotations={PAUSED_REPLICAS: "5"})
    result = loop.step("90", conflict="an HPA targets Deployment/web")
    assert result["rescale"] is False
    assert loop.writes == []
