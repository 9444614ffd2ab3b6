"""The controller with shards: only held shards are reconciled; giving a shard up cancels its
passes in flight and returns only once they have ended; the shard self-metrics. And the shard
elector's Lease traffic against an in-memory Lease API with resourceVersions (a fake at the
KubeClient seam): two electors share the shards fairly, a conflict drops a shard at once, and
an API that fails every request makes the holder stop before the lease could lapse."""

from __future__ import annotations

import asyncio
import copy
import itertools
from typing import Any

import pytest

from autoscaler.kube.client import Conflict, KubeUnavailable, NotFound
from autoscaler.kube.lease import LeaseConfig
from autoscaler.kube.shardlease import ShardElector
from autoscaler.reconcile import Outcome
from autoscaler.selfmetrics import Snapshot
from autoscaler.sharding import shard_of
from tests.controller.fakes import autoscaler
from tests.controller.test_controller import FakeReconciler, Store, controller

SHARDS = 4


def _names_in(shard: int, count: int = 2) -> list[str]:
    found = [f"as-{i}" for i in range(200) if shard_of(f"default/as-{i}", SHARDS) == shard]
    return found[:count]


async def test_only_held_shards_are_reconciled_and_metrics_say_which() -> None:
    mine, theirs = _names_in(1), _names_in(2)
    rec = FakeReconciler()
    store = Store(*(autoscaler(n) for n in mine + theirs))
    ctl = controller(rec, store)
    ctl.shards = SHARDS
    for obj in store.objects.values():
        ctl.on_event("ADDED", obj)
    ctl.gain_shards(frozenset({1}))
    await asyncio.sleep(0.1)
    try:
        assert {n for n, _ in rec.passes} == set(mine)
        reg = ctl.metrics.registry
        assert reg.get_sample_value("promscaler_autoscaler_shards_held") == 1
        assert reg.get_sample_value("promscaler_autoscaler_shard_autoscalers", {"shard": "1"}) == 2
        assert (
            reg.get_sample_value("promscaler_autoscaler_shard_autoscalers", {"shard": "2"}) is None
        )
        in_ = {"direction": "in"}
        assert reg.get_sample_value("promscaler_autoscaler_shard_handoffs_total", in_) == 1
    finally:
        await ctl.stop()


@pytest.mark.parametrize(
    ("flush", "lost", "flushed"),
    [
        pytest.param(True, {1}, ["one"], id="handoff-flushes-that-shard-first"),
        pytest.param(True, {1, 3}, ["one", "three"], id="handoff-of-all-flushes-all"),
        pytest.param(False, {1}, [], id="lost-lease-writes-nothing"),
    ],
)
async def test_held_back_statuses_are_written_before_a_handoff(
    flush: bool, lost: set[int], flushed: list[str]
) -> None:
    names = {"one": _names_in(1, 1)[0], "three": _names_in(3, 1)[0]}
    rec = FakeReconciler()
    store = Store(*(autoscaler(n) for n in names.values()))
    ctl = controller(rec, store, sync_period=10.0)
    ctl.shards = SHARDS
    ctl.gain_shards(frozenset({1, 3}))
    try:
        await ctl.lose_shards(frozenset(lost), flush=flush)
        want = [f"default/{names[n]}" for n in flushed]
        assert sorted(getattr(rec, "flushed", [])) == sorted(want)
        calls = rec.memory_calls  # flushed before forgotten: the status was still held
        assert all(calls.index(("flush", k)) < calls.index(("forget", k)) for k in want)
    finally:
        await ctl.stop()


