"""WorkQueue invariants under any sequence of operations (hypothesis), on a fake clock."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.queue import WorkQueue

KEYS = st.sampled_from(["a", "b", "c", "d"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), KEYS, st.sampled_from([0.0, 1.0, 5.0]), st.booleans()),
        st.tuples(st.just("forget"), KEYS),
        st.tuples(st.just("tick"), st.sampled_from([0.5, 2.0, 10.0])),
        st.tuples(st.just("take")),
        st.tuples(st.just("done"), st.sampled_from([None, 0.0, 3.0])),
    ),
    max_size=40,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def take_due(loop: asyncio.AbstractEventLoop, q: WorkQueue) -> tuple[str, float] | None:
    """`get()` when something is due now, else None (never waits on the fake clock)."""
    try:
        return loop.run_until_complete(asyncio.wait_for(q.get(), 0.01))
    except TimeoutError:
        return None


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_a_key_is_held_by_one_worker_and_never_handed_out_early(ops):
    loop = asyncio.new_event_loop()
    try:
        check(loop, ops)
    finally:
        loop.close()


def check(loop, ops):
    clock = Clock()
    q = WorkQueue(clock=clock)
    held: list[str] = []
    wanted: dict[str, float] = {}  # key -> earliest due time asked for and not yet handed out
    for op in ops:
        if op[0] == "add":
            _, key, delay, urgent = op
            q.add(key, delay=delay, urgent=urgent)
            wanted[key] = min(wanted.get(key, float("inf")), clock.now + delay)
        elif op[0] == "forget":
            q.forget(op[1])
            wanted.pop(op[1], None)
        elif op[0] == "tick":
            clock.now += op[1]
        elif op[0] == "take":
            got = take_due(loop, q)
            if got is not None:
                key, due = got
                assert key not in held, "a key held by a worker was handed out again"
                assert due <= clock.now, "handed out before it was due"
                assert key in wanted
                assert wanted[key] <= due + 1e-9, "due later than the earliest time asked for"
                held.append(key)
                wanted.pop(key, None)
        elif op[0] == "done" and held:
            key = held.pop(0)
            q.done(key, delay=op[1])
            if op[1] is not None:
                wanted[key] = min(wanted.get(key, float("inf")), clock.now + op[1])
    # everything still wanted is eventually handed out, once each
    clock.now += 1000
    seen = set()
    while (got := take_due(loop, q)) is not None:
        assert got[0] not in seen
        assert got[0] not in held
        seen.add(got[0])
    assert seen >= {k for k in wanted if k not in held}
