"""Scheduling: generation changes, isolation of slow autoscalers, backoff, fast zero polling,
leadership."""

from __future__ import annotations

import asyncio
import itertools
from datetime import datetime

import pytest

from autoscaler.controller import Controller, ControllerConfig
from autoscaler.queue import WorkQueue
from autoscaler.reconcile import Outcome
from tests.controller.fakes import autoscaler


class Store:
    def __init__(self, *objs):
        self.objects = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for o in objs}


class FakeReconciler:
    """Records pass start times (loop time); outcome and duration per name."""

    def __init__(self, outcomes=None, delays=None):
        self.outcomes = outcomes or {}
        self.delays = delays or {}
        self.passes: list[tuple[str, float]] = []

    async def reconcile(self, obj, *, now: datetime, write: bool = True) -> Outcome:
        name = obj["metadata"]["name"]
        self.passes.append((name, asyncio.get_running_loop().time()))
        await asyncio.sleep(self.delays.get(name, 0))
        return self.outcomes.get(name, Outcome(reason="ReadyForNewScale", replicas=1))

    def forget(self, key):
        self.forgotten = [*getattr(self, "forgotten", []), key]
        self.memory_calls = [*getattr(self, "memory_calls", []), ("forget", key)]

    async def flush(self, key):
        self.flushed = [*getattr(self, "flushed", []), key]
        self.memory_calls = [*getattr(self, "memory_calls", []), ("flush", key)]

    def count(self, name):
        return sum(1 for n, _ in self.passes if n == name)


def controller(reconciler, store, **config):
    base = {"sync_period": 0.3, "zero_poll_interval": 0.05, "workers": 2, "jitter": 0.0}
    return Controller(reconciler, store, config=ControllerConfig(**{**base, **config}))


async def run_for(ctl, seconds):
    ctl.set_leading(True)
    try:
        await asyncio.sleep(seconds)
    finally:
        await ctl.stop()


async def test_each_autoscaler_is_reconciled_every_sync_period():
    rec = FakeReconciler()
    store = Store(autoscaler("a"), autoscaler("b"))
    await run_for(controller(rec, store), 0.75)
    # at 0, 0.3 and 0.6 seconds
    assert rec.count("a") == 3
    assert rec.count("b") == 3


async def test_generation_change_reconciles_at_once():
    rec = FakeReconciler()
    obj = autoscaler("a")
    store = Store(obj)
    ctl = controller(rec, store, sync_period=10.0)
    ctl.on_event("ADDED", obj)
    ctl.set_leading(True)
    await asyncio.sleep(0.05)
    assert rec.count("a") == 1
    ctl.on_event("MODIFIED", obj)  # a status update: same generation
    await asyncio.sleep(0.05)
    assert rec.count("a") == 1
    changed = autoscaler("a", generation=2)
    store.objects["default/a"] = changed
    ctl.on_event("MODIFIED", changed)
    await asyncio.sleep(0.05)
    await ctl.stop()
    assert rec.count("a") == 2


async def test_a_slow_autoscaler_does_not_delay_the_others():
    rec = FakeReconciler(delays={"slow": 5.0})
    store = Store(autoscaler("slow"), autoscaler("b"), autoscaler("c"))
    await run_for(controller(rec, store, pass_timeout=0.5), 0.75)
    assert rec.count("b") == 3
    assert rec.count("c") == 3
    assert rec.count("slow") >= 1


async def test_failures_back_off_per_object():
    rec = FakeReconciler(outcomes={"bad": Outcome(reason="FailedGetScale", error="boom")})
    store = Store(autoscaler("bad"), autoscaler("good"))
    ctl = controller(rec, store, sync_period=1.0, min_backoff=0.1)
    await run_for(ctl, 0.8)
    times = [t for n, t in rec.passes if n == "bad"]
    gaps = [round(b - a, 1) for a, b in itertools.pairwise(times)]
    assert gaps[:3] == [0.1, 0.2, 0.4], "1st, 2nd, 3rd failures back off 0.1s, 0.2s, 0.4s"
    assert rec.count("good") == 1
    assert ctl.metrics.errors.labels("FailedGetScale")._value.get() == len(times)


async def test_a_target_asleep_at_zero_is_polled_fast():
    asleep = Outcome(reason="ReadyForNewScale", replicas=0, at_zero_awake=True)
    rec = FakeReconciler(outcomes={"zero": asleep})
    store = Store(autoscaler("zero"), autoscaler("b"))
    await run_for(controller(rec, store, sync_period=1.0), 0.5)
    assert rec.count("zero") >= 8  # every 0.05s
    assert rec.count("b") == 1


async def test_losing_leadership_stops_all_passes():
    rec = FakeReconciler()
    store = Store(autoscaler("a"))
    ctl = controller(rec, store)
    ctl.set_leading(True)
    await asyncio.sleep(0.05)
    ctl.set_leading(False)
    before = len(rec.passes)
    await asyncio.sleep(0.4)
    assert len(rec.passes) == before == 1
    ctl.set_leading(True)  # a new term starts with a full round
    await asyncio.sleep(0.05)
    await ctl.stop()
    assert len(rec.passes) == 2


async def test_deleted_autoscaler_is_forgotten():
    rec = FakeReconciler()
    obj = autoscaler("a")
    store = Store(obj)
    ctl = controller(rec, store)
    ctl.set_leading(True)
    await asyncio.sleep(0.05)
    del store.objects["default/a"]
    ctl.on_event("DELETED", obj)
    await asyncio.sleep(0.4)
    await ctl.stop()
    assert rec.count("a") == 1


