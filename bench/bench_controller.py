"""Controller benchmark: N Autoscalers with External metrics on the sandbox.

Prints: object set-up time; how long the start-up backlog (the first round writes every status)
takes to clear; then, over the measured window, reconcile lag (p50, p99, and p99 per sync
period) and pass duration; the controller's CPU and RSS; status and scale writes; and the time
from an External metric rising in Prometheus to the target's first replica (scale from zero),
over a few trials. With `--controls`, it then gives half of the Autoscalers an activation
threshold, a fallback block and a schedule, and prints the controller's CPU per pass before and
after, in the same run. Then what the decision log (`--decision-log`) adds to the controller's
CPU per pass: rounds with it off and on in turns, in the same run (A B A B ... A), each
measured as this process's own CPU time over its passes; the median and spread of the
per-round overheads. With `--replicas`, the same objects under that many replicas sharing
shard Leases, each one's CPU; with `--share-baseline` as well, one replica alone on the share
the first of them held (the other Autoscalers deleted), for its CPU beside that replica's, and
before the pair one replica on every Autoscaler in a process of its own, as the pair's run,
then the same at twice the sync period (the pair's pass rate and cache, without a second
replica). Every controller process gets a line per own pass: user and system CPU, and its loop
thread's wake-ups (after a sleep or a preemption), with CPU and run-queue wait per wake-up.

The sandbox, Prometheus and the adapter run as their own processes; the controller runs in this
process (so its CPU and RSS are this process's, minus the small driver). Everything is on
127.0.0.1 and stops by itself.

    .venv/bin/python bench/bench_controller.py [--autoscalers 5000] [--periods 2] [--sync-period 15]
        [--controls] [--log-rounds 60] [--log-round-seconds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autoscaler import app as app_module
from autoscaler.app import Settings, serve
from autoscaler.controller import Controller, ControllerConfig
from autoscaler.decisionlog import DecisionLog, DecisionLogSettings, logged
from autoscaler.kube import KubeClient, connect
from autoscaler.options import ControllerOptions
from autoscaler.sharding import shard_of
from bench import record
from bench.stackprofile import (
    TICK,
    CpuMark,
    Profiler,
    call_lines,
    cpu_lines,
    load_passes,
    machine_line,
    machine_ticks,
    proc_rss_mib,
    proc_sched,
    request_counts,
    sched_lines,
    this_process,
)
from common import eventloop, gctune
from sandbox.manifests import crd
from sandbox.prometheus import PrometheusServer, remote_write
from tests.controller.stack import (
    Stack,
    _register_adapter,
    _start_adapter,
    external_metric,
    target_ref,
)

NS = "bench"
MERGE = "application/merge-patch+json"


# this run's figures as data (bench/record.py); main() sets it before anything is measured
RUN: record.Run


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def start_sandbox(
    tmp: Path, loop: str = "auto", gc_threshold: str = gctune.DEFAULT
) -> tuple[subprocess.Popen[bytes], Path]:
    """`promscaler-sandbox serve` as its own process; returns once it serves."""
    kubeconfig = tmp / "kubeconfig"
    argv = [sys.executable, "-m", "sandbox", "serve", "--port", "0", "--event-loop", loop]
    argv += ["--gc-threshold", gc_threshold]
    argv += ["--kubeconfig", str(kubeconfig), "--dir", str(tmp / "pki")]
    argv += ["--pod-ready-delay", "0.2"]
    with (tmp / "sandbox.log").open("wb") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if b"serving" not in line:
        raise RuntimeError(f"sandbox did not start: {line!r}")
    return proc, kubeconfig


async def in_batches(coros, size: int = 32) -> None:
    coros = list(coros)
    for i in range(0, len(coros), size):
        await asyncio.gather(*coros[i : i + size])


WORKERS_CRD = crd("bench.promscaler.dev", "Worker", scale=True, status=True)


async def create_target(st: Stack, name: str, kind: str) -> None:
    """A Deployment (the sandbox runs its pods), or a pod-less custom resource with /scale."""
    if kind == "deployment":
        await st.deployment(name, 1)
        return
    body = {
        "apiVersion": "bench.promscaler.dev/v1",
        "kind": "Worker",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": 1, "selector": f"app={name}"},
    }
    await st.kube.request(
        "POST", f"/apis/bench.promscaler.dev/v1/namespaces/{NS}/workers", body=body
    )


async def create_objects(
    st: Stack, n: int, kind: str, *, pods_every: int = 0
) -> list[dict[str, str]]:
    """n targets and n Autoscalers; with `pods_every` k, every k-th Autoscaler (a worker
    target) reads a Pods metric of one pod of its own instead of an External one. Returns the
    series written (`keep_fresh` writes them again)."""
    await st.kube.request(
        "POST",
        "/api/v1/namespaces",
        body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
    )
    podded = {i for i in range(n) if pods_every and kind == "worker" and i % pods_every == 1}
    now = time.time() - 1
    series = [
        ({"__name__": "e2e_requests_per_pod", "namespace": NS, "pod": f"p{i}"}, [(now, 10.0)])
        if i in podded
        else ({"__name__": "e2e_queue_depth", "queue": f"q{i}"}, [(now, 10.0)])
        for i in range(n)
    ]
    for i in range(0, n, 1000):
        await remote_write(st.prometheus_url, series[i : i + 1000])
    if kind == "worker":
        await st.kube.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=WORKERS_CRD
        )
        await asyncio.sleep(1)
    await in_batches(create_target(st, f"w{i}", kind) for i in range(n))
    await in_batches(create_pod(st, f"p{i}", app=f"w{i}") for i in sorted(podded))
    ref = (
        target_ref
        if kind == "deployment"
        else lambda name: {"apiVersion": "bench.promscaler.dev/v1", "kind": "Worker", "name": name}
    )
    spec = lambda i: {  # noqa: E731 - tiny, local
        "scaleTargetRef": ref(f"w{i}"),
        "minReplicas": 1,
        "maxReplicas": 10,
        # 10 per pod against 10: steady at 1
        "metrics": [pods_metric() if i in podded else external_metric(f"q{i}")],
    }
    await in_batches(st.autoscaler(f"a{i}", spec(i)) for i in range(n))
    return [labels for labels, _ in series]


async def keep_fresh(url: str, series: list[dict[str, str]], every: float = 60.0) -> None:
    """Write every series again each `every` seconds, as a scrape would: a sample older than
    Prometheus' 5-minute lookback reads as no data, and at 10,000 Autoscalers the set-up alone
    takes minutes (every metric would then fail, and each failure be an event and a status
    write)."""
    while True:
        await asyncio.sleep(every)
        now = time.time()
        for i in range(0, len(series), 1000):
            await remote_write(url, [(s, [(now, 10.0)]) for s in series[i : i + 1000]])


def _keep_fresh_process(url: str, series: list[dict[str, str]]) -> None:
    asyncio.run(keep_fresh(url, series))


def start_keep_fresh(url: str, series: list[dict[str, str]]) -> BaseProcess:
    """`keep_fresh` in a process of its own: encoding 10,000 series every minute took a few
    hundred milliseconds of this process's event loop, which is the controller's, so every
    minute its passes started that much late and its CPU per pass counted the driver's work."""
    proc = multiprocessing.get_context("spawn").Process(
        target=_keep_fresh_process, args=(url, series), daemon=True
    )
    proc.start()
    return proc


