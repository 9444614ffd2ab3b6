"""Shard Leases: `--shards N` replicas share N coordination.k8s.io/v1 Leases
`<name>-shard-<k>`, each holding at most its fair share (`autoscaler.sharding.plan`).

Every `retry_period` a replica:
1. stops writing for held shards whose last renewal was sent `renew_deadline` or more ago (the
   Lease may lapse before long: another replica takes it only after `lease_duration`);
2. renews its membership Lease `<name>-member-<hash of identity>` (liveness for fair share);
3. renews its shard Leases, each an update carrying the resourceVersion it last wrote, so a
   Lease someone else has taken over fails with a conflict and is dropped at once;
4. lists the group's Leases (one LIST by label), plans, gives up extra shards (stop writing,
   then release) and tries free ones (an update on the resourceVersion seen, or a create).
On shutdown it gives up every shard and its membership, so the others take over at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from autoscaler.kube.client import Conflict, KubeClient, KubeError, NotFound, sleep_or_stop
from autoscaler.kube.lease import LeaseConfig
from autoscaler.sharding import LeaseView, overdue, plan
from common.kubetime import format_micro_time

__all__ = ["GROUP_LABEL", "ShardElector"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]


class OnLose(Protocol):
    """Stop writing for `shards`; `flush`: their Leases are still ours (a handoff), so the
    statuses held back may be written first (`Controller.lose_shards`)."""

    def __call__(self, shards: frozenset[int], *, flush: bool = ...) -> Awaitable[None]: ...


GROUP_LABEL = "promscaler.dev/lease-group"  # the base Lease name; one LIST finds the group
ROLE_LABEL = "promscaler.dev/lease-role"  # "member" or "shard"
MEMBER_GC = 4  # lease durations a membership Lease stays expired before anyone deletes it


class ShardElector:
    """Holds this replica's fair share of the shard Leases; `on_gain(shards)` after taking,
    `await on_lose(shards)` before giving up (it must return only once nothing is written)."""

    def __init__(
        self,
        kube: KubeClient,
        config: LeaseConfig,
        *,
        shards: int,
        on_gain: Callable[[frozenset[int]], None],
        on_lose: OnLose,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._kube = kube
        self.config = config
        self.shards = shards
        self._on_gain, self._on_lose = on_gain, on_lose
        self._clock = clock
        self.held: dict[int, JSON] = {}  # shard -> the Lease as we last wrote it
        self._renewed: dict[int, float] = {}  # shard -> when its last good renewal was sent
        self._member: JSON | None = None  # our membership Lease as last written
        self._seen: dict[str, tuple[str, float]] = {}  # name -> (resourceVersion, when seen)
        self.member_name = f"{config.name}-member-{_digest(config.identity)}"

    @property
    def _base(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.config.namespace}/leases"

    def shard_name(self, shard: int) -> str:
        return f"{self.config.name}-shard-{shard}"

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.bounded_round()
            if await sleep_or_stop(stop, self.config.retry_period):
                break
        await self._give_up(frozenset(self.held), release=True)
        await self._leave()

    async def bounded_round(self) -> None:
        """A round cut short when a held shard's renew deadline comes first: a hung API server
        must not keep this replica writing for a shard that another may take over once the
        lease runs out (client-go bounds its renewal the same way)."""
        try:
            async with asyncio.timeout(self._budget()):
                await self.round()
        except TimeoutError:
            now = self._clock()
            late = overdue(self._renewed, now=now, renew_deadline=self.config.renew_deadline)
            log.warning("sharding: a round outlived the renew deadline; stopping %s", sorted(late))
            await self._give_up(late, release=False)  # no API call: the server is not answering

    def _budget(self) -> float | None:
        """Seconds until the earliest renew deadline of a held shard; None when none is held."""
        if not self._renewed:
            return None
        first = min(self._renewed.values()) + self.config.renew_deadline
        return max(0.0, first - self._clock())

    async def round(self) -> None:
        now = self._clock()
        late = overdue(self._renewed, now=now, renew_deadline=self.config.renew_deadline)
        if late:
            log.warning("sharding: could not renew shards %s in time; stopping", sorted(late))
            await self._give_up(late, release=False)
        await self._renew_member(now)
        await asyncio.gather(*(self._renew(k, now) for k in list(self.held)))
        try:
            listed = await self._kube.request(
                "GET", self._base, query=[("labelSelector", f"{GROUP_LABEL}={self.config.name}")]
            )
        except KubeError as e:
            log.warning("sharding: list leases: %s", e)
            return
        await self._rebalance(listed.get("items") or [], now)

    async def _rebalance(self, items: list[JSON], now: float) -> None:
        members, leases, bodies = self._views(items)
        p = plan(
            me=self.config.identity,
            shards=self.shards,
            members=members,
            leases=leases,
            held=frozenset(self.held),
            now=now,
        )
        if p.release:
            log.info("sharding: %d live replicas, fair share %d", len(p.live), p.fair)
            await self._give_up(p.release, release=True)
        for shard in p.acquire:
            await self._acquire(shard, bodies.get(shard), now)
        await self._collect(items, now)

    def _views(
        self, items: list[JSON]
    ) -> tuple[dict[str, LeaseView], dict[int, LeaseView], dict[int, JSON]]:
        members: dict[str, LeaseView] = {}
        leases: dict[int, LeaseView] = {}
        bodies: dict[int, JSON] = {}
        prefix = f"{self.config.name}-shard-"
        for item in items:
            meta, spec = item.get("metadata") or {}, item.get("spec") or {}
            view = self._view(meta, spec)
            if (meta.get("labels") or {}).get(ROLE_LABEL) == "member":
                members[view.holder] = view
            elif str(meta.get("name", "")).startswith(prefix):
                shard = str(meta["name"])[len(prefix) :]
                if shard.isdigit() and int(shard) < self.shards:
                    leases[int(shard)], bodies[int(shard)] = view, item
        return members, leases, bodies

    def _view(self, meta: JSON, spec: JSON) -> LeaseView:
        """The Lease with the time we first saw its resourceVersion (client-go's rule)."""
        name, version = str(meta.get("name", "")), str(meta.get("resourceVersion", ""))
        if self._seen.get(name, ("", 0.0))[0] != version:
            self._seen[name] = (version, self._clock())
        duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration)
        return LeaseView(str(spec.get("holderIdentity") or ""), duration, self._seen[name][1])

    # ---- writes ----------------------------------------------------------------------------
    def _spec(self, previous: JSON, *, holder: str, taking_over: bool) -> JSON:
        now = format_micro_time(datetime.now(UTC))
        spec = {
            **previous,
            "holderIdentity": holder,
            "leaseDurationSeconds": int(self.config.lease_duration),
            "renewTime": now,
        }
        if taking_over:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(previous.get("leaseTransitions") or 0) + (
                1 if previous.get("holderIdentity") else 0
            )
        return spec

    def _new(self, name: str, role: str) -> JSON:
        labels = {GROUP_LABEL: self.config.name, ROLE_LABEL: role}
        meta = {"name": name, "namespace": self.config.namespace, "labels": labels}
        spec = self._spec({}, holder=self.config.identity, taking_over=True)
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": meta,
            "spec": spec,
        }

    async def _put(self, lease: JSON, spec: JSON) -> JSON:
        name = lease["metadata"]["name"]
        fresh = await self._kube.request(
            "PUT", f"{self._base}/{name}", body={**lease, "spec": spec}
        )
        self._seen[name] = (
            str(fresh.get("metadata", {}).get("resourceVersion", "")),
            self._clock(),
        )
        return fresh

    async def _renew(self, shard: int, sent: float) -> None:
        lease = self.held[shard]
        try:
            self.held[shard] = await self._put(
                lease, self._spec(lease["spec"], holder=self.config.identity, taking_over=False)
            )
            self._renewed[shard] = sent
        except (Conflict, NotFound):
            log.warning("sharding: shard %d was taken over; stopping", shard)
            await self._give_up(frozenset({shard}), release=False)
        except KubeError as e:  # kept until the renew deadline passes
            log.warning("sharding: renew shard %d: %s", shard, e)

    async def _acquire(self, shard: int, lease: JSON | None, sent: float) -> None:
        try:
            if lease is None:
                body = self._new(self.shard_name(shard), "shard")
                fresh = await self._kube.request("POST", self._base, body=body)
            else:
                spec = self._spec(
                    lease.get("spec") or {}, holder=self.config.identity, taking_over=True
                )
                fresh = await self._put(lease, spec)
        except KubeError as e:  # Conflict: another replica was faster
            log.info("sharding: take shard %d: %s", shard, e)
            return
        self.held[shard], self._renewed[shard] = fresh, sent
        log.info("sharding: took shard %d", shard)
        self._on_gain(frozenset({shard}))

    async def _give_up(self, shards: frozenset[int], *, release: bool) -> None:
        """Stop writing for `shards` first; then, with `release`, hand their Leases back."""
        if not shards:
            return
        await self._on_lose(shards, flush=release)  # still ours: skipped statuses go first
        for shard in shards:
            lease = self.held.pop(shard, None)
            self._renewed.pop(shard, None)
            if release and lease is not None:
                spec = {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}
                try:
                    await self._put(lease, spec)
                    log.info("sharding: released shard %d", shard)
                except KubeError as e:  # it lapses on its own within a lease duration
                    log.info("sharding: release shard %d: %s", shard, e)

    async def _renew_member(self, sent: float) -> None:
        del sent  # membership is advisory (fair share), never a write permission
        try:
            if self._member is None:
                self._member = await self._kube.request(
                    "POST", self._base, body=self._new(self.member_name, "member")
                )
            else:
                spec = self._spec(
                    self._member["spec"], holder=self.config.identity, taking_over=False
                )
                self._member = await self._put(self._member, spec)
        except KubeError as e:
            log.warning("sharding: membership lease: %s", e)
            self._member = await self._fetch_member()

    async def _fetch_member(self) -> JSON | None:
        """Our membership Lease as the server has it (None: absent, created next round)."""
        try:
            return await self._kube.request("GET", f"{self._base}/{self.member_name}")
        except KubeError:
            return None

    async def _leave(self) -> None:
        if self._member is None:
            return
        spec = {**self._member["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}
        try:
            await self._put(self._member, spec)
        except KubeError as e:
            log.info("sharding: leave: %s", e)

    async def _collect(self, items: list[JSON], now: float) -> None:
        """Delete membership Leases of replicas gone for a while (each restart makes one),
        with a resourceVersion precondition so a renewed one survives."""
        for item in items:
            meta, spec = item.get("metadata") or {}, item.get("spec") or {}
            if (meta.get("labels") or {}).get(ROLE_LABEL) != "member":
                continue
            seen = self._seen.get(str(meta.get("name")), ("", now))[1]
            duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration)
            if now - seen < MEMBER_GC * max(duration, self.config.lease_duration):
                continue
            pre = {"preconditions": {"resourceVersion": meta.get("resourceVersion")}}
            try:
                await self._kube.request("DELETE", f"{self._base}/{meta['name']}", body=pre)
            except KubeError as e:
                log.debug("sharding: collect %s: %s", meta.get("name"), e)


def _digest(identity: str) -> str:
    """A Lease-name-safe stand-in for an identity (host names and pids may hold `_`)."""
    return hashlib.sha256(identity.encode()).hexdigest()[:12]
