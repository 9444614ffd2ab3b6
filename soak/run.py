"""One soak run: start the bundle, create the fleet, play the load and the fault schedule,
watch, then stop everything and hand what was seen to the checks.

Time is seconds since the run's start (`Clock`); the decision documents carry wall-clock times.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from demo.rest import Rest
from demo.stack import Stack
from sandbox.prometheus import PrometheusServer, remote_write
from sandbox.promfaults import PromFaultPlan, PromFaultProxy

from . import fleet
from .bundle import Bundle, Timing
from .checks import Probe, Sample
from .observe import AdapterClient, Fetch, autoscaler_tasks, process_usage
from .schedule import Fault, prom_plan, sandbox_plan

__all__ = ["Options", "Record", "soak"]

log = logging.getLogger("soak")
CRD = Path(__file__).resolve().parents[1] / "charts/promscaler/crds/autoscalers.promscaler.dev.yaml"
SAMPLE_EVERY = 5.0  # seconds between resource samples, replica polls and audit pulls
PROBE_EVERY = 2.0  # seconds between adapter probes (per replica)
GRACE = 15.0  # seconds after a restart or a non-Prometheus fault when an adapter may still fail
HEALTHY_WITHIN = 120.0  # seconds past the planned end to wait for every process to serve again


@dataclass(frozen=True)
class Options:
    seconds: float
    seed: int
    autoscalers: int
    pods: int  # Autoscalers on Deployments with a Pods metric
    out: Path
    schedule: tuple[Fault, ...]
    timing: Timing = field(default_factory=Timing)
    speed: float = 4.0  # the demo's 150 s shape plays this many times faster


@dataclass
class Record:
    """Everything the run saw, for the checks and the picture."""

    members: list[fleet.Member]
    probes: list[Probe] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    observed: list[tuple[float, str, int, int, int]] = field(default_factory=list)
    series: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    writes: list[dict[str, Any]] = field(default_factory=list)
    faults: list[tuple[float, float, str]] = field(default_factory=list)
    exits: list[str] = field(default_factory=list)
    incarnations: Counter[str] = field(default_factory=Counter)
    final: dict[str, int] = field(default_factory=dict)
    leader: str = ""
    settled_at: float = 0.0  # wall-clock time from which passes must see the final values
    final_at: float = 0.0  # wall-clock time the final replicas were read
    started_at: float = 0.0  # wall-clock time of t=0


class Runner:
    def __init__(self, options: Options, bundle: Bundle, prom: PrometheusServer) -> None:
        self.o = options
        self.bundle = bundle
        self.prom = prom
        self.proxy: PromFaultProxy | None = None
        self.record = Record(fleet.fleet(options.autoscalers, pods=options.pods, seed=options.seed))
        self.start = time.monotonic()
        self.record.started_at = time.time()
        self.down: set[str] = set()  # processes the schedule stopped on purpose
        self.started: dict[str, float] = {}  # process -> t of its last start
        self.active: list[Fault] = []
        self.last_disturbed = -GRACE  # t when a non-Prometheus fault last ended
        self.last_prom_end = -GRACE  # t when a Prometheus fault last ended
        self.cursor = 0  # audit index already read
        self.pods: dict[str, list[str]] = {}
        self.freeze = options.seconds  # t from which the load stays where it is

    def t(self) -> float:
        return time.monotonic() - self.start

    # ---- the load ------------------------------------------------------------------------

    async def write_load(self, fetch: Fetch) -> None:
        t = min(self.t(), self.freeze)
        pods = await fetch.ready_pods() if self.o.pods else {}
        if pods is not None:
            self.pods = pods
        now = time.time()
        series = []
        for m in self.record.members:
            value = fleet.value_at(m, t, speed=self.o.speed)
            series += fleet.series(m, value, self.pods.get(m.name, []), now)
        # fails while Prometheus is stopped or starting (RuntimeError: its 503)
        with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError, RuntimeError):
            await remote_write(self.prom.url, series)

    # ---- faults --------------------------------------------------------------------------

    async def play(self, fetch: Fetch) -> None:
        for fault in self.o.schedule:
            await asyncio.sleep(max(0.0, fault.start - self.t()))
            log.info("fault %s for %.1fs (seed %d)", fault.kind, fault.seconds, fault.seed)
            self.active.append(fault)
            began = self.t()
            try:
                await self.apply(fault, fetch)
            finally:
                self.active.remove(fault)
                self.record.faults.append((began, self.t(), fault.kind))
                if fault.kind.startswith("prom-"):
                    self.last_prom_end = self.t()
                else:
                    self.last_disturbed = self.t()

    async def apply(self, f: Fault, fetch: Fetch) -> None:
        if f.kind.startswith(("kill-", "restart-")):
            name = "sandbox" if f.kind == "restart-sandbox" else f"{f.kind[5:]}-{f.replica}"
            await self.bounce(name, f.seconds, fetch)
            return
        await self.set_plan(f, fetch, on=True)
        half = f.seconds / 2
        await asyncio.sleep(half)
        if f.also_kill:
            await self.bounce(f"{f.also_kill}-{f.replica}", 2.0, fetch)
        await asyncio.sleep(max(0.0, f.seconds - half - (2.0 if f.also_kill else 0.0)))
        await self.set_plan(f, fetch, on=False)

    async def set_plan(self, f: Fault, fetch: Fetch, *, on: bool) -> None:
        if f.kind == "prom-down":
            await asyncio.to_thread(self.prom.stop if on else self.prom.start)
        elif f.kind.startswith("prom-"):
            assert self.proxy is not None
            self.proxy.set(PromFaultPlan(**prom_plan(f)) if on else PromFaultPlan())
        else:
            plan = sandbox_plan(f) if on else {}
            for _ in range(20):  # the sandbox may be refusing connections still
                with contextlib.suppress(Exception):
                    await fetch.rest._call("PUT", "/sandbox/faults", json=plan)
                    return
                await asyncio.sleep(0.5)

    async def bounce(self, name: str, seconds: float, fetch: Fetch) -> None:
        self.down.add(name)
        if name == "sandbox":
            await self.pull_audit(fetch)
            await asyncio.to_thread(self.bundle.stop, name)
        else:
            self.bundle.kill(name)
        await asyncio.sleep(seconds)
        await self.bundle.restart(name)
        self.record.incarnations[name] += 1
        self.started[name] = self.t()
        self.down.discard(name)
        if name == "sandbox":
            self.cursor = 0  # the audit starts again with the new process

    # ---- watching ------------------------------------------------------------------------

    def check_exits(self) -> None:
        for name, proc in self.bundle.procs.items():
            if name not in self.down and not proc.alive():
                code = proc.popen.returncode
                self.record.exits.append(f"{name} exited with {code} at +{self.t():.0f}s")
                log.error("unexpected exit: %s (%s)\n%s", name, code, proc.tail())
                self.down.add(name)
                asyncio.get_running_loop().create_task(self.revive(name))

    async def revive(self, name: str) -> None:
        await self.bundle.restart(name)
        self.record.incarnations[name] += 1
        self.started[name] = self.t()
        self.down.discard(name)

    async def healthy(self, fetch: Fetch) -> bool:
        """Every process up, both adapters answered their last probe, a leader holds the lease."""
        if self.down or any(not p.alive() for p in self.bundle.procs.values()):
            return False
        last = {p.adapter: p.status for p in self.record.probes[-4:]}
        if any(last.get(i) != 200 for i in range(2)):
            return False
        leader = await fetch.leader()
        return bool(leader) and self.bundle.procs[str(leader)].alive()

    async def probe(self, adapters: AdapterClient, i: int, path: str) -> None:
        t = self.t()
        prom_fault = any(f.kind.startswith("prom-") for f in self.active)
        status, took = await adapters.probe(
            self.bundle.adapter_ports[i], path, limit=self.o.timing.prometheus_timeout + 15
        )
        # a fault that began or ended while the request was in flight counts as in force
        prom_fault = prom_fault or any(f.kind.startswith("prom-") for f in self.active)
        name = f"adapter-{i}"
        disturbed = (
            any(not f.kind.startswith("prom-") for f in self.active)
            or self.t() - self.last_disturbed < GRACE
            or self.t() - self.started.get(name, 0.0) < GRACE
            or self.t() - self.started.get("sandbox", 0.0) < GRACE
            or name in self.down
        )
        # the adapter's answers may lag a Prometheus fault by its timeout and its cache
        recent = self.t() - self.last_prom_end < 2 * self.o.timing.prometheus_timeout + 1
        self.record.probes.append(Probe(t, i, status, took, prom_fault or recent, disturbed))

    async def sample(self, adapters: AdapterClient, plain: aiohttp.ClientSession) -> None:
        t = self.t()
        for name, proc in list(self.bundle.procs.items()):
            usage = process_usage(proc.popen.pid) if proc.alive() else None
            if usage is None:
                continue
            if name.startswith("autoscaler-"):
                tasks = await autoscaler_tasks(plain, self.bundle.metrics_ports[int(name[-1])])
            elif name.startswith("adapter-"):
                port = self.bundle.adapter_ports[int(name[-1])]
                tasks = await adapters.metric(port, "promscaler_adapter_asyncio_tasks")
            else:
                tasks = float("nan")
            inc = self.record.incarnations[name]
            self.record.samples.append(Sample(t, name, inc, usage[0], usage[1], tasks))

    async def poll_replicas(self, fetch: Fetch) -> dict[str, int] | None:
        replicas = await fetch.replicas()
        if replicas is None:
            return None
        t = self.t()
        for m in self.record.members:
            if m.name in replicas:
                have = replicas[m.name]
                self.record.observed.append((t, m.name, have, m.min_replicas, m.max_replicas))
                self.record.series.setdefault(m.name, []).append((t, have))
        return replicas

    async def pull_audit(self, fetch: Fetch) -> None:
        got = await fetch.scale_writes(self.cursor)
        if got is None:
            return
        writes, nxt = got
        if nxt < self.cursor:  # a restarted sandbox we did not pull from before it stopped
            self.cursor = 0
            return
        self.record.writes += writes
        self.cursor = nxt


async def soak(options: Options) -> Record:
    """Run the whole soak and return what it saw (the checks are the caller's)."""
    run_dir = options.out / "run"
    (run_dir / "prometheus").mkdir(parents=True, exist_ok=True)
    prom = PrometheusServer(run_dir / "prometheus")
    stack = Stack(run_dir, prom)
    proxy = PromFaultProxy(upstream=prom.url)
    rest: Rest | None = None
    bundle: Bundle | None = None
    adapters: AdapterClient | None = None
    plain = aiohttp.ClientSession()
    try:
        await asyncio.to_thread(prom.start)
        await proxy.start()
        bundle = Bundle(run_dir, stack, proxy.url, options.timing)
        await bundle.start_sandbox()
        rest = Rest.from_kubeconfig(bundle.admin_kubeconfig)
        runner = Runner(options, bundle, prom)
        runner.proxy = proxy
        fetch = Fetch(rest)
        bundle.start_adapters()
        await set_up(rest, bundle, runner.record.members)
        pki = run_dir / "sandbox"
        adapters = AdapterClient(
            ca_pem=base64.b64decode(bundle.ca_bundle),
            cert=pki / "front-proxy-client.crt",
            key=pki / "front-proxy-client.key",
        )
        bundle.start_autoscalers()
        runner.start = time.monotonic()
        runner.record.started_at = time.time()
        await drive(runner, fetch, adapters, plain)
        return runner.record
    finally:
        if adapters is not None:
            await adapters.close()
        await plain.close()
        if rest is not None:
            await rest.close()
        for name in ("autoscaler-1", "autoscaler-0"):  # first: nothing else fails under them
            if bundle is not None and name in bundle.procs:
                await asyncio.to_thread(bundle.stop, name)
        await asyncio.to_thread(stack.stop)  # SIGTERM: the decision logs are flushed
        await proxy.stop()


async def drive(
    runner: Runner, fetch: Fetch, adapters: AdapterClient, plain: aiohttp.ClientSession
) -> None:
    o = runner.o
    runner.freeze = max((f.end for f in o.schedule), default=0.0)  # the load holds from here
    probe_path = _probe_path(runner.record.members)
    player = asyncio.create_task(runner.play(fetch))
    background: set[asyncio.Task[None]] = set()
    next_probe = next_sample = 0.0
    final_done = False
    healthy_at: float | None = None
    end = o.seconds
    try:
        while runner.t() < end or (not final_done and runner.t() < o.seconds + HEALTHY_WITHIN):
            if healthy_at is None and player.done() and await runner.healthy(fetch):
                # the last fault is over once every process serves again: 3 periods from here
                healthy_at = runner.t()
                end = max(end, healthy_at + 3 * o.timing.sync_period + 3.0)
                log.info("all healthy again at +%.0fs", healthy_at)
            tick = time.monotonic()
            runner.check_exits()
            await runner.write_load(fetch)
            if runner.t() >= next_probe:
                next_probe = runner.t() + PROBE_EVERY
                for i in range(2):
                    task = asyncio.create_task(runner.probe(adapters, i, probe_path))
                    background.add(task)
                    task.add_done_callback(background.discard)
            if runner.t() >= next_sample:
                next_sample = runner.t() + SAMPLE_EVERY
                await runner.sample(adapters, plain)
                await runner.poll_replicas(fetch)
                await runner.pull_audit(fetch)
            due = healthy_at is not None and runner.t() >= end - 1.0
            if due and not final_done:
                assert healthy_at is not None
                final_done = await final_state(runner, fetch, healthy_at)
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
        await runner.pull_audit(fetch)
    finally:
        player.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await player
        for task in list(background):
            task.cancel()


async def final_state(runner: Runner, fetch: Fetch, healthy_at: float) -> bool:
    replicas = await runner.poll_replicas(fetch)
    leader = await fetch.leader()
    if replicas is None or leader is None:
        return False
    runner.record.final = replicas
    runner.record.final_at = time.time()
    runner.record.leader = leader
    runner.record.settled_at = runner.record.started_at + healthy_at
    return True


def _probe_path(members: list[fleet.Member]) -> str:
    name = next(m.name for m in members if m.metric == "External")
    return (
        f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{fleet.NS}/soak_queue"
        f"?labelSelector=queue%3D{name}"
    )


async def set_up(rest: Rest, bundle: Bundle, members: list[fleet.Member]) -> None:
    """Register the adapters, install the CRDs, create the fleet."""
    for path, obj in bundle.registration():
        await rest.create(path, obj)
    for version, group in (
        ("v1beta1", "custom.metrics.k8s.io"),
        ("v1beta2", "custom.metrics.k8s.io"),
        ("v1beta1", "external.metrics.k8s.io"),
    ):
        path = f"/apis/apiregistration.k8s.io/v1/apiservices/{version}.{group}"
        await rest.wait_condition(path, "Available", timeout=60)
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    await rest.create(crds, yaml.safe_load(CRD.read_text()))
    await rest.create(crds, fleet.WORKERS_CRD)
    for name in ("autoscalers.promscaler.dev", f"workers.{fleet.GROUP}"):
        await rest.wait_condition(f"{crds}/{name}", "Established", timeout=20)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": fleet.NS}}
    await rest.create("/api/v1/namespaces", ns)
    for batch in range(0, len(members), 20):
        await asyncio.gather(*(_create(rest, m) for m in members[batch : batch + 20]))


async def _create(rest: Rest, m: fleet.Member) -> None:
    path, obj = fleet.target(m)
    await rest.create(path, obj)
    if m.metric == "Object":
        await rest.create(f"/api/v1/namespaces/{fleet.NS}/services", fleet.service(m))
    await rest.create(
        f"/apis/promscaler.dev/v1alpha1/namespaces/{fleet.NS}/autoscalers", fleet.autoscaler(m)
    )