def pods_metric() -> dict[str, Any]:
    """10 requests per pod (e2e_requests_per_pod, the stack's Pods rule) on average."""
    target = {"type": "AverageValue", "averageValue": "10"}
    return {"type": "Pods", "pods": {"metric": {"name": "e2e_requests_per_pod"}, "target": target}}


async def create_pod(st: Stack, name: str, *, app: str) -> None:
    """A bare pod (the sandbox's kubelet makes it Running and Ready) a Worker's selector finds."""
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": app}},
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.9"}]},
    }
    await st.kube.request("POST", f"/api/v1/namespaces/{NS}/pods", body=body)


async def wake_trials(st: Stack, trials: int) -> list[float]:
    """0 -> N: time from the metric's rise (remote write returned) to spec.replicas > 0, the
    rises spread over the adapter's sharing window (a user's metric rises whenever it does)."""
    spec = {
        "scaleTargetRef": target_ref("sleeper"),
        "minReplicas": 0,
        "maxReplicas": 10,
        "metrics": [external_metric("sleeper")],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
    }
    await st.queue("sleeper", 0)
    await st.deployment("sleeper", 1)
    await st.autoscaler("sleeper", spec)
    times = []
    # the answer that put the target to sleep opened the adapter's shared-answer window: a rise
    # at a fixed delay after it would always meet the same part of that window (and of the 1 s
    # zero-poll), so each rise comes at its own offset over 5 s, the longest default window
    offsets = random.Random(7)
    for _ in range(trials):
        while await st.replicas("sleeper") != 0:  # noqa: ASYNC110 - polling the API is the point
            await asyncio.sleep(0.1)
        # asleep, with ScaledToZero=True recorded, then a rise at an unrelated moment
        await asyncio.sleep(1.5 + offsets.uniform(0.0, 5.0))
        await st.queue("sleeper", 30)
        rose = time.monotonic()
        while await st.replicas("sleeper") == 0:  # noqa: ASYNC110 - polling the API is the point
            await asyncio.sleep(0.02)
        times.append(time.monotonic() - rose)
        await st.queue("sleeper", 0)
    return times


def with_controls(i: int) -> dict[str, Any]:
    """The spec changes that give Autoscaler i every control a pass evaluates each time."""
    metric = {**external_metric(f"q{i}"), "activation": {"threshold": "1"}}
    window = {  # closed most of the day: evaluated on every pass, opened rarely
        "name": "nightly",
        "schedule": "0 2 * * *",
        "timeZone": "Europe/Berlin",
        "duration": "1h",
        "minReplicas": 1,
    }
    return {
        "metrics": [metric],
        "fallback": {"failureThreshold": 3, "recoveryThreshold": 2, "replicas": 2},
        "schedules": [window],
    }


async def add_controls(st: Stack, n: int) -> None:
    """Half of the Autoscalers (the even ones) get the controls; fail loudly if the CRD in
    use prunes them (the comparison would measure nothing)."""
    path = f"/apis/promscaler.dev/v1alpha1/namespaces/{NS}/autoscalers"

    async def patch(i: int) -> None:
        body = {"spec": with_controls(i)}
        await st.kube.request("PATCH", f"{path}/a{i}", body=body, content_type=MERGE)

    await in_batches(patch(i) for i in range(0, n, 2))
    kept = (await st.kube.request("GET", f"{path}/a0"))["spec"]
    if "fallback" not in kept:
        raise SystemExit("the Autoscaler CRD pruned spec.fallback: install one with the controls")


async def settled(st: Stack) -> None:
    """Wait until every Autoscaler's status is of its current generation."""
    path = f"/apis/promscaler.dev/v1alpha1/namespaces/{NS}/autoscalers"
    while True:
        items = (await st.kube.request("GET", path)).get("items") or []
        behind = [
            o
            for o in items
            if (o.get("status") or {}).get("observedGeneration") != o["metadata"]["generation"]
        ]
        if not behind:
            return
        await asyncio.sleep(1)


class PassMeter:
    """CPU seconds and passes between two marks."""

    def __init__(self, passes: Callable[[], int]) -> None:
        self._passes = passes
        self._mark = (cpu_seconds(), passes())

    def per_pass(self) -> tuple[float, int]:
        cpu, n = cpu_seconds(), self._passes()
        used, count = cpu - self._mark[0], n - self._mark[1]
        self._mark = (cpu, n)
        return (used / count if count else float("nan")), count


async def compare_controls(st: Stack, n: int, durations: list[float], seconds: float) -> None:
    """CPU per pass, and the pass duration (mostly waiting on the sandbox), without and with."""
    meter = PassMeter(lambda: len(durations))
    start = len(durations)
    await asyncio.sleep(seconds)
    plain, plain_n = meter.per_pass()
    plain_p50 = percentile(durations[start:], 0.5)
    await add_controls(st, n)
    await settled(st)  # the spec changes' own passes and status writes are not measured
    await asyncio.sleep(seconds / 2)
    meter.per_pass()
    start = len(durations)
    await asyncio.sleep(seconds)
    mixed, mixed_n = meter.per_pass()
    mixed_p50 = percentile(durations[start:], 0.5)
    print(
        f"controller CPU per pass (busy shared machine): without controls "
        f"{plain * 1000:.2f} ms over {plain_n} passes; with half using activation, fallback "
        f"and a schedule {mixed * 1000:.2f} ms over {mixed_n} passes "
        f"({100 * (mixed / plain - 1):+.1f}%); pass duration p50 {plain_p50 * 1000:.0f} ms "
        f"-> {mixed_p50 * 1000:.0f} ms"
    )


