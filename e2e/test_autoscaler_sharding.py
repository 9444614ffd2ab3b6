"""Three controllers share eight shard Leases (`run --shards 8`): each Autoscaler is written
by exactly one replica (the sandbox's audit of /scale and status writes, by User-Agent); a
SIGKILLed replica's shards are taken over within a lease duration and a retry period; a
restarted one gets its fair share back; no value is ever written twice; and with the API server
failing lease requests and slow, there is still never a second writer. Also the API calls a
steady pass costs (no relists; status writes only on change, or one history refresh a minute).

`PROMSCALER_E2E_SHARDED_AUTOSCALERS` sets the count (CI: 40; `make bench`-sized runs: 300)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections import Counter, defaultdict
from typing import Any

import pytest

from autoscaler.sharding import shard_of
from sandbox.manifests import crd
from tests.controller.stack import (
    AUTOSCALERS,
    FAST,
    Stack,
    e2e_stack,
    eventually,
    external_metric,
)

N = int(os.environ.get("PROMSCALER_E2E_SHARDED_AUTOSCALERS", "40"))
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.timeout(120 + 3 * N),  # three controller processes, a kill, a restart
    pytest.mark.sandbox_only(
        "the sandbox's audit of /scale and status writes by client (GET /sandbox/stats) and "
        "its fault plan (PUT /sandbox/faults)"
    ),
]

SHARDS = 8
WAIT = 60 + N // 5  # seconds for every target to reach a value (300 on 2 busy cores: lags)
LEASE, RETRY = 4.0, 1.0  # seconds: short, so a takeover fits in a CI test
NAME = "e2e-shards"
FLAGS = (
    f"--shards={SHARDS}",
    f"--leader-elect-resource-name={NAME}",
    f"--leader-elect-lease-duration={LEASE:g}s",
    "--leader-elect-renew-deadline=3s",
    f"--leader-elect-retry-period={RETRY:g}s",
    "--sync-period=1s",
)
GROUP, VERSION = "shard.promscaler.dev", "v1"
# no downscale window, so 5 -> 2 happens at once; a steady pass then writes status only for the
# history refresh (once per 60 s per Autoscaler, at a point of the minute set by its name)
BEHAVIOR = {**FAST, "scaleDown": {**FAST["scaleDown"], "stabilizationWindowSeconds": 0}}
# a pod-less target with /scale, so N targets cost the sandbox no pods
WORKERS_CRD = crd(GROUP, "Worker", version=VERSION, scale=True)


@pytest.fixture
async def stack(tmp_path):
    async with e2e_stack(tmp_path) as s:
        yield s


def _workers(st: Stack) -> str:
    return f"/apis/{GROUP}/{VERSION}/namespaces/{st.namespace}/workers"


async def _setup(st: Stack, n: int, value: float) -> None:
    await st.kube.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=WORKERS_CRD
    )
    await eventually(lambda: _served(st), timeout=10, what="the Worker CRD served")
    await asyncio.gather(*(st.queue(f"q{i}", value) for i in range(n)))
    for start in range(0, n, 20):  # in batches: hundreds at once time out on the sandbox
        await asyncio.gather(*(_pair(st, i) for i in range(start, min(n, start + 20))))


async def _pair(st: Stack, i: int) -> None:
    """Worker `w<i>` and Autoscaler `a<i>` on queue `q<i>`."""
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Worker",
        "metadata": {"name": f"w{i}"},
        "spec": {"replicas": 1, "selector": f"app=w{i}"},
    }
    await st.kube.request("POST", _workers(st), body=body)
    ref = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Worker", "name": f"w{i}"}
    spec = {
        "scaleTargetRef": ref,
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [external_metric(f"q{i}")],  # averageValue 10: value / 10 replicas
        "behavior": BEHAVIOR,
    }
    await st.autoscaler(f"a{i}", spec)


async def _served(st: Stack) -> bool:
    try:
        await st.kube.request("GET", _workers(st))
    except Exception:
        return False
    return True


async def _all_at(st: Stack, want: int, names: set[str] | None = None) -> bool:
    items = (await st.kube.request("GET", _workers(st))).get("items") or []
    return all(
        w["spec"]["replicas"] == want
        for w in items
        if names is None or w["metadata"]["name"] in names
    )


async def _holders(st: Stack) -> dict[int, str]:
    path = f"/apis/coordination.k8s.io/v1/namespaces/{st.namespace}/leases"
    items = (await st.kube.request("GET", path)).get("items") or []
    out = {}
    for item in items:
        name = item["metadata"]["name"]
        if name.startswith(f"{NAME}-shard-"):
            out[int(name.rsplit("-", 1)[1])] = str(item["spec"].get("holderIdentity") or "")
    return out


async def _audit(st: Stack) -> dict[str, Any]:
    return await st.kube.request("GET", "/sandbox/stats")


def _agent(entry: dict[str, Any]) -> str:
    return str(entry["agent"]).rpartition("(")[2].rstrip(")")  # "promscaler-autoscaler (a)"


def _start(st: Stack, name: str, tmp_path: Any) -> subprocess.Popen[bytes]:
    return st.controller_process(
        *FLAGS,
        f"--leader-elect-identity={name}",
        f"--leader-elect-resource-namespace={st.namespace}",
        log=tmp_path / f"{name}.log",
    )


def _stop(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.terminate()
    for proc in procs.values():
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _check_fair(holders: dict[int, str], replicas: int) -> None:
    counts = Counter(holders.values())
    assert sorted(holders) == list(range(SHARDS)), holders
    assert "" not in counts, holders
    assert max(counts.values()) <= -(-SHARDS // replicas), counts


def _writes_per_target(audit: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    per: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in audit["scaleWrites"]:
        if entry["resource"] == "workers":
            per[entry["name"]].append(entry)
    return per


async def test_three_replicas_share_eight_shards_through_a_kill_and_a_restart(stack, tmp_path):
    st = stack
    await _setup(st, N, 10)  # 1 replica each: nothing to write yet
    procs = {name: _start(st, name, tmp_path) for name in ("a", "b", "c")}
    try:
        holders = await eventually(
            lambda: _settled(st, 3), timeout=30, interval=0.5, what="shards spread"
        )
        _check_fair(holders, 3)
        await asyncio.gather(*(st.queue(f"q{i}", 30) for i in range(N)))
        await eventually(lambda: _all_at(st, 3), timeout=WAIT, interval=0.5, what="all at 3")
        first = _writes_per_target(await _audit(st))
        assert {w: len(es) for w, es in first.items()} == {f"w{i}": 1 for i in range(N)}
        if await _holders(st) == holders:  # a loaded machine may move a shard (late renewal)
            for name, entries in first.items():  # each written by its shard's holder
                shard = shard_of(f"{st.namespace}/a{name[1:]}", SHARDS)
                assert _agent(entries[0]) == holders[shard], (name, shard)

        await _steady_costs(st, 3)

        victim = Counter(holders.values()).most_common(1)[0][0]
        lost = {k for k, h in holders.items() if h == victim}
        procs[victim].kill()  # SIGKILL: nothing released
        killed = time.monotonic()
        procs[victim].wait()

        async def taken_over() -> bool:
            now = await _holders(st)
            return all(now.get(k) not in ("", victim) for k in lost)

        await eventually(taken_over, timeout=LEASE + 10, interval=0.1, what="takeover")
        took = time.monotonic() - killed
        print(f"shards {sorted(lost)} of {victim} taken over {took:.2f}s after SIGKILL")
        assert took <= LEASE + 3 * RETRY, "a lease duration and a round or two"
        await asyncio.gather(*(st.queue(f"q{i}", 50) for i in range(N)))
        await eventually(lambda: _all_at(st, 5), timeout=WAIT, interval=0.5, what="all at 5")

        procs[victim] = _start(st, victim, tmp_path)  # back: it gets its share again
        holders = await eventually(
            lambda: _settled(st, 3, need=victim), timeout=30, interval=0.5, what="rebalanced"
        )
        _check_fair(holders, 3)
        await asyncio.gather(*(st.queue(f"q{i}", 20) for i in range(N)))
        await eventually(lambda: _all_at(st, 2), timeout=WAIT, interval=0.5, what="all at 2")
        await asyncio.sleep(2)  # and nothing more is written

        per = _writes_per_target(await _audit(st))
        assert {w: len(es) for w, es in per.items()} == {f"w{i}": 3 for i in range(N)}, (
            "each of 3, 5, 2 written exactly once: never twice in a lease term"
        )
    finally:
        _stop(procs)


async def _settled(st: Stack, replicas: int, need: str = "") -> dict[int, str] | None:
    holders = await _holders(st)
    counts = Counter(holders.values())
    if len(holders) < SHARDS or "" in counts or len(counts) != replicas:
        return None
    if (need and counts[need] == 0) or max(counts.values()) > -(-SHARDS // replicas):
        return None
    return holders


async def _steady_costs(st: Stack, replicas: int) -> None:
    """API calls over a few sync periods with nothing changing: no LIST of Autoscalers (the
    watch resumes), and status written only when it changes or for the history refresh (at
    most once a minute per Autoscaler), not on every pass."""
    await eventually(
        lambda: _recorded(st, replicas), timeout=WAIT, what="the rescales' status recorded"
    )
    before, held = await _audit(st), await _holders(st)
    await asyncio.sleep(4)  # four 1 s sync periods: about 4 passes per Autoscaler
    after, moved = await _audit(st), await _holders(st) != held
    count = lambda doc: Counter(  # noqa: E731 - tiny, local
        {(r["verb"], r["resource"]): r["count"] for r in doc["requests"]}
    )
    delta = count(after) - count(before)
    passes = 4 * N
    per_pass = {f"{v} {r}": round(n / passes, 3) for (v, r), n in sorted(delta.items())}
    print(f"API calls per pass over {passes} passes: {per_pass}")
    status = list(after["statusWrites"][len(before["statusWrites"]) :])
    assert delta[("list", "autoscalers")] == 0, per_pass
    print(f"status writes: {len(status)}; a shard moved meanwhile: {moved}")
    if not moved:  # a new holder's first pass may refresh the history it persisted
        per = Counter(str(e["name"]) for e in status)
        assert max(per.values(), default=0) <= 1, f"written more than once in 4 passes: {per}"


async def _recorded(st: Stack, replicas: int) -> bool:
    """Every Autoscaler's status shows its target settled at `replicas` (the passes after the
    rescales are done)."""
    path = f"{AUTOSCALERS}/namespaces/{st.namespace}/autoscalers"
    items = (await st.kube.request("GET", path)).get("items") or []
    return len(items) >= N and all(
        (a.get("status") or {}).get("currentReplicas") == replicas
        and (a.get("status") or {}).get("desiredReplicas") == replicas
        for a in items
    )


async def test_lease_errors_and_latency_never_make_two_writers(stack, tmp_path):
    st = stack
    n = max(8, N // 3)
    await _setup(st, n, 30)
    plan = {
        "seed": 13,
        "errors": [{"code": 503, "rate": 0.3, "resources": ["leases"]}],
        "latency": [{"seconds": 0.3, "distribution": "uniform", "max": 1.0}],
    }
    await st.kube.request("PUT", "/sandbox/faults", body=plan)
    procs = {name: _start(st, name, tmp_path) for name in ("a", "b", "c")}
    try:
        await eventually(lambda: _all_at(st, 3), timeout=WAIT, interval=0.5, what="all at 3")
        await asyncio.gather(*(st.queue(f"q{i}", 60) for i in range(n)))
        await eventually(lambda: _all_at(st, 6), timeout=WAIT, interval=0.5, what="all at 6")
        await asyncio.sleep(3)
        audit = await _audit(st)
        assert audit["injected"].get("http503", 0) > 0, audit["injected"]
        per = _writes_per_target(audit)
        assert {w: len(es) for w, es in per.items()} == {f"w{i}": 2 for i in range(n)}, (
            "3 and 6, each written once, whoever held the shard"
        )
    finally:
        _stop(procs)
        await st.kube.request("PUT", "/sandbox/faults", body={})
