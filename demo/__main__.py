"""`python -m demo` (what `make demo` runs): the bundle on the sandbox, with a live view."""

from __future__ import annotations

import argparse
import asyncio
import math
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from sandbox.prometheus import remote_write

from . import manifests
from .rest import Rest, RestError
from .scenario import Queue, duration, load_at
from .stack import REPO, running_stack
from .timeline import Sample, plot, summary_lines, write_csv
from .view import View

CRD = REPO / "charts" / "promscaler" / "crds" / "autoscalers.promscaler.dev.yaml"
NS = manifests.NAMESPACE


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="make demo",
        description="Run promscaler end to end on the local sandbox: Prometheus, the adapter "
        "behind the sandbox's aggregation layer, and a load shape against two workloads: web "
        "under a native HorizontalPodAutoscaler (the sandbox's kube-controller-manager HPA "
        "controller reads our adapter), worker under a promscaler Autoscaler. Ends with a PNG "
        "of load and replicas over time.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "out" / "demo",
        help="where to write demo.png, demo.csv and the logs (default: out/demo)",
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="play the 150 s load shape this many times faster (CI uses 3)",
    )
    parser.add_argument(
        "--pod-ready-delay",
        type=float,
        default=2.0,
        help="seconds a new pod takes to become Ready in the sandbox",
    )
    parser.add_argument(
        "--no-native-hpa",
        dest="native_hpa",
        action="store_false",
        help="scale web with an Autoscaler too, instead of a native HorizontalPodAutoscaler "
        "reconciled by the sandbox's kube-controller-manager HPA controller",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="print one line per second instead of redrawing the screen",
    )
    return parser.parse_args(argv)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.speed <= 0:
        print("make demo: --speed must be positive", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(args))
    except KeyboardInterrupt:
        print("\ninterrupted; everything the demo started has been stopped", file=sys.stderr)
        return 130
    except (RuntimeError, RestError, OSError) as err:
        print(f"\ndemo failed: {err}", file=sys.stderr)
        print(f"logs are in {args.out}", file=sys.stderr)
        return 1
    return 0


async def run(args: argparse.Namespace) -> None:
    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    view = View(plain=args.plain or not sys.stdout.isatty())
    view.note("starting Prometheus, the sandbox, the adapter and the autoscaler ...")
    sync_period = "2s" if args.speed < 2 else "1s"
    async with running_stack(
        out / "run",
        pod_ready_delay=args.pod_ready_delay / args.speed,
        sync_period=sync_period,
        hpa_controller=args.native_hpa,
    ) as (stack, info):
        admin = Rest.from_kubeconfig(stack.admin_kubeconfig)
        viewer = Rest.from_kubeconfig(out / "run" / "viewer.kubeconfig")
        try:
            await set_up(admin, info, view, speed=args.speed, native_web=args.native_hpa)
            await show_access(viewer, view)
            samples = await play(
                admin, stack, info, view, speed=args.speed, native_web=args.native_hpa
            )
        finally:
            await admin.close()
            await viewer.close()
    write_csv(samples, out / "demo.csv")
    plot(samples, out / "demo.png", native_web=args.native_hpa)
    view.done()
    for line in summary_lines(samples):
        print(line)
    print(f"picture: {out / 'demo.png'}")
    print(f"timeline: {out / 'demo.csv'}")


async def set_up(
    api: Rest, info: dict[str, Any], view: View, *, speed: float, native_web: bool
) -> None:
    """Register the adapter, install the CRD, create the workloads and what scales them."""
    for path, obj in manifests.registration(info["adapter_port"], info["ca_bundle"]):
        await api.create(path, obj)
    view.note("adapter registered: waiting for its APIServices to become Available ...")
    for name in ("v1beta1.custom.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io",
                 "v1beta1.external.metrics.k8s.io"):  # fmt: skip
        await api.wait_condition(
            f"/apis/apiregistration.k8s.io/v1/apiservices/{name}", "Available", timeout=30
        )
    await api.create(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", yaml.safe_load(CRD.read_text())
    )
    await api.wait_condition(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/autoscalers.promscaler.dev",
        "Established",
        timeout=10,
    )
    await api.create(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    )
    for name in ("web", "worker"):
        await api.create(
            f"/apis/apps/v1/namespaces/{NS}/deployments", manifests.deployment(name, 1)
        )
    for path, obj in manifests.autoscalers(speed=speed, native_web=native_web):
        await api.create(path, obj)
    web = "a native HorizontalPodAutoscaler" if native_web else "an Autoscaler"
    view.note(f"workloads created: web under {web}, worker under an Autoscaler")


