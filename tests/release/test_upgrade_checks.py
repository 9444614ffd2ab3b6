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


AGENT = "promscaler-autoscaler ({})"
RESCALE = {"rescale": True, "desiredReplicas": 2}


def scale_write(name: str, t: float, identity: str) -> dict:
    return {**write(name, t, int(identity.split("-")[1])), "agent": AGENT.format(identity)}


# autoscaler-0 leads from T0, autoscaler-1 from T0 + 10, autoscaler-0-3 from T0 + 20
TERMS = [
    ("autoscaler-0", stamp(T0)),
    ("autoscaler-1", stamp(T0 + 10.4)),
    ("autoscaler-0-3", stamp(T0 + 20.4)),
]


def test_each_write_is_a_logged_rescale_of_the_replica_that_made_it():
    logs = {
        "autoscaler-0": [entry("a", T0, result=RESCALE), entry("a", T0 + 1)],
        "autoscaler-1": [entry("a", T0 + 11), entry("a", T0 + 12, result=RESCALE)],
    }
    ok = [scale_write("a", T0, "autoscaler-0"), scale_write("a", T0 + 12, "autoscaler-1")]
    check = uf.writes_match_decisions(logs, ok, TERMS)
    assert (check.looked_at, check.breaches, check.note) == (
        2,
        0,
        "0 rescales cut short by the end of a term",
    )
    doubled = uf.writes_match_decisions(
        logs, [*ok, scale_write("a", T0 + 1, "autoscaler-0")], TERMS
    )
    assert doubled.examples == [
        "a by autoscaler-0: 2 writes, 1 logged rescales (0 of them the last of a lease term)"
    ]
    stray = uf.writes_match_decisions(logs, [*ok, scale_write("b", T0, "autoscaler-0")], TERMS)
    assert stray.examples == [
        "b by autoscaler-0: 1 writes, 0 logged rescales (0 of them the last of a lease term)"
    ]
    # the right count of writes, but autoscaler-1 made the one autoscaler-0 decided
    swapped = [scale_write("a", T0, "autoscaler-1"), scale_write("a", T0 + 12, "autoscaler-1")]
    assert uf.writes_match_decisions(logs, swapped, TERMS).breaches == 2


def test_a_rescale_may_go_unwritten_only_as_the_last_pass_of_a_term():
    # autoscaler-0's term ends after a rescale at T0 + 9 (SIGTERM mid-pass); it leads again
    # from T0 + 20 under its next identity, which is another log
    cut = {
        "autoscaler-0": [entry("a", T0, result=RESCALE), entry("a", T0 + 9, result=RESCALE)],
        "autoscaler-1": [entry("a", T0 + 11, result=RESCALE)],
    }
    writes = [scale_write("a", T0, "autoscaler-0"), scale_write("a", T0 + 11, "autoscaler-1")]
    check = uf.writes_match_decisions(cut, writes, TERMS)
    assert check.breaches == 0
    assert check.note == "1 rescales cut short by the end of a term"
    # the same lost write in the middle of a term: a pass after it, no term ended
    mid = {
        **cut,
        "autoscaler-0": [
            entry("a", T0, result=RESCALE),
            entry("a", T0 + 5, result=RESCALE),
            entry("a", T0 + 9),
        ],
    }
    assert uf.writes_match_decisions(mid, writes, TERMS).examples == [
        "a by autoscaler-0: 1 writes, 2 logged rescales (0 of them the last of a lease term)"
    ]
    # one identity leading twice: each of its terms may end on a cut rescale, and no more
    twice = {
        "autoscaler-1": [
            entry("a", T0 + 11, result=RESCALE),
            entry("a", T0 + 25, result=RESCALE),
            entry("a", T0 + 26, result=RESCALE),
        ]
    }
    terms = [*TERMS, ("autoscaler-1", stamp(T0 + 24.5))]
    assert uf.writes_match_decisions(twice, [], terms).examples == [
        "a by autoscaler-1: 0 writes, 3 logged rescales (2 of them the last of a lease term)"
    ]
    written = [scale_write("a", T0 + 25, "autoscaler-1")]
    assert uf.writes_match_decisions(twice, written, terms).breaches == 0


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
