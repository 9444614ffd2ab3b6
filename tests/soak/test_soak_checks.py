"""The soak's pure parts: the seeded schedule and each invariant on a clean and a breaching
input (so a check that cannot fail would show here)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest

from sandbox.faultplan import parse_plan
from sandbox.promfaults import PromFaultPlan
from soak import checks
from soak.schedule import KINDS, make_schedule, prom_plan, sandbox_plan


def test_the_schedule_is_seeded_sequential_and_leaves_warmup_and_quiet_alone():
    one = make_schedule(seed=5, duration=600, warmup=20, quiet=60)
    assert one == make_schedule(seed=5, duration=600, warmup=20, quiet=60)
    assert one != make_schedule(seed=6, duration=600, warmup=20, quiet=60)
    assert one[0].start == 20
    assert one[-1].end <= 540
    assert all(a.end < b.start for a, b in itertools.pairwise(one))
    assert {f.kind for f in one} <= set(KINDS)


def test_each_replica_is_spared_for_half_the_run_so_its_resources_can_be_judged():
    faults = make_schedule(seed=3, duration=3600, warmup=20, quiet=60)
    kills = [f for f in faults if f.kind.startswith("kill-") or f.also_kill]
    assert kills, "a one-hour schedule kills processes"
    assert {f.replica for f in kills if f.start < 1800} == {1}
    assert {f.replica for f in kills if f.start >= 1800} == {0}


def test_every_kind_makes_a_valid_plan():
    for fault in make_schedule(seed=1, duration=7200, warmup=0, quiet=0):
        if fault.kind.startswith("sandbox-"):
            parse_plan(sandbox_plan(fault))  # raises on a bad plan
        elif fault.kind.startswith("prom-"):
            PromFaultPlan(**prom_plan(fault))


def entry(
    current, desired, *, failed=False, rescale=None, low=1, high=8, now="2026-01-01T00:00:10Z"
):
    metric = {"error": "503"} if failed else {"items": [{"value": "1"}]}
    spec = {"scaleTargetRef": {"name": "a"}, "minReplicas": low, "maxReplicas": high}
    return {
        "document": {
            "now": now,
            "autoscaler": {"spec": spec},
            "scale": {"spec": {"replicas": current}},
            "metrics": [metric],
        },
        "result": {
            "desiredReplicas": desired,
            "rescale": desired != current if rescale is None else rescale,
        },
    }


@pytest.mark.parametrize(
    ("entries", "breaches"),
    [
        ([entry(4, 2)], 0),
        ([entry(4, 4, failed=True)], 0),
        ([entry(4, 6, failed=True)], 0),
        ([entry(4, 2, failed=True)], 1),
    ],
    ids=["down-with-metrics", "hold-on-failure", "up-on-failure", "down-on-failure"],
)
def test_no_scale_down_on_a_failed_metric(entries, breaches):
    assert checks.no_scale_down_on_failed_metric(entries).breaches == breaches


@pytest.mark.parametrize(
    ("e", "breaches"),
    [(entry(1, 8), 0), (entry(1, 9), 1), (entry(2, 0, low=0), 0), (entry(2, 0), 1)],
    ids=["at-max", "above-max", "zero-allowed", "below-min"],
)
def test_rescales_within_bounds(e, breaches):
    assert checks.bounds_in_log([e]).breaches == breaches


def write(t, user, name="a"):
    return {"time": t, "user": user, "namespace": "soak", "name": name}


@pytest.mark.parametrize(
    ("writes", "breaches"),
    [
        ([write(0, "x"), write(1, "x"), write(5, "y")], 0),
        ([write(0, "x"), write(1, "y")], 1),
        ([write(0, "x"), write(0.5, "y", name="b")], 0),
    ],
    ids=["hand-over-after-the-gap", "two-writers", "different-objects"],
)
def test_single_writer(writes, breaches):
    assert checks.single_writer(writes, min_gap=2.0).breaches == breaches


@pytest.mark.parametrize(
    ("probe", "breaches"),
    [
        (checks.Probe(1, 0, 200, 0.1, False, False), 0),
        (checks.Probe(1, 0, 503, 0.1, False, False), 1),
        (checks.Probe(1, 0, 503, 2.1, True, False), 0),
        (checks.Probe(1, 0, 404, 0.1, True, False), 0),
        (checks.Probe(1, 0, 500, 0.1, True, False), 1),
        (checks.Probe(1, 0, 503, 9.0, True, False), 1),
        (checks.Probe(1, 0, 0, 0.0, False, True), 0),
    ],
    ids=[
        "healthy",
        "503-while-healthy",
        "503-on-failure",
        "nan-policy-404",
        "500",
        "hang",
        "restart-grace",
    ],
)
def test_adapter_answers(probe, breaches):
    assert checks.adapter_answers([probe], timeout=2.0).breaches == breaches


def test_converged_compares_the_last_pass_in_the_window():
    after = datetime(2026, 1, 1, tzinfo=UTC)
    before = datetime(2026, 1, 1, 0, 1, tzinfo=UTC)
    passes = [entry(5, 3, now="2026-01-01T00:00:10Z"), entry(3, 3, now="2026-01-01T00:00:20Z")]
    ok = checks.converged(passes, {"a": 3}, after=after, before=before)
    assert (ok.looked_at, ok.breaches) == (1, 0)
    assert checks.converged(passes, {"a": 5}, after=after, before=before).breaches == 1
    # a later pass that could not read the metric holds: the last one that could still counts
    failed = [*passes, entry(3, 3, failed=True, now="2026-01-01T00:00:30Z")]
    assert checks.converged(failed, {"a": 3}, after=after, before=before).breaches == 0
    only_failed = [entry(3, 3, failed=True, now="2026-01-01T00:00:30Z")]
    assert checks.converged(only_failed, {"a": 3}, after=after, before=before).breaches == 1
    assert checks.converged([], {"a": 3}, after=after, before=before).breaches == 1
    # the other replica's log may hold the later pass (a hand-over in the window)
    other = [entry(3, 4, now="2026-01-01T00:00:40Z")]
    assert checks.converged(passes + other, {"a": 4}, after=after, before=before).breaches == 0


def samples(rss_per_hour=0.0, fds=lambda t: 10, *, cache_mb=0.0):
    """An hour of a process, one sample a minute: RSS growing by `rss_per_hour` (plus a cache
    of `cache_mb` that fills over the first 20 minutes), fds from `fds(t)`."""
    return [
        checks.Sample(
            t,
            "adapter-0",
            0,
            100 + rss_per_hour * t / 3600 + cache_mb * min(1.0, t / 1200),
            int(fds(t)),
            5,
        )
        for t in range(0, 3600, 60)
    ]


def wobble(t):
    return 30 + (t // 60) % 5  # 30..34: connections and passes in flight come and go


@pytest.mark.parametrize(
    ("series", "breaches"),
    [
        (samples(1.0), 0),
        (samples(20.0), 1),
        (samples(cache_mb=12.0), 0),  # 36 MB/h over its first 20 minutes, then flat
        (samples(cache_mb=12.0, rss_per_hour=8.0), 1),
        (samples(fds=lambda t: 10 + (3 if t > 1800 else 0)), 1),
        (samples(fds=wobble), 0),
        (samples(fds=lambda t: wobble(t) + t // 300), 1),  # one more every 5 minutes
    ],
    ids=[
        "flat",
        "rss-grows",
        "a-cache-fills-then-flat",
        "a-cache-fills-and-a-leak",
        "fds-step-up",
        "fds-wobble",
        "fds-leak-under-wobble",
    ],
)
def test_resource_slopes(series, breaches):
    check, rows = checks.resource_slopes(series, warmup=60, judge_after=600)
    assert check.breaches == breaches, check
    assert rows[0][0] == "adapter-0"