async def show_access(viewer: Rest, view: View) -> None:
    """Show that the metrics APIs answer through the sandbox with a user's own token."""
    body = await viewer.get("/apis/custom.metrics.k8s.io/v1beta2")
    names = sorted(r["name"] for r in body.get("resources", []))
    view.note(f"custom.metrics.k8s.io/v1beta2 (as user demo-viewer): {', '.join(names) or '-'}")


async def ready_pods(api: Rest, app: str) -> list[str]:
    body = await api.get(f"/api/v1/namespaces/{NS}/pods", params={"labelSelector": f"app={app}"})
    names = []
    for pod in body.get("items", []):
        if pod["metadata"].get("deletionTimestamp"):
            continue
        conditions = pod.get("status", {}).get("conditions", [])
        if any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
            names.append(pod["metadata"]["name"])
    return sorted(names)


async def play(
    api: Rest, stack: Any, info: dict[str, Any], view: View, *, speed: float, native_web: bool
) -> list[Sample]:
    """Play the load shape in real time, one tick a second, and record what happens."""
    counters: dict[str, float] = {}  # per-pod http_requests_total
    queue = Queue()
    samples: list[Sample] = []
    total = duration() / speed
    start = last = time.monotonic()
    while (now_mono := time.monotonic()) - start <= total:
        stack.check_alive()
        t, dt = now_mono - start, now_mono - last
        last = now_mono
        load = load_at(t, speed=speed)
        web_ready = await ready_pods(api, "web")
        worker_ready = await ready_pods(api, "worker")
        depth = queue.step(arrivals=load.arrivals, ready_workers=len(worker_ready), dt=dt)
        now = time.time()
        series: list[tuple[dict[str, str], list[tuple[float, float]]]] = []
        for pod in web_ready:
            counters[pod] = counters.get(pod, 0.0) + load.web_rps / len(web_ready) * dt
            labels = {"__name__": "http_requests_total", "namespace": NS, "pod": pod}
            series.append((labels, [(now, counters[pod])]))
        labels = {"__name__": "queue_depth", "namespace": NS, "queue": "jobs"}
        series.append((labels, [(now, math.floor(depth))]))
        await remote_write(stack.prometheus.url, series)
        sample = await observe(
            api, t * speed, load, depth, len(web_ready), len(worker_ready), native_web=native_web
        )
        samples.append(sample)
        view.show(sample)
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - now_mono)))
    return samples


async def observe(
    api: Rest,
    t: float,
    load: Any,
    depth: float,
    web_ready: int,
    worker_ready: int,
    *,
    native_web: bool,
) -> Sample:
    deployments = {
        name: await api.get(f"/apis/apps/v1/namespaces/{NS}/deployments/{name}")
        for name in ("web", "worker")
    }
    web_path = manifests.HPAS if native_web else manifests.AUTOSCALERS
    autoscalers = {
        "web": await api.get(f"{web_path}/web"),
        "worker": await api.get(f"{manifests.AUTOSCALERS}/worker"),
    }
    return Sample(
        t=round(t, 1),
        phase=load.phase,
        web_rps=round(load.web_rps, 1),
        arrivals=round(load.arrivals, 1),
        queue_depth=round(depth, 1),
        web_replicas=deployments["web"]["spec"].get("replicas", 0),
        web_ready=web_ready,
        worker_replicas=deployments["worker"]["spec"].get("replicas", 0),
        worker_ready=worker_ready,
        web_metric=current_metric(autoscalers["web"]),
        worker_metric=current_metric(autoscalers["worker"]),
        web_conditions=short_conditions(autoscalers["web"]),
        worker_conditions=short_conditions(autoscalers["worker"]),
    )


def current_metric(obj: dict[str, Any]) -> str:
    """The first current metric value in an HPA's or Autoscaler's status (a Quantity)."""
    for metric in obj.get("status", {}).get("currentMetrics") or []:
        for source in metric.values():
            if isinstance(source, dict) and "current" in source:
                current = source["current"]
                return str(current.get("averageValue") or current.get("value") or "")
    return ""


def short_conditions(obj: dict[str, Any]) -> str:
    """Conditions as `Type` when True and `!Type(Reason)` when False."""
    parts = []
    for cond in obj.get("status", {}).get("conditions") or []:
        if cond.get("status") == "True":
            parts.append(f"{cond['type']}({cond.get('reason', '')})")
        else:
            parts.append(f"!{cond['type']}({cond.get('reason', '')})")
    return " ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
