"""Benchmark the sandbox API server; prints numbers, asserts nothing.

1. LIST of 1,000 pods with a label selector (all 1,000 match, and one tenth match): p50/p99.
2. Watch latency from a write to 200 concurrent watchers: p50/p99 over every delivered event.

The server runs as its own process (`python -m sandbox serve`), the clients here, on loopback.
Aims (issue 2): LIST p50 < 20 ms, watch p99 < 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import record

PODS = 1000
LIST_ROUNDS = 100
WATCHERS = 200
WRITES = 30


NAME = re.compile(rb'"metadata":\{"name":"([^"]+)"')


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def show(name: str, samples: list[float], *, run: record.Run | None = None, key: str = "") -> None:
    ms = [s * 1000 for s in samples]
    if run is not None:
        run.figure(f"{key}_p50", f"{name}, p50", pct(ms, 50), "ms", kind="time")
        run.figure(f"{key}_p99", f"{name}, p99", pct(ms, 99), "ms", kind="time")
    print(
        f"{name:<48} n={len(ms):<6} p50={pct(ms, 50):7.2f} ms  p99={pct(ms, 99):7.2f} ms"
        f"  mean={statistics.fmean(ms):7.2f} ms"
    )


async def start_server(
    tmp: Path,
) -> tuple[asyncio.subprocess.Process, str, dict[str, str], ssl.SSLContext]:
    kubeconfig = tmp / "kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sandbox",
        "serve",
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
        "--pod-ready-delay",
        "0.1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
    port = re.search(r"port (\d+)", line)
    assert port, line
    doc = yaml.safe_load(kubeconfig.read_text())
    token = doc["users"][0]["user"]["token"]
    ctx = ssl.create_default_context(cafile=str(tmp / "sandbox-pki" / "ca.crt"))
    return proc, f"https://127.0.0.1:{port.group(1)}", {"Authorization": f"Bearer {token}"}, ctx


def pod(i: int) -> dict[str, object]:
    return {
        "metadata": {"name": f"bench-{i}", "labels": {"app": "bench", "shard": str(i % 10)}},
        "spec": {
            "containers": [
                {"name": "main", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}
            ]
        },
    }


async def bench_list(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], run: record.Run
) -> None:
    sem = asyncio.Semaphore(20)

    async def create(i: int) -> None:
        async with (
            sem,
            session.post(
                f"{url}/api/v1/namespaces/default/pods", json=pod(i), headers=headers
            ) as r,
        ):
            assert r.status == 201, await r.text()

    t0 = time.perf_counter()
    await asyncio.gather(*(create(i) for i in range(PODS)))
    print(f"created {PODS} pods in {time.perf_counter() - t0:.2f} s")
    await asyncio.sleep(1.0)  # let the kubelet simulation settle (Running, then Ready)
    for selector, want in (("app%3Dbench", PODS), ("shard%3D3", PODS // 10)):
        samples = []
        for _ in range(LIST_ROUNDS):
            t = time.perf_counter()
            async with session.get(
                f"{url}/api/v1/namespaces/default/pods?labelSelector={selector}", headers=headers
            ) as r:
                body = await r.read()
            samples.append(time.perf_counter() - t)
            assert len(json.loads(body)["items"]) == want
        key = f"list_{want}"
        label = f"LIST pods ?labelSelector={selector.replace('%3D', '=')} ({want} items)"
        show(label, samples, run=run, key=key)


async def bench_watch(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], run: record.Run
) -> None:
    sent: dict[str, float] = {}
    latencies: list[float] = []
    ready = asyncio.Event()
    connected = 0

    async def watcher() -> None:
        nonlocal connected
        query = "watch=1&resourceVersion=0&timeoutSeconds=60"
        path = f"{url}/api/v1/namespaces/default/configmaps?{query}"
        async with session.get(
            path, headers=headers, timeout=aiohttp.ClientTimeout(total=None)
        ) as r:
            connected += 1
            if connected == WATCHERS:
                ready.set()
            seen = 0
            async for line in r.content:
                # the name only: the clients share this process with 199 others
                found = NAME.search(line)
                name = found.group(1).decode() if found else ""
                if name in sent:
                    latencies.append(time.perf_counter() - sent[name])
                    seen += 1
                    if seen == WRITES:
                        return

    tasks = [asyncio.create_task(watcher()) for _ in range(WATCHERS)]
    await asyncio.wait_for(ready.wait(), 60)
    await asyncio.sleep(0.5)
    for i in range(WRITES):
        name = f"w-{i}"
        sent[name] = time.perf_counter()
        async with session.post(
            f"{url}/api/v1/namespaces/default/configmaps",
            json={"metadata": {"name": name}},
            headers=headers,
        ) as r:
            assert r.status == 201
        await asyncio.sleep(0.05)
    await asyncio.wait_for(asyncio.gather(*tasks), 60)
    show(f"watch latency, write -> {WATCHERS} watchers", latencies, run=run, key="watch")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    record.add_json_option(parser)
    run = record.Run.begin(parser.parse_args())
    with tempfile.TemporaryDirectory() as tmp:
        proc, url, headers, ctx = await start_server(Path(tmp))
        try:
            connector = aiohttp.TCPConnector(ssl=ctx, limit=WATCHERS + 50)
            async with aiohttp.ClientSession(connector=connector) as session:
                await bench_list(session, url, headers, run)
                await bench_watch(session, url, headers, run)
        finally:
            proc.terminate()
            await proc.wait()
    run.goal("list", "LIST of 1,000 pods by label selector: p50 < 20 ms", met=None)
    run.goal("watch", "a write seen by 200 watchers: p99 < 100 ms", met=None)
    run.cannot_decide(
        "Both aims are wall-clock latencies with the clients on the same two shared cores as "
        "the server: context on this VM, not a verdict."
    )
    run.write()


if __name__ == "__main__":
    asyncio.run(main())
