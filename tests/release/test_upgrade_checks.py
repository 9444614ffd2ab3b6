"""The upgrade e2e's checks (tests/support/upgrade_fleet.py) on hand-made records: each one
passes a clean record and names the breach in a broken one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support import upgrade_fleet as uf

T0 = 1_780_000_000.0  # 2026-05-28T20:26:40Z
USER = "system:serviceaccount:promscaler:autoscaler-{}"


def stamp(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def entry(name: str, t: float, *, status: dict[str, Any] | None = None, **extra: Any) -> dict:
    doc = {
        "now": stamp(t),
        "autoscaler": {"spec": {"scaleTargetRef": {"name": name}}, "status": status or {}},
    }
    doc.update(extra.pop("document", {}))
    return {"document": doc, "result": extra.get("result", {"rescale": False})}


def write(name: str, t: float, slot: int) -> dict:
    return {"name": name, "time": t, "user": USER.format(slot)}


@pytest.mark.parametrize(
    ("writes", "terms", "breaches"),
    [
        pytest.param(
            [write("w", T0 + 1, 0), write("w", T0 + 12, 1)],
            [("autoscaler-0", stamp(T0)), ("autoscaler-1-2", stamp(T0 + 10))],
            0,
            id="each-in-its-own-term",
        ),
        pytest.param(
            [write("w", T0 + 1, 0), write("w", T0 + 11, 0)],
            [("autoscaler-0", stamp(T0)), ("autoscaler-1-2", stamp(T0 + 10))],
            1,
            id="old-leader-writes-in-the-new-term",
        ),
        pytest.param([write("w", T0 - 5, 0)], [("autoscaler-0", stamp(T0))], 1, id="before-any"),
    ],
)
def test_writers_hold_the_lease(writes, terms, breaches):
    assert uf.writers_hold_the_lease(writes, terms).breaches == breaches


def test_history_carried_needs_the_high_recommendation_in_every_pass():
    high = {"recommendations": [{"replicas": 8, "timestamp": stamp(T0)}]}
    kept = [entry("hold-0", T0 + i, document={"history": high}) for i in range(3)]
    lost = [*kept, entry("hold-0", T0 + 3, document={"history": {"recommendations": []}})]
    assert uf.history_carried(uf.by_target(kept), after=T0, before=T0 + 10).breaches == 0
    check = uf.history_carried(uf.by_target(lost), after=T0, before=T0 + 10)
    assert check.breaches == 1
    assert "hold-0" in check.examples[0]


@pytest.mark.parametrize(
    ("active", "breaches"),
    [
        pytest.param([T0, T0, T0 + 2], 0, id="moves-forward"),
        pytest.param([T0, None, T0], 1, id="lost"),
        pytest.param([T0 + 2, T0], 1, id="goes-back"),
    ],
)
def test_cooldown_carried(active, breaches):
    passes = [
        entry("zero-0", T0 + 5 + i, status={"lastActiveTime": stamp(a)} if a else {})
        for i, a in enumerate(active)
    ]
    assert uf.cooldown_carried(uf.by_target(passes), after=T0).breaches == breaches


@pytest.mark.parametrize(
    ("failures", "fallback", "breaches"),
    [
        pytest.param([2, 3, 4, 4, 5], [False, True, True, True, True], 0, id="counts-on"),
        pytest.param([2, 3, 0, 1], [False, True, True, True], 1, id="counter-reset"),
        pytest.param([2, 3, 4], [True, False, True], 1, id="out-of-fallback"),
    ],
)
def test_fallback_carried(failures, fallback, breaches):
    passes = [
        entry(
            "fail-0",
            T0 + i,
            status={"fallback": fb, "metricHealth": [{"consecutiveFailures": n}]},
        )
        for i, (n, fb) in enumerate(zip(failures, fallback, strict=True))
    ]
    assert uf.fallback_carried(uf.by_target(passes)).breaches == breaches


def test_each_write_is_a_logged_rescale():
    passes = uf.by_target(
        [
            entry("a", T0, result={"rescale": True, "desiredReplicas": 2}),
            entry("a", T0 + 1),
        ]
    )
    assert uf.writes_match_decisions(passes, [write("a", T0, 0)]).breaches == 0
    doubled = uf.writes_match_decisions(passes, [write("a", T0, 0), write("a", T0 + 1, 1)])
    assert doubled.examples == ["a: 2 writes, 1 logged rescales"]
    stray = uf.writes_match_decisions(passes, [write("a", T0, 0), write("b", T0, 0)])
    assert stray.examples == ["b: 1 writes, 0 logged rescales"]


@pytest.mark.parametrize(
    ("probes", "want"),
    [
        pytest.param([(0.0, True), (0.2, True)], 0.0, id="never-down"),
        pytest.param([(0.0, True), (0.2, False), (0.4, False), (0.6, True)], 0.4, id="one-gap"),
        pytest.param([(0.0, True), (0.2, False)], float("inf"), id="down-at-the-end"),
    ],
)
def test_longest_outage(probes, want):
    assert uf.longest_outage(probes) == pytest.approx(want)
