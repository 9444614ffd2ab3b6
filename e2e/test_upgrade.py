"""A rolling upgrade from the previous release to this tree, then a rolling downgrade back,
with two adapters, two leader-elected controllers and 30 Autoscalers caught inside a
stabilization window, a scale-to-zero cooldown, a fallback, or a queue that keeps moving
(tests/support/upgrade_fleet.py).

The previous release runs from its own tree and venv (tests/support/previous_release.py); the
sandbox stands in for Kubernetes and is not upgraded. Processes are replaced one at a time as a
Deployment's rolling update with maxSurge 0 replaces pods: an adapter leaves the Service's
Endpoints before it is stopped and rejoins once ready; a controller is stopped (SIGTERM) and
its successor starts under a new identity. Then, from the sandbox's write audit and the
decision logs: every pass replays exactly under both versions' `decide`, every /scale write is a
logged decision, never two writers in a lease term, the window, the cooldown and the fallback
counters carried across both rolls, and the aggregation layer never lost the metrics API for a
sync period.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import platform
import ssl
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from autoscaler.decisionlog import read_log, replay_stream
from common.kubetime import parse_time
from common.version import version
from demo.rest import Rest, RestError
from demo.stack import Stack
from sandbox.prometheus import PrometheusServer, remote_write
from soak import checks, fleet
from soak.bundle import Bundle, Timing
from tests.support import upgrade_fleet as uf
from tests.support.previous_release import Release, previous_release

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.prometheus,
    pytest.mark.timeout(420),
    pytest.mark.sandbox_only("the sandbox's write audit, and replacing processes one at a time"),
]

TIMING = Timing(
    sync_period=1.0,
    workers=8,
    lease_duration=3.0,
    renew_deadline=2.0,
    retry_period=0.5,
    prometheus_timeout=2.0,
)
ADAPTERS = ("adapter-0", "adapter-1")
AUTOSCALERS = ("autoscaler-0", "autoscaler-1")
PROBE = (
    f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{fleet.NS}/soak_queue"
    "?labelSelector=queue%3Dhold-0"
)
ENDPOINTS = "/api/v1/namespaces/{ns}/endpoints/{name}"


@pytest.fixture(scope="session")
def previous() -> Release:
    return previous_release()  # built once per machine, cached by commit


class Run:
    """The bundle, and what the test saw while it ran."""

    def __init__(self, workdir: Path, previous: Release) -> None:
        self.workdir = workdir
        self.previous = previous
        (workdir / "prometheus").mkdir()
        self.prom = PrometheusServer(workdir / "prometheus")
        self.stack = Stack(workdir, self.prom)
        self.bundle = Bundle(workdir, self.stack, self.prom.url, TIMING)
        self.old = (previous.python, previous.src)
        for name in (*ADAPTERS, *AUTOSCALERS):
            self.stack.runtimes[name] = self.old
        self.dropped = False
        self.started = time.time()
        self.probes: list[tuple[float, bool]] = []
        self.terms: set[tuple[str, str]] = set()  # (holderIdentity, acquireTime) of the Lease
        self.logs: list[Path] = []
        self.identities: dict[Path, str] = {}  # each log's writer, by leader-election identity
        self.new_logs: set[Path] = set()  # written by this tree's controller
        self.incarnation = 0
        self.rest: Rest | None = None
        self.session: aiohttp.ClientSession | None = None

    @property
    def api(self) -> Rest:
        assert self.rest is not None
        return self.rest

    async def write_load(self) -> None:
        while True:
            now = time.time()
            values = uf.queue_values(self.dropped, t=now - self.started)
            series = [
                ({"__name__": "soak_queue", "queue": name}, [(now, value)])
                for name, value in values.items()
            ]
            with contextlib.suppress(aiohttp.ClientError, OSError, RuntimeError):
                await remote_write(self.prom.url, series)
            await asyncio.sleep(1.0)

    async def probe_aggregator(self) -> None:
        """The metrics API as the aggregation layer serves it, and the Lease, every 0.2 s."""
        lease = f"/apis/coordination.k8s.io/v1/namespaces/{fleet.NS}/leases/promscaler-autoscaler"
        while True:
            with contextlib.suppress(RestError, aiohttp.ClientError, OSError, TimeoutError):
                spec = (await self.api.get(lease)).get("spec") or {}
                if spec.get("holderIdentity") and spec.get("acquireTime"):
                    self.terms.add((spec["holderIdentity"], spec["acquireTime"]))
            try:
                async with asyncio.timeout(5):
                    await self.api.get(PROBE)
                ok = True
            except (RestError, aiohttp.ClientError, OSError, TimeoutError):
                ok = False
            self.probes.append((time.time(), ok))
            await asyncio.sleep(0.2)

    async def set_up(self) -> None:
        for path, obj in self.bundle.registration():
            await self.api.create(path, obj)
        for v, group in (("v1beta1", "custom"), ("v1beta2", "custom"), ("v1beta1", "external")):
            path = f"/apis/apiregistration.k8s.io/v1/apiservices/{v}.{group}.metrics.k8s.io"
            await self.api.wait_condition(path, "Available", timeout=60)
        crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        # the previous release's CRD: `helm upgrade` leaves crds/ alone
        crd = self.previous.src / "charts/promscaler/crds/autoscalers.promscaler.dev.yaml"
        await self.api.create(crds, yaml.safe_load(crd.read_text()))
        await self.api.create(crds, fleet.WORKERS_CRD)
        for name in ("autoscalers.promscaler.dev", f"workers.{fleet.GROUP}"):
            await self.api.wait_condition(f"{crds}/{name}", "Established", timeout=20)
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": fleet.NS}}
        await self.api.create("/api/v1/namespaces", ns)
        for m in uf.members():
            await self.api.create(*uf.target(m))
            path = f"/apis/promscaler.dev/v1alpha1/namespaces/{fleet.NS}/autoscalers"
            await self.api.create(path, uf.autoscaler(m))

    def log_flags(self, name: str) -> None:
        """A fresh decision log and leader-election identity for the next incarnation (a new
        pod has a new name)."""
        self.incarnation += 1
        tag = f"{name}-{self.incarnation}"
        log = self.workdir / f"decisions-{tag}.jsonl"
        self.logs.append(log)
        self.identities[log] = tag
        cmd = self.bundle.commands[name]
        for i, arg in enumerate(cmd):
            if arg.startswith("--decision-log="):
                cmd[i] = f"--decision-log={log}"
            elif arg.startswith("--leader-elect-identity="):
                cmd[i] = f"--leader-elect-identity={tag}"

    async def replicas(self) -> dict[str, int]:
        doc = await self.api.get(f"/apis/{fleet.GROUP}/v1/namespaces/{fleet.NS}/workers")
        return {o["metadata"]["name"]: int(o["spec"].get("replicas", 0)) for o in doc["items"]}

    async def until(self, want: dict[str, int], *, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        have: dict[str, int] = {}
        while time.monotonic() < deadline:
            self.stack.check_alive()
            have = await self.replicas()
            if all(have.get(k) == v for k, v in want.items()):
                return
            await asyncio.sleep(0.5)
        wrong = {k: (have.get(k), v) for k, v in want.items() if have.get(k) != v}
        raise AssertionError(f"{what}: not reached in {timeout:g}s; (have, want): {wrong}")

    async def endpoints(self, *, without: int | None) -> None:
        """The adapters' Endpoints, without the one being replaced (as a terminating pod)."""
        reg = dict(self.bundle.registration())
        obj = next(o for o in reg.values() if o["kind"] == "Endpoints")
        path = ENDPOINTS.format(ns=obj["metadata"]["namespace"], name=obj["metadata"]["name"])
        current = await self.api.get(path)
        obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        obj["subsets"] = [
            s for i, s in enumerate(obj["subsets"]) if i != without
        ]  # one subset per replica, in port order (Bundle.registration)
        await self.api._call("PUT", path, json=obj)

    async def build_version(self, name: str) -> str | None:
        """The version in the process's *_build_info, None before there was one (or no answer)."""
        assert self.session is not None
        i = int(name[-1])
        if name.startswith("adapter-"):
            url = f"https://127.0.0.1:{self.bundle.adapter_ports[i]}/metrics"
            prefix = "promscaler_adapter_build_info{"
        else:
            url = f"http://127.0.0.1:{self.bundle.metrics_ports[i]}/metrics"
            prefix = "promscaler_autoscaler_build_info{"
        async with asyncio.timeout(5), self.session.get(url) as resp:
            if resp.status != 200:
                raise aiohttp.ClientError(f"{url}: {resp.status}")
            text = await resp.text()
        for line in text.splitlines():
            if line.startswith(prefix):
                return line.split('version="', 2)[-1].split('"', 1)[0]
        return None

    async def replace(self, name: str, runtime: tuple[Path, Path] | None) -> None:
        """Stop one process (SIGTERM, as the kubelet does) and start its successor."""
        proc = self.bundle.procs[name]
        await asyncio.to_thread(self.bundle.stop, name)
        assert proc.popen.returncode == 0, f"{name} exited {proc.popen.returncode}: {proc.tail()}"
        if runtime is None:
            self.stack.runtimes.pop(name, None)
        else:
            self.stack.runtimes[name] = runtime
        if name.startswith("autoscaler-"):
            self.log_flags(name)
            if runtime is None:
                self.new_logs.add(self.logs[-1])
        await self.bundle.restart(name)
        want = None if runtime is not None else version()
        deadline = time.monotonic() + 60
        while True:
            self.stack.check_alive()
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                have = await self.build_version(name)
                # the previous release may predate build_info: any answer but ours is it
                if (have == want) if want is not None else (have != version()):
                    return
                raise AssertionError(f"{name} runs version {have!r}, want {want!r}")
            assert time.monotonic() < deadline, f"{name} did not serve /metrics in 60 s"
            await asyncio.sleep(0.2)

    async def roll(self, runtime: tuple[Path, Path] | None) -> None:
        """Adapters, then controllers, one at a time (a Deployment each, as the chart has)."""
        for i, name in enumerate(ADAPTERS):
            await self.endpoints(without=i)
            await asyncio.sleep(TIMING.sync_period)  # in flight to it: answered before it stops
            await self.replace(name, runtime)
            await self.endpoints(without=None)
        for name in AUTOSCALERS:
            await self.replace(name, runtime)

    async def audit(self) -> list[dict[str, Any]]:
        doc = await self.api.get("/sandbox/stats", params={"since": "0"})
        return list(doc["scaleWrites"])


