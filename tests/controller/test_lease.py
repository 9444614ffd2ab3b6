"""Leader election against an in-memory Lease API: a hung renewal never keeps a leader acting
past its renew deadline (client-go bounds the renewal the same way)."""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any

from autoscaler.kube.client import Conflict, NotFound
from autoscaler.kube.lease import LeaderElector, LeaseConfig

CONFIG = LeaseConfig(
    name="l",
    namespace="ns",
    identity="me",
    lease_duration=2.0,
    renew_deadline=0.6,
    retry_period=0.1,
)


class LeaseApi:
    """One Lease with resourceVersions; `hang` makes every request wait forever."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0
        self.hang = False

    async def request(self, method: str, path: str, *, body: Any = None, **_: Any) -> Any:
        if self.hang:
            await asyncio.Event().wait()
        if method == "GET":
            if self.lease is None:
                raise NotFound(404, "NotFound", "lease not found")
            return copy.deepcopy(self.lease)
        if method == "POST" and self.lease is not None:
            raise Conflict(409, "AlreadyExists", "exists")
        if method == "PUT":
            seen = body["metadata"].get("resourceVersion")
            if self.lease is None or seen != self.lease["metadata"]["resourceVersion"]:
                raise Conflict(409, "Conflict", "the object has been modified")
        self.version += 1
        self.lease = {
            **copy.deepcopy(body),
            "metadata": {**body["metadata"], "resourceVersion": str(self.version)},
        }
        return copy.deepcopy(self.lease)


async def wait_for(check, *, timeout: float) -> float:
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, "timed out"
        await asyncio.sleep(0.02)
    return time.monotonic() - start


async def test_a_hung_renewal_steps_down_within_the_renew_deadline():
    api = LeaseApi()
    changes: list[bool] = []
    elector = LeaderElector(api, CONFIG, on_change=changes.append)  # type: ignore[arg-type]
    stop = asyncio.Event()
    task = asyncio.create_task(elector.run(stop))
    try:
        await wait_for(lambda: elector.leading, timeout=2)
        assert api.lease is not None
        assert api.lease["spec"]["holderIdentity"] == "me"
        api.hang = True  # the API server stops answering mid-term
        took = await wait_for(lambda: not elector.leading, timeout=CONFIG.lease_duration)
        # stepped down within the renew deadline (plus one retry period), so before a follower,
        # which waits the whole lease duration from the last renewal, can take over
        assert took <= CONFIG.renew_deadline + CONFIG.retry_period + 0.2
        assert changes == [True, False]
    finally:
        stop.set()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_healthy_leader_keeps_the_lease():
    api = LeaseApi()
    elector = LeaderElector(api, CONFIG, on_change=lambda _: None)  # type: ignore[arg-type]
    stop = asyncio.Event()
    task = asyncio.create_task(elector.run(stop))
    try:
        await wait_for(lambda: elector.leading, timeout=2)
        await asyncio.sleep(3 * CONFIG.renew_deadline)
        assert elector.leading
        assert api.version >= 5, "renewed every retry period"
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=5)
    assert api.lease is not None
    assert api.lease["spec"]["holderIdentity"] == "", "released on stop"
