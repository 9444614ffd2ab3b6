"""The sandbox's HPA controller (kube-controller-manager's stand-in): N autoscaling/v2 HPAs with
External metrics served by the real adapter over a real Prometheus, through the aggregation layer.

Prints: set-up time; how long the first round takes until every HPA has a decision
(ScalingActive=True); then, over a few sync periods, the per-HPA reconcile duration (p50, p99)
and the whole pass duration. The sandbox and its HPA controller run in this process (one event
loop, as `promscaler-sandbox serve --hpa-controller` runs them); Prometheus and the adapter are
their own processes. Everything is on 127.0.0.1 and stops by itself.

    .venv/bin/python bench/bench_native_hpa.py [--hpas 200] [--periods 3] [--sync-period 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autoscaler.kube import connect
from bench import record
from bench.bench_controller import WORKERS_CRD, in_batches, percentile
from sandbox.hpa_controller import HorizontalController, HpaControllerConfig
from sandbox.prometheus import PrometheusServer, remote_write
from sandbox.server import Sandbox, SandboxConfig
from tests.controller.stack import _register_adapter, _start_adapter, external_metric

NS = "bench"
HPAS = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"


def hpa(i: int) -> dict:
    ref = {"apiVersion": "bench.promscaler.dev/v1", "kind": "Worker", "name": f"w{i}"}
    spec = {"scaleTargetRef": ref, "minReplicas": 1, "maxReplicas": 10}
    spec["metrics"] = [external_metric(f"q{i}")]  # 10 against 10 per pod: steady at 1
    body = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"}
    return {**body, "metadata": {"name": f"h{i}", "namespace": NS}, "spec": spec}


async def set_up(kube, prom_url: str, n: int) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    await kube.request("POST", "/api/v1/namespaces", body=ns)
    now = time.time() - 1
    series = [({"__name__": "e2e_queue_depth", "queue": f"q{i}"}, [(now, 10.0)]) for i in range(n)]
    for i in range(0, n, 1000):
        await remote_write(prom_url, series[i : i + 1000])
    await kube.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=WORKERS_CRD
    )
    await asyncio.sleep(1)
    workers = f"/apis/bench.promscaler.dev/v1/namespaces/{NS}/workers"

    def worker(i: int) -> dict:
        body = {"apiVersion": "bench.promscaler.dev/v1", "kind": "Worker"}
        spec = {"replicas": 1, "selector": f"app=w{i}"}
        return {**body, "metadata": {"name": f"w{i}", "namespace": NS}, "spec": spec}

    await in_batches(kube.request("POST", workers, body=worker(i)) for i in range(n))
    await asyncio.sleep(2)  # the adapter discovers the series (relist 1s)
    await in_batches(kube.request("POST", HPAS, body=hpa(i)) for i in range(n))


async def decided(kube) -> int:
    doc = await kube.request("GET", HPAS)
    return sum(
        1
        for h in doc.get("items", [])
        for c in (h.get("status") or {}).get("conditions") or []
        if c["type"] == "ScalingActive" and c["status"] == "True"
    )


async def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--hpas", type=int, default=200)
    p.add_argument("--periods", type=int, default=3, help="sync periods measured after round 1")
    p.add_argument("--sync-period", type=float, default=5.0)
    record.add_json_option(p)
    args = p.parse_args()
    run = record.Run.begin(args)
    tmp = Path(tempfile.mkdtemp(prefix="bench-native-hpa-"))
    (tmp / "prometheus").mkdir()
    prom = PrometheusServer(tmp / "prometheus")
    prom.start()
    reconciles: list[float] = []
    passes: list[float] = []
    original_reconcile, original_sync = (
        HorizontalController.reconcile,
        HorizontalController.sync_once,
    )

    async def timed_reconcile(self, hpa_obj):  # type: ignore[no-untyped-def]
        start = time.monotonic()
        try:
            return await original_reconcile(self, hpa_obj)
        finally:
            reconciles.append(time.monotonic() - start)

    async def timed_sync(self):  # type: ignore[no-untyped-def]
        start = time.monotonic()
        try:
            return await original_sync(self)
        finally:
            passes.append(time.monotonic() - start)

    HorizontalController.reconcile = timed_reconcile  # type: ignore[method-assign]
    HorizontalController.sync_once = timed_sync  # type: ignore[method-assign]
    adapter = None
    config = SandboxConfig(
        pod_ready_delay=0.2,
        availability_interval=1.0,
        hpa_controller=HpaControllerConfig(sync_period=args.sync_period),
    )
    try:
        async with Sandbox(config) as sb:
            kube = await connect(str(sb.kubeconfig))
            try:
                adapter, port = _start_adapter(
                    tmp, sb.kubeconfig, prom.url, sb.requestheader_ca_file
                )
                await _register_adapter(kube, port)
                t0 = time.monotonic()
                await set_up(kube, prom.url, args.hpas)
                print(f"created {args.hpas} Workers + HPAs in {time.monotonic() - t0:.1f}s")
                t1 = time.monotonic()
                while await decided(kube) < args.hpas:  # noqa: ASYNC110 - polling the API
                    await asyncio.sleep(0.2)
                took = time.monotonic() - t1
                print(f"first round: all {args.hpas} HPAs decided {took:.1f}s after creation")
                mark_r, mark_p = len(reconciles), len(passes)
                await asyncio.sleep(args.periods * args.sync_period)
                r, s = reconciles[mark_r:], passes[mark_p:]
                window = f"{args.periods} x {args.sync_period:.0f}s"
                p50, p99 = percentile(r, 0.5) * 1000, percentile(r, 0.99) * 1000
                longest = max(s, default=float("nan"))
                print(
                    f"steady state over {window}: {len(r)} reconciles, p50 {p50:.0f} ms, "
                    f"p99 {p99:.0f} ms; pass (all HPAs) p50 {percentile(s, 0.5):.2f}s, "
                    f"max {longest:.2f}s"
                )
                run.figure(
                    "first_round", f"all {args.hpas} HPAs decided after", took, "s", kind="time"
                )
                run.figure(
                    "reconciles", f"reconciles over {window}", len(r), "reconciles", kind="count"
                )
                run.figure("reconcile_p50", "reconcile p50", p50, "ms", kind="time")
                run.figure("reconcile_p99", "reconcile p99", p99, "ms", kind="time")
                run.figure("pass_max", "a pass over all HPAs, max", longest, "s", kind="time")
                run.note("the sandbox's stand-in for the HPA controller: context, no goal")
                run.write()
            finally:
                await kube.close()
    finally:
        HorizontalController.reconcile = original_reconcile  # type: ignore[method-assign]
        HorizontalController.sync_once = original_sync  # type: ignore[method-assign]
        if adapter is not None:
            adapter.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                adapter.wait(10)
            if adapter.poll() is None:
                adapter.kill()
        prom.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
