"""One controller replica for bench_controller.py's `--replicas` mode, as its own process.

Runs `autoscaler.app.serve` with shard Leases and records, per pass, when it started (wall
clock), how late it started (lag) and how long it took; on SIGTERM it stops cleanly (its shards
are released) and writes them as JSON to `--out`. Its own process, so /proc shows each replica's
CPU and RSS apart from the others'.

    python bench/controller_replica.py --kubeconfig F --namespace NS --shards 4 \
        --identity r0 --out F
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autoscaler.app import Settings, serve
from autoscaler.controller import Controller, ControllerConfig
from autoscaler.kube.lease import LeaseConfig
from autoscaler.options import ControllerOptions
from common import eventloop, gctune


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--namespace", required=True)
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--identity", required=True)
    p.add_argument("--sync-period", type=float, default=15.0)
    p.add_argument("--workers", type=int, default=32)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--event-loop", choices=eventloop.EVENT_LOOPS, default="auto")
    p.add_argument("--gc-threshold", type=gctune.argument, default=gctune.DEFAULT)
    p.add_argument("--share-pod-metrics", type=float, default=0.0)
    p.add_argument("--history-refresh", type=float, default=ControllerOptions().history_refresh)
    args = p.parse_args()
    passes: list[tuple[float, float, float]] = []  # (wall start, lag, duration) in seconds
    original = Controller._pass

    async def timed_pass(self: Controller, key: str, due: float) -> tuple[float, bool] | None:
        start = time.monotonic()
        try:
            return await original(self, key, due)
        finally:
            passes.append((time.time(), max(0.0, start - due), time.monotonic() - start))

    Controller._pass = timed_pass  # type: ignore[method-assign]
    settings = Settings(
        kubeconfig=args.kubeconfig,
        namespaces=(args.namespace,),
        controller=ControllerConfig(sync_period=args.sync_period, workers=args.workers),
        options=ControllerOptions(history_refresh=args.history_refresh),
        shards=args.shards,
        # the chart's defaults would do; shorter ones make the bench's start-up quicker
        lease=LeaseConfig(
            namespace=args.namespace,
            identity=args.identity,
            lease_duration=6.0,
            renew_deadline=4.0,
            retry_period=1.0,
        ),
        metrics_port=0,
        share_pod_metrics=args.share_pod_metrics,
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("started", flush=True)
    await serve(settings, stop=stop)
    args.out.write_text(json.dumps(passes))


if __name__ == "__main__":
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--event-loop", choices=eventloop.EVENT_LOOPS, default="auto")
    early.add_argument("--gc-threshold", type=gctune.argument, default=gctune.DEFAULT)
    known = early.parse_known_args()[0]
    gctune.apply(known.gc_threshold)  # as the controller's main() does
    eventloop.run(main(), loop=known.event_loop)
