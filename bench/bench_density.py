"""What the same work costs on this machine as it comes less densely: a control for the sharded
controller's figures (docs/scaling.md, "a control: the same work at half the rate").

Sharded over two replicas, each controller does half the passes, yet on the development VM it
used 53-68% of one replica's CPU, and one replica alone on half the Autoscalers 50-62%. This
benchmark asks whether any program would do the same here. Each pass is the controller's own
work (`bench_pass.Passes`: `Reconciler.reconcile` on a cluster in memory, a few hundred
Autoscalers taken in turn) and, with `--round-trips`, that many request/answer exchanges over
loopback TCP with an answering process shared by all workers (a stand-in for the API server:
the event loop waits and is woken, as a real pass's is). Passes start on a 50 ms grid, as the
work queue starts what falls due in a slot, at most 64 at once. Three phases, each from its
own fresh processes, repeated `--rounds` times:

- one:   one process at `--rate` passes a second (the controller with every Autoscaler);
- pair:  two processes at the same time, each at half the rate (two replicas, half each);
- alone: one process at half the rate (one replica alone on half the Autoscalers).

Prints each process's CPU per pass and share of a core, its loop thread's wake-ups per pass,
and the two ratios the controller's benchmark prints: each of the pair and the process alone
against one. A work whose cost per pass did not depend on density would give 50% for both.

    .venv/bin/python bench/bench_density.py [--rate 667] [--seconds 20] [--rounds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pass import WARM_UP, Passes
from stackprofile import proc_cpu, proc_sched

from bench import record
from common import eventloop

SLOT = 0.05  # s: the work queue's longest timer slot (autoscaler/queue.py)
WORKERS = 64  # passes in flight at most, as the controller's default --workers 64 in the bench
REQUEST = b"q" * 300  # about a GET's request line and headers
ANSWER = b"a" * 2000  # about a metric answer or a patched status, headers included


@dataclass(frozen=True)
class Share:
    """One process's window: passes, CPU seconds, wake-ups of its loop thread."""

    passes: int
    cpu: float
    wakes: int
    seconds: float

    @property
    def core(self) -> float:
        return self.cpu / self.seconds

    @property
    def per_pass_us(self) -> float:
        return self.cpu / self.passes * 1e6 if self.passes else float("nan")

    @property
    def wakes_per_pass(self) -> float:
        return self.wakes / self.passes if self.passes else float("nan")


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            await reader.readexactly(len(REQUEST))
            writer.write(ANSWER)
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


