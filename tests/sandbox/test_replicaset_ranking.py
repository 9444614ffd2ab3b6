"""The sandbox's ReplicaSet picks the pods to delete as upstream's does. The cases are those of
upstream's unit tests: TestSortingActivePodsWithRanks (pkg/controller/controller_utils_test.go,
both gates on), TestGetPodsToDelete's shape (replica_set_test.go) and the deletion-cost parse
(pkg/apis/core/helper), plus the API server's "must be a 32bit integer" check."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from common.kubetime import format_time
from sandbox.replicaset_ranking import (
    ANNOTATION,
    annotation_causes,
    deletion_cost,
    less,
    pods_to_delete,
    related_pods,
)

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
NOW_NS = int(NOW.timestamp() * 1e9)
MONTH, H2, H5, H8 = (NOW - timedelta(days=30), NOW - timedelta(hours=2),
                     NOW - timedelta(hours=5), NOW - timedelta(hours=8))  # fmt: skip


def pod(
    name: str,
    node: str = "node",
    phase: str = "Running",
    ready: bool = False,
    restarts: int = 0,
    ready_since: datetime | None = None,
    created: datetime | None = None,
    cost: str | None = None,
) -> dict[str, Any]:
    """Upstream's test helper `pod(...)`: a zero time is an absent one."""
    meta: dict[str, Any] = {"name": name, "uid": ""}
    if created is not None:
        meta["creationTimestamp"] = format_time(created)
    if cost is not None:
        meta["annotations"] = {ANNOTATION: cost}
    status: dict[str, Any] = {"phase": phase}
    if ready:
        cond: dict[str, Any] = {"type": "Ready", "status": "True"}
        if ready_since is not None:
            cond["lastTransitionTime"] = format_time(ready_since)
        status["conditions"] = [cond]
        status["containerStatuses"] = [{"restartCount": restarts}]
    return {"metadata": meta, "spec": {"nodeName": node}, "status": status}


UNSCHEDULED = pod("unscheduled", "", "Pending")
PENDING = pod("pending", phase="Pending")
UNKNOWN = pod("unknown-phase", phase="Unknown")
NOT_READY = pod("not-ready")
READY_NO_TIME = pod("ready-no-last-transition-time", ready=True)
READY_NOW = pod("ready-now", ready=True, ready_since=NOW, created=NOW)
READY_THEN = pod("ready-then", ready=True, ready_since=MONTH, created=MONTH)
HIGH_RESTARTS = pod("ready-high-restarts", ready=True, restarts=9001, ready_since=NOW, created=NOW)
CREATED_THEN = pod("ready-now-created-then", ready=True, ready_since=NOW, created=MONTH)
LOW_COST = pod("low-deletion-cost", ready=True, ready_since=NOW, created=MONTH, cost="10")
HIGH_COST = pod("high-deletion-cost", ready=True, ready_since=NOW, created=MONTH, cost="100")
UNSCHEDULED_5H = pod("unscheduled-5-hours", "", "Pending", ready_since=H5, created=H5)
UNSCHEDULED_8H = pod("unscheduled-10-hours", "", "Pending", ready_since=H8, created=H8)
READY_2H = pod("ready-2-hours", "", ready=True, ready_since=H2, created=MONTH)
READY_5H = pod("ready-5-hours", "", ready=True, ready_since=H5, created=MONTH)
READY_8H = pod("ready-10-hours", "", ready=True, ready_since=H8, created=MONTH)


@pytest.mark.parametrize(
    ("p1", "p2"),
    [
        pytest.param(UNSCHEDULED, UNSCHEDULED, id="unscheduled"),
        pytest.param(PENDING, PENDING, id="pending"),
        pytest.param(UNKNOWN, UNKNOWN, id="unknown"),
        pytest.param(NOT_READY, NOT_READY, id="not-ready"),
        pytest.param(CREATED_THEN, CREATED_THEN, id="ready-now-created-then"),
        pytest.param(READY_NOW, READY_NOW, id="ready-now"),
        pytest.param(READY_THEN, READY_THEN, id="ready-then"),
        pytest.param(HIGH_RESTARTS, HIGH_RESTARTS, id="high-restarts"),
        # same log2 bucket of age, same (empty) UID: neither goes first
        pytest.param(UNSCHEDULED_5H, UNSCHEDULED_8H, id="log-scale-created-5h-8h"),
        pytest.param(READY_5H, READY_8H, id="log-scale-ready-5h-8h"),
    ],
)
def test_upstream_equality_cases(p1: dict[str, Any], p2: dict[str, Any]) -> None:
    assert not less((p1, 1), (p2, 1), now=NOW_NS)
    assert not less((p2, 1), (p1, 1), now=NOW_NS)


