"""The adapter's instructions per request, counted by callgrind: a measure no other load moves.

    .venv/bin/python bench/bench_adapter_callgrind.py [--requests 100] [--event-loop auto]

The adapter of `bench_adapter.py` section 1 (then the app on 100 ready values, and the floor:
a trivial aiohttp TLS server answering as many bytes) runs under `valgrind --tool=callgrind`
with collection off; one keep-alive client sends the wildcard request over 100 pods
`--requests` times with collection on (one client: every request sends its own Prometheus
query, so the count does not depend on how requests happened to coalesce). Prints
instructions per request (user space only: the kernel's share, about 5% by /proc, is not
counted) and the top functions by inclusive count (`callgrind_annotate`) to `--out`. Needs
valgrind; takes a few minutes (50x slower).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from multiprocessing import resource_tracker
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import record  # noqa: E402
from bench.bench_adapter import (  # noqa: E402
    WILDCARD,
    Adapter,
    _session,
    _timed,
    write_gauges,
)
from sandbox.prometheus import PrometheusServer  # noqa: E402


def _wrapper(tmp: Path) -> str:
    """An executable that runs this Python under callgrind, collection off until asked."""
    script = tmp / "python-under-callgrind"
    script.write_text(
        "#!/bin/sh\n"
        f"exec valgrind --tool=callgrind --instr-atstart=no --dump-instr=no "
        f'--callgrind-out-file={tmp}/callgrind.%p {sys.executable} "$@"\n'
    )
    script.chmod(0o755)
    return str(script)


def _callgrind(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


async def count(adapter: Adapter, n: int, out: Path, dumps_dir: Path) -> int:
    """Instructions per request of `adapter` over n sequential requests."""
    async with _session() as s:
        url = adapter.url + WILDCARD + "?labelSelector=app%3Dweb"
        for _ in range(10):
            await _timed(s, url)  # warm-up (under valgrind: slow)
        pid = adapter.proc.pid
        _callgrind(pid, "--zero")
        _callgrind(pid, "-i", "on")
        for _ in range(n):
            await _timed(s, url)
        _callgrind(pid, "-i", "off")
        _callgrind(pid, "--dump")
    await asyncio.sleep(1)
    dumps = sorted(dumps_dir.glob(f"callgrind.{pid}*"), key=os.path.getmtime)
    annotate = ["callgrind_annotate", "--inclusive=yes", str(dumps[-1])]
    report = (
        await asyncio.to_thread(subprocess.run, annotate, capture_output=True, text=True)
    ).stdout
    out.write_text(report)
    total = re.search(r"^\s*([\d,]+) \S*\s+PROGRAM TOTALS", report, re.M)
    if total is None:
        raise RuntimeError(f"no instruction total in {dumps[-1]}")
    return int(total.group(1).replace(",", "")) // n


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--event-loop", choices=("auto", "uvloop", "asyncio"), default="auto")
    parser.add_argument("--out", default="callgrind-adapter.txt", help="annotated report")
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("skipped: valgrind (with callgrind_control) is not installed")
        return
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "prom").mkdir()
        prom = PrometheusServer(Path(tmp) / "prom")
        prom.start()
        try:
            await write_gauges(prom.url)
            resource_tracker.ensure_running()  # before the switch: the tracker runs plainly
            mp.get_context("spawn").set_executable(_wrapper(Path(tmp)))
            cert_dir = str(Path(tmp) / "certs")
            out = Path(args.out).resolve()
            results = []
            for label, floor, ready in (
                ("adapter", 0, False),
                ("ready", 0, True),
                ("floor", 19_284, False),
            ):
                server = Adapter(
                    prom.url,
                    cache_ttl=0,
                    cert_dir=cert_dir,
                    event_loop=args.event_loop,
                    floor_body=floor,
                    ready_values=ready,
                    start_timeout=600,
                )
                try:
                    target = out if label == "adapter" else out.with_suffix(f".{label}.txt")
                    results.append((label, await count(server, args.requests, target, Path(tmp))))
                finally:
                    server.stop()
        finally:
            prom.close()
    print(
        f"instructions per request (callgrind, 1 client, {args.requests} requests, "
        f"event loop {args.event_loop}; report in {args.out})"
    )
    names = {
        "adapter": "adapter",
        "ready": "the app on 100 ready values (no Prometheus, lister or provider)",
        "floor": "floor (aiohttp + TLS, a fixed body as large)",
    }
    for label, per in results:
        print(f"  {per / 1e6:8.3f} M  {names[label]}")
        deciding = "adapter-cost" if label == "adapter" else None
        run.figure(
            f"instructions_{label}",
            f"instructions per request: {names[label]}",
            per,
            "instructions",
            kind="count",
            decides=deciding,
        )
    per = dict(results)
    run.figure(
        "adapter_over_floor",
        "the adapter's instructions per request over the floor's",
        per["adapter"] / per["floor"],
        "x",
        kind="ratio",
    )
    run.goal(
        "adapter-cost",
        "the hot path's cost per wildcard request over 100 pods, build against build",
        figure="instructions_adapter",
        met=None,
    )
    run.cannot_decide(
        "The aim of 0.5 ms of adapter CPU per request is CPU time: on this VM it moves by up "
        "to 3x with the machine's state, so it is not decided here; instructions per request "
        "(user space only) decide between builds."
    )
    run.write()


if __name__ == "__main__":
    asyncio.run(main())
