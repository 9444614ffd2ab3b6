"""Adapter benchmarks for reload and several backends: prints numbers, asserts nothing.
`python bench/bench_adapter_backends.py`

5. a reload of a 200-rule file (every rule changed, so all 200 seriesQueries are re-discovered)
   under 20 concurrent clients: failed requests, p50/p99 before, during and after the reload;
6. discovery over 100,000 series across two real Prometheus servers (50,000 each, one rule
   per backend): relist time and the adapter process's peak RSS.

The adapter runs in a child process with the rule file watched as the CLI does (plain HTTP on
127.0.0.1: TLS is measured by bench_adapter.py); the load comes from this process. Everything
stops by itself in about a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import record  # noqa: E402
from sandbox.prometheus import PrometheusServer, free_port, remote_write  # noqa: E402

CM = "/apis/custom.metrics.k8s.io/v1beta2"
RULE = """
- seriesQuery: '{name}{{namespace!="",pod!=""}}'
  resources: {{overrides: {{namespace: {{resource: namespace}}, pod: {{resource: pod}}}}}}
  {extra}metricsQuery: 'sum(<<.Series>>{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'"""


def rule_file(names: list[str], *, extra: str = "") -> str:
    return "rules:" + "".join(RULE.format(name=n, extra=extra) for n in names) + "\n"


def _serve(prom_url: str, path: str, port: int, ready: Any) -> None:
    asyncio.run(_serve_async(prom_url, path, port, ready))


async def _serve_async(prom_url: str, path: str, port: int, ready: Any) -> None:
    from aiohttp import web

    from adapter.reload import RuleReloader
    from adapter.server.app import build_app
    from tests.adapter.stack import Adapter

    adapter = Adapter(prom_url, Path(path).read_text(), timeout=10.0)
    await adapter.discover()
    reloader = RuleReloader(
        path, discovery=adapter.discovery, backends=adapter.pool, resolver=adapter.resolver
    )
    watch = asyncio.create_task(reloader.watch())
    app = build_app(adapter.provider, registry=adapter.registry)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    ready.set()
    await asyncio.sleep(3600)  # the parent terminates this process
    watch.cancel()


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0


async def bench_reload(
    run: record.Run, prom: PrometheusServer, workdir: Path, rules: int, clients: int
) -> None:
    names = [f"load_{i}" for i in range(rules)]
    now = time.time() - 5
    batch = [({"__name__": n, "namespace": "d", "pod": "p"}, [(now, 1.0)]) for n in names]
    await remote_write(prom.url, batch)
    path = workdir / "rules.yaml"
    path.write_text(rule_file(names))
    port = free_port()
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_serve, args=(prom.url, str(path), port, ready), daemon=True)
    proc.start()
    ready.wait(60)
    base = f"http://127.0.0.1:{port}{CM}/namespaces/d/pods/p/"
    phase = "before"
    lat: dict[str, list[float]] = {"before": [], "during": [], "after": [], "1-rule": []}
    failed = 0
    stop = asyncio.Event()

    async def load(session: aiohttp.ClientSession, i: int) -> None:
        nonlocal failed
        while not stop.is_set():
            started = time.perf_counter()
            async with session.get(base + names[i * 7 % rules]) as resp:
                await resp.read()
                failed += resp.status != 200
            lat[phase].append(time.perf_counter() - started)

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients + 1)) as session:
        tasks = [asyncio.create_task(load(session, i)) for i in range(clients)]
        await asyncio.sleep(2)
        phase = "during"
        started = time.perf_counter()
        # every rule changes (a series filter added) and a new metric name appears last
        path.write_text(rule_file(names, extra="seriesFilters: [{isNot: x$}]\n  "))
        await _wait_rediscovered(session, port, started)
        took = time.perf_counter() - started
        phase = "after"
        await asyncio.sleep(2)
        # one rule added: the file watch plus one seriesQuery call, under the same load
        phase = "1-rule"
        started = time.perf_counter()
        path.write_text(rule_file(names, extra="seriesFilters: [{isNot: x$}]\n  ") + RENAMED)
        one = await _wait_listed(session, port, "pods/renamed", started)
        await asyncio.sleep(1)
        stop.set()
        await asyncio.gather(*tasks)
    proc.terminate()
    proc.join(10)
    total = sum(len(v) for v in lat.values())
    print(f"5. reload of a {rules}-rule file (all rules changed) under {clients} clients")
    print(f"   {total:,} requests, {failed} failed; change served after {took:.2f} s")
    print(f"   then one added rule: served {one:.2f} s after the file was written")
    run.figure(
        "reload_failed",
        f"requests failed during a reload of {rules} rules",
        failed,
        "requests",
        kind="count",
        decides="reload",
    )
    run.goal(
        "reload",
        "no request fails while the rule file reloads",
        figure="reload_failed",
        met=failed == 0,
    )
    run.figure("reload_served_after", "the changed rules served after", took, "s", kind="time")
    run.figure("one_rule_served_after", "one added rule served after", one, "s", kind="time")
    for name, samples in lat.items():
        print(
            f"   {name:>6}: {len(samples):>6,} requests, p50 {_pct(samples, 0.5):6.1f} ms, "
            f"p99 {_pct(samples, 0.99):6.1f} ms"
        )


RENAMED = """- seriesQuery: 'load_0{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  name: {as: renamed}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
"""


async def _wait_listed(session: aiohttp.ClientSession, port: int, name: str, since: float) -> float:
    """Seconds from `since` until the discovery document lists `name`."""
    while time.perf_counter() - since < 60:
        async with session.get(f"http://127.0.0.1:{port}{CM}") as resp:
            body = await resp.json()
        if any(r["name"] == name for r in body["resources"]):
            break
        await asyncio.sleep(0.02)
    return time.perf_counter() - since


async def _wait_rediscovered(session: aiohttp.ClientSession, port: int, since: float) -> None:
    """Until the adapter's own metrics show the reload and its discovery pass done."""
    url = f"http://127.0.0.1:{port}/metrics"
    while time.perf_counter() - since < 60:
        async with session.get(url) as resp:
            text = await resp.text()
        runs = [
            ln for ln in text.splitlines() if ln.startswith("promscaler_adapter_discovery_runs")
        ]
        if runs and float(runs[0].split()[-1]) >= 2:  # start-up pass + the reload's pass
            return
        await asyncio.sleep(0.02)