async def test_giving_a_shard_up_cancels_its_pass_in_flight_before_returning() -> None:
    slow, other = _names_in(1, 1)[0], _names_in(3, 1)[0]
    rec = FakeReconciler(delays={slow: 30.0})
    store = Store(autoscaler(slow), autoscaler(other))
    ctl = controller(rec, store, sync_period=10.0)
    ctl.shards = SHARDS
    ctl.gain_shards(frozenset({1, 3}))
    await asyncio.sleep(0.05)
    assert rec.count(slow) == 1  # started, sleeping inside its pass
    try:
        await asyncio.wait_for(ctl.lose_shards(frozenset({1})), 1.0)
        assert slow not in ctl._inflight  # ended, not merely asked to
        assert ctl.owned == {3}
        assert not ctl.owns(f"default/{slow}")
        ctl.on_event("MODIFIED", autoscaler(slow, generation=2))  # not ours: no pass
        await asyncio.sleep(0.1)
        assert rec.count(slow) == 1
        assert ctl.leading  # the other shard's workers keep running
        reg = ctl.metrics.registry
        out = {"direction": "out"}
        assert reg.get_sample_value("promscaler_autoscaler_shard_handoffs_total", out) == 1
        assert reg.get_sample_value("promscaler_autoscaler_shards_held") == 1
    finally:
        await ctl.stop()


def _snapshot(replicas: int) -> Snapshot:
    return Snapshot(
        conditions=(("AbleToScale", "True"),),
        paused=False,
        in_fallback=False,
        current_replicas=replicas,
        desired_replicas=replicas,
        min_replicas=1,
        max_replicas=10,
        metrics=(("jobs", 5.0, 10.0),),
    )


async def test_per_autoscaler_gauges_leave_with_the_shard_and_with_leadership() -> None:
    """A replica that gave a shard up (or its lease) stops exporting that shard's
    Autoscalers: their owner exports them now, and ours would go stale on dashboards."""
    mine, moved = _names_in(1, 1)[0], _names_in(2, 1)[0]
    done = {
        n: Outcome(reason="ReadyForNewScale", replicas=3, snapshot=_snapshot(3))
        for n in (mine, moved)
    }
    store = Store(autoscaler(mine), autoscaler(moved))
    ctl = controller(FakeReconciler(outcomes=done), store)
    ctl.shards = SHARDS
    reg = ctl.metrics.registry

    def current(name: str) -> float | None:
        labels = {"namespace": "default", "name": name}
        return reg.get_sample_value("promscaler_autoscaler_current_replicas", labels)

    ctl.gain_shards(frozenset({1, 2}))
    try:
        for _ in range(50):
            if current(mine) and current(moved):
                break
            await asyncio.sleep(0.02)
        assert (current(mine), current(moved)) == (3, 3)
        await ctl.lose_shards(frozenset({2}))
        assert (current(mine), current(moved)) == (3, None)
        ctl.set_leading(False)
        assert (current(mine), current(moved)) == (None, None)
    finally:
        await ctl.stop()


# ---- the elector against an in-memory Lease API ----------------------------------------