@pytest.mark.parametrize(
    ("lesser", "greater"),
    [
        pytest.param((UNSCHEDULED, 1), (PENDING, 2), id="unassigned-first"),
        pytest.param((UNSCHEDULED, 2), (PENDING, 1), id="unassigned-first-whatever-rank"),
        pytest.param((PENDING, 1), (UNKNOWN, 2), id="pending-before-unknown"),
        pytest.param((UNKNOWN, 1), (NOT_READY, 2), id="unknown-before-running"),
        pytest.param((NOT_READY, 1), (READY_NO_TIME, 1), id="not-ready-first"),
        pytest.param((READY_NO_TIME, 1), (READY_NOW, 1), id="zero-ready-time-first"),
        pytest.param((READY_NOW, 2), (READY_NO_TIME, 1), id="rank-before-ready-time"),
        pytest.param((READY_NOW, 1), (READY_THEN, 1), id="ready-recently-first"),
        pytest.param((READY_NOW, 2), (READY_THEN, 1), id="more-colocated-first"),
        pytest.param((HIGH_RESTARTS, 1), (READY_NOW, 1), id="more-restarts-first"),
        pytest.param((READY_NOW, 2), (HIGH_RESTARTS, 1), id="rank-before-restarts"),
        pytest.param((READY_NOW, 1), (CREATED_THEN, 1), id="newer-first"),
        pytest.param((CREATED_THEN, 2), (READY_NOW, 1), id="rank-before-creation"),
        pytest.param((LOW_COST, 2), (HIGH_COST, 1), id="lower-cost-first-whatever-rank"),
        pytest.param((READY_2H, 1), (READY_5H, 1), id="log-scale-ready-2h-before-5h"),
    ],
)
def test_upstream_inequality_cases(
    lesser: tuple[dict[str, Any], int], greater: tuple[dict[str, Any], int]
) -> None:
    assert less(lesser, greater, now=NOW_NS)
    assert not less(greater, lesser, now=NOW_NS)


def test_not_ready_goes_before_a_lower_cost() -> None:
    """Rule 3 before rule 4: a busy pod that is not ready is still deleted first."""
    busy_not_ready = pod("busy", cost="1000")
    idle_ready = pod("idle", ready=True, ready_since=NOW, cost="0")
    assert less((busy_not_ready, 1), (idle_ready, 1), now=NOW_NS)


def test_a_log_scale_tie_goes_to_the_smaller_uid() -> None:
    a, b = pod("a", ready=True, ready_since=H5), pod("b", ready=True, ready_since=H8)
    a["metadata"]["uid"], b["metadata"]["uid"] = "2", "1"
    assert less((b, 1), (a, 1), now=NOW_NS)
    assert not less((a, 1), (b, 1), now=NOW_NS)


@pytest.mark.parametrize(
    ("value", "want", "valid"),
    [
        pytest.param(None, 0, True, id="absent"),
        pytest.param("10", 10, True, id="positive"),
        pytest.param("-10", -10, True, id="negative"),
        pytest.param("0", 0, True, id="zero"),
        pytest.param("2147483647", 2**31 - 1, True, id="int32-max"),
        pytest.param("-2147483648", -(2**31), True, id="int32-min"),
        pytest.param("-007", -7, True, id="leading-zeros-after-minus"),
        pytest.param("+10", 0, False, id="plus-sign"),
        pytest.param("008", 0, False, id="leading-zeros"),
        pytest.param("", 0, False, id="empty"),
        pytest.param("-", 0, False, id="minus-alone"),
        pytest.param("2147483648", 0, False, id="above-int32"),
        pytest.param("-2147483649", 0, False, id="below-int32"),
        pytest.param("1_000", 0, False, id="underscore"),
        pytest.param(" 1", 0, False, id="space"),
        pytest.param("١٢", 0, False, id="non-ascii-digits"),
        pytest.param("ten", 0, False, id="words"),
    ],
)
def test_deletion_cost_parse(value: str | None, want: int, valid: bool) -> None:
    annotations = {} if value is None else {ANNOTATION: value}
    cost, error = deletion_cost(annotations)
    assert cost == want
    assert (error is None) is valid


