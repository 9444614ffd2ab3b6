"""Benchmark the pure rule engine: discovery indexing and query rendering. Prints numbers.

    .venv/bin/python bench/bench_rules.py [--series 100000] [--names 1000]

Indexing runs the six legacy default rules (two seriesQueries) over label sets shaped like
`/api/v1/series` answers, streamed from a generator (the server parses a response, then
hands its label sets over). RSS is the process's peak resident set size.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapter.rules import MetricIndex, build_custom_query, index_series, load_rules
from adapter.rules.resources import STATIC_RESOLVER, GroupResource
from bench import record
from common.selectors import Selector, parse_selector

RULES = Path(__file__).parent.parent / "tests/adapter/rules/data/legacy-defaults.yaml"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _series(query_index: int, count: int, names: int) -> Iterator[dict[str, str]]:
    prefix = "container_" if query_index == 0 else "app_"
    suffixes = ("_seconds_total", "_total", "_bytes")
    for i in range(count):
        name = f"{prefix}metric{i % names}{suffixes[i % 3]}"
        yield {
            "__name__": name,
            "namespace": f"ns{i % 20}",
            "pod": f"pod-{i % 5000}",
            "container": "app",
            "instance": f"10.0.{i % 250}.{i % 200}:8080",
            "job": "kubernetes-pods",
        }


def bench_index(run: record.Run, series: int, names: int) -> MetricIndex:
    config = load_rules(RULES.read_text(), source=str(RULES))
    before = _rss_mb()
    start = time.perf_counter()
    parts = [
        index_series(config, query, _series(i, series // 2, names // 2), resolver=STATIC_RESOLVER)
        for i, query in enumerate(config.series_queries)
    ]
    index = MetricIndex.merge(parts)
    elapsed = time.perf_counter() - start
    print(f"index: {series} series in {names} names -> {len(index.custom)} custom metrics")
    print(f"index: {elapsed:.2f} s, peak RSS {_rss_mb():.0f} MB (before {before:.0f} MB)")
    run.figure(
        "index_seconds", f"index {series} series in {names} names", elapsed, "s", kind="time"
    )
    run.figure("index_peak_rss", "peak RSS after indexing", _rss_mb(), "MB", kind="size")
    run.figure(
        "custom_metrics", "custom metrics indexed", len(index.custom), "metrics", kind="count"
    )
    return index


def bench_queries(run: record.Run, index: MetricIndex) -> None:
    pods = STATIC_RESOLVER.resolve("pods")
    assert pods is not None
    source = index.find_custom(GroupResource("", "pods"), "metric0")
    assert source is not None
    selector = parse_selector("job=kubernetes-pods")
    for count in (1, 100, 5000):
        names = [f"pod-{i}" for i in range(count)]
        timings = []
        for _ in range(200 if count < 5000 else 20):
            start = time.perf_counter()
            query = build_custom_query(
                source,
                resource=pods,
                namespace="ns1",
                names=names,
                metric_selector=selector if count == 1 else Selector(),
                resolver=STATIC_RESOLVER,
            )
            timings.append(time.perf_counter() - start)
        bounded = "bounded" if query.names_filter else "exact"
        print(
            f"query: {count:>5} names: p50 {statistics.median(timings) * 1e6:7.0f} us, "
            f"{len(query.promql)} bytes ({bounded})"
        )
        run.figure(
            f"query_{count}_names",
            f"render a query for {count} names, p50",
            statistics.median(timings) * 1e6,
            "us",
            kind="time",
        )
        run.figure(
            f"query_{count}_bytes",
            f"PromQL for {count} names ({bounded})",
            len(query.promql),
            "bytes",
            kind="count",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=100_000)
    parser.add_argument("--names", type=int, default=1_000)
    record.add_json_option(parser)
    args = parser.parse_args()
    run = record.Run.begin(args)
    bench_queries(run, bench_index(run, args.series, args.names))
    run.note("PromQL bytes are exact; times and RSS are context")
    run.write()


if __name__ == "__main__":
    main()