class LeaseApi:
    """GET/LIST/POST/PUT/DELETE of Leases with resourceVersion checks; `down` fails all."""

    def __init__(self) -> None:
        self.leases: dict[str, dict[str, Any]] = {}
        self.versions = itertools.count(1)
        self.down = False
        self.hang = False  # every request waits forever (an API server that stopped answering)
        self.calls = 0

    async def request(self, method: str, path: str, *, query=(), body=None, **_: Any) -> Any:
        self.calls += 1
        if self.hang:
            await asyncio.Event().wait()
        if self.down:
            raise KubeUnavailable(503, "ServiceUnavailable", "down")
        name = path.rsplit("/", 1)[1]
        if method == "GET" and name == "leases":
            return {"items": copy.deepcopy(list(self.leases.values()))}
        if method == "GET":
            if name not in self.leases:
                raise NotFound(404, "NotFound", name)
            return copy.deepcopy(self.leases[name])
        if method == "POST":
            name = body["metadata"]["name"]
            if name in self.leases:
                raise Conflict(409, "AlreadyExists", name)
            return self._store(name, body)
        if method == "PUT":
            have = self.leases.get(name)
            if have is None:
                raise NotFound(404, "NotFound", name)
            if have["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"]:
                raise Conflict(409, "Conflict", name)
            return self._store(name, body)
        if method == "DELETE":
            self.leases.pop(name, None)
            return {}
        raise AssertionError(method)

    def _store(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        meta = {**body["metadata"], "name": name, "resourceVersion": str(next(self.versions))}
        self.leases[name] = copy.deepcopy({**body, "metadata": meta})
        return copy.deepcopy(self.leases[name])

    def holders(self) -> dict[str, str]:
        return {n: v["spec"]["holderIdentity"] for n, v in self.leases.items() if "-shard-" in n}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _elector(api: LeaseApi, me: str, clock: Clock, lost: list[tuple[str, frozenset[int]]]):
    config = LeaseConfig(name="pas", identity=me, lease_duration=15, renew_deadline=10)

    async def on_lose(shards: frozenset[int], *, flush: bool = False) -> None:
        lost.append((me, shards))

    return ShardElector(
        api,  # type: ignore[arg-type]
        config,
        shards=SHARDS,
        on_gain=lambda shards: None,
        on_lose=on_lose,
        clock=clock,
    )


async def test_two_electors_share_fairly_and_a_leaving_one_hands_over_at_once() -> None:
    api, clock, lost = LeaseApi(), Clock(), []
    a = _elector(api, "a", clock, lost)
    await a.round()
    assert sorted(a.held) == [0, 1, 2, 3]  # alone: all of them
    b = _elector(api, "b", clock, lost)
    for _ in range(3):
        clock.now += 2
        await b.round()
        await a.round()
    assert len(a.held) == len(b.held) == 2
    assert set(a.held) | set(b.held) == {0, 1, 2, 3}
    assert [who for who, _ in lost] == ["a"]  # a stopped writing before it released
    stop = asyncio.Event()
    stop.set()
    await a.run(stop)  # shutdown: releases its shards and its membership
    clock.now += 2
    await b.round()
    assert sorted(b.held) == [0, 1, 2, 3]


async def test_a_conflict_on_renewal_drops_the_shard_at_once() -> None:
    api, clock, lost = LeaseApi(), Clock(), []
    a = _elector(api, "a", clock, lost)
    await a.round()
    api.leases["pas-shard-2"]["metadata"]["resourceVersion"] = "999"  # someone else wrote it
    clock.now += 2
    await a.round()
    assert ("a", frozenset({2})) in lost
    assert 2 not in a.held  # not retaken in the same round: its lease looks live now


@pytest.mark.parametrize("down_for", [9.0, 12.0], ids=["within-deadline", "past-deadline"])
async def test_an_api_that_fails_everything_stops_the_holder_before_the_lease_lapses(
    down_for: float,
) -> None:
    api, clock, lost = LeaseApi(), Clock(), []
    a = _elector(api, "a", clock, lost)
    await a.round()
    api.down = True
    while clock.now + 2 <= down_for:
        clock.now += 2
        await a.round()
    stopped = bool(lost)
    # the renew deadline (10 s) is measured from the last good renewal's send time
    assert stopped == (down_for >= 10)
    if stopped:
        assert a.held == {}
        assert clock.now < 15, "stopped before anyone could see the lease expire"


async def test_a_hung_api_stops_the_holder_at_the_renew_deadline() -> None:
    """A renewal that never returns must not keep the replica writing: the round is cut at the
    earliest renew deadline and the late shards are given up without waiting for the server."""
    api, lost = LeaseApi(), []
    config = LeaseConfig(name="pas", identity="a", lease_duration=1.5, renew_deadline=0.5)

    async def on_lose(shards: frozenset[int], *, flush: bool = False) -> None:
        lost.append(shards)

    a = ShardElector(
        api,  # type: ignore[arg-type]
        config,
        shards=SHARDS,
        on_gain=lambda shards: None,
        on_lose=on_lose,
    )
    await a.bounded_round()
    assert sorted(a.held) == list(range(SHARDS))
    api.hang = True
    start = asyncio.get_running_loop().time()
    await asyncio.wait_for(a.bounded_round(), timeout=5)  # returns: the round was cut short
    took = asyncio.get_running_loop().time() - start
    assert a.held == {}
    assert lost == [frozenset(range(SHARDS))]
    assert took < config.lease_duration, "stopped before anyone could see the lease expire"
