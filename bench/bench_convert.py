"""Benchmark `promscaler-autoscaler convert` on a cluster's worth of ScaledObjects. Prints
numbers.

    .venv/bin/python bench/bench_convert.py [--objects 1000]

The input is one `kubectl get scaledobjects -A -o yaml` List of ScaledObjects shaped like
KEDA's documented example (one prometheus trigger each, a fallback and an HPA behavior), so
the command line's time includes reading and writing YAML, as a migration would.
"""

from __future__ import annotations

import argparse
import copy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autoscaler.convert import convert
from bench import record
from tests.convert.examples import KEDA_SPEC_ALL_FIELDS


def _objects(count: int) -> list[dict[str, object]]:
    base = yaml.safe_load(KEDA_SPEC_ALL_FIELDS)
    out = []
    for i in range(count):
        doc = copy.deepcopy(base)
        doc["metadata"]["name"] = f"worker-{i}"
        doc["metadata"]["namespace"] = f"team-{i % 50}"
        doc["spec"]["triggers"][0]["metadata"]["query"] = f'sum(queue_ready{{queue="q{i}"}})'
        out.append(doc)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1000)
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)
    objects = _objects(args.objects)

    started = time.perf_counter()
    for doc in objects:
        convert(doc)
    in_process = time.perf_counter() - started
    print(f"convert() in process: {args.objects / in_process:,.0f} ScaledObjects/s")

    listing = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects})
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "autoscaler", "convert", "-", "--rules-out", f"{tmp}/r.yaml"]
        started = time.perf_counter()
        done = subprocess.run(argv, input=listing, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    print(f"command line, {args.objects} objects in one List: {elapsed:.2f} s")
    run.figure(
        "in_process_rate", "convert() in process", args.objects / in_process, "1/s", kind="rate"
    )
    run.figure(
        "command_line",
        f"the command line, {args.objects} objects in one List (wall)",
        elapsed,
        "s",
        kind="time",
    )
    run.note("no goal: wall-clock context for a one-off migration")
    run.write()


if __name__ == "__main__":
    main()
