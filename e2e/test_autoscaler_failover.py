"""Two controllers with leader election: exactly one acts; killing it (SIGKILL, no goodbye)
hands over within the lease duration, without double scaling, and the new leader continues
from the stabilization history the old one left in status."""

from __future__ import annotations

import asyncio
import time

import pytest

from common.kubetime import parse_time
from tests.controller.stack import Stack, e2e_stack, eventually, external_metric, target_ref

pytestmark = [pytest.mark.e2e, pytest.mark.prometheus]

LEASE = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/e2e-autoscaler"
FLAGS = (
    "--leader-elect",
    "--leader-elect-resource-name=e2e-autoscaler",
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
    "--sync-period=1s",
)
WINDOW = 8  # seconds of downscale stabilization


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path) as s:
        yield s


async def lease_spec(st: Stack) -> dict:
    try:
        lease = await st.kube.request("GET", LEASE.format(ns=st.namespace))
    except Exception:
        return {}
    return dict(lease.get("spec") or {})


async def holder(st: Stack) -> str:
    return str((await lease_spec(st)).get("holderIdentity") or "")


async def test_one_leader_acts_and_a_follower_takes_over_with_the_history(stack: Stack, tmp_path):
    st = stack
    behavior = {
        "scaleUp": {"policies": [{"type": "Pods", "value": 10, "periodSeconds": 1}]},
        "scaleDown": {
            "stabilizationWindowSeconds": WINDOW,
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 1}],
        },
    }
    spec = {
        "scaleTargetRef": target_ref("worker"),
        "maxReplicas": 10,
        "metrics": [external_metric("jobs")],
        "behavior": behavior,
    }
    await st.queue("jobs", 55)
    await st.deployment("worker", 1)
    await st.autoscaler("worker", spec)
    procs = {
        name: st.controller_process(
            *FLAGS,
            f"--leader-elect-identity={name}",
            f"--leader-elect-resource-namespace={st.namespace}",
            log=tmp_path / f"{name}.log",
        )
        for name in ("a", "b")
    }
    try:
        first = await eventually(lambda: holder(st), timeout=20, what="a leader")
        other = "b" if first == "a" else "a"

        async def six() -> bool:
            return await st.replicas("worker") == 6

        await eventually(six, timeout=20, what="6 replicas")
        await asyncio.sleep(1.5)
        assert await holder(st) == first

        await st.queue("jobs", 12)  # wants 2, but the window holds 6 for WINDOW seconds
        await asyncio.sleep(2.5)  # the leader records low recommendations into status
        history = (await st.get_autoscaler("worker"))["status"]["history"]
        high = [
            parse_time(r["timestamp"]) for r in history["recommendations"] if r["replicas"] == 6
        ]
        assert high, history
        newest_high = max(high).timestamp()

        procs[first].kill()  # SIGKILL: the lease is not released
        seen: list[dict] = []

        async def taken() -> dict | None:
            spec = await lease_spec(st)
            seen.append(spec)
            return spec if spec.get("holderIdentity") == other else None

        new = await eventually(taken, timeout=10, interval=0.1, what=f"{other} leads")
        # timed on the Lease (both processes' clocks are this machine's), not on this test's
        # polling, whose own delays under load are not the election's
        renewed = max(parse_time(s["renewTime"]) for s in seen if s.get("holderIdentity") == first)
        took = (parse_time(new["acquireTime"]) - renewed).total_seconds()
        print(f"{other} took over {took:.2f}s after {first}'s last renewal")
        assert 3 <= took <= 3 + 1.5, "not before the lease ran out; within a retry or two after"

        async def two() -> bool:
            return await st.replicas("worker") == 2

        await eventually(two, timeout=WINDOW + 10, what="2 replicas")
        scaled_down = time.time()
        # the new leader honoured the old leader's recommendations of 6 (second precision)
        assert scaled_down >= newest_high + WINDOW - 1.0, (scaled_down, newest_high)

        async def rescale_events():
            events = await st.events("worker")
            found = [e for e in events if e["reason"] == "SuccessfulRescale"]
            return found if len(found) >= 2 else None

        await eventually(rescale_events, timeout=5, what="two SuccessfulRescale events")
        await asyncio.sleep(1.5)  # and no third
        rescales = await rescale_events()
        sizes = sorted(e["message"].split(";")[0] for e in rescales)
        assert sizes == ["New size: 2", "New size: 6"], "each change written exactly once"
        assert all(e.get("count", 1) == 1 for e in rescales)
        by = {e["message"].split(";")[0]: e["reportingInstance"] for e in rescales}
        assert by["New size: 6"] != by["New size: 2"], "two different processes acted in turn"
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(10)
            except Exception:
                proc.kill()
                proc.wait()
