"""What the controller's pod cache holds per pod: the whole pod against the slim pod it keeps
(`autoscaler.kube.slimpod`).

    .venv/bin/python bench/bench_pod_cache.py [--pods 5000] [--rounds 3]

The pod is the one of `tests/controller/test_slimpod.py`: a two-container Deployment's pod as a
real API server returns it (environment, probes, volumes, five conditions, container statuses;
without managedFields, which the informer drops anyway). Each way runs in a child process of its
own, `--rounds` times alternating; printed: memory held by the cache (tracemalloc), objects
Python's cycle collector tracks, one full collection over the process, and, per pod, the
transform (paid once per watch event) and the parse a decision does.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autoscaler.core.inputs import parse_pod
from autoscaler.kube.slimpod import slim_pod
from bench import record
from bench.childrounds import alternate
from tests.controller.test_slimpod import deployment_pod


def measure(way: str, n: int, out: Any) -> None:
    raw = orjson.dumps(deployment_pod())
    gc.collect()
    tracked0 = len(gc.get_objects())
    tracemalloc.start()
    cache: dict[str, Any] = {}
    for i in range(n):
        pod = orjson.loads(raw)  # each pod its own objects, as from a watch
        cache[f"shop/web-{i}"] = slim_pod(pod) if way == "slim" else pod
        del pod
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    gc.collect()
    tracked = len(gc.get_objects()) - tracked0
    t0 = time.process_time()
    gc.collect()
    full = time.process_time() - t0
    pods = list(cache.values())
    t0 = time.process_time()
    for pod in pods:
        parse_pod(pod, "pods[0]")
    parse = (time.process_time() - t0) / n
    transform = 0.0
    if way == "slim":
        whole = [orjson.loads(raw) for _ in range(min(n, 2000))]
        t0 = time.process_time()
        for pod in whole:
            slim_pod(pod)
        transform = (time.process_time() - t0) / len(whole)
    out.put((way, held, tracked, full, transform, parse, len(orjson.dumps(pods[0]))))


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--pods", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3)
    record.add_json_option(p)
    args = p.parse_args()
    run = record.Run.begin(args)
    rows: dict[str, list[tuple[float, ...]]] = {"whole": [], "slim": []}
    print(f"{args.pods} cached pods; one child process per way and round")
    print(
        f"{'way':<6} {'memory (MiB)':>13} {'tracked objects':>16} {'full gc (ms)':>13} "
        f"{'transform (us)':>15} {'parse (us)':>11} {'JSON (bytes)':>13}"
    )
    for way, held, tracked, full, transform, parse, size in alternate(
        measure, ("whole", "slim"), args.rounds, args.pods
    ):
        print(
            f"{way:<6} {held / 2**20:>13.1f} {tracked:>16,} {full * 1e3:>13.0f} "
            f"{transform * 1e6:>15.1f} {parse * 1e6:>11.1f} {size:>13,}"
        )
        rows[way].append((held / 2**20, tracked, full * 1e3, transform * 1e6))
    for way, kept in rows.items():
        held, tracked, full, transform = (statistics.median(col) for col in zip(*kept, strict=True))
        run.figure(f"{way}_mib", f"{way}: memory held (tracemalloc)", held, "MiB", kind="size")
        run.figure(
            f"{way}_tracked",
            f"{way}: objects the collector tracks",
            tracked,
            "objects",
            kind="count",
        )
        run.figure(f"{way}_full_gc", f"{way}: a full collection", full, "ms", kind="time")
    whole, slim = (statistics.median(r[0] for r in rows[w]) for w in ("whole", "slim"))
    run.figure(
        "slim_over_whole",
        "memory of the slim cache over the whole one",
        slim / whole,
        "x",
        kind="ratio",
        decides="slim",
    )
    run.goal(
        "slim",
        "the slim pod cache holds at most half the memory of whole pods",
        figure="slim_over_whole",
        met=slim / whole <= 0.5,
    )
    run.note(f"medians of {args.rounds} rounds per way, each in a fresh child process")
    run.write()


if __name__ == "__main__":
    main()
