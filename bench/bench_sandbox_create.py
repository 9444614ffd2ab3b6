"""The sandbox API server's CPU per pod create; prints numbers, asserts nothing.

The server runs as its own process (`python -m sandbox serve`, one node, pods Ready after
0.1 s); this script POSTs pods to it one at a time and reads the server's own CPU time (user +
system, from /proc/<pid>/stat) before and after, so the figure is the server's work per create
(the request, field validation, storage, then binding to a node and the simulated kubelet's
status writes), not wall time, which the loaded CI machine makes meaningless.

`--profile` instead runs the server in this process under cProfile and prints the sandbox
functions that take the most cumulative time (client work included there).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import ssl
import tempfile
import time
from pathlib import Path

import aiohttp
import yaml
from bench_sandbox import pod, start_server

from bench import record

SETTLE = 1.0  # seconds after the last create: the kubelet simulation's Running/Ready writes
ROUNDS = (200, 1000)  # creates per round; the second shows whether the cost grows with the count


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def create(session: aiohttp.ClientSession, url: str, headers: dict[str, str], i: int) -> None:
    path = f"{url}/api/v1/namespaces/default/pods"
    async with session.post(path, json=pod(i), headers=headers) as r:
        assert r.status == 201, await r.text()


async def measure(run: record.Run) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        proc, url, headers, ctx = await start_server(Path(tmp))
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session:
                for i in range(20):  # warm up: schemas are loaded on first use
                    await create(session, url, headers, 10**6 + i)
                await asyncio.sleep(SETTLE)
                done = 0
                for count in ROUNDS:
                    before = cpu_seconds(proc.pid)
                    for i in range(done, done + count):
                        await create(session, url, headers, i)
                    await asyncio.sleep(SETTLE)
                    spent = cpu_seconds(proc.pid) - before
                    done += count
                    print(
                        f"server CPU per pod create: {spent / count * 1000:6.3f} ms"
                        f"  (pods {done - count + 1}-{done}, {spent:.2f} s CPU)"
                    )
                    run.figure(
                        f"cpu_per_create_{count}",
                        f"server CPU per pod create, pods {done - count + 1}-{done}",
                        spent / count * 1000,
                        "ms",
                        kind="time",
                    )
        finally:
            proc.terminate()
            await proc.wait()


async def profile(count: int) -> None:
    from sandbox import Sandbox, SandboxConfig

    async with Sandbox(SandboxConfig(pod_ready_delay=0.1)) as sb:
        token = yaml.safe_load(Path(sb.kubeconfig).read_text())["users"][0]["user"]["token"]
        ctx = ssl.create_default_context(cafile=str(sb.ca_file))
        headers = {"Authorization": f"Bearer {token}"}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session:
            for i in range(20):
                await create(session, sb.url, headers, 10**6 + i)
            prof = cProfile.Profile()
            started = time.process_time()
            prof.enable()
            for i in range(count):
                await create(session, sb.url, headers, i)
            await asyncio.sleep(SETTLE)
            prof.disable()
            spent = time.process_time() - started
    print(f"in-process CPU per create (client and server, profiled): {spent / count * 1000:.3f} ms")
    pstats.Stats(prof).sort_stats("cumulative").print_stats("sandbox/", 30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", type=int, metavar="N", help="profile N creates in process")
    record.add_json_option(parser)
    args = parser.parse_args()
    if args.profile:  # a profile for reading, not figures: nothing is written
        asyncio.run(profile(args.profile))
        return
    run = record.Run.begin(args)
    asyncio.run(measure(run))
    run.note("CPU per create is context; whether it grows with the count is the two rounds' ratio")
    first, second = (f.value for f in run.figures)
    run.figure(
        "growth", "CPU per create, second round over first", second / first, "x", kind="ratio"
    )
    run.write()


if __name__ == "__main__":
    main()