class Window:
    """What every process of the stack spent between `open()` and `close()`: CPU seconds from
    /proc, the sandbox's requests by verb and resource, and (with `profile`) py-spy samples."""

    def __init__(
        self, st: Stack, pids: dict[str, int], *, seconds: float, profile: Path | None
    ) -> None:
        self._st = st
        self._pids = pids
        self._profiler = Profiler(profile, pids, seconds=seconds) if profile else None

    async def open(self) -> None:
        self._calls = request_counts(await self._st.kube.request("GET", "/sandbox/stats"))
        self._cpu = CpuMark.take(self._pids)
        self._sched = {n: proc_sched(pid) for n, pid in self._pids.items()}
        self._machine = machine_ticks()
        self._wall = time.monotonic()
        if self._profiler is not None:
            self._profiler.start()

    async def close(self) -> None:
        """The window's end: CPU and request counts now (the processes may stop after)."""
        self._end = CpuMark.take(self._pids), time.monotonic() - self._wall
        self._end_sched = {n: proc_sched(pid) for n, pid in self._pids.items()}
        self._end_machine = machine_ticks()
        self._end_calls = request_counts(await self._st.kube.request("GET", "/sandbox/stats"))
        self._rss = {n: proc_rss_mib(pid) for n, pid in self._pids.items()}

    def used(self) -> dict[str, float]:
        """CPU seconds each process spent in the window."""
        return self._end[0].since(self._cpu)

    async def report(
        self, passes: int, own: dict[str, int] | None = None, *, prefix: str | None = None
    ) -> None:
        """`own`: the passes each controller process made itself, for its per-pass lines;
        `prefix`: record the window's figures under this name (the steady-state window)."""
        cpu, wall = self._end
        if prefix is not None:
            self._record(prefix, passes)
        print(f"CPU by process over {wall:.0f}s, {passes} passes:")
        print("\n".join(cpu_lines(cpu.since(self._cpu), wall=wall, passes=passes)))
        print(machine_line(self._machine, self._end_machine, wall))
        if own:
            print("controller processes, per own pass:")
            print("\n".join(sched_lines(self._sched, self._end_sched, passes=own)))
        print("RSS (MiB): " + ", ".join(f"{n} {mib:.0f}" for n, mib in self._rss.items()))
        print("API requests the sandbox served (verb, resource):")
        print("\n".join(call_lines(self._calls, self._end_calls, passes=passes)))
        if self._profiler is not None:
            print("where the time goes (py-spy, own and inclusive samples):")
            print("\n".join(await asyncio.to_thread(self._profiler.finish)))

    def _record(self, prefix: str, passes: int) -> None:
        used = self.used()
        wall = self._end[1]
        for name, seconds in sorted(used.items()):
            RUN.figure(
                f"{prefix}cpu_per_pass_{name}",
                f"{name}: CPU per pass",
                1000 * seconds / max(1, passes),
                "ms",
                kind="time",
            )
        busy = self._end_machine[0] - self._machine[0]
        RUN.figure(
            f"{prefix}machine_busy",
            f"CPUs busy on the whole machine (this stack and anything else), of {os.cpu_count()}",
            busy / TICK / wall,
            "cores",
            kind="time",
        )
        RUN.figure(
            f"{prefix}cpu_cores_all",
            "the whole stack's CPU (all processes)",
            sum(used.values()) / wall,
            "cores",
            kind="time",
        )
        diff = self._end_calls - self._calls
        RUN.figure(
            f"{prefix}api_requests_per_pass",
            "API requests the sandbox served per pass (metric reads included)",
            sum(diff.values()) / max(1, passes),
            "requests",
            kind="count",
        )
        patches = sum(n for (verb, res), n in diff.items() if verb == "patch" and "/status" in res)
        RUN.figure(
            f"{prefix}status_writes_per_pass",
            "status PATCHes per pass (the history refresh)",
            patches / max(1, passes),
            "requests",
            kind="count",
        )


