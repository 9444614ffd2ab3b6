"""Batching benchmark: prints numbers, asserts nothing. `python bench/bench_batching.py`

N Autoscaler-shaped requests (default 1,000: Pods metrics over 10 namespaces and 3 metric names,
each Autoscaler selecting its own 3 pods by label, as `kubectl get --raw` of a wildcard with a
labelSelector) sent by 8 keep-alive clients as fast as the adapter answers, once with batching
(`--batch-window`, default 5 s) and once without. For each: Prometheus queries counted from its
own query log (`global.query_log_file`), the burst's duration, and the adapter process's CPU per
1,000 requests. The adapter runs in a child process over HTTPS (bench_adapter.Adapter); a real
Prometheus is fed by remote write. Everything talks to 127.0.0.1 only.

Then the same for N External-metric requests, each Autoscaler asking for its own queue
(`labelSelector=queue=q<i>`) of one rule that sums by queue: batched, one selector-less query
per window answers them all, the window being the adapter's `--external-batch-window` (default
2 s, the most an External answer is shared).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_adapter import Adapter, _session, _timed  # noqa: E402

from adapter.cli import EXTERNAL_BATCH_WINDOW  # noqa: E402
from bench import record  # noqa: E402
from sandbox.prometheus import PrometheusServer, remote_write  # noqa: E402

NAMESPACES = [f"team-{i}" for i in range(10)]
METRICS = ["requests_per_second", "queue_length", "busy_workers"]
PODS_PER_APP = 3
RULES = (
    "rules:\n"
    + "".join(
        f"""- seriesQuery: '{m}{{namespace!="",pod!=""}}'
  resources: {{overrides: {{namespace: {{resource: namespace}}, pod: {{resource: pod}}}}}}
  metricsQuery: 'sum(<<.Series>>{{<<.LabelMatchers>>}}) by (<<.GroupBy>>)'
"""
        for m in METRICS
    )
    + """externalRules:
- seriesQuery: 'queue_depth{queue!=""}'
  resources: {namespaced: false}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)'