def test_an_invalid_cost_counts_as_zero_in_the_ranking() -> None:
    invalid = pod("invalid", ready=True, ready_since=NOW, cost="+5")
    one = pod("one", ready=True, ready_since=NOW, cost="1")
    minus = pod("minus", ready=True, ready_since=NOW, cost="-1")
    assert less((invalid, 1), (one, 1), now=NOW_NS)
    assert less((minus, 1), (invalid, 1), now=NOW_NS)


@pytest.mark.parametrize(
    ("old", "new", "refused"),
    [
        pytest.param(None, "12", False, id="create-valid"),
        pytest.param(None, "+12", True, id="create-invalid"),
        pytest.param("1", "x", True, id="update-valid-to-invalid"),
        pytest.param("x", "y", False, id="update-already-invalid-ratchets"),
        pytest.param("x", "3", False, id="update-invalid-to-valid"),
    ],
)
def test_the_api_server_checks_the_annotation(old: str | None, new: str, refused: bool) -> None:
    stored = None if old is None else {ANNOTATION: old}
    causes = annotation_causes({ANNOTATION: new}, stored)
    if refused:
        assert causes == [
            (
                "FieldValueInvalid",
                f"metadata.annotations[{ANNOTATION}]",
                f'Invalid value: "{new}": must be a 32bit integer',
            )
        ]
    else:
        assert causes == []


@dataclass(frozen=True)
class Delete:
    pods: list[dict[str, Any]]
    related: list[dict[str, Any]]
    diff: int
    want: list[str]


def _on(name: str, node: str, **kw: Any) -> dict[str, Any]:
    return pod(name, node, ready=True, ready_since=MONTH, created=MONTH, **kw)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(Delete([], [], 0, []), id="nothing"),
        pytest.param(Delete([_on("a", "n1"), _on("b", "n2")], [], 2, ["a", "b"]), id="all-of-them"),
        pytest.param(
            Delete(
                [_on("a", "n1"), _on("b", "n2"), _on("c", "n2")],
                [_on("a", "n1"), _on("b", "n2"), _on("c", "n2"), _on("x", "n1"), _on("y", "n1")],
                1,
                ["a"],
            ),
            id="the-pod-on-the-node-with-most-related-pods",
        ),
        pytest.param(
            Delete(
                [_on("a", "n1"), _on("b", "n2", cost="-5"), _on("c", "n2")],
                [_on("a", "n1"), _on("x", "n1"), _on("y", "n1"), _on("b", "n2"), _on("c", "n2")],
                1,
                ["b"],
            ),
            id="cost-before-colocation",
        ),
        pytest.param(
            Delete(
                [
                    _on(n, "n1", cost=c)
                    for n, c in zip("abcde", ["9", "0", "7", "3", "0"], strict=True)
                ],
                [],
                2,
                ["b", "e"],
            ),
            id="five-pods-three-busy-two-idle-deleted",
        ),
    ],
)
def test_pods_to_delete(case: Delete) -> None:
    for _ in range(10):  # the answer does not depend on the order the pods come in
        pods = random.sample(case.pods, len(case.pods))
        got = pods_to_delete(pods, case.related, case.diff, now=NOW_NS)
        assert sorted(p["metadata"]["name"] for p in got) == case.want


def test_related_pods_are_those_of_every_replicaset_of_the_same_owner() -> None:
    def rs(name: str, owner: str | None, app: str) -> dict[str, Any]:
        refs = [{"uid": owner, "controller": True}] if owner else []
        return {
            "metadata": {"name": name, "ownerReferences": refs},
            "spec": {"selector": {"matchLabels": {"app": app}}},
        }

    def labelled(name: str, app: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "uid": name, "labels": {"app": app}}}

    sets = [rs("new", "d1", "v2"), rs("old", "d1", "v1"), rs("other", "d2", "v3")]
    pods = [labelled("p1", "v1"), labelled("p2", "v2"), labelled("p3", "v3")]
    assert [p["metadata"]["name"] for p in related_pods(sets[0], sets, pods)] == ["p2", "p1"]
    assert related_pods(rs("orphan", None, "v1"), sets, pods) == []