def _adapter_session(run: Run) -> aiohttp.ClientSession:
    pki = run.workdir / "sandbox"
    ctx = ssl.create_default_context(cadata=base64.b64decode(run.bundle.ca_bundle).decode())
    ctx.load_cert_chain(pki / "front-proxy-client.crt", pki / "front-proxy-client.key")
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(ssl=ctx, force_close=True),
        headers={"X-Remote-User": "sandbox-admin", "X-Remote-Group": "system:masters"},
    )


async def test_rolling_upgrade_and_downgrade_lose_no_decision(tmp_path, previous):
    run = Run(tmp_path, previous)
    tasks: list[asyncio.Task[None]] = []
    try:
        await asyncio.to_thread(run.prom.start)
        await run.bundle.start_sandbox()  # this tree's: Kubernetes is not what is upgraded
        run.rest = Rest.from_kubeconfig(run.bundle.admin_kubeconfig)
        run.bundle.start_adapters()
        run.session = _adapter_session(run)
        tasks.append(asyncio.create_task(run.write_load()))
        await run.set_up()
        run.bundle.start_autoscalers()
        for i, name in enumerate(AUTOSCALERS):
            run.logs.append(run.bundle.decision_log(i))
            run.identities[run.logs[-1]] = name  # the bundle's --leader-elect-identity
        tasks.append(asyncio.create_task(run.probe_aggregator()))
        start = {m.name: m.start for m in uf.members() if m.start is not None}
        await run.until(start, timeout=90, what="the fleet settled on the previous release")

        run.dropped = True
        dropped = time.time()  # hold-* want 2 and zero-* 0 from here: the window opens
        await asyncio.sleep(3 * TIMING.sync_period)  # a few passes of the old version inside it
        await run.roll(None)
        upgraded = time.time()
        await asyncio.sleep(3 * TIMING.sync_period)
        await run.roll(run.old)
        rolled = time.time()
        assert rolled < dropped + uf.WINDOW - 5, (
            f"both rolls took {rolled - dropped:.0f}s of the {uf.WINDOW}s window: the test could "
            "not tell a kept window from a lost one"
        )
        have = await run.replicas()
        early = {m.name: have.get(m.name) for m in uf.members() if m.group == "hold"}
        assert set(early.values()) == {8}, f"inside the window after both rolls: {early}"
        end = {m.name: m.end for m in uf.members() if m.end is not None}
        await run.until(end, timeout=uf.WINDOW + 30, what="the window and the cooldown ended")
        await asyncio.sleep(2 * TIMING.sync_period)  # no write after the end
        final = await run.replicas()
        writes = await run.audit()
    finally:
        for task in tasks:
            task.cancel()
        if run.session is not None:
            await run.session.close()
        if run.rest is not None:
            await run.rest.close()
        await asyncio.to_thread(run.stack.stop)  # SIGTERM: the decision logs are flushed
    print(
        f"previous release {previous.name}, this tree {version()} (Python "
        f"{platform.python_version()}); upgrade done {upgraded - dropped:.1f}s and downgrade "
        f"{rolled - dropped:.1f}s after the drop; {len(writes)} /scale writes"
    )

    entries = list(read_log(p for p in run.logs if p.exists()))
    # both versions decided inside the window: the carried state was read by each in turn
    inside = {
        which: sum(
            1
            for e in read_log(p for p in run.logs if p.exists() and (p in run.new_logs) == new)
            if dropped <= parse_time(e["document"]["now"]).timestamp() <= rolled
        )
        for which, new in (("previous", False), ("this tree", True))
    }
    print(f"passes logged between the drop and the end of the rolls: {inside}")
    assert all(inside.values()), inside
    passes = uf.by_target(entries)
    ours = list(read_log(p for p in run.new_logs if p.exists()))
    theirs = list(read_log(p for p in run.logs if p.exists() and p not in run.new_logs))
    previous_decide = [str(previous.python), "-P", "-m", "autoscaler"]
    # each pass replays exactly under the decide of the version that made it: no decision was
    # taken on state the other version left in a form it misread
    found = [
        _replayed(ours, "this tree's decide (its own passes)", None),
        _replayed(theirs, f"{previous.name}'s decide (its own passes)", previous_decide),
    ]
    # the other version's passes too, when the two decision cores are the same code; a release
    # that changes a rule on purpose (0.2.0: the cooldown beside the window) differs by design
    if same_decision_core(previous.commit):
        found += [
            _replayed(theirs, "this tree's decide (the previous release's passes)", None),
            _replayed(ours, f"{previous.name}'s decide (this tree's passes)", previous_decide),
        ]
    else:
        print(f"the decision core changed since {previous.name}: no cross-version replay")
    found += [
        uf.writes_match_decisions(
            {run.identities[p]: list(read_log([p])) for p in run.logs if p.exists()},
            writes,
            run.terms,
        ),
        # a stopped leader releases the Lease, so a successor may write within a retry period:
        # the writes are matched to the Lease's terms rather than to a minimum gap
        uf.writers_hold_the_lease(writes, run.terms),
        uf.history_carried(passes, after=dropped + 2, before=rolled),
        uf.cooldown_carried(passes, after=dropped + 3),
        uf.fallback_carried(passes),
        uf.not_before(writes, group="hold", replicas=final, at=dropped + uf.WINDOW - 2.5),
        uf.not_before(writes, group="zero", replicas=final, at=dropped + uf.WINDOW - 2.5),
        uf.zero_after_cooldown(passes, writes, cooldown=uf.WINDOW),
    ]
    outage = uf.longest_outage(run.probes)
    for c in found:
        print(f"{c.name}: looked at {c.looked_at}, {c.breaches} breaches {c.examples} {c.note}")
    print(f"aggregated metrics API: {len(run.probes)} probes, longest outage {outage:.1f}s")
    assert all(c.looked_at > 0 for c in found), [c.name for c in found if not c.looked_at]
    assert [c.examples for c in found if c.breaches] == []
    assert outage < TIMING.sync_period, f"the metrics API was unavailable for {outage:.1f}s"


def same_decision_core(commit: str) -> bool:
    """Whether autoscaler/core/ is the same tree at `commit` as in the working tree's HEAD."""
    trees = [
        subprocess.run(
            ["git", "rev-parse", f"{rev}:autoscaler/core"],
            cwd=Path(__file__).resolve().parents[1],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for rev in (commit, "HEAD")
    ]
    return trees[0] == trees[1]


def _replayed(entries: list[dict[str, Any]], what: str, command: list[str] | None) -> checks.Check:
    check = checks.Check(f"every logged pass replays exactly under {what}")
    check.looked_at = len(entries)
    # -P: its own installed code, not this tree's from the working directory
    cmd = None if command is None else [*command, "decide", "--jsonl"]
    for m in replay_stream(entries, command=cmd):
        check.breach(
            f"pass {m.index} at {m.now}: logged {m.logged[:80]} replayed {m.replayed[:80]}"
        )
    return check