def _discover(urls: list[str], out: Any) -> None:
    from tests.adapter.stack import Adapter

    rule = (
        '- seriesQuery: \'{{__name__=~"disc_metric_.*",namespace!="",pod!=""}}\'\n'
        "  resources: {{overrides: {{namespace: {{resource: namespace}}, "
        "pod: {{resource: pod}}}}}}\n"
        "  metricsQuery: 'sum(<<.Series>>{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'\n"
        "  {backend}\n"
    )
    text = (
        f"backends:\n  b: {{url: '{urls[1]}'}}\nrules:\n"
        + rule.format(backend="")
        + rule.format(backend="backend: b")
    )

    async def main() -> tuple[float, int]:
        adapter = Adapter(urls[0], text, timeout=60.0)
        started = time.perf_counter()
        await adapter.discover()
        elapsed = time.perf_counter() - started
        count = len(adapter.discovery.planner.custom)
        await adapter.pool.close()
        return elapsed, count

    elapsed, count = asyncio.run(main())
    out.put((elapsed, count, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))


async def _feed(prom: PrometheusServer, first: int, names: int, pods: int) -> int:
    now, written, batch = time.time() - 5, 0, []
    for m in range(first, first + names):
        for p in range(pods):
            labels = {
                "__name__": f"disc_metric_{m:04d}",
                "namespace": f"ns-{p % 10}",
                "pod": f"pod-{p:03d}",
            }
            batch.append((labels, [(now, float(p))]))
        if len(batch) >= 10_000:
            await remote_write(prom.url, batch)
            written, batch = written + len(batch), []
    if batch:
        await remote_write(prom.url, batch)
        written += len(batch)
    return written


async def bench_two_backends(
    run: record.Run, a: PrometheusServer, b: PrometheusServer, names: int, pods: int
) -> None:
    written = await _feed(a, 0, names // 2, pods) + await _feed(b, names // 2, names // 2, pods)
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_discover, args=([a.url, b.url], out))
    proc.start()
    elapsed, count, peak = out.get(timeout=180)
    proc.join(30)
    print(f"6. discovery over {written:,} series in {names:,} names across two Prometheus servers")
    print(f"   relist: {elapsed:.2f} s -> {count:,} custom metrics; adapter peak RSS {peak} MB")
    run.figure(
        "two_backends_relist",
        f"discovery over {written:,} series, two backends",
        elapsed,
        "s",
        kind="time",
    )
    run.figure("two_backends_peak_rss", "adapter peak RSS", peak, "MB", kind="size")
    run.figure("two_backends_metrics", "custom metrics discovered", count, "metrics", kind="count")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--names", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=100)
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)
    with tempfile.TemporaryDirectory() as tmp:
        servers = []
        for name in ("a", "b"):
            (Path(tmp) / name).mkdir()
            servers.append(PrometheusServer(Path(tmp) / name))
            servers[-1].start()
        try:
            await bench_reload(run, servers[0], Path(tmp), args.rules, args.clients)
            await bench_two_backends(run, servers[0], servers[1], args.names, args.pods)
        finally:
            for server in servers:
                server.close()
    run.write()


if __name__ == "__main__":
    asyncio.run(main())
