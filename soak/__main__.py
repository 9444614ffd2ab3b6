"""`python -m soak` (what `make soak` runs): the bundle under a seeded random fault schedule,
checked continuously; exits 1 on any breach. See docs/faults.md."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import logging
import os
import random
import shutil
import signal
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

from autoscaler.decisionlog import read_log, replay_stream

from . import checks
from .bundle import Timing
from .report import counts, plot, table, write_samples, write_summary
from .run import Options, Record, soak
from .schedule import make_schedule

REPO = Path(__file__).resolve().parents[1]
WARMUP = 20.0  # seconds before the first fault: everything up and one round decided
QUIET = 60.0  # seconds after the last fault: recovery, then 3 sync periods (10 s) + slack
PROCESS_WARMUP = 60.0  # seconds of a process's life before its resources are judged
JUDGE_AFTER = 20 * 60.0  # seconds of a process's life needed before a slope can fail the run


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="make soak",
        description="Run the whole bundle (sandbox, Prometheus behind a fault proxy, two "
        "adapters, two autoscalers with leader election) with a few hundred Autoscalers under "
        "a seeded random fault schedule, and check its invariants all along.",
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=float(os.environ.get("SOAK_MINUTES", "60")),
        help="length of the run (default: $SOAK_MINUTES or 60)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=int(os.environ.get("SOAK_SEED", "0")) or None,
        help="the fault schedule's seed (default: $SOAK_SEED, else random; printed)",
    )
    p.add_argument("--autoscalers", type=int, default=200, help="how many (default: 200)")
    p.add_argument(
        "--pods", type=int, default=6, help="of them on Deployments with a Pods metric (6)"
    )
    p.add_argument(
        "--out", type=Path, default=REPO / "out" / "soak", help="output (default: out/soak)"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 1 << 31)
    seconds = args.minutes * 60
    if seconds < WARMUP + QUIET + 30 or args.autoscalers < 1:
        print("make soak: needs at least 1.5 minutes and one Autoscaler", file=sys.stderr)
        return 2
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s: %(message)s",
        handlers=[logging.FileHandler(args.out / "soak.log"), _console()],
    )
    schedule = make_schedule(seed=seed, duration=seconds, warmup=WARMUP, quiet=QUIET)
    print(f"soak: {args.minutes:g} min, seed {seed}, {len(schedule)} faults, out {args.out}")
    print(f"      replay: SOAK_SEED={seed} SOAK_MINUTES={args.minutes:g} make soak")
    options = Options(
        seconds=seconds,
        seed=seed,
        autoscalers=args.autoscalers,
        pods=min(args.pods, args.autoscalers - 1),
        out=args.out,
        schedule=tuple(schedule),
        timing=Timing(),
    )
    try:
        record = asyncio.run(_until_terminated(soak(options)))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("\ninterrupted; everything the soak started has been stopped", file=sys.stderr)
        return 130
    ok = evaluate(record, options)
    return 0 if ok else 1


async def _until_terminated(run: Coroutine[Any, Any, Record]) -> Record:
    """`run`, cancelled on SIGTERM as asyncio cancels it on Ctrl-C, so that what it started is
    stopped either way (a killed soak left the sandbox, the adapters and Prometheus running)."""
    task = asyncio.ensure_future(run)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await task
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def _console() -> logging.Handler:
    """The soak's own lines on the terminal; every injected fault goes to soak.log only."""
    handler = logging.StreamHandler()
    handler.addFilter(logging.Filter("soak"))
    return handler


def evaluate(record: Record, options: Options) -> bool:
    logs = [options.out / "run" / f"decisions-{i}.jsonl" for i in range(2)]
    files = [_with_rotated(path) for path in logs]

    def entries() -> Iterator[dict[str, Any]]:  # read again for each check: an hour is GBs
        return read_log(files[0] + files[1])

    t = options.timing
    down = checks.no_scale_down_on_failed_metric(entries())
    bounds = checks.bounds_in_log(entries())
    found = [
        down,
        bounds,
        checks.bounds_observed(record.observed),
        checks.single_writer(record.writes, min_gap=t.lease_duration - t.renew_deadline),
        checks.adapter_answers(record.probes, timeout=t.prometheus_timeout),
        _replay(entries()),
        _converged(record, files),
        _exits(record),
    ]
    resources, slopes = checks.resource_slopes(
        record.samples, warmup=PROCESS_WARMUP, judge_after=JUDGE_AFTER
    )
    found.append(resources)
    write_samples(options.out / "resources.csv", record.samples)
    text = table(found, counts(record, passes=down.looked_at, rescales=bounds.looked_at), slopes)
    ok = all(c.breaches == 0 for c in found)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = f"soak {stamp}: {options.seconds / 60:g} min, seed {options.seed}, "
    header += f"{options.autoscalers} Autoscalers: {'PASS' if ok else 'FAIL'}"
    text = header + "\n\n" + text
    print(text)
    (options.out / "soak.txt").write_text(text + "\n")
    write_summary(
        options.out / "soak.json", seed=options.seed, minutes=options.seconds / 60, text=text, ok=ok
    )
    plot(record, options.out / "soak.png")
    print(f"picture: {options.out / 'soak.png'}")
    return ok


def _with_rotated(path: Path) -> list[Path]:
    rotated = sorted(path.parent.glob(path.name + ".*"), key=lambda p: -int(p.suffix[1:]))
    return [*rotated, path] if path.exists() else rotated


def _replay(entries: Iterator[dict[str, Any]]) -> checks.Check:
    check = checks.Check("decide --jsonl replays every logged pass exactly")

    def counted() -> Iterator[dict[str, Any]]:
        for e in entries:
            check.looked_at += 1
            yield e

    for m in replay_stream(counted()):
        check.breach(
            f"pass {m.index} at {m.now}: logged {m.logged[:80]} replayed {m.replayed[:80]}"
        )
    return check


def _converged(record: Record, files: list[list[Path]]) -> checks.Check:
    if not record.final:
        check = checks.Check("converged to the core's answer after the last fault")
        check.breach(f"no final state read (leader {record.leader!r})")
        return check
    entries = read_log(files[0] + files[1])  # a hand-over may fall in the window
    settled = datetime.datetime.fromtimestamp(record.settled_at, datetime.UTC)
    # a pass in the last seconds may not have written yet when the replicas were read
    read = datetime.datetime.fromtimestamp(record.final_at - 3.0, datetime.UTC)
    names = {m.name for m in record.members}
    final = {k: v for k, v in record.final.items() if k in names}
    return checks.converged(entries, final, after=settled, before=read)


def _exits(record: Record) -> checks.Check:
    check = checks.Check("no unexpected process exit")
    check.looked_at = len(record.incarnations) + 5
    for line in record.exits:
        check.breach(line)
    return check


if __name__ == "__main__":
    sys.exit(main())
