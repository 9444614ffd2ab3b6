"""A shard handoff is invisible in status: one Autoscaler's passes run by replica A, then (its
shard moved: `Controller.lose_shards(flush=True)`, which writes the statuses A had held back)
by replica B, a new Reconciler that knows only what A persisted, give the same writes as one
replica running them all: the same scale writes, the same events (none twice), the same
conditions with the same lastTransitionTime, the same history. The real decision core, a fake
API server at the Cluster seam that keeps the status written (as the informer of the next
holder would show it), and time passed in."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from autoscaler.core import decide_document
from autoscaler.reconcile import ControllerOptions, Reconciler
from tests.controller.fakes import FakeCluster, autoscaler, external, external_value

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SYNC = timedelta(seconds=15)
# the queue per pass: up to 3 replicas, then down to 1, held by a 60 s downscale window
QUEUE = ["30", "30", "30", "10", "10", "10", "10", "10", "10", "10", "25", "25"]


class ApiServer(FakeCluster):
    """Keeps the Autoscaler as stored: a status patch is merged into it (null removes)."""

    def __init__(self, obj: dict[str, Any]) -> None:
        super().__init__()
        self.stored = obj
        self.seen: list[dict[str, Any]] = []  # the stored status after each pass

    async def patch_status(
        self, namespace: str, name: str, status: dict[str, Any]
    ) -> dict[str, Any]:
        await super().patch_status(namespace, name, status)
        merged = {**(self.stored.get("status") or {}), **status}
        self.stored = {**self.stored, "status": {k: v for k, v in merged.items() if v is not None}}
        return copy.deepcopy(self.stored)


def replica() -> Reconciler:
    return Reconciler(None, options=ControllerOptions(), decide=decide_document)  # type: ignore[arg-type]


async def run(handoffs: set[int]) -> ApiServer:
    """The passes of QUEUE, every SYNC; before each pass in `handoffs`, a new replica takes
    the shard over (what the old one kept in memory is gone with it)."""
    spec = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    obj = autoscaler(metrics=[external("queue", "10", average=True)])
    obj["spec"]["behavior"] = spec
    api = ApiServer(obj)
    api.add_target("web", 1)
    holder = replica()
    for i, value in enumerate(QUEUE):
        if i in handoffs:  # what Controller.lose_shards(flush=True) does with the old holder
            await holder.flush("default/web")
            holder.forget("default/web")
            holder = replica()
        holder._cluster = api
        holder._status._cluster = api
        api.metrics["queue"] = external_value(value)
        seen = copy.deepcopy(api.stored)  # what this holder's informer shows
        await holder.reconcile(seen, now=T0 + i * SYNC)
        api.seen.append(copy.deepcopy(api.stored.get("status") or {}))
    return api


def status_view(api: ApiServer) -> list[dict[str, Any]]:
    """What a handoff must not change, after every pass: the stored conditions (their
    lastTransitionTime too), desired replicas, last scale time, the scale events."""
    out = []
    for status in api.seen:
        history = status.get("history") or {}
        out.append(
            {
                "conditions": status.get("conditions"),
                "desiredReplicas": status.get("desiredReplicas"),
                "lastScaleTime": status.get("lastScaleTime"),
                "scaleUpEvents": history.get("scaleUpEvents"),
                "scaleDownEvents": history.get("scaleDownEvents"),
            }
        )
    return out


@pytest.mark.parametrize(
    "handoffs",
    [
        pytest.param({1}, id="right-after-scale-up"),
        pytest.param({5}, id="inside-the-downscale-window"),
        pytest.param({8}, id="as-the-window-ends"),
        pytest.param({3, 6, 9, 11}, id="every-few-passes"),
    ],
)
async def test_handoff_is_invisible_in_status(handoffs: set[int]) -> None:
    one = await run(set())
    moved = await run(handoffs)
    assert moved.scale_writes == one.scale_writes
    assert [r for _, r in one.scale_writes] == [3, 1, 3]  # the scenario scales both ways
    assert moved.events == one.events
    rescales = [e for e in moved.events if e[2] == "SuccessfulRescale"]
    assert len(rescales) == len(moved.scale_writes)  # one event per write, none repeated
    assert status_view(moved) == status_view(one)
    assert moved.stored["status"]["history"] == one.stored["status"]["history"]
