"""Leader election on a coordination.k8s.io/v1 Lease, client-go's algorithm in small.

Acquire when the Lease is absent, ours, or expired (renewTime + leaseDurationSeconds in the
past, judged by our clock when we last saw it change, as client-go does, so clock skew between
instances does not matter); renew every `retry_period`; give up leadership when a renewal has
not succeeded for `renew_deadline`. Writes use the Lease's resourceVersion, so two candidates
can never both win one round.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from autoscaler.kube.client import Conflict, KubeClient, KubeError, NotFound, sleep_or_stop
from common.kubetime import format_micro_time

__all__ = ["LeaderElector", "LeaseConfig"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaseConfig:
    name: str = "promscaler-autoscaler"  # the Lease's name
    namespace: str = "default"  # the Lease's namespace
    identity: str = ""  # this candidate's holderIdentity (host name + pid by default)
    lease_duration: float = 15.0  # seconds a non-leader waits before taking over; upstream default
    renew_deadline: float = 10.0  # seconds the leader keeps trying to renew before giving up
    retry_period: float = 2.0  # seconds between attempts


class LeaderElector:
    """Runs the election loop; `on_change(leading)` is called on every transition."""

    def __init__(
        self,
        kube: KubeClient,
        config: LeaseConfig,
        *,
        on_change: Callable[[bool], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._kube = kube
        self.config = config
        self._on_change = on_change
        self._clock = clock
        self.leading = False
        self._observed: tuple[str, float] = ("", 0.0)  # (resourceVersion, our clock when seen)
        self._last_renew = 0.0

    @property
    def _path(self) -> str:
        c = self.config
        return f"/apis/coordination.k8s.io/v1/namespaces/{c.namespace}/leases/{c.name}"

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            ok = await self._attempt()
            now = self._clock()
            if ok:
                self._last_renew = now
                self._set(True)
            elif self.leading and now - self._last_renew >= self.config.renew_deadline:
                log.warning("leader election: lost the lease %s", self.config.name)
                self._set(False)
            if await sleep_or_stop(stop, self.config.retry_period):
                break
        if self.leading:
            await self._release()
            self._set(False)

    def _set(self, leading: bool) -> None:
        if leading != self.leading:
            self.leading = leading
            log.info("leader election: %s", "leading" if leading else "following")
            self._on_change(leading)

    async def _attempt(self) -> bool:
        """One round; while leading, bounded by what is left of the renew deadline, as
        client-go bounds its renewal: a leader whose renewal hangs (a slow API server) must
        stop acting before `renew_deadline`, while a follower still waits out the lease."""
        if not self.leading:
            return await self._try()
        left = self.config.renew_deadline - (self._clock() - self._last_renew)
        try:
            async with asyncio.timeout(max(left, 0.0)):
                return await self._try()
        except TimeoutError:
            log.warning("leader election: renewal of %s timed out", self.config.name)
            return False

    async def _try(self) -> bool:
        """One acquire-or-renew round; True when we hold the lease afterwards."""
        try:
            lease = await self._kube.request("GET", self._path)
        except NotFound:
            return await self._create()
        except KubeError as e:
            log.warning("leader election: %s", e)
            return False
        spec = lease.get("spec") or {}
        version = str(lease.get("metadata", {}).get("resourceVersion", ""))
        if version != self._observed[0]:
            self._observed = (version, self._clock())
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration)
        expired = self._clock() - self._observed[1] >= duration
        if holder and holder != self.config.identity and not expired:
            return False
        return await self._update(lease, taking_over=holder != self.config.identity)

    def _spec(self, previous: dict[str, Any], *, taking_over: bool) -> dict[str, Any]:
        now = format_micro_time(datetime.now(UTC))
        spec = {
            **previous,
            "holderIdentity": self.config.identity,
            "leaseDurationSeconds": int(self.config.lease_duration),
            "renewTime": now,
        }
        if taking_over or "acquireTime" not in previous:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(previous.get("leaseTransitions") or 0) + (
                1 if previous.get("holderIdentity") else 0
            )
        return spec

    async def _create(self) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
            "spec": self._spec({}, taking_over=True),
        }
        path = self._path.rpartition("/")[0]
        try:
            await self._kube.request("POST", path, body=body)
        except KubeError as e:  # Conflict: someone else created it first
            log.info("leader election: create lease: %s", e)
            return False
        return True

    async def _update(self, lease: dict[str, Any], *, taking_over: bool) -> bool:
        body = {**lease, "spec": self._spec(lease.get("spec") or {}, taking_over=taking_over)}
        try:
            fresh = await self._kube.request("PUT", self._path, body=body)
        except Conflict:
            return False  # lost the race this round
        except KubeError as e:
            log.warning("leader election: update lease: %s", e)
            return False
        version = str(fresh.get("metadata", {}).get("resourceVersion", ""))
        self._observed = (version, self._clock())
        return True

    async def _release(self) -> None:
        """Step down on shutdown so a follower takes over at once (ReleaseOnCancel)."""
        try:
            lease = await self._kube.request("GET", self._path)
            if (lease.get("spec") or {}).get("holderIdentity") != self.config.identity:
                return
            spec = {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}
            await self._kube.request("PUT", self._path, body={**lease, "spec": spec})
        except KubeError as e:
            log.info("leader election: release: %s", e)
