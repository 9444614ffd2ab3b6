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
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autoscaler.core.inputs import parse_pod
from autoscaler.kube.slimpod import slim_pod
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
    args = p.parse_args()
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


if __name__ == "__main__":
    main()
