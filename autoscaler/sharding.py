"""Sharding, the pure part: which shard an Autoscaler is in, and which shard Leases a replica
should take or give up, given what it last saw of the Leases and its own clock.

Liveness comes from the Leases themselves: each replica renews a membership Lease of its own,
and a replica counts as live while its membership Lease is unexpired. (Holders of shard Leases
alone would not do: a replica that has just started holds no shard yet, so nobody would ever
make room for it.) A Lease is expired when its resourceVersion has not changed for its
`leaseDurationSeconds` on the observer's clock, as client-go judges it, so clock skew between
replicas does not matter.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

__all__ = ["LeaseView", "Plan", "fair_share", "overdue", "plan", "shard_of"]


def shard_of(key: str, shards: int) -> int:
    """The shard of `namespace/name`: the first 8 bytes of its SHA-256, big-endian, mod
    `shards`. Stable across processes, versions and languages (Python's `hash` is salted)."""
    if shards <= 1:
        return 0
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") % shards


def fair_share(shards: int, live: int) -> int:
    """ceil(shards / live): what one replica may hold; all of them when it is alone."""
    return math.ceil(shards / max(1, live))


@dataclass(frozen=True)
class LeaseView:
    """One Lease as a replica last saw it."""

    holder: str  # spec.holderIdentity ("" when released)
    duration: float  # spec.leaseDurationSeconds
    seen_at: float  # the observer's monotonic clock when its resourceVersion last changed

    def live(self, now: float) -> bool:
        """Held, and renewed within its duration (by the observer's clock)."""
        return bool(self.holder) and now - self.seen_at < self.duration


@dataclass(frozen=True)
class Plan:
    live: tuple[str, ...]  # live replicas, sorted, this one included
    fair: int  # shards this replica may hold
    keep: frozenset[int]  # held shards to renew
    release: frozenset[int]  # held shards to give up (stop writing first)
    acquire: tuple[int, ...]  # free shards to try, in order of preference


def plan(
    *,
    me: str,
    shards: int,
    members: dict[str, LeaseView],
    leases: dict[int, LeaseView],
    held: frozenset[int],
    now: float,
) -> Plan:
    """What to do this round. `members`: membership Leases by replica; `leases`: shard Leases
    by shard (absent: never created); `held`: the shards this replica holds now."""
    live = tuple(sorted({m for m, v in members.items() if v.live(now)} | {me}))
    fair = fair_share(shards, len(live))
    ordered = sorted(held)
    keep, release = frozenset(ordered[:fair]), frozenset(ordered[fair:])
    free = [k for k in range(shards) if k not in held and _free(leases.get(k), now)]
    # each replica starts looking at a different shard, so they rarely race for the same one
    start = (live.index(me) * shards) // len(live)
    free.sort(key=lambda k: (k - start) % shards)
    room = max(0, fair - len(keep))
    return Plan(live, fair, keep, release, tuple(free[:room]))


def _free(lease: LeaseView | None, now: float) -> bool:
    """Takeable: never created, released, or not renewed within its duration. A shard Lease
    still renewed by a replica whose membership has lapsed is not free: its holder may be
    writing until the shard Lease itself expires."""
    return lease is None or not lease.live(now)


def overdue(renewed: dict[int, float], *, now: float, renew_deadline: float) -> frozenset[int]:
    """Held shards whose last successful renewal began `renew_deadline` or more ago: stop
    writing for them now. The deadline is shorter than the lease duration, and is measured from
    when the renewal was sent (the server's write can be no earlier), so the holder stops
    before any other replica can see the Lease expire."""
    return frozenset(k for k, t in renewed.items() if now - t >= renew_deadline)
