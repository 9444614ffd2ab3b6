"""CPU per Prometheus query on the client's side: the adapter's client against aiohttp's.

    .venv/bin/python bench/bench_prometheus_client.py [--queries 1000] [--rounds 2]

A real Prometheus (the Debian package) holds `bench_gauge` for 100 pods; each client sends the
adapter's wildcard query over them (`sum(bench_gauge{namespace="default",pod=~"web-000|..."})
by (pod)`, a 6 KB answer) `--queries` times, one after another on one keep-alive connection,
uvloop as the adapter runs. Prints user and system CPU of this process per query (getrusage):

- `PrometheusClient.query_keyed`: the adapter's call as a request makes it (encode, send over
  `common.http1`, parse, key the samples by pod, self-metrics);
- `common.http1.Origin`: the bare exchange and `orjson.loads`;
- `aiohttp.ClientSession`: the same exchange and parse through aiohttp's client, as the adapter
  sent it before;
- `asyncio streams`: the same exchange hand-read from an asyncio stream: near the least any
  Python client can spend;
- `orjson.loads` alone.

The rounds alternate the clients, so a change in the machine's speed shows in every row.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import orjson  # noqa: E402

from adapter.prometheus import PrometheusClient, PrometheusOptions  # noqa: E402
from bench import record  # noqa: E402
from bench.bench_adapter import PODS, write_gauges  # noqa: E402
from common.http1 import Origin  # noqa: E402
from sandbox.prometheus import PrometheusServer  # noqa: E402

PODS_RE = "|".join(PODS)
QUERY = f'sum(bench_gauge{{namespace="default",pod=~"{PODS_RE}"}}) by (pod)'


async def per_query(call: Callable[[], Awaitable[None]], n: int) -> tuple[float, float, float]:
    """(user, system, wall) seconds per call over n calls, after 50 to warm up."""
    for _ in range(50):
        await call()
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(n):
        await call()
    after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - started
    return (
        (after.ru_utime - before.ru_utime) / n,
        (after.ru_stime - before.ru_stime) / n,
        wall / n,
    )


async def run(url: str, n: int, rounds: int, results: record.Run) -> None:
    target = "/api/v1/query?" + urlencode({"query": QUERY})
    ours = PrometheusClient(PrometheusOptions(url=url))
    origin = Origin(url)
    session = aiohttp.ClientSession(
        headers={"Accept-Encoding": "identity"}, timeout=aiohttp.ClientTimeout()
    )
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    raw = f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept-Encoding: identity\r\n\r\n"

    async def client() -> None:
        await ours.query_keyed(QUERY, label="pod", time_of=float, value_of=str)

    async def bare() -> None:
        orjson.loads((await origin.request("GET", target)).body)

    async def through_aiohttp() -> None:
        async with session.get(url + "/api/v1/query", params=[("query", QUERY)]) as resp:
            orjson.loads(await resp.read())

    async def streams() -> None:  # Prometheus answers chunked
        writer.write(raw.encode())
        await reader.readuntil(b"\r\n\r\n")
        parts = []
        while size := int((await reader.readuntil(b"\r\n"))[:-2], 16):
            parts.append((await reader.readexactly(size + 2))[:-2])
        await reader.readexactly(2)
        orjson.loads(b"".join(parts))

    body = (await origin.request("GET", target)).body

    async def parse() -> None:
        orjson.loads(body)

    rows = [
        ("PrometheusClient.query_keyed", client),
        ("common.http1.Origin", bare),
        ("aiohttp.ClientSession", through_aiohttp),
        ("asyncio streams", streams),
        ("orjson.loads alone", parse),
    ]
    print(f"CPU per query ({len(body):,}-byte answer, {n} queries per row), ms:")
    cpu: dict[str, list[float]] = {name: [] for name, _ in rows}
    try:
        for r in range(rounds):
            print(f"round {r + 1}")
            for name, call in rows:
                user, system, wall = await per_query(call, n)
                cpu[name].append((user + system) * 1e3)
                print(
                    f"  {name:30s} {(user + system) * 1e3:6.3f}  (user {user * 1e3:.3f}, "
                    f"system {system * 1e3:.3f}; wall {wall * 1e3:.3f})"
                )
    finally:
        await ours.close()
        await origin.close()
        await session.close()
        writer.close()
    for name, values in cpu.items():
        results.figure(
            record.slug(name), f"{name}: CPU per query (best round)", min(values), "ms", kind="time"
        )
    ours_ms, bare_ms = min(cpu["PrometheusClient.query_keyed"]), min(cpu["common.http1.Origin"])
    results.figure(
        "client_over_origin",
        "PrometheusClient over the bare Origin, same run",
        ours_ms / bare_ms,
        "x",
        kind="ratio",
    )
    results.figure("answer_bytes", "the answer", len(body), "bytes", kind="size")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    record.add_json_option(parser)
    args = parser.parse_args()
    results = record.Run.begin(args)
    with tempfile.TemporaryDirectory() as tmp:
        prom = PrometheusServer(Path(tmp))
        prom.start()
        try:
            asyncio.run(write_gauges(prom.url))
            try:
                import uvloop
            except ImportError:  # pragma: no cover - uvloop is a dependency on Linux
                asyncio.run(run(prom.url, args.queries, args.rounds, results))
            else:
                uvloop.run(run(prom.url, args.queries, args.rounds, results))
        finally:
            prom.stop()
    results.note("CPU per query is context; the ratio to the bare client is measured side by side")
    results.write()


if __name__ == "__main__":
    main()