async def shards_settled(st: Stack, replicas: int, shards: int) -> None:
    """Until every shard Lease is held and each replica holds its fair share (handoffs over)."""
    fair = -(-shards // replicas)
    path = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
    while True:
        items = (await st.kube.request("GET", path)).get("items") or []
        holders = [
            (o.get("spec") or {}).get("holderIdentity") or ""
            for o in items
            if "-shard-" in o["metadata"]["name"]
        ]
        counts = {h: holders.count(h) for h in holders}
        spread = len(counts) == replicas and max(counts.values(), default=0) <= fair
        if len(holders) == shards and "" not in counts and spread:
            return
        await asyncio.sleep(1)


def stack_pids(
    sandbox: subprocess.Popen[bytes], adapter: subprocess.Popen[bytes], prom: PrometheusServer
) -> dict[str, int]:
    pids = {"sandbox": sandbox.pid, "adapter": adapter.pid}
    if prom.pid is not None:
        pids["prometheus"] = prom.pid
    return pids


def renice(pids: dict[str, int], nice: int) -> None:
    """Lower the priority of every thread of these processes by `nice` (Linux sets it per
    thread), so a controller with work gets its core first, as it would on a cluster whose API
    server, adapter and Prometheus run on other nodes."""
    for name, pid in pids.items():
        for task in Path(f"/proc/{pid}/task").iterdir():
            tid = int(task.name)
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
        print(f"{name} (pid {pid}): every thread reniced by +{nice}")


def replica_argv(
    args: argparse.Namespace,
    st: Stack,
    tmp: Path,
    name: str,
    *,
    shards: int,
    loop: str,
    sync_period: float | None = None,
) -> list[str]:
    """The command line of one controller_replica.py process named `name` (`sync_period`:
    instead of `--sync-period`, and the history refresh scaled with it, so that a pass writes
    its status as often)."""
    scale = (sync_period or args.sync_period) / args.sync_period
    here = Path(__file__).resolve().parent
    argv = [sys.executable, str(here / "controller_replica.py"), "--kubeconfig"]
    argv += [str(st.kubeconfig), "--namespace", NS, "--shards", str(shards)]
    argv += ["--identity", f"bench-{name}", "--out", str(tmp / f"{name}.json")]
    argv += ["--sync-period", str(sync_period or args.sync_period), "--workers", str(args.workers)]
    argv += ["--event-loop", loop, "--gc-threshold", args.gc_threshold]
    argv += ["--share-pod-metrics", str(args.share_pod_metrics)]
    argv += ["--history-refresh", str(args.history_refresh * scale)]
    return argv


def start_replica(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)


async def held_shards(st: Stack, identity: str) -> frozenset[int]:
    """The shards whose Leases `identity` holds now."""
    path = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
    items = (await st.kube.request("GET", path)).get("items") or []
    return frozenset(
        int(o["metadata"]["name"].rsplit("-shard-", 1)[1])
        for o in items
        if "-shard-" in o["metadata"]["name"]
        and (o.get("spec") or {}).get("holderIdentity") == identity
    )


async def run_replicas(
    st: Stack, args: argparse.Namespace, pids: dict[str, int], tmp: Path
) -> tuple[frozenset[int], float, int]:
    """`--replicas` controller processes sharing `--shards` shard Leases: each replica's CPU
    and RSS from /proc, the reconcile lag over all of them. Returns the shards the first
    replica held at the window's end, its CPU (cores) and its passes in the window."""
    procs = []
    loops = args.replica_event_loops.split(",") if args.replica_event_loops else []
    for r in range(args.replicas):
        loop = loops[r % len(loops)] if loops else args.event_loop
        argv = replica_argv(args, st, tmp, f"replica-{r}", shards=args.shards, loop=loop)
        procs.append(start_replica(argv, tmp / f"replica-{r}.log"))
    try:
        mine = {**pids, **{f"replica-{r}": p.pid for r, p in enumerate(procs)}}
        await shards_settled(st, args.replicas, args.shards)
        await asyncio.sleep(args.sync_period * 1.5)  # the last holders' first rounds end
        seconds = args.periods * args.sync_period
        window = Window(st, mine, seconds=seconds, profile=args.profile)
        await window.open()
        start = time.time()
        await asyncio.sleep(seconds)
        end = time.time()
        await window.close()
        first_held = await held_shards(st, "bench-replica-0")
        rss = {r: proc_rss_mib(p.pid) for r, p in enumerate(procs)}
        records = []
        for r, proc in enumerate(procs):
            proc.terminate()
            await asyncio.to_thread(proc.wait, 60)
            doc = load_passes(tmp / f"replica-{r}.json")
            records.append([p for p in doc if start <= p[0] <= end])
        counts = {f"replica-{r}": len(rec) for r, rec in enumerate(records)}
        await window.report(sum(counts.values()), own=counts)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    lags = [p[1] for rec in records for p in rec]
    durations = [p[2] for rec in records for p in rec]
    print(f"{args.replicas} replicas, {args.shards} shards, over {end - start:.0f}s")
    print(f"  reconcile lag   p50 {ms(lags, 0.5)}   p99 {ms(lags, 0.99)}   max {ms(lags, 1.0)}")
    print(f"  pass duration   p50 {ms(durations, 0.5)}   p99 {ms(durations, 0.99)}")
    used = window.used()
    RUN.figure(
        "replicas_lag_p99",
        f"{args.replicas} replicas: reconcile lag p99",
        1000 * percentile(lags, 0.99),
        "ms",
        kind="time",
    )
    for r, rec in enumerate(records):
        own = 1000 * used[f"replica-{r}"] / max(1, len(rec))
        RUN.figure(
            f"replica_{r}_cores",
            f"replica-{r} of {args.replicas}: CPU",
            used[f"replica-{r}"] / (end - start),
            "cores",
            kind="time",
        )
        loop = procs[r].args[procs[r].args.index("--event-loop") + 1]
        print(
            f"  replica-{r} ({loop}): {len(rec)} passes, {own:.2f} ms CPU per own pass, "
            f"RSS {rss[r]:.0f} MiB"
        )
    return first_held, used["replica-0"] / (end - start), len(records[0])


async def run_one_replica(
    st: Stack,
    args: argparse.Namespace,
    pids: dict[str, int],
    tmp: Path,
    name: str,
    title: str,
    *,
    sync_period: float | None = None,
) -> float:
    """One controller_replica.py process without shard Leases, on whatever Autoscalers exist,
    measured over `--periods` sync periods (of `--sync-period`) after its first round, with the
    same harness as the pair's replicas; prints `title`, its lag, CPU and RSS. Returns its CPU
    (cores). `sync_period`: the replica's own, instead of `--sync-period`."""
    period = sync_period or args.sync_period
    argv = replica_argv(args, st, tmp, name, shards=1, loop=args.event_loop, sync_period=period)
    proc = start_replica(argv, tmp / f"{name}.log")
    try:
        await asyncio.sleep(period * 2.5)  # its first round (spread) is over
        seconds = args.periods * args.sync_period
        window = Window(st, {**pids, name: proc.pid}, seconds=seconds, profile=None)
        await window.open()
        start = time.time()
        await asyncio.sleep(seconds)
        end = time.time()
        await window.close()
        rss = proc_rss_mib(proc.pid)
        proc.terminate()
        await asyncio.to_thread(proc.wait, 60)
        passes = [p for p in load_passes(tmp / f"{name}.json") if start <= p[0] <= end]
        await window.report(len(passes), own={name: len(passes)})
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    used = window.used()[name]
    lags = [p[1] for p in passes]
    print(title)
    print(f"  reconcile lag   p50 {ms(lags, 0.5)}   p99 {ms(lags, 0.99)}   max {ms(lags, 1.0)}")
    print(
        f"  {name}: {len(passes)} passes, {used / (end - start):.3f} core, "
        f"{1000 * used / max(1, len(passes)):.2f} ms CPU per pass, RSS {rss:.0f} MiB"
    )
    return used / (end - start)


async def run_alone_on_share(
    st: Stack,
    args: argparse.Namespace,
    pids: dict[str, int],
    tmp: Path,
    held: frozenset[int],
    pair: tuple[float, int],
    one: float,
) -> None:
    """`--share-baseline`: the Autoscalers of the shards the first replica held stay, the
    others are deleted, and one replica runs alone on them (no shard Leases), measured over a
    window as long as the pair's. Its CPU against that replica's in the pair says what sharding
    itself adds (the watch carries every Autoscaler's events to every replica) and what is
    the controller's own cost at that share of the load; against `one` (one replica in its own
    process on all of them), how the controller's cost scales with its load."""
    names = [f"a{i}" for i in range(args.autoscalers)]
    gone = [n for n in names if shard_of(f"{NS}/{n}", args.shards) not in held]
    path = f"/apis/promscaler.dev/v1alpha1/namespaces/{NS}/autoscalers"
    await in_batches(st.kube.request("DELETE", f"{path}/{n}") for n in gone)
    kept = len(names) - len(gone)
    title = f"one replica alone on replica-0's share (shards {sorted(held)}: {kept} Autoscalers)"
    cores = await run_one_replica(st, args, pids, tmp, "alone", title)
    print(
        f"  replica-0 in the pair: {pair[1]} passes, {pair[0]:.3f} core "
        f"({100 * (pair[0] / cores - 1):+.0f}% against alone)"
    )
    RUN.figure(
        "pair_share_of_one",
        "replica-0 of the pair against one replica on all (same run)",
        pair[0] / one,
        "x",
        kind="ratio",
    )
    RUN.figure(
        "alone_share_of_one",
        "one replica alone on replica-0's share against one on all",
        cores / one,
        "x",
        kind="ratio",
    )
    RUN.figure(
        "pair_against_alone",
        "replica-0 of the pair against one replica alone on its share",
        pair[0] / cores,
        "x",
        kind="ratio",
        decides="sharding-overhead",
    )
    print(
        f"  against one replica on all {args.autoscalers} (own process, {one:.3f} core): "
        f"replica-0 of the pair {100 * pair[0] / one:.0f}%, alone on its share "
        f"{100 * cores / one:.0f}% (share {100 * kept / args.autoscalers:.1f}% of the load)"
    )


def ms(values: list[float], q: float) -> str:
    return f"{percentile(values, q) * 1000:.0f} ms"


async def catch_up(lags: list[float], limit: float, last: int = 1000) -> None:
    """Wait (up to `limit` seconds) until the start-up backlog has cleared (the `last` passes'
    lag p99 under 1 s): the first round writes every status, so it runs long and the second
    starts late; that transient is printed here, apart from the steady state measured next."""
    if limit <= 0:
        return
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        await asyncio.sleep(1)
        recent = lags[-last:]
        if len(recent) == last and percentile(recent, 0.99) <= 1.0:
            took = time.monotonic() - t0
            print(f"start-up backlog cleared {took:.0f}s after the first round")
            return
    recent = lags[-last:]
    print(
        f"start-up backlog not cleared {limit:.0f}s after the first round "
        f"(the last {len(recent)} passes' lag p99 {ms(recent, 0.99)}); measuring anyway"
    )


def report(
    lags: list[float],
    durations: list[float],
    wake: list[float],
    *,
    starts: list[float],
    sync_period: float,
    seconds: float,
    cpu: float,
    first_cpu: float,
    periods: str,
) -> None:
    print(f"steady state over {seconds:.0f}s ({periods}): {len(lags)} passes")
    print(f"  reconcile lag   p50 {ms(lags, 0.5)}   p99 {ms(lags, 0.99)}   max {ms(lags, 1.0)}")
    per_period: dict[int, list[float]] = {}
    for start, lag in zip(starts, lags, strict=True):
        per_period.setdefault(int((start - starts[0]) // sync_period), []).append(lag)
    p99s = " ".join(f"{percentile(v, 0.99):.1f}" for _, v in sorted(per_period.items()))
    print(f"  lag p99 per sync period (s): {p99s}")
    print(f"  pass duration   p50 {ms(durations, 0.5)}   p99 {ms(durations, 0.99)}")
    print(f"  controller CPU  {100 * cpu:.0f}% of one core (first round: {100 * first_cpu:.0f}%)")
    print(f"  controller RSS  {rss_mib():.0f} MiB")
    RUN.figure("passes", "passes in the window", len(lags), "passes", kind="count")
    RUN.figure("passes_per_s", "passes per second", len(lags) / seconds, "1/s", kind="rate")
    RUN.figure("lag_p50", "reconcile lag p50", 1000 * percentile(lags, 0.5), "ms", kind="time")
    RUN.figure("lag_p99", "reconcile lag p99", 1000 * percentile(lags, 0.99), "ms", kind="time")
    RUN.figure("lag_max", "reconcile lag max", 1000 * percentile(lags, 1.0), "ms", kind="time")
    RUN.figure("controller_cores", "controller CPU", cpu, "cores", kind="time")
    RUN.figure(
        "controller_rss", "controller RSS (with the bench driver)", rss_mib(), "MiB", kind="size"
    )
    shown = ", ".join(f"{w:.2f}" for w in wake)
    if not wake:
        return
    RUN.figure(
        "wake_median",
        "External metric rises -> first replica from zero, median",
        statistics.median(wake),
        "s",
        kind="time",
    )
    RUN.figure(  # the wait a user can meet: the adapter's windows and the zero-poll, added up
        "wake_max",
        "External metric rises -> first replica from zero, slowest trial",
        max(wake),
        "s",
        kind="time",
    )
    print(
        f"scale from zero: metric rise -> first replica over {len(wake)} trials: "
        f"median {statistics.median(wake):.2f}s, max {max(wake):.2f}s ({shown})"
    )


class Switch:
    """The decide the controller runs: the core alone (A), or with the decision log (B)."""

    def __init__(self, core: Callable[[Any], Any], sink: DecisionLog) -> None:
        self.core, self.with_log = core, logged(core, sink)
        self.on = False
        self.lines = 0  # lines handed to the log

    def __call__(self, doc: dict[str, Any]) -> Any:
        if not self.on:
            return self.core(doc)
        self.lines += 1
        return self.with_log(doc)


async def decision_log_overhead(
    settings: Settings,
    starts: list[float],
    ends: list[float],
    *,
    rounds: int,
    seconds: float,
    n: int,
    tmp: Path,
) -> None:
    """What `--decision-log` adds to the controller's CPU per pass, in one run: the same fleet
    and the same controller, with the log switched off and on in turns (A B A B ... A, each
    round `seconds` long). A round's cost is this process's own CPU time over the passes it
    ran, so the other load on a shared machine stretches rounds but is not counted. With 32
    passes in flight, passes begun and passes ended in a round differ by a good part of a short
    round's count; their mean is the work the round did. The log's writer thread flushes about
    once a second, so its CPU would land in whichever round it falls: it is read from its own
    thread clock, taken out of every round and charged to the B rounds by their passes. Each B
    round is set against the mean of the A rounds either side of it, which cancels a drift;
    the median and spread of those ratios are the overhead."""
    sink = DecisionLog(DecisionLogSettings(tmp / "decisions.jsonl"))
    switch = Switch(app_module._decide(), sink)
    original = app_module._decide
    app_module._decide = lambda: switch
    stop = asyncio.Event()
    start = len(starts)
    task = asyncio.create_task(serve(settings, stop=stop))
    while len(starts) - start < n:  # noqa: ASYNC110 - counting passes is the point
        await asyncio.sleep(0.2)
    measured: list[tuple[bool, float, float]] = []  # log on, CPU but the writer's, passes
    writer0 = thread_cpu(sink)
    for i in range(2 * rounds + 1):
        switch.on = i % 2 == 1
        began, ended, cpu0, w0 = len(starts), len(ends), cpu_seconds(), thread_cpu(sink)
        await asyncio.sleep(seconds)
        cpu = cpu_seconds() - cpu0 - (thread_cpu(sink) - w0)
        measured.append((switch.on, cpu, (len(starts) - began + len(ends) - ended) / 2))
    while sink.written + sink.dropped < switch.lines:  # noqa: ASYNC110 - the last batch
        await asyncio.sleep(0.1)
    writer = thread_cpu(sink) - writer0
    stop.set()
    await asyncio.wait_for(task, 30)
    app_module._decide = original
    await asyncio.to_thread(sink.close)
    report_log_overhead(measured, writer=writer, seconds=seconds, sink=sink, core=switch.core)


def report_log_overhead(
    measured: list[tuple[bool, float, float]],
    *,
    writer: float,
    seconds: float,
    sink: DecisionLog,
    core: Callable[[Any], Any],
) -> None:
    logged_passes = sum(count for on, _, count in measured if on)
    raw = [
        (on, (cpu + (writer * count / logged_passes if on else 0.0)) / max(1, count))
        for on, cpu, count in measured
    ]
    print_log_overhead("decision log", raw, note="controller CPU per pass")
    offs = [cpu for on, cpu in raw if not on]
    print(
        f"  {len(measured)} rounds of {seconds:.0f}s, "
        f"{sum(m[2] for m in measured) / len(measured):.0f} passes each; A median "
        f"{statistics.median(offs) * 1e6:.0f} us of CPU per pass; the writer thread "
        f"{writer / max(1, logged_passes) * 1e6:.0f} us per logged pass; {sink.written} lines, "
        f"{sink.settings.path.stat().st_size / 1e6:.1f} MB"
    )
    loop = direct_cost(sink.settings.path, core, sink.settings.path.parent)
    total = loop + writer / max(1, logged_passes)
    print(
        f"  cross-check, the log's own CPU per pass: {loop * 1e6:.0f} us on the event loop "
        f"(thread clock, a logged decide minus a plain one of the same document, median over "
        f"the run's last documents) + the writer's: {100 * total / statistics.median(offs):+.1f}% "
        f"of a pass"
    )


def direct_cost(path: Path, core: Callable[[Any], Any], tmp: Path, last: int = 500) -> float:
    """Median over the last `last` logged documents of (logged decide - plain decide) on this
    thread's CPU clock, the two back to back in alternating order (warm caches either way)."""
    with path.open(encoding="utf-8") as f:
        docs = [json.loads(line)["document"] for line in f.readlines()[-last:]]
    sink = DecisionLog(DecisionLogSettings(tmp / "direct.jsonl"))
    with_log = logged(core, sink)
    extra = []
    for i, doc in enumerate(docs):
        t0 = time.thread_time()
        (core if i % 2 else with_log)(doc)
        t1 = time.thread_time()
        (with_log if i % 2 else core)(doc)
        t2 = time.thread_time()
        first, second = t1 - t0, t2 - t1
        extra.append(second - first if i % 2 else first - second)
    sink.close()
    return statistics.median(extra)


def print_log_overhead(what: str, per_pass: list[tuple[bool, float]], *, note: str) -> None:
    ratios = [
        cost / ((per_pass[i - 1][1] + per_pass[i + 1][1]) / 2) - 1
        for i, (on, cost) in enumerate(per_pass)
        if on
    ]
    q1, median, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    low, high = median_interval(ratios)
    RUN.figure(
        "decision_log_overhead",
        f"what {what} adds to CPU per pass (median of B rounds against the A rounds either side)",
        median,
        "x",
        kind="ratio",
        decides="decision-log",
    )
    mean = statistics.fmean(ratios)
    half = 1.96 * statistics.stdev(ratios) / len(ratios) ** 0.5 if len(ratios) > 1 else 0.0
    print(
        f"{what}: {100 * median:+.1f}% ({note}; median of {len(ratios)} B rounds against the "
        f"A rounds either side; 95% interval of the median {100 * low:+.1f}% .. "
        f"{100 * high:+.1f}%; quartiles {100 * q1:+.1f}% .. {100 * q3:+.1f}%; mean "
        f"{100 * mean:+.1f}% -+ {100 * half:.1f}%; aim < 5%)"
    )


def median_interval(values: list[float]) -> tuple[float, float]:
    """A distribution-free 95% interval of the median: the values of ranks n/2 - 0.98 sqrt(n)
    and 1 + n/2 + 0.98 sqrt(n), rounded outwards (the binomial's normal approximation; fair
    from about 10 values)."""
    ordered, n = sorted(values), len(values)
    half = 0.98 * n**0.5
    low, high = math.floor(n / 2 - half), math.ceil(1 + n / 2 + half)  # ranks from 1
    return ordered[max(0, low - 1)], ordered[min(n - 1, high - 1)]


def thread_cpu(sink: DecisionLog) -> float:
    """CPU seconds of the decision log's writer thread (its own CPU clock: exact, unlike the
    tick-sampled counts in /proc)."""
    assert sink._thread.ident is not None
    return time.clock_gettime(time.pthread_getcpuclockid(sink._thread.ident))


async def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--autoscalers", type=int, default=5000)
    p.add_argument(
        "--periods", type=int, default=2, help="sync periods measured after the first round"
    )
    p.add_argument("--sync-period", type=float, default=15.0)
    p.add_argument("--workers", type=int, default=32)
    p.add_argument(
        "--event-loop",
        choices=eventloop.EVENT_LOOPS,
        default="auto",
        help="the controller's event loop (this process's and every --replicas process's), "
        "as the controller's own --event-loop",
    )
    p.add_argument(
        "--history-refresh",
        type=float,
        default=ControllerOptions().history_refresh,
        metavar="SECONDS",
        help="the controller's --history-refresh (every controller, in this process or a replica)",
    )
    p.add_argument(
        "--share-pod-metrics",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the controller's --share-pod-metrics (every replica; 0: off, as upstream)",
    )
    p.add_argument(
        "--stack-nice",
        type=int,
        default=0,
        metavar="N",
        help="renice the sandbox, the adapter and Prometheus by +N: the controller then gets a "
        "core whenever it has work, as with the rest of the stack on other nodes (0: off)",
    )
    p.add_argument(
        "--sandbox-event-loop",
        choices=eventloop.EVENT_LOOPS,
        default="auto",
        help="the sandbox's --event-loop",
    )
    p.add_argument(
        "--adapter-args",
        default="--batch-window 5s --metrics-relist-interval 30s",
        metavar="FLAGS",
        help="flags added to the adapter's (the test stack's are tuned for 1 s sync periods: "
        "a 500ms batch window, discovery every second); the default is the adapter's own batch "
        "window for a 15 s sync period, and discovery twice a minute",
    )
    p.add_argument(
        "--replica-event-loops",
        default="",
        metavar="LOOP,LOOP",
        help="with --replicas: each replica's loop in turn (e.g. uvloop,asyncio), so two loops "
        "are compared side by side under the same load at the same time",
    )
    p.add_argument(
        "--gc-threshold",
        default=gctune.DEFAULT,
        metavar="YOUNG,MIDDLE,FULL",
        help="every program's --gc-threshold: the controller's (this process's, and every "
        f"--replicas process's), the sandbox's and the adapter's ({gctune.PYTHON}: Python's own)",
    )
    p.add_argument("--wake-trials", type=int, default=5)
    p.add_argument(
        "--catch-up",
        type=int,
        default=4,
        metavar="PERIODS",
        help="after the first round, wait up to this many sync periods for the start-up backlog "
        "to clear (the last 1,000 passes' lag p99 under 1 s) before the measured window; the "
        "time it took is printed apart (0: measure right after the first round)",
    )
    p.add_argument(
        "--controls",
        action="store_true",
        help="afterwards, give half of the Autoscalers activation, fallback and a schedule and "
        "compare the controller's CPU per pass (each side measured over --periods periods)",
    )
    p.add_argument(
        "--log-rounds",
        type=int,
        default=60,
        help="rounds with the decision log on, each between two without (0: skip); the "
        "overhead is the median over them",
    )
    p.add_argument(
        "--log-round-seconds",
        type=float,
        default=2.0,
        help="seconds per on/off round: short, so that the rounds on and off see the same "
        "load from the rest of the machine (the writer's CPU is charged apart, so a round "
        "need not span its 1 s flushes)",
    )
    p.add_argument(
        "--targets",
        choices=["worker", "deployment"],
        default="worker",
        help="worker: a pod-less custom resource with /scale (the sandbox cannot run 5,000 "
        "Deployments' pods in reasonable time); deployment: real Deployments",
    )
    p.add_argument(
        "--pods-every",
        type=int,
        default=2,
        help="every k-th Autoscaler reads a Pods metric of a pod of its own (worker targets); "
        "the others an External metric (0: External only)",
    )
    p.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="> 1: after the one-replica run, that many controller processes sharing --shards "
        "shard Leases on the same objects (each one's CPU and RSS printed)",
    )
    p.add_argument("--shards", type=int, default=4, help="shard Leases, with --replicas > 1")
    p.add_argument(
        "--share-baseline",
        action="store_true",
        help="with --replicas: first one replica in a process of its own on every Autoscaler "
        "(as the pair's replicas run); after the pair, delete the Autoscalers outside the "
        "shards the first replica held and run one replica alone on the rest, for its CPU "
        "beside that replica's and the full-load replica's; and before the pair, one replica "
        "on every Autoscaler at twice the sync period",
    )
    p.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="a directory: py-spy profiles of every process over the measured window, summarized",
    )
    record.add_json_option(p)
    args = p.parse_args()
    global RUN
    RUN = record.Run.begin(args)
    if args.share_baseline and args.replicas < 2:
        p.error("--share-baseline needs --replicas 2 or more")
    tmp = Path(tempfile.mkdtemp(prefix="bench-controller-"))
    (tmp / "prometheus").mkdir()
    prom = PrometheusServer(tmp / "prometheus")
    prom.start()
    sandbox, kubeconfig = start_sandbox(tmp, args.sandbox_event_loop, args.gc_threshold)
    adapter = None
    kube: KubeClient | None = None
    try:
        kube = await connect(str(kubeconfig))
        from sandbox.server import Pki  # noqa: F401 - the front-proxy CA file sits in --dir

        adapter, port = _start_adapter(
            tmp,
            kubeconfig,
            prom.url,
            tmp / "pki" / "requestheader-ca.crt",
            (*args.adapter_args.split(), "--gc-threshold", args.gc_threshold),
        )
        print(f"adapter flags beyond the test stack's: {args.adapter_args or '(none)'}")
        print(f"--gc-threshold of every program: {args.gc_threshold}")
        await _register_adapter(kube, port)
        st = Stack(kubeconfig, kube, prom, prom.url, namespace=NS, tmp=tmp)
        await st.apply_crd()
        t0 = time.monotonic()
        series = await create_objects(
            st, args.autoscalers, args.targets, pods_every=args.pods_every
        )
        fresh = start_keep_fresh(st.prometheus_url, series)
        took = time.monotonic() - t0
        print(f"created {args.autoscalers} {args.targets}s + Autoscalers in {took:.1f}s")
        await asyncio.sleep(2)  # the adapter discovers the series (relist 1s)
        pids = stack_pids(sandbox, adapter, prom)
        if args.stack_nice:
            renice(pids, args.stack_nice)

        lags: list[float] = []
        starts: list[float] = []  # when each pass of `lags` started (monotonic)
        durations: list[float] = []
        settings = Settings(
            kubeconfig=str(kubeconfig),
            namespaces=(NS,),
            controller=ControllerConfig(sync_period=args.sync_period, workers=args.workers),
            options=ControllerOptions(history_refresh=args.history_refresh),
            metrics_port=0,
            share_pod_metrics=args.share_pod_metrics,
        )
        original_pass = Controller._pass

        async def timed_pass(self: Controller, key: str, due: float) -> float | None:
            start = time.monotonic()
            lags.append(max(0.0, start - due))
            starts.append(start)
            try:
                return await original_pass(self, key, due)
            finally:
                durations.append(time.monotonic() - start)

        Controller._pass = timed_pass  # type: ignore[method-assign]
        stop = asyncio.Event()
        cpu0, wall0 = cpu_seconds(), time.monotonic()
        task = asyncio.create_task(serve(settings, stop=stop))
        first_round_done = None
        while first_round_done is None:
            await asyncio.sleep(0.5)
            if len(lags) >= args.autoscalers:
                first_round_done = time.monotonic() - wall0
        spread = f"{args.autoscalers} passes, spread over one sync period"
        print(f"first round ({spread}): {first_round_done:.1f}s")
        await catch_up(lags, args.catch_up * args.sync_period, last=min(1000, args.autoscalers))
        mark = len(lags)
        seconds = args.periods * args.sync_period
        window = Window(
            st, {**pids, "controller": this_process()}, seconds=seconds, profile=args.profile
        )
        await window.open()
        cpu1, wall1 = cpu_seconds(), time.monotonic()
        wake = await wake_trials(st, args.wake_trials)
        remaining = seconds - (time.monotonic() - wall1)
        await asyncio.sleep(max(0.0, remaining))
        cpu2, wall2 = cpu_seconds(), time.monotonic()
        await window.close()
        await window.report(len(lags) - mark, own={"controller": len(lags) - mark}, prefix="")
        report(
            lags[mark:],
            durations[mark:],
            wake,
            starts=starts[mark:],
            sync_period=args.sync_period,
            seconds=wall2 - wall1,
            cpu=(cpu2 - cpu1) / (wall2 - wall1),
            first_cpu=(cpu1 - cpu0) / (wall1 - wall0),
            periods=f"{args.periods} x {args.sync_period:.0f}s periods",
        )
        if args.controls:
            await compare_controls(st, args.autoscalers, durations, args.periods * args.sync_period)
        if args.replicas > 1:  # the one replica stops; the same objects under sharded replicas
            stop.set()
            await asyncio.wait_for(task, 30)
            one = 0.0
            if args.share_baseline:  # first one replica on everything, as the pair's run
                title = f"one replica in its own process, all {args.autoscalers} Autoscalers"
                one = await run_one_replica(st, args, pids, tmp, "one", title)
                # the pair's pass rate, cache and status writes per pass (the history refresh
                # doubled too), without the other replica: what half the passes cost by
                # themselves, apart from what sharding adds
                slow = 2 * args.sync_period
                title = (
                    f"one replica on all {args.autoscalers}, sync period {slow:.0f}s, "
                    f"history refresh {2 * args.history_refresh:.0f}s"
                )
                half = await run_one_replica(
                    st, args, pids, tmp, "one-slow", title, sync_period=slow
                )
                print(f"  against one replica at {args.sync_period:.0f}s: {100 * half / one:.0f}%")
                RUN.figure(
                    "half_rate_share_of_one",
                    "one replica at twice the sync period against one at the sync period",
                    half / one,
                    "x",
                    kind="ratio",
                )
            held, cores, passes = await run_replicas(st, args, pids, tmp)
            if args.share_baseline:
                await run_alone_on_share(st, args, pids, tmp, held, (cores, passes), one)
        stop.set()
        await asyncio.wait_for(task, 30)
        if args.log_rounds:
            await decision_log_overhead(
                settings,
                lags,
                durations,
                rounds=args.log_rounds,
                seconds=args.log_round_seconds,
                n=args.autoscalers,
                tmp=tmp,
            )
        Controller._pass = original_pass  # type: ignore[method-assign]
        fresh.terminate()
        record_goals(args)
        RUN.write()
    finally:
        if kube is not None:
            await kube.close()
        for proc in (adapter, sandbox):
            if proc is not None:
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(10)
                if proc.poll() is None:
                    proc.kill()
        prom.close()
        shutil.rmtree(tmp, ignore_errors=True)


def record_goals(args: argparse.Namespace) -> None:
    """Which figure decides which goal; what this machine or this run leaves undecided."""
    figures = {f.key: f.value for f in RUN.figures}
    reads = figures["api_requests_per_pass"] - figures["status_writes_per_pass"]
    judged = not args.wake_trials  # a trial's target at zero is read every zero-poll-interval
    RUN.figure(
        "api_reads_per_pass",
        "API requests per pass other than status writes (the metric read, GET /scale, LISTs)",
        reads,
        "requests",
        kind="count",
        decides="api-reads" if judged else None,
    )
    if judged:  # one metric read per pass; /scale comes from the watch; Events are rare
        RUN.goal(
            "api-reads",
            "at most 1.05 API requests per pass besides status writes in steady state: the "
            "metric read, no GET of /scale, no LIST",
            figure="api_reads_per_pass",
            met=reads <= 1.05,
        )
    else:
        RUN.cannot_decide(
            "The wake trials ran inside the window and their sleeping targets are read every "
            "--zero-poll-interval: API requests per pass are judged only with --wake-trials 0."
        )
    RUN.note(
        f"status writes per pass are context: the history refresh writes every "
        f"{args.history_refresh:g} s ({args.sync_period / args.history_refresh:.2f} per pass at "
        f"this sync period), and a status that changed is written at once"
    )
    RUN.goal("lag", "reconcile lag p99 <= 1 s, the controller under one core", met=None)
    RUN.cannot_decide(
        "Lag and CPU are wall-clock and CPU time: on this shared 2-core VM they move by up to "
        "3x with its state and with what the sandbox, the adapter, Prometheus and other work "
        "take from the same two cores (machine_busy: how busy the machine was), so they are "
        "context here, not a verdict."
    )
    if args.autoscalers < 10_000:
        RUN.cannot_decide("This run's size leaves the lag and CPU at 10,000 undecided.")
    if "pair_against_alone" in figures:
        RUN.goal("half", "each of 2 replicas about half of one replica's CPU", met=None)
        RUN.cannot_decide(
            "Whether each of 2 replicas uses half of one replica's CPU: on this VM a process's "
            "CPU per unit of work grows as it gets less busy (bench_density.py's control, work "
            "that halves exactly, measures how much), so the pair's share of one replica is "
            "context. What sharding itself adds is decided against one replica alone on the "
            "same Autoscalers in the same run."
        )
        RUN.goal(
            "sharding-overhead",
            "sharding adds under 10% to a replica's CPU: replica-0 of the pair against one "
            "replica alone on the Autoscalers of its shards, same run",
            figure="pair_against_alone",
            met=figures["pair_against_alone"] < 1.10,
        )
    if "decision_log_overhead" in figures:
        RUN.goal(
            "decision-log",
            "--decision-log adds under 5% to the controller's CPU per pass",
            figure="decision_log_overhead",
            met=figures["decision_log_overhead"] < 0.05,
        )


def _early_args() -> argparse.Namespace:
    """--event-loop and --gc-threshold, read before the loop starts (main() parses the rest)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--event-loop", choices=eventloop.EVENT_LOOPS, default="auto")
    p.add_argument("--gc-threshold", type=gctune.argument, default=gctune.DEFAULT)
    return p.parse_known_args()[0]


if __name__ == "__main__":
    early = _early_args()
    gctune.apply(early.gc_threshold)  # the controller runs in this process: as its main() does
    eventloop.run(main(), loop=early.event_loop)
