"""What the controller's per-Autoscaler series cost: a `Gauge` child per series (as before)
against a snapshot per Autoscaler rendered at scrape time (`autoscaler.selfmetrics`, now).

    .venv/bin/python bench/bench_selfmetrics.py [--autoscalers 10000] [--rounds 3]

Each Autoscaler shows 4 conditions (12 series: one per status), 6 plain gauges and one metric's
value and target: 20 series, what a one-metric Autoscaler exports. Each way runs in a child
process of its own, `--rounds` times alternating, and prints:

- a pass's cost: storing one Autoscaler's changed snapshot (what a pass does after its decision);
- what stays alive: objects Python's cycle collector tracks, and memory (tracemalloc);
- one full collection over the process (the collector walks every tracked object);
- one scrape of /metrics (the whole text, as the controller serves it).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from autoscaler.selfmetrics import CONDITION_STATUSES, PLAIN_GAUGES, SelfMetrics, Snapshot
from bench import record
from bench.childrounds import alternate

CONDITIONS = ("AbleToScale", "ScalingActive", "ScalingLimited", "Fallback")
HELP = "A help text of the length of the controller's."


def snapshot(i: int, value: float) -> Snapshot:
    return Snapshot(
        conditions=tuple((c, "False" if c == "Fallback" else "True") for c in CONDITIONS),
        paused=False,
        in_fallback=False,
        current_replicas=3,
        desired_replicas=3 + i % 4,
        min_replicas=1,
        max_replicas=10,
        metrics=((f"queue_depth_{i % 7}", value, 10.0),),
    )


class Gauges:
    """The former way: a prometheus_client `Gauge` child per series, set on every change."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ids = ["namespace", "name"]
        r = self.registry
        name = "promscaler_autoscaler_"  # the same names and help texts: the same bytes
        self.condition = Gauge(f"{name}condition", HELP, [*ids, "type", "status"], registry=r)
        self.plain = [Gauge(f"{name}{k}", text, ids, registry=r) for k, text in PLAIN_GAUGES]
        self.value = Gauge(f"{name}metric_value", HELP, [*ids, "metric"], registry=r)
        self.target = Gauge(f"{name}metric_target", HELP, [*ids, "metric"], registry=r)

    def observe(self, namespace: str, name: str, snap: Snapshot) -> None:
        ids = (namespace, name)
        for type_, status in snap.conditions:
            for option in CONDITION_STATUSES:
                self.condition.labels(*ids, type_, option).set(1.0 if status == option else 0.0)
        for gauge, number in zip(self.plain, snap.plain(), strict=True):
            if number is not None:
                gauge.labels(*ids).set(float(number))
        for metric, value, target in snap.metrics:
            if value is not None:
                self.value.labels(*ids, metric).set(value)
            if target is not None:
                self.target.labels(*ids, metric).set(target)

    async def scrape(self) -> bytes:
        return generate_latest(self.registry)


class Snapshots:
    """Now: `SelfMetrics`, its snapshot per Autoscaler and its own exposition."""

    def __init__(self) -> None:
        self.metrics = SelfMetrics()

    def observe(self, namespace: str, name: str, snap: Snapshot) -> None:
        self.metrics.observe(namespace, name, snap)

    async def scrape(self) -> bytes:
        return await self.metrics.exposition()


def measure(way: str, n: int, out: Any) -> None:
    gc.collect()
    tracked0 = len(gc.get_objects())
    tracemalloc.start()
    sink: Gauges | Snapshots = Gauges() if way == "gauges" else Snapshots()
    for i in range(n):
        sink.observe("bench", f"as-{i}", snapshot(i, 1.0))
    traced = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    changed = [snapshot(i, 2.0) for i in range(n)]  # built outside the timed loop
    t0 = time.process_time()
    for i, snap in enumerate(changed):
        sink.observe("bench", f"as-{i}", snap)
    observe = (time.process_time() - t0) / n
    del changed
    gc.collect()
    tracked = len(gc.get_objects()) - tracked0
    t0 = time.process_time()
    gc.collect()
    full = time.process_time() - t0
    t0 = time.process_time()
    body = asyncio.run(sink.scrape())
    scrape = time.process_time() - t0
    out.put((way, observe, tracked, traced, full, scrape, len(body)))


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--autoscalers", type=int, default=10000)
    p.add_argument("--rounds", type=int, default=3)
    record.add_json_option(p)
    args = p.parse_args()
    run = record.Run.begin(args)
    rows: dict[str, list[tuple[float, ...]]] = {"gauges": [], "snapshots": []}
    print(f"{args.autoscalers} Autoscalers, 20 series each; one child process per way and round")
    print(
        f"{'way':<10} {'pass (us)':>9} {'tracked objects':>16} {'memory (MiB)':>13} "
        f"{'full gc (ms)':>13} {'scrape (ms)':>12} {'body (MB)':>10}"
    )
    for way, observe, tracked, traced, full, scrape, size in alternate(
        measure, ("gauges", "snapshots"), args.rounds, args.autoscalers
    ):
        print(
            f"{way:<10} {observe * 1e6:>9.1f} {tracked:>16,} {traced / 2**20:>13.1f} "
            f"{full * 1e3:>13.0f} {scrape * 1e3:>12.0f} {size / 1e6:>10.1f}"
        )
        rows[way].append((traced / 2**20, tracked, scrape * 1e3, size / 1e6))
    for way, kept in rows.items():
        traced, tracked, scrape, size = (statistics.median(c) for c in zip(*kept, strict=True))
        run.figure(f"{way}_mib", f"{way}: memory (tracemalloc)", traced, "MiB", kind="size")
        run.figure(
            f"{way}_tracked",
            f"{way}: objects the collector tracks",
            tracked,
            "objects",
            kind="count",
        )
        run.figure(f"{way}_scrape", f"{way}: a scrape", scrape, "ms", kind="time")
        run.figure(f"{way}_body", f"{way}: the scrape's body", size, "MB", kind="size")
    gauges, snaps = (statistics.median(r[1] for r in rows[w]) for w in ("gauges", "snapshots"))
    run.figure(
        "snapshots_over_gauges",
        "tracked objects of snapshots over Gauge children",
        snaps / gauges,
        "x",
        kind="ratio",
        decides="series",
    )
    run.goal(
        "series",
        "per-Autoscaler series as snapshots track at most a tenth of the objects",
        figure="snapshots_over_gauges",
        met=snaps / gauges <= 0.1,
    )
    run.note(f"medians of {args.rounds} rounds per way, each in a fresh child process")
    run.write()


if __name__ == "__main__":
    main()
