"""Adapter benchmarks: prints numbers, asserts nothing. `python bench/bench_adapter.py`

1. a wildcard request over 100 pods, cache off: adapter p50/p99 next to the same PromQL sent
   straight to Prometheus (difference and ratio), and the adapter's CPU per request (process
   CPU over N requests from 4 keep-alive clients); then, with the same client, the app on
   ready values (no Prometheus), the same with each answer first waiting 3 ms on a timer
   (what waiting alone costs in CPU on this machine), and a bare aiohttp TLS floor;
2. cache on, 20 concurrent clients: requests/s and p99;
3. 100 identical concurrent requests, cache off: Prometheus queries sent (coalescing);
4. discovery over 100,000 series in 1,000 metric names, fed to a real Prometheus by remote
   write: relist duration and the adapter process's RSS.

The adapter runs in a child process (HTTPS, as the aggregator calls it); the load comes from
this process over keep-alive connections, so (2) is bounded by the Python client too.
Everything talks to 127.0.0.1 only and stops by itself in about a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import resource
import ssl
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import record  # noqa: E402
from common import gctune  # noqa: E402
from sandbox.prometheus import PrometheusServer, free_port, remote_write  # noqa: E402

RULES = """
rules:
- seriesQuery: 'bench_gauge{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
"""
DISCOVERY_RULES = """
rules:
- seriesQuery: '{__name__=~"disc_metric_.*",namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
"""
PODS = [f"web-{i:03d}" for i in range(100)]
EVENT_LOOP = ["auto"]  # the adapter's --event-loop in every section (set from the command line)
GC_THRESHOLD = [gctune.DEFAULT]  # the adapter's --gc-threshold in every section (likewise)


async def write_gauges(prom_url: str) -> None:
    """`bench_gauge` of every pod in PODS, two samples each, the last a few seconds old."""
    now = time.time() - 5
    await remote_write(
        prom_url,
        [
            (
                {"__name__": "bench_gauge", "namespace": "default", "pod": p},
                [(now - 15, i), (now, i + 0.5)],
            )
            for i, p in enumerate(PODS)
        ],
    )


# ---- the adapter, in a child process ---------------------------------------------------------


def _serve(
    prom_url: str, port: int, setup: dict[str, Any], cert_dir: str, ready: Any, control: Any
) -> None:
    from adapter import eventloop

    gctune.apply(gctune.parse(setup["gc_threshold"]))  # as adapter.__main__ does, before serving
    serve = _serve_async(prom_url, port, setup, cert_dir, ready, control)
    eventloop.run(serve, loop=setup["event_loop"])  # as adapter.__main__ runs


async def _adapter_app(prom_url: str, setup: dict[str, Any]) -> Any:
    from adapter.server.app import build_app
    from tests.adapter.fakes import StoreLister
    from tests.adapter.stack import make_stack

    objects = setup["objects"] or {("pods", "default"): {p: {"app": "web"} for p in PODS}}
    stack = await make_stack(
        prom_url,
        lister=StoreLister(objects),  # the watch cache's store: index and remembered answers
        rules=setup["rules"],
        cache_ttl=setup["cache_ttl"],
        batch_window=setup["batch_window"],
        external_window=setup["external_window"],
        compression=setup["compression"],
    )
    await stack.discover()
    return build_app(stack.provider, response_ttl=setup["cache_ttl"])  # as the CLI wires it


def _ready_app(wait: float = 0.0) -> Any:
    """The adapter's app on a provider that hands back the same ready answer for 100 pods (a
    `CustomValues`, as the Prometheus provider's): the middleware, routing, rendering and
    encoding of the request, no Prometheus, no lister, no provider work
    (bench_adapter_stages.py times that). With `wait` (seconds), the provider first sleeps
    that long, as a request waits on Prometheus: what waiting alone costs in CPU."""
    from datetime import UTC, datetime

    from adapter.provider.seams import CustomValues
    from adapter.server.app import build_app
    from tests.adapter.fakes import FakeProvider

    stamp = datetime.now(UTC)
    values = CustomValues(
        kind="Pod",
        api_version="v1",
        namespace="default",
        metric="bench_gauge",
        window_seconds=None,
        metric_selector=None,
        names=PODS,
        points={p: (stamp, f"{i}5m") for i, p in enumerate(PODS)},
    )

    class Ready(FakeProvider):
        async def custom_metric_by_selector(self, *args: Any, **kwargs: Any) -> Any:
            if wait:
                await asyncio.sleep(wait)
            return values

    return build_app(Ready(custom={("pods", "bench_gauge"): {}}))


def _floor_app(size: int) -> Any:
    """The floor: aiohttp + TLS answering a fixed body of `size` bytes, no work per request."""
    from aiohttp import web

    body = b"x" * size

    async def fixed(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/{tail:.*}", fixed)
    return app


async def _serve_async(
    prom_url: str, port: int, setup: dict[str, Any], cert_dir: str, ready: Any, control: Any
) -> None:
    from aiohttp import web

    from adapter.auth.limits import LimitedAppRunner, limits_middleware
    from adapter.server.tls import ServingTLS, TLSOptions

    if setup["floor_body"]:
        app = _floor_app(setup["floor_body"])
        runner = web.AppRunner(app, access_log=None)
    else:
        app = (
            _ready_app(setup["ready_wait"])
            if setup["ready_values"]
            else await _adapter_app(prom_url, setup)
        )
        app.middlewares.insert(0, limits_middleware())  # as adapter.__main__ wires it
        runner = LimitedAppRunner(app, access_log=None)
    tls = ServingTLS(TLSOptions(cert_dir=cert_dir))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls.context).start()
    ready.set()
    await _obey(control)


async def _obey(control: Any) -> None:
    """Serve until the parent says "stop"; "profile" starts cProfile, "dump PATH" writes it."""
    import cProfile

    # wall time (the default): a CPU-time timer is a system call per event here and swamps
    # the profile; read it with the process CPU printed next to it
    profile = cProfile.Profile()
    while True:
        command = await asyncio.to_thread(control.recv)
        if command == "profile":
            profile.enable()
        elif command.startswith("dump "):
            profile.disable()
            profile.dump_stats(command.split(" ", 1)[1])
        else:
            return
        control.send("ok")


class Adapter:
    """The adapter (or, with `floor_body`, a trivial aiohttp TLS server) in a child process."""

    def __init__(
        self,
        prom_url: str,
        *,
        cache_ttl: float,
        cert_dir: str,
        batch_window: float = 0.0,
        external_window: float | None = None,  # seconds (None: the batch window)
        rules: str = RULES,
        objects: dict[tuple[str, str], dict[str, dict[str, str]]] | None = None,
        compression: str = "auto",
        floor_body: int = 0,
        ready_values: bool = False,  # the app on ready values (`_ready_app`)
        ready_wait: float = 0.0,  # seconds each ready answer waits first
        event_loop: str | None = None,
        start_timeout: float = 60.0,  # seconds; more when the child runs under valgrind
    ) -> None:
        self.port = free_port()
        ctx = mp.get_context("spawn")
        ready = ctx.Event()
        self._control, child_end = ctx.Pipe()
        setup = {
            "cache_ttl": cache_ttl,
            "batch_window": batch_window,
            "external_window": external_window,
            "rules": rules,
            "objects": objects,
            "compression": compression,
            "floor_body": floor_body,
            "ready_values": ready_values,
            "ready_wait": ready_wait,
            "event_loop": event_loop or EVENT_LOOP[0],
            "gc_threshold": GC_THRESHOLD[0],
        }
        self.proc = ctx.Process(
            target=_serve,
            args=(prom_url, self.port, setup, cert_dir, ready, child_end),
            daemon=True,
        )
        self.proc.start()
        if not ready.wait(start_timeout):
            self.proc.kill()
            raise RuntimeError("adapter did not start")
        self.url = f"https://127.0.0.1:{self.port}"
        self.last_split = (0.0, 0.0)  # (user, system) ms per request of the last CPU run

    def cpu_seconds(self) -> float:
        """User + system CPU the adapter process has used (from /proc)."""
        return sum(self.cpu_split())

    def cpu_ns(self) -> int:
        """Nanoseconds on CPU of all the adapter's threads (schedstat: exact, unlike the
        10 ms ticks of /proc/PID/stat)."""
        tasks = Path(f"/proc/{self.proc.pid}/task")
        return sum(int((t / "schedstat").read_text().split()[0]) for t in tasks.iterdir())

    def cpu_split(self) -> tuple[float, float]:
        """(user, system) CPU seconds the adapter process has used (from /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        return int(fields[11]) / tick, int(fields[12]) / tick

    def command(self, text: str) -> None:
        """Send a control command ("profile", "dump PATH") and wait for it to be done."""
        self._control.send(text)
        if not self._control.poll(60):
            raise RuntimeError(f"adapter did not answer {text!r}")
        self._control.recv()

    def stop(self) -> None:
        self._control.send("stop")
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(10)


def _session(limit: int = 100) -> aiohttp.ClientSession:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx, limit=limit))