async def _serve(port_out: Any) -> None:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0)
    port_out.put(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def _server(port_out: Any) -> None:
    eventloop.run(_serve(port_out), loop="auto")


async def _paced(
    rate: float, settle: float, seconds: float, objects: int, port: int, trips: int, ready: Barrier
) -> Share:
    units = [Passes() for _ in range(objects)]
    for unit in units:
        await unit.run(WARM_UP)
    pool: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    for _ in range(16 if trips else 0):
        pool.put_nowait(await asyncio.open_connection("127.0.0.1", port))
    slots = asyncio.Semaphore(WORKERS)
    done = 0

    async def one(unit: Passes) -> None:
        nonlocal done
        async with slots:
            await unit.run(1)
            for _ in range(trips):
                reader, writer = await pool.get()
                writer.write(REQUEST)
                await reader.readexactly(len(ANSWER))
                pool.put_nowait((reader, writer))
            done += 1

    await asyncio.to_thread(ready.wait)  # every process of the phase starts its grid together
    tasks: set[asyncio.Task[None]] = set()
    due, turn = 0.0, 0
    start = time.monotonic()
    window = start + settle
    end = window + seconds
    before: tuple[int, float, int] | None = None
    tick = start
    while True:
        now = time.monotonic()
        if before is None and now >= window:
            sched = proc_sched(os.getpid())
            before = (done, time.process_time(), sched[4] if sched else 0)
        if now >= end:
            break
        due += rate * SLOT
        for _ in range(int(due)):
            task = asyncio.create_task(one(units[turn % objects]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            turn += 1
        due -= int(due)
        tick += SLOT
        await asyncio.sleep(max(0.0, tick - time.monotonic()))
    sched = proc_sched(os.getpid())
    assert before is not None
    share = Share(
        passes=done - before[0],
        cpu=time.process_time() - before[1],
        wakes=(sched[4] if sched else 0) - before[2],
        seconds=time.monotonic() - window,
    )
    await asyncio.gather(*tasks)
    return share


def _worker(
    rate: float,
    settle: float,
    seconds: float,
    objects: int,
    port: int,
    trips: int,
    ready: Barrier,
    out: Any,
) -> None:
    out.put(eventloop.run(_paced(rate, settle, seconds, objects, port, trips, ready), loop="auto"))


def phase(rates: list[float], args: argparse.Namespace, port: int) -> list[Share]:
    """Processes at `rates`, started together; each one's Share of the same window."""
    ctx = multiprocessing.get_context("spawn")
    ready, out = ctx.Barrier(len(rates)), ctx.Queue()
    shape = (args.settle, args.seconds, args.objects, port, args.round_trips)
    procs = [ctx.Process(target=_worker, args=(rate, *shape, ready, out)) for rate in rates]
    for proc in procs:
        proc.start()
    shares = [out.get(timeout=args.settle + args.seconds + 300) for _ in procs]
    for proc in procs:
        proc.join()
    return shares


def describe(name: str, shares: list[Share], rate: float) -> str:
    parts = []
    for s in shares:
        achieved = s.passes / s.seconds
        behind = "" if achieved >= 0.97 * rate else f", behind: {achieved:.0f}/s"
        parts.append(
            f"{s.core:.3f} core, {s.per_pass_us:.0f} us/pass, "
            f"{s.wakes_per_pass:.2f} wake-ups/pass{behind}"
        )
    return f"  {name:<6} " + " | ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=float, default=667.0, help="passes a second of 'one'")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window per phase")
    parser.add_argument("--settle", type=float, default=3.0, help="paced run before the window")
    parser.add_argument("--rounds", type=int, default=1, help="times the three phases run")
    parser.add_argument(
        "--objects", type=int, default=300, help="Autoscalers each process takes in turn"
    )
    parser.add_argument(
        "--round-trips",
        type=int,
        default=1,
        help="loopback request/answer exchanges per pass (0: the pass's own work only)",
    )
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)
    ctx = multiprocessing.get_context("spawn")
    ports = ctx.Queue()
    server = ctx.Process(target=_server, args=(ports,), daemon=True)
    server.start()
    port = ports.get(timeout=30)
    print(
        f"{args.rate:.0f} passes/s (one), {args.rate / 2:.0f}/s (each of the pair, alone); "
        f"{args.objects} objects per process, {args.round_trips} loopback round trips per "
        f"pass, {args.seconds:.0f} s windows, {os.cpu_count()} CPUs"
    )
    pair_ratios, alone_ratios = [], []
    try:
        for k in range(args.rounds):
            served = proc_cpu(server.pid or 0)
            one = phase([args.rate], args, port)
            pair = phase([args.rate / 2, args.rate / 2], args, port)
            alone = phase([args.rate / 2], args, port)
            served = proc_cpu(server.pid or 0) - served
            print(f"round {k + 1} (the answering process: {served:.1f} CPU s in all)")
            print(describe("one", one, args.rate))
            print(describe("pair", pair, args.rate / 2))
            print(describe("alone", alone, args.rate / 2))
            pair_ratios += [s.core / one[0].core for s in pair]
            alone_ratios.append(alone[0].core / one[0].core)
            print(
                f"  each of the pair / one: {', '.join(f'{r:.0%}' for r in pair_ratios[-2:])}; "
                f"alone / one: {alone_ratios[-1]:.0%}"
            )
    finally:
        server.kill()
    pair_mid, alone_mid = statistics.median(pair_ratios), statistics.median(alone_ratios)
    if args.rounds > 1:
        print(
            f"median over {args.rounds} rounds: each of the pair / one {pair_mid:.0%}, "
            f"alone / one {alone_mid:.0%}"
        )
    run.figure(
        "pair_over_one",
        "each of the pair against one at the full rate (median)",
        pair_mid,
        "x",
        kind="ratio",
        decides="control",
    )
    run.figure("pair_min", "the lowest of the pair's ratios", min(pair_ratios), "x", kind="ratio")
    run.figure("pair_max", "the highest of the pair's ratios", max(pair_ratios), "x", kind="ratio")
    run.figure(
        "alone_over_one",
        "one process alone at half the rate against one at the full rate",
        alone_mid,
        "x",
        kind="ratio",
    )
    run.goal(
        "control",
        "work that halves exactly reads as half (<= 55%) of the CPU: if not, this "
        "VM cannot show a sharded replica at half",
        figure="pair_over_one",
        met=pair_mid <= 0.55,
    )
    run.write()


if __name__ == "__main__":
    main()
