"""metrics.k8s.io benchmark: prints numbers, asserts nothing.

`python bench/bench_resource_metrics.py [--requests 50]`

A `kubectl top pods`-shaped request (PodMetricsList of one namespace) over 1,000 pods, cache off,
served by the adapter over HTTPS in a child process: p50/p99 next to the same two PromQL queries
(CPU and memory, as the adapter sends them, concurrently) sent straight to Prometheus. The usage
series (per container, cAdvisor-shaped) are remote-written into a real Prometheus first.
Loopback only; stops by itself in well under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import record  # noqa: E402
from bench.bench_adapter import _pct, _session, _timed  # noqa: E402
from sandbox.cadvisor import resource_rules  # noqa: E402
from sandbox.prometheus import PrometheusServer, free_port, remote_write  # noqa: E402

PODS = [f"web-{i:04d}-7f9c6d5b8-x{i % 97:02d}" for i in range(1000)]
RULES = resource_rules("1m")
PATH = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"


class _Lister:
    """1,000 pods in `default` (what the adapter's watch cache would hold)."""

    async def objects(self, info: Any, *, namespace: str | None, selector: Any) -> list:
        if info.group_resource.resource != "pods":
            return []
        return [
            ("default", name, {"app": "web"}) for name in PODS if selector.matches({"app": "web"})
        ]


def _serve(prom_url: str, port: int, cert_dir: str, ready: Any) -> None:
    asyncio.run(_serve_async(prom_url, port, cert_dir, ready))


async def _serve_async(prom_url: str, port: int, cert_dir: str, ready: Any) -> None:
    from aiohttp import web

    from adapter.prometheus import PrometheusClient, PrometheusOptions
    from adapter.provider.cache import ResultCache
    from adapter.provider.engine import SingleBackend
    from adapter.provider.resource_provider import ResourceMetricsProvider
    from adapter.rules.config import load_rules
    from adapter.rules.resources import STATIC_RESOLVER
    from adapter.server.app import build_app
    from adapter.server.tls import ServingTLS, TLSOptions
    from tests.adapter.fakes import FakeProvider

    client = PrometheusClient(PrometheusOptions(url=prom_url, timeout=10.0))
    resources = ResourceMetricsProvider(
        rules=load_rules(RULES).resource_rules,
        backends=SingleBackend(client),
        lister=_Lister(),
        resolver=STATIC_RESOLVER,
        cache=ResultCache(ttl=0),
    )
    app = build_app(FakeProvider(), resource_provider=resources)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tls = ServingTLS(TLSOptions(cert_dir=cert_dir))
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls.context).start()
    ready.set()
    await asyncio.sleep(3600)  # the parent terminates this process


def _series(i: int, pod: str, at: float) -> list[tuple[dict[str, str], list[tuple[float, float]]]]:
    out: list[tuple[dict[str, str], list[tuple[float, float]]]] = []
    for container in ("app", "proxy"):
        labels = {"namespace": "default", "pod": pod, "container": container, "node": "n1"}
        cores = 0.01 * (i % 50)  # a counter rising at this many cores
        out.append(
            ({"__name__": "container_cpu_usage_seconds_total", **labels}, [(at, cores * at)])
        )
        memory = float(2**20 * (10 + i % 90))
        out.append(({"__name__": "container_memory_working_set_bytes", **labels}, [(at, memory)]))
    return out


async def feed(prom: PrometheusServer, *, every: float = 10.0) -> None:
    """Write one sample per series every `every` seconds until cancelled, as a scrape would
    (rate over 1m needs fresh samples for as long as the benchmark runs)."""
    last = 0.0
    while True:
        at = max(time.time() - 0.5, last + 0.001)
        last = at
        series = [s for i, pod in enumerate(PODS) for s in _series(i, pod, at)]
        for start in range(0, len(series), 1000):
            await remote_write(prom.url, series[start : start + 1000])
        await asyncio.sleep(every)


async def bench(prom: PrometheusServer, n: int, cert_dir: str, run: record.Run) -> None:
    port = free_port()
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_serve, args=(prom.url, port, cert_dir, ready), daemon=True)
    proc.start()
    writer = asyncio.create_task(feed(prom))
    try:
        await asyncio.sleep(21)  # three writes: rate() over 1m has two samples or more
        if not ready.wait(60):
            raise RuntimeError("adapter did not start")
        url = f"https://127.0.0.1:{port}{PATH}"
        async with _session() as s:
            for _ in range(5):
                await _timed(s, url)  # warm-up (also fills the query log)
            logged = len(prom.queries())
            via = [await _timed(s, url) for _ in range(n)]
            per_request = (len(prom.queries()) - logged) / n  # cache off: every request asks
            async with s.get(url) as resp:
                items = len((await resp.json())["items"])
            queries = [q for q in prom.queries() if "container_" in q][-2:]
            direct_url = f"{prom.url}/api/v1/query"

            async def both() -> float:
                started = time.perf_counter()
                await asyncio.gather(*(_timed(s, direct_url, {"query": q}) for q in queries))
                return time.perf_counter() - started

            for _ in range(5):
                await both()
            direct = [await both() for _ in range(n)]
    finally:
        writer.cancel()
        proc.terminate()
        proc.join(10)
    print(f"PodMetricsList over {len(PODS)} pods in one namespace, cache off ({n} requests each)")
    print(f"   items served: {items}; PromQL sent per request: {len(queries)} (cpu, memory)")
    print(f"   load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"   e.g. {queries[0][:100]}...")
    print(f"   adapter (HTTPS): p50 {_pct(via, 0.5):.1f} ms  p99 {_pct(via, 0.99):.1f} ms")
    print(
        f"   Prometheus direct (both queries): p50 {_pct(direct, 0.5):.1f} ms"
        f"  p99 {_pct(direct, 0.99):.1f} ms"
    )
    run.figure("items", "items served", items, "items", kind="count")
    run.figure(
        "queries_per_request",
        "PromQL queries per PodMetricsList request (query log)",
        per_request,
        "queries",
        kind="count",
        decides="queries",
    )
    run.goal(
        "queries",
        "a PodMetricsList costs 2 queries (cpu, memory) whatever the number of pods",
        figure="queries_per_request",
        met=per_request == 2,
    )
    run.figure("p50", "adapter p50 (HTTPS)", _pct(via, 0.5), "ms", kind="time")
    run.figure(
        "direct_p50", "Prometheus direct, both queries, p50", _pct(direct, 0.5), "ms", kind="time"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=50, help="timed requests per side")
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)
    with tempfile.TemporaryDirectory() as tmp, PrometheusServer(Path(tmp)) as prom:
        asyncio.run(bench(prom, args.requests, str(Path(tmp) / "certs"), run))
    run.write()


if __name__ == "__main__":
    main()