async def _timed(session: aiohttp.ClientSession, url: str, params: Any = None) -> float:
    started = time.perf_counter()
    async with session.get(url, params=params) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{url}: HTTP {resp.status}")
    return time.perf_counter() - started


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


WILDCARD = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/bench_gauge"


async def bench_latency(
    run: record.Run,
    prom: PrometheusServer,
    n: int,
    cert_dir: str,
    *,
    compression: str,
    batch_window: float,
    profile: str | None = None,
) -> None:
    adapter = Adapter(
        prom.url,
        cache_ttl=0,
        cert_dir=cert_dir,
        compression=compression,
        batch_window=batch_window,
    )
    try:
        async with _session() as s:
            url = adapter.url + WILDCARD + "?labelSelector=app%3Dweb"
            for _ in range(20):
                await _timed(s, url)  # warm-up
            via = [await _timed(s, url) for _ in range(n)]
            sent = len(prom.queries())
            cpu = await _cpu_per_request(adapter, s, url, n)
            sent = len(prom.queries()) - sent
            split = adapter.last_split
            if profile:  # a run of its own: cProfile slows what it watches
                adapter.command("profile")
                await _cpu_per_request(adapter, s, url, n)
                adapter.command(f"dump {profile}")
            async with s.get(url) as resp:
                size = len(await resp.read())
            promql = prom.queries()[-1]
            direct_url = f"{prom.url}/api/v1/query"
            for _ in range(20):
                await _timed(s, direct_url, {"query": promql})
            direct = [await _timed(s, direct_url, {"query": promql}) for _ in range(n)]
    finally:
        adapter.stop()
    (floor_cpu, floor_split), floor_p50 = await _floor(size, n, cert_dir)
    ready_cpu = await _ready(n, cert_dir)
    waiting_cpu = await _ready(n, cert_dir, wait=READY_WAIT)
    p50, d50 = _pct(via, 0.5), _pct(direct, 0.5)
    print(
        f"1. wildcard over 100 pods, cache off ({n} requests each; compression {compression}, "
        f"batch window {batch_window:g}s, event loop {EVENT_LOOP[0]}, "
        f"--gc-threshold {GC_THRESHOLD[0]})"
    )
    print(f"   PromQL: {promql[:90]}...")
    print(f"   adapter (HTTPS): p50 {p50:.2f} ms  p99 {_pct(via, 0.99):.2f} ms")
    print(f"   Prometheus direct: p50 {d50:.2f} ms  p99 {_pct(direct, 0.99):.2f} ms")
    print(
        f"   adapter p50 = direct + {p50 - d50:.2f} ms = {p50 / d50:.2f} x direct "
        "(aim: direct + 1 ms)"
    )
    print(
        f"   adapter CPU: {cpu:.3f} ms per request (median of {BLOCKS} blocks; over all: user "
        f"{split[0]:.3f}, system {split[1]:.3f}; 4 keep-alive clients; aim <= 0.5 ms); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, shared machine"
    )
    print(
        f"   Prometheus queries per request in that run: {sent / (n // BLOCKS * BLOCKS):.2f} "
        "(identical requests in flight share one)"
    )
    print(
        f"   the app on 100 ready values (no Prometheus, lister or provider; middleware, "
        f"routing, rendering, encoding): {ready_cpu:.3f} ms CPU per request"
    )
    print(
        f"   the same, each answer first waiting {READY_WAIT * 1e3:g} ms on a timer (as on "
        f"Prometheus): {waiting_cpu:.3f} ms CPU per request; what waiting costs here: "
        f"{waiting_cpu - ready_cpu:+.3f} ms"
    )
    print(
        f"   floor (aiohttp + TLS, a fixed {size:,}-byte body, same client): "
        f"{floor_cpu:.3f} ms CPU per request (user {floor_split[0]:.3f}, system "
        f"{floor_split[1]:.3f}), p50 {floor_p50:.2f} ms"
    )
    run.figure("p50", "adapter p50 (HTTPS), cache off", p50, "ms", kind="time")
    run.figure("direct_p50", "Prometheus direct p50, same PromQL", d50, "ms", kind="time")
    run.figure("cpu_per_request", "adapter CPU per request (4 clients)", cpu, "ms", kind="time")
    run.figure(
        "floor_cpu",
        "floor: aiohttp + TLS, same bytes, CPU per request",
        floor_cpu,
        "ms",
        kind="time",
    )
    run.figure(
        "ready_cpu", "the app on 100 ready values, CPU per request", ready_cpu, "ms", kind="time"
    )
    run.figure(
        "cpu_over_floor",
        "adapter CPU per request over the floor's, same run",
        cpu / floor_cpu,
        "x",
        kind="ratio",
    )
    run.figure(
        "queries_per_request",
        "Prometheus queries per request (4 clients share in-flight ones)",
        sent / (n // BLOCKS * BLOCKS),
        "queries",
        kind="count",
    )
    run.figure("answer_bytes", "the answer", size, "bytes", kind="size")


async def _floor(
    size: int, n: int, cert_dir: str
) -> tuple[tuple[float, tuple[float, float]], float]:
    """CPU per request and p50 of a trivial aiohttp TLS server answering `size` bytes."""
    floor = Adapter("", cache_ttl=0, cert_dir=cert_dir, floor_body=size)
    try:
        async with _session() as s:
            url = floor.url + WILDCARD
            for _ in range(20):
                await _timed(s, url)
            latencies = [await _timed(s, url) for _ in range(n)]
            cpu = await _cpu_per_request(floor, s, url, n)
            return (cpu, floor.last_split), _pct(latencies, 0.5)
    finally:
        floor.stop()


# how long the ready app's answers wait in the second measurement: about what the adapter
# waits on Prometheus here (its direct p50 is 1.5-3.5 ms on this VM)
READY_WAIT = 0.003


async def _ready(n: int, cert_dir: str, *, wait: float = 0.0) -> float:
    """CPU per request of the app answering ready values (`_ready_app`), same client; with
    `wait`, each answer first waits that many seconds."""
    server = Adapter("", cache_ttl=0, cert_dir=cert_dir, ready_values=True, ready_wait=wait)
    try:
        async with _session() as s:
            url = server.url + WILDCARD + "?labelSelector=app%3Dweb"
            for _ in range(20):
                await _timed(s, url)
            return await _cpu_per_request(server, s, url, n)
    finally:
        server.stop()


# CPU is read per block of requests and the median block reported: other load on the machine
# inflates some blocks, and how many requests shared a query varies from block to block
BLOCKS = 5


async def _cpu_per_request(adapter: Adapter, s: aiohttp.ClientSession, url: str, n: int) -> float:
    """The adapter process's CPU (user + system) per request, 4 clients over keep-alive: the
    median of BLOCKS blocks of n / BLOCKS requests. The user/system split is over all n."""
    user, system = adapter.cpu_split()
    blocks = []
    left = [0]

    async def client() -> None:
        while left[0] > 0:
            left[0] -= 1
            await _timed(s, url)

    for _ in range(BLOCKS):
        left[0] = n // BLOCKS
        before = adapter.cpu_ns()
        await asyncio.gather(*(client() for _ in range(4)))
        blocks.append((adapter.cpu_ns() - before) / (n // BLOCKS) / 1e6)
    user_after, system_after = adapter.cpu_split()
    done = n // BLOCKS * BLOCKS
    adapter.last_split = ((user_after - user) / done * 1000, (system_after - system) / done * 1000)
    return sorted(blocks)[len(blocks) // 2]


async def bench_throughput(
    run: record.Run, prom: PrometheusServer, seconds: float, cert_dir: str
) -> None:
    adapter = Adapter(prom.url, cache_ttl=1.0, cert_dir=cert_dir)
    url = adapter.url + WILDCARD + "?labelSelector=app%3Dweb"
    latencies: list[float] = []
    try:
        async with _session(limit=20) as s:
            for _ in range(20):
                await _timed(s, url)
            deadline = time.perf_counter() + seconds

            async def worker() -> None:
                while time.perf_counter() < deadline:
                    latencies.append(await _timed(s, url))

            cpu_before = adapter.cpu_seconds()
            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(20)))
            elapsed = time.perf_counter() - started
            cpu = adapter.cpu_seconds() - cpu_before
    finally:
        adapter.stop()
    print(f"2. cache on (1s), 20 concurrent clients, {seconds:.0f}s")
    print(
        f"   {len(latencies) / elapsed:.0f} requests/s  p50 {_pct(latencies, 0.5):.2f} ms"
        f"  p99 {_pct(latencies, 0.99):.2f} ms  (aim >= 2000 req/s, p99 <= 25 ms)"
    )
    per = cpu / max(1, len(latencies)) * 1000
    run.figure(
        "cached_rate",
        "cache on, 20 clients: requests/s",
        len(latencies) / elapsed,
        "1/s",
        kind="rate",
    )
    run.figure("cached_p99", "cache on, 20 clients: p99", _pct(latencies, 0.99), "ms", kind="time")
    print(
        f"   adapter CPU: {per:.3f} ms per request -> at most {1000 / per:.0f} req/s per"
        f" free core; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


async def bench_coalescing(run: record.Run, prom: PrometheusServer, cert_dir: str) -> None:
    print("3. 100 identical concurrent requests")
    for ttl, label in ((1.0, "cache on (default 1s)"), (0.0, "cache off, coalescing only")):
        adapter = Adapter(prom.url, cache_ttl=ttl, cert_dir=cert_dir)
        try:
            async with _session(limit=100) as s:
                url = adapter.url + WILDCARD
                # open 100 keep-alive connections first so TLS handshakes do not spread the
                # burst out (a burst over open connections is what 100 HPAs look like)
                await asyncio.gather(
                    *(_timed(s, url, {"labelSelector": "app=db"}) for _ in range(100))
                )
                before = len(prom.queries())
                await asyncio.gather(
                    *(_timed(s, url, {"labelSelector": "app=web"}) for _ in range(100))
                )
                sent = len(prom.queries()) - before
        finally:
            adapter.stop()
        print(f"   {label}: {sent} Prometheus quer{'y' if sent == 1 else 'ies'} sent")
        key = "coalesced_cache_on" if ttl else "coalesced_cache_off"
        run.figure(
            key,
            f"100 identical concurrent requests, {label}: Prometheus queries",
            sent,
            "queries",
            kind="count",
            decides="coalescing" if ttl else None,
        )
        if ttl:
            run.goal(
                "coalescing",
                "100 identical concurrent requests send 1 Prometheus query",
                figure=key,
                met=sent == 1,
            )
    print("   (cache off: requests arriving after the shared query returned send a new one)")


def _discover(prom_url: str, out: Any) -> None:
    from datetime import UTC, datetime

    from tests.adapter.fakes import FakeLister
    from tests.adapter.stack import make_stack

    async def main() -> tuple[float, int, int]:
        stack = await make_stack(prom_url, lister=FakeLister({}), rules=DISCOVERY_RULES, timeout=60)
        before = _rss_mb()
        started = time.perf_counter()
        await stack.discovery.run_once(now=datetime.now(UTC))
        elapsed = time.perf_counter() - started
        count = len(stack.provider.list_custom_metrics())
        await stack.close()
        return elapsed, count, before

    elapsed, count, before = asyncio.run(main())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    out.put((elapsed, count, before, peak, _rss_mb()))


def _rss_mb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return -1


async def bench_discovery(run: record.Run, prom: PrometheusServer, names: int, pods: int) -> None:
    now = time.time() - 5
    written = 0
    started = time.perf_counter()
    batch: list[Any] = []
    for m in range(names):
        for p in range(pods):
            labels = {
                "__name__": f"disc_metric_{m:04d}",
                "namespace": f"ns-{p % 10}",
                "pod": f"pod-{p:03d}",
            }
            batch.append((labels, [(now, float(p))]))
        if len(batch) >= 10_000:
            await remote_write(prom.url, batch)
            written += len(batch)
            batch = []
    if batch:
        await remote_write(prom.url, batch)
        written += len(batch)
    feed = time.perf_counter() - started
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_discover, args=(prom.url, out))
    proc.start()
    elapsed, count, before, peak, after = out.get(timeout=120)
    proc.join(30)
    print(
        f"4. discovery over {written:,} series in {names:,} metric names "
        f"(real Prometheus fed by remote write in {feed:.1f}s)"
    )
    print(f"   relist: {elapsed:.2f} s -> {count:,} custom metrics (pods + namespaces)")
    print(
        f"   adapter RSS: {before} MB before, {after} MB after, peak {peak} MB "
        "(aim <= 3 s, <= 200 MB)"
    )
    run.figure("discovery_seconds", f"discovery over {written:,} series", elapsed, "s", kind="time")
    run.figure(
        "discovery_peak_rss",
        "adapter peak RSS after discovery",
        peak,
        "MB",
        kind="size",
        decides="discovery-memory",
    )
    run.goal(
        "discovery-memory",
        "discovery over 100,000 series in <= 200 MB",
        figure="discovery_peak_rss",
        met=peak <= 200,
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--names", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--compression", choices=("auto", "gzip", "none"), default="auto")
    parser.add_argument(
        "--batch-window",
        type=float,
        default=0.0,
        help="section 1's --batch-window (default 0: every request queries Prometheus)",
    )
    parser.add_argument("--only-latency", action="store_true", help="run section 1 only")
    parser.add_argument(
        "--event-loop",
        choices=("auto", "uvloop", "asyncio"),
        default="auto",
        help="the adapter's --event-loop (auto: uvloop when installed, as the adapter)",
    )
    parser.add_argument(
        "--gc-threshold",
        type=gctune.argument,
        default=gctune.DEFAULT,
        help=f"the adapter's --gc-threshold (default {gctune.DEFAULT}, the adapter's own)",
    )
    parser.add_argument(
        "--profile",
        metavar="PATH",
        help="also write a cProfile of section 1's adapter (4 clients, --requests) to PATH "
        "(read it with `python -m pstats PATH`)",
    )
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)
    EVENT_LOOP[0] = args.event_loop
    GC_THRESHOLD[0] = ",".join(map(str, args.gc_threshold))
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "prom").mkdir()
        prom = PrometheusServer(Path(tmp) / "prom")
        prom.start()
        try:
            await write_gauges(prom.url)
            cert_dir = str(Path(tmp) / "certs")
            await bench_latency(
                run,
                prom,
                args.requests,
                cert_dir,
                compression=args.compression,
                batch_window=args.batch_window,
                profile=args.profile and str(Path(args.profile).resolve()),
            )
            if not args.only_latency:
                await bench_throughput(run, prom, args.seconds, cert_dir)
                await bench_coalescing(run, prom, cert_dir)
                await bench_discovery(run, prom, args.names, args.pods)
        finally:
            prom.close()
    run.goal("latency", "adapter p50 <= Prometheus direct + 1 ms, cache off", met=None)
    run.goal("cpu", "adapter CPU <= 0.5 ms per request", met=None)
    run.cannot_decide(
        "Latency, CPU per request and requests per second are wall-clock and CPU time, with "
        "the clients on the same two shared cores: context here. The adapter's cost is decided "
        "by bench_adapter_callgrind.py's instructions per request; discovery time by nothing "
        "on this VM."
    )
    run.write()


if __name__ == "__main__":
    asyncio.run(main())