"""
)


def _apps(autoscalers: int) -> int:
    """Apps per namespace so that every Autoscaler has its own (namespace, metric, app)."""
    return -(-autoscalers // (len(NAMESPACES) * len(METRICS)))


def _objects(apps: int) -> dict[tuple[str, str], dict[str, dict[str, str]]]:
    return {
        ("pods", ns): {
            f"app-{a}-{p}": {"app": f"app-{a}"} for a in range(apps) for p in range(PODS_PER_APP)
        }
        for ns in NAMESPACES
    }


def _paths(autoscalers: int) -> list[str]:
    out = []
    for i in range(autoscalers):
        ns = NAMESPACES[i % len(NAMESPACES)]
        metric = METRICS[(i // len(NAMESPACES)) % len(METRICS)]
        app = i // (len(NAMESPACES) * len(METRICS))
        out.append(
            f"/apis/custom.metrics.k8s.io/v1beta2/namespaces/{ns}/pods/*/{metric}"
            f"?labelSelector=app%3Dapp-{app}"
        )
    return out


def _external_paths(autoscalers: int) -> list[str]:
    return [
        f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{NAMESPACES[i % len(NAMESPACES)]}"
        f"/queue_depth?labelSelector=queue%3Dq{i}"
        for i in range(autoscalers)
    ]


async def _burst(adapter: Adapter, paths: list[str], clients: int) -> float:
    queue = list(reversed(paths))
    async with _session(limit=clients) as s:

        async def worker() -> None:
            while queue:
                await _timed(s, adapter.url + queue.pop())

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return time.perf_counter() - started


async def run(
    prom: PrometheusServer,
    cert_dir: str,
    *,
    autoscalers: int,
    window: float,
    clients: int,
    external: bool = False,
    external_window: float | None = None,
) -> tuple[int, float, float]:
    paths = (_external_paths if external else _paths)(autoscalers)
    apps = _apps(autoscalers)
    adapter = Adapter(
        prom.url,
        cache_ttl=0.0,
        cert_dir=cert_dir,
        batch_window=window,
        external_window=external_window,
        rules=RULES,
        objects=_objects(apps),
    )
    try:
        async with _session() as s:  # warm-up (imports, TLS); its batch expires before the burst
            await _timed(s, adapter.url + paths[-1])
        await asyncio.sleep(window + 0.5)  # the warm-up's batch expires
        before, cpu = len(prom.queries()), adapter.cpu_seconds()
        elapsed = await _burst(adapter, paths, clients)
        cpu = adapter.cpu_seconds() - cpu
        sent = len(prom.queries()) - before
    finally:
        adapter.stop()
    return sent, elapsed, cpu


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--autoscalers", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--batch-window", type=float, default=5.0)
    parser.add_argument("--external-batch-window", type=float, default=EXTERNAL_BATCH_WINDOW)
    record.add_json_option(parser)
    args = parser.parse_args()
    results = record.Run.begin(args)
    apps = _apps(args.autoscalers)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "prom").mkdir()
        prom = PrometheusServer(Path(tmp) / "prom")
        prom.start()
        try:
            now = time.time() - 5
            series = [
                (
                    {"__name__": m, "namespace": ns, "pod": pod},
                    [(now - 15, float(i)), (now, float(i) + 0.5)],
                )
                for m in METRICS
                for ns, pods in ((ns, _objects(apps)[("pods", ns)]) for ns in NAMESPACES)
                for i, pod in enumerate(pods)
            ]
            series += [
                ({"__name__": "queue_depth", "queue": f"q{i}"}, [(now, float(i))])
                for i in range(args.autoscalers)
            ]
            await remote_write(prom.url, series)
            cert_dir = str(Path(tmp) / "certs")
            print(
                f"{args.autoscalers} Autoscaler requests (Pods metrics, {len(NAMESPACES)} "
                f"namespaces x {len(METRICS)} metrics, {PODS_PER_APP} pods each), "
                f"{args.clients} clients, cache off; load average "
                f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine)"
            )
            for external in (False, True):
                if external:
                    print(
                        f"{args.autoscalers} External requests, each for its own queue of one "
                        "rule summing by queue (`queue=q<i>`), same clients"
                    )
                for label, window in (("batched", args.batch_window), ("unbatched", 0.0)):
                    # as the CLI wires it: an External answer is shared at most the batch window
                    shared = min(args.external_batch_window, window) if external else window
                    sent, elapsed, cpu = await run(
                        prom,
                        cert_dir,
                        autoscalers=args.autoscalers,
                        window=window,
                        clients=args.clients,
                        external=external,
                        external_window=shared,
                    )
                    per_k = cpu / args.autoscalers * 1000
                    flags = f"--batch-window {window:g}s" + (
                        f" --external-batch-window {shared:g}s" if external else ""
                    )
                    print(
                        f"  {label:9} ({flags}): {sent} Prometheus queries "
                        f"(query log), burst {elapsed:.2f} s, adapter CPU {per_k:.2f} s per "
                        f"1,000 requests ({cpu / args.autoscalers * 1000:.2f} ms each)"
                    )
                    kind = "external" if external else "pods"
                    figure(results, kind, label, sent, cpu / args.autoscalers * 1000, args)
                    if label == "batched":
                        goal(results, kind, sent, elapsed=elapsed, window=window)
        finally:
            prom.close()
    results.cannot_decide(
        "Adapter CPU per request is context (this VM's CPU time moves by up to 3x); the query "
        "counts, from Prometheus' own query log, decide."
    )
    results.write()


def figure(
    results: record.Run, kind: str, label: str, sent: int, cpu_ms: float, args: argparse.Namespace
) -> None:
    results.figure(
        f"{kind}_{label}_queries",
        f"{kind.capitalize()} requests, {label}: Prometheus queries",
        sent,
        "queries",
        kind="count",
        decides=f"{kind}-batching" if label == "batched" else None,
    )
    results.figure(
        f"{kind}_{label}_cpu",
        f"{kind.capitalize()} requests, {label}: adapter CPU per request",
        cpu_ms,
        "ms",
        kind="time",
    )


def goal(results: record.Run, kind: str, sent: int, *, elapsed: float, window: float) -> None:
    if kind == "external":
        results.goal(
            "external-batching",
            "External requests of one rule summing by queue: 1 query",
            figure="external_batched_queries",
            met=sent == 1,
        )
        return
    # a key (namespace, metric) is asked again once its answer is a window old
    bound = len(NAMESPACES) * len(METRICS) * math.ceil(elapsed / window)
    results.goal(
        "pods-batching",
        "Pods requests: at most one query per (namespace, metric) per window "
        f"({bound} over this burst)",
        figure="pods_batched_queries",
        met=sent <= bound,
    )


if __name__ == "__main__":
    asyncio.run(main())
