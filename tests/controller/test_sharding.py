"""autoscaler.sharding: the stable shard hash, fair share, the per-round plan (tables), and a
simulated group of replicas on shared Leases under kills, restarts and partitions (hypothesis):
no shard is ever held by two replicas, and once the faults stop every shard is held and nobody
holds more than its fair share."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.sharding import LeaseView, fair_share, overdue, plan, shard_of

DURATION, DEADLINE, RETRY = 15.0, 10.0, 2.0  # the CLI's defaults


def test_shard_of_is_pinned_and_spreads() -> None:
    # pinned: a change of hash would move every Autoscaler to another shard on upgrade
    keys = ("default/web", "prod/api", "a/b")
    assert [shard_of(k, 8) for k in keys] == [4, 4, 5]
    assert [shard_of(k, 3) for k in keys] == [2, 1, 2]
    assert shard_of("default/web", 1) == 0
    counts = Counter(shard_of(f"ns{i % 7}/as-{i}", 8) for i in range(8000))
    assert set(counts) == set(range(8))
    assert min(counts.values()) > 800  # 1000 expected per shard


def test_shard_of_matches_sha256() -> None:
    for key in ("default/web", "kube-system/x", "ns/ü"):
        want = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % 5
        assert shard_of(key, 5) == want


@pytest.mark.parametrize(
    ("shards", "live", "want"),
    [(8, 1, 8), (8, 2, 4), (8, 3, 3), (8, 8, 1), (8, 10, 1), (1, 3, 1), (8, 0, 8)],
    ids=["alone", "two", "three-rounds-up", "one-each", "more-replicas", "single", "none"],
)
def test_fair_share(shards: int, live: int, want: int) -> None:
    assert fair_share(shards, live) == want


def _lease(holder: str, seen_at: float = 0.0) -> LeaseView:
    return LeaseView(holder=holder, duration=DURATION, seen_at=seen_at)


PLAN_CASES = [
    # (id, members (name -> seen_at), leases (shard -> (holder, seen_at)), held, now, want)
    ("alone-takes-all", {"a": 0}, {}, set(), 1, {"fair": 4, "acquire": (0, 1, 2, 3)}),
    (
        "joiner-makes-holder-release",
        {"a": 0, "b": 0},
        dict.fromkeys(range(4), ("a", 0)),
        {0, 1, 2, 3},
        1,
        {"fair": 2, "keep": {0, 1}, "release": {2, 3}, "acquire": ()},
    ),
    (
        "dead-member-not-counted",
        {"a": 0, "b": -20},
        {0: ("a", 0), 1: ("a", 0)},
        {0, 1},
        1,
        {"live": ("a",), "fair": 4, "acquire": (2, 3)},
    ),
    (
        "live-lease-of-dead-member-not-free",
        {"a": 0, "b": -20},
        {0: ("b", -5), 1: ("b", -20)},
        set(),
        1,
        {"fair": 4, "acquire": (1, 2, 3)},
    ),
    (
        "released-lease-is-free",
        {"a": 0, "b": 0},
        {0: ("", 0), 1: ("b", 0), 2: ("b", 0), 3: ("b", 0)},
        set(),
        1,
        {"fair": 2, "acquire": (0,)},
    ),
    (
        "second-replica-looks-from-the-middle",
        {"a": 0, "b": 0},
        {},
        set(),
        1,
        {"me": "b", "fair": 2, "acquire": (2, 3)},
    ),
]


@pytest.mark.parametrize(
    ("members", "leases", "held", "now", "want"),
    [c[1:] for c in PLAN_CASES],
    ids=[c[0] for c in PLAN_CASES],
)
def test_plan(
    members: dict[str, float],
    leases: dict[int, tuple[str, float]],
    held: set[int],
    now: float,
    want: dict[str, object],
) -> None:
    me = str(want.get("me", "a"))
    got = plan(
        me=me,
        shards=4,
        members={m: _lease(m, t) for m, t in members.items()},
        leases={k: _lease(h, t) for k, (h, t) in leases.items()},
        held=frozenset(held),
        now=now,
    )
    for name, value in want.items():
        if name == "me":
            continue
        expected = frozenset(value) if isinstance(value, set) else value  # type: ignore[arg-type]
        assert getattr(got, name) == expected, name


@pytest.mark.parametrize(
    ("renewed", "now", "want"),
    [({0: 0.0, 1: 5.0}, 10.0, {0}), ({0: 0.0}, 9.9, set()), ({}, 100.0, set())],
    ids=["one-overdue", "just-in-time", "nothing-held"],
)
def test_overdue(renewed: dict[int, float], now: float, want: set[int]) -> None:
    assert overdue(renewed, now=now, renew_deadline=DEADLINE) == want


# ---- a simulated group -------------------------------------------------------------------


@dataclass
class Stored:
    holder: str
    version: int


@dataclass
class Replica:
    name: str
    partitioned: bool = False
    seen: dict[str, tuple[int, float]] = field(default_factory=dict)  # name -> (version, at)
    renewed: dict[int, float] = field(default_factory=dict)  # held shard -> last renewal sent


@dataclass
class Group:
    shards: int
    leases: dict[str, Stored] = field(default_factory=dict)
    replicas: dict[str, Replica] = field(default_factory=dict)
    version: int = 0

    def write(self, name: str, holder: str) -> None:
        self.version += 1
        self.leases[name] = Stored(holder, self.version)

    def round(self, r: Replica, now: float) -> None:
        """One elector round, as autoscaler.kube.shardlease runs it."""
        for k in overdue(r.renewed, now=now, renew_deadline=DEADLINE):
            del r.renewed[k]  # stop writing: the lease may lapse soon
        if r.partitioned:
            return
        self.write(f"member-{r.name}", r.name)
        views: dict[str, LeaseView] = {}
        for name, stored in self.leases.items():
            if r.seen.get(name, (None,))[0] != stored.version:
                r.seen[name] = (stored.version, now)
            views[name] = LeaseView(stored.holder, DURATION, r.seen[name][1])
        members = {n[7:]: v for n, v in views.items() if n.startswith("member-")}
        shard_views = {int(n[6:]): v for n, v in views.items() if n.startswith("shard-")}
        p = plan(
            me=r.name,
            shards=self.shards,
            members=members,
            leases=shard_views,
            held=frozenset(r.renewed),
            now=now,
        )
        for k in p.release:
            del r.renewed[k]  # stop writing, then release
            self.write(f"shard-{k}", "")
        for k in p.keep:
            if self.leases[f"shard-{k}"].holder != r.name:
                del r.renewed[k]  # a conflict: someone took it over
                continue
            self.write(f"shard-{k}", r.name)
            r.renewed[k] = now
        for k in p.acquire:
            stored = self.leases.get(f"shard-{k}")
            if stored is None or stored.version == r.seen.get(f"shard-{k}", (None,))[0]:
                self.write(f"shard-{k}", r.name)  # the update carries the version seen
                r.renewed[k] = now
                r.seen[f"shard-{k}"] = (self.version, now)

    def assert_one_writer(self) -> None:
        holders = Counter(k for r in self.replicas.values() for k in r.renewed)
        assert all(n == 1 for n in holders.values()), holders


# (what happens, to which replica, rounds that pass afterwards)
EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["kill", "start", "cut", "heal"]), st.integers(0, 4), st.integers(0, 12)
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(shards=st.integers(1, 9), events=EVENTS, seed_replicas=st.integers(1, 4))
def test_group_never_two_writers_and_settles(
    shards: int, events: list[tuple[str, int, int]], seed_replicas: int
) -> None:
    group = Group(shards)
    for i in range(seed_replicas):
        group.replicas[f"r{i}"] = Replica(f"r{i}")
    now, started = 0.0, seed_replicas
    for event, which, rounds in events:
        names = sorted(group.replicas)
        target = group.replicas[names[which % len(names)]] if names else None
        if event == "kill" and target is not None:
            del group.replicas[target.name]  # SIGKILL: it writes nothing more
        elif event == "start":
            group.replicas[f"r{started}"] = Replica(f"r{started}")
            started += 1
        elif event in ("cut", "heal") and target is not None:
            target.partitioned = event == "cut"
        for _ in range(rounds):
            now += RETRY
            for r in list(group.replicas.values()):
                group.round(r, now)
                group.assert_one_writer()
    if not group.replicas:
        return
    for r in group.replicas.values():
        r.partitioned = False
    for _ in range(int(2 * DURATION / RETRY) + 4):  # faults over: two lease durations and then some
        now += RETRY
        for r in group.replicas.values():
            group.round(r, now)
            group.assert_one_writer()
    fair = fair_share(shards, len(group.replicas))
    held = [k for r in group.replicas.values() for k in r.renewed]
    assert sorted(held) == list(range(shards))
    assert all(len(r.renewed) <= fair for r in group.replicas.values())