async def test_queue_keeps_earliest_due_and_requeues_keys_added_while_active():
    q = WorkQueue()
    q.add("a", delay=10)
    q.add("a", delay=0)  # earlier wins
    assert len(q) == 1
    key, _ = await asyncio.wait_for(q.get(), 1)
    assert key == "a"
    q.add("a")  # added while a worker holds it: not handed out twice
    assert len(q) == 0
    q.done("a")
    key, _ = await asyncio.wait_for(q.get(), 1)
    assert key == "a"


async def test_urgent_keys_go_before_an_overdue_routine_backlog():
    q = WorkQueue()
    for i in range(5):
        q.add(f"routine-{i}")
    await asyncio.sleep(0.01)
    q.add("asleep-at-zero", urgent=True)
    first, _ = await asyncio.wait_for(q.get(), 1)
    assert first == "asleep-at-zero"
    q.done(first)
    second, _ = await asyncio.wait_for(q.get(), 1)
    assert second == "routine-0"


async def test_an_urgent_add_promotes_a_queued_routine_key_once():
    q = WorkQueue()
    q.add("a", delay=0.0)
    q.add("a", delay=0.0, urgent=True)
    assert len(q) == 1
    key, _ = await asyncio.wait_for(q.get(), 1)
    assert key == "a"
    q.done(key)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(q.get(), 0.1)


class SteppedClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_keys_due_within_one_slot_are_handed_out_after_one_timer():
    clock = SteppedClock(100.0)
    q = WorkQueue(clock=clock, slack=0.25)
    got: list[tuple[str, float]] = []

    async def worker():
        while True:
            got.append(await q.get())  # held, never done: each key is handed out once

    workers = [asyncio.create_task(worker()) for _ in range(3)]
    try:
        await asyncio.sleep(0.01)  # all of them waiting in line
        for key, delay in (("a", 10.01), ("b", 10.1), ("c", 10.2), ("d", 10.3)):
            q.add(key, delay=delay)
        # one timer, for the end of the slot (110.0, 110.25] the first three fall due in
        assert q._timer_at == 110.25
        clock.now = 110.25
        q._timer.cancel()
        q._ring()  # as the timer would, 10.25 s from now
        await asyncio.sleep(0.01)
        assert sorted(got) == [("a", 110.01), ("b", 110.1), ("c", 110.2)]  # lag measured
        # the next key keeps the slot of the wait it was added with, though it is due soon
        assert q._timer_at == 110.5
        q.add("now")  # due at once: not held back to the end of a slot
        await asyncio.sleep(0.01)
        assert got[-1] == ("now", 110.25)
        assert len(got) == 4  # "d" waits for its slot
    finally:
        for task in workers:
            task.cancel()


@pytest.mark.parametrize(
    ("slack", "delay", "rings"),
    [
        pytest.param(0.05, 15.01, 115.05, id="a-sync-period-away-at-most-50ms-late"),
        pytest.param(0.05, 0.1, 100.1, id="a-100ms-backoff-within-a-tenth-of-it"),
        pytest.param(0.05, 0.13, 7703 * 0.013, id="a-130ms-delay-on-a-13ms-grid"),
        pytest.param(0.0, 15.01, 115.01, id="no-slack"),
    ],
)
async def test_the_timer_rings_at_the_end_of_a_slot_a_tenth_of_the_delay_at_most(
    slack, delay, rings
):
    clock = SteppedClock(100.0)
    q = WorkQueue(clock=clock, slack=slack)
    waiting = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.add("a", delay=delay)
    assert q._timer_at == pytest.approx(rings, abs=1e-9)
    assert 0 <= q._timer_at - (100.0 + delay) <= min(slack, delay / 10) + 1e-9
    waiting.cancel()


@pytest.mark.parametrize(
    ("cancelled", "delays"),
    [
        pytest.param(0, [0.0, 0.0, 0.0], id="three-due-now"),
        pytest.param(1, [0.05, 0.1, 0.15], id="timer-wakes-one-each-time"),
        pytest.param(2, [0.05, 0.05, 0.0], id="a-cancelled-waiter-takes-no-wakeup"),
    ],
)
async def test_idle_workers_are_woken_one_per_due_key(cancelled, delays):
    q = WorkQueue()
    got: list[str] = []

    async def worker():
        while True:
            key, _ = await q.get()
            got.append(key)  # held, never done: each key is handed out once

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    gone = [asyncio.create_task(q.get()) for _ in range(cancelled)]
    await asyncio.sleep(0.01)  # all of them waiting in line
    for task in gone:
        task.cancel()
    for i, delay in enumerate(delays):
        q.add(f"k{i}", delay=delay)
    await asyncio.sleep(0.3)
    try:
        assert sorted(got) == [f"k{i}" for i in range(len(delays))]
        assert len(q._waiters) == len(workers)  # all back in line; the cancelled ones left it
    finally:
        for task in workers:
            task.cancel()


class SwallowingReconciler(FakeReconciler):
    """A pass whose I/O turns a cancellation into an ordinary failure (as a library may)."""

    async def reconcile(self, obj, *, now, write=True):
        self.passes.append((obj["metadata"]["name"], asyncio.get_running_loop().time()))
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            return Outcome(reason="FailedGetScale", error="request cancelled")
        return Outcome(reason="ReadyForNewScale", replicas=1)


async def test_workers_stop_even_when_a_pass_swallows_the_cancellation():
    rec = SwallowingReconciler()
    store = Store(*(autoscaler(f"a{i}") for i in range(4)))
    ctl = controller(rec, store, sync_period=0.01, min_backoff=0.01)
    ctl.set_leading(True)
    await asyncio.sleep(0.2)
    await asyncio.wait_for(ctl.stop(), 2)
    stopped = len(rec.passes)
    await asyncio.sleep(0.3)
    assert len(rec.passes) == stopped, "no pass may start after stop()"
