"""The controller's own work per pass, without the HTTP: `Reconciler.reconcile` on a cluster in
memory, in steady state (a 5-minute stabilization window of recommendations, no rescale, the
status written only when its history is refreshed).

What it leaves out is the metric read and the status patch on the wire (`bench_kube_client.py`
measures those) and the work queue. What it keeps is everything else a pass does in Python:
building the decide document, the core's parse, decision and render, the status comparison and
write decision, the gauge numbers, the answer's checks.

    .venv/bin/python bench/bench_pass.py [--passes 2000] [--rounds 5] [--callgrind]

Prints this process's CPU time per pass (the median and best of the rounds; on a shared VM
single rounds move by a third) and, with `--callgrind` (needs valgrind), the instructions per
pass over 400 passes under callgrind: deterministic, so two builds compare to a fraction of a
percent where the CPU times cannot.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autoscaler import core
from autoscaler.kube.failures import check_entry
from autoscaler.options import ControllerOptions
from autoscaler.reconcile import Reconciler
from bench import record
from tests.controller.fakes import FakeCluster, autoscaler

ANSWER = orjson.dumps(
    {
        "kind": "ExternalMetricValueList",
        "apiVersion": "external.metrics.k8s.io/v1beta1",
        "metadata": {},
        "items": [
            {
                "metricName": "queue_depth",
                "metricLabels": {"queue": "q1"},
                "timestamp": "2026-12-02T07:54:46Z",
                "value": "10",
            }
        ],
    }
)
METRIC = {
    "type": "External",
    "external": {
        "metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": "q1"}}},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
}
WARM_UP = 40  # passes: 15 s apart, enough to fill the 300 s window


class MemoryCluster(FakeCluster):
    """Answers as the API would after parsing: a fresh metric answer per read, and the whole
    object back from a status patch (which the next pass starts from)."""

    def __init__(self, obj: dict[str, Any]) -> None:
        super().__init__()
        self.obj = obj
        self.patches = 0

    async def fetch_metric(
        self, namespace: str, metric: Any, *, pod_selector: str
    ) -> dict[str, Any]:
        return check_entry(orjson.loads(ANSWER))

    async def patch_status(self, namespace: str, name: str, patch: dict[str, Any]) -> Any:
        self.patches += 1
        status = dict(self.obj.get("status") or {})
        for key, value in patch.items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value
        return orjson.loads(orjson.dumps({**self.obj, "status": status}))


class Passes:
    def __init__(self) -> None:
        obj = autoscaler("worker", namespace="bench", metrics=[METRIC])
        obj["metadata"]["creationTimestamp"] = "2026-12-02T07:00:00Z"
        self.cluster = MemoryCluster(obj)
        self.cluster.add_target("worker", 1, selector="app=worker")
        self.reconciler = Reconciler(
            self.cluster, options=ControllerOptions(), decide=core.decide_document
        )
        self.now = datetime(2026, 12, 2, 8, 0, 0, tzinfo=UTC)

    async def run(self, n: int) -> None:
        for _ in range(n):
            self.now += timedelta(seconds=15)
            await self.reconciler.reconcile(self.cluster.obj, now=self.now)


async def timed(run: record.Run, passes: int, rounds: int) -> None:
    p = Passes()
    await p.run(WARM_UP)
    per_pass = []
    writes0 = p.cluster.patches
    for _ in range(rounds):
        start = time.process_time()
        await p.run(passes)
        per_pass.append((time.process_time() - start) / passes)
    history = len(p.cluster.obj["status"]["history"]["recommendations"])
    writes = (p.cluster.patches - writes0) / (passes * rounds)
    print(
        f"CPU per pass, HTTP left out: median {statistics.median(per_pass) * 1e6:.0f} us, "
        f"best {min(per_pass) * 1e6:.0f} us ({rounds} rounds of {passes}; {history} "
        f"recommendations in the window, {writes:.2f} status writes per pass)"
    )
    run.figure(
        "cpu_per_pass",
        "CPU per pass, HTTP left out (median of the rounds)",
        statistics.median(per_pass) * 1e6,
        "us",
        kind="time",
    )
    run.figure("status_writes_per_pass", "status writes per pass", writes, "writes", kind="count")


def _callgrind(*args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(os.getpid())], check=True, capture_output=True)


async def counted(passes: int) -> None:
    """Runs under callgrind (collection off): switches it on around `passes` passes."""
    p = Passes()
    await p.run(WARM_UP)
    _callgrind("--zero")
    _callgrind("-i", "on")
    await p.run(passes)
    _callgrind("-i", "off")


def callgrind(run: record.Run, passes: int) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("instructions per pass: skipped (valgrind with callgrind_control not installed)")
        run.cannot_decide("valgrind was not installed: no instruction count in this run")
        return
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-pass-callgrind.{os.getpid()}"
    argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=no"]
    argv += [f"--callgrind-out-file={out}.%p", sys.executable, __file__, "--counted", str(passes)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    for leftover in out.parent.glob(out.name + ".*"):
        leftover.unlink()
    total = [line.split()[-1] for line in done.stderr.splitlines() if "Collected :" in line]
    if done.returncode != 0 or not total:
        print(f"instructions per pass: callgrind failed ({done.returncode}): {done.stderr[-300:]}")
        run.cannot_decide(f"callgrind failed ({done.returncode}): no instruction count")
        return
    print(
        f"instructions per pass (callgrind, {passes} passes): {int(total[-1]) / passes / 1e6:.3f} M"
    )
    run.figure(
        "instructions_per_pass",
        f"instructions per pass (callgrind, {passes} passes)",
        int(total[-1]) / passes,
        "instructions",
        kind="count",
        decides="pass-cost",
    )
    run.goal(
        "pass-cost",
        "the controller's own work per steady-state pass, build against build",
        figure="instructions_per_pass",
        met=None,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--passes", type=int, default=2000, help="passes per timed round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--callgrind", action="store_true", help="also count instructions per pass (valgrind)"
    )
    parser.add_argument("--counted", type=int, default=0, help=argparse.SUPPRESS)
    record.add_json_option(parser)
    args = parser.parse_args()
    if args.counted:
        asyncio.run(counted(args.counted))
        return
    run = record.Run.begin(args)
    asyncio.run(timed(run, args.passes, args.rounds))
    if args.callgrind:
        callgrind(run, 400)
    else:
        run.cannot_decide("run without --callgrind: no instruction count, CPU time only")
    run.note(
        "CPU per pass is context: it moves by up to 3x with this VM's state; the instruction "
        "count under callgrind does not."
    )
    run.write()


if __name__ == "__main__":
    main()
