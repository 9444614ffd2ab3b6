"""`promscaler-sandbox serve`: run the sandbox API server until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

import yaml

from autoscaler.core.fields import DocumentError, duration_ns
from common import eventloop, gctune
from sandbox import state
from sandbox.auth import PolicyError, parse_policy
from sandbox.eventttl import EVENT_TTL
from sandbox.faultplan import PlanError, parse_plan
from sandbox.hpa_controller import HpaControllerConfig
from sandbox.server import Sandbox, SandboxConfig


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="promscaler-sandbox", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the API server on 127.0.0.1")
    serve.add_argument(
        "--port", type=int, default=6443, help="port (0: pick a free one; default 6443)"
    )
    serve.add_argument(
        "--kubeconfig",
        type=Path,
        required=True,
        metavar="PATH",
        help="where to write the kubeconfig",
    )
    serve.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="YAML: users (tokens) and rules; optionally a fault plan under 'faults'",
    )
    serve.add_argument(
        "--dir",
        type=Path,
        metavar="DIR",
        help="where certificates go (default: next to the kubeconfig)",
    )
    serve.add_argument(
        "--pod-ready-delay",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="seconds until a new pod is Ready",
    )
    serve.add_argument(
        "--admin-token", metavar="TOKEN", help="the admin's bearer token (default: random)"
    )
    _hpa_flags(serve)
    serve.add_argument(
        "--nodes", type=int, default=1, metavar="N", help="Ready nodes to register (default 1)"
    )
    serve.add_argument(
        "--prometheus-url",
        metavar="URL",
        help="write simulated cAdvisor usage (CPU, memory per container and node) into this "
        "Prometheus by remote write, every second; the load comes from pod or workload "
        "annotations load.sandbox.promscaler.dev/{cpu,cpu-total,memory}",
    )
    serve.add_argument(
        "--state-file",
        type=Path,
        metavar="FILE",
        help="keep objects and CAs here, so a restarted sandbox has them (default: none)",
    )
    serve.add_argument(
        "--event-ttl",
        type=_duration,
        default=EVENT_TTL,
        metavar="DURATION",
        help="how long an Event is kept after its last write, as kube-apiserver's flag "
        "(a Go duration; default 1h0m0s)",
    )
    serve.add_argument(
        "--event-loop", choices=eventloop.EVENT_LOOPS, default="auto", help=eventloop.HELP
    )
    gctune.add_flag(serve)
    return parser


def _duration(text: str) -> float:
    """A Go duration (`15s`, `5m0s`, `1m30s`) in seconds, as kube-controller-manager takes it."""
    try:
        seconds = duration_ns(text, "duration") / 1e9
    except DocumentError as err:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: {err}") from err
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: must not be negative")
    return seconds


def _hpa_flags(serve: argparse.ArgumentParser) -> None:
    group = serve.add_argument_group(
        "HPA controller",
        "kube-controller-manager's HorizontalPodAutoscaler controller, under its own flag names"
        " (sandbox only: it reconciles autoscaling/v2 HPAs as that controller does)",
    )
    group.add_argument(
        "--hpa-controller", action="store_true", help="run the HPA controller (default: off)"
    )
    flags = (
        ("sync-period", "15s", "how often every HPA is reconciled"),
        ("downscale-stabilization", "5m0s", "scale-down stabilization window without behavior"),
        ("cpu-initialization-period", "5m0s", "how long after start a pod's CPU may be skipped"),
        ("initial-readiness-delay", "30s", "how long after start readiness changes are ignored"),
    )
    for name, default, what in flags:
        group.add_argument(
            f"--horizontal-pod-autoscaler-{name}",
            type=_duration,
            default=_duration(default),
            metavar="DURATION",
            help=f"{what} (Go duration; default {default})",
        )
    group.add_argument(
        "--horizontal-pod-autoscaler-tolerance",
        type=float,
        default=0.1,
        metavar="RATIO",
        help="the usage ratio's distance from 1.0 below which nothing scales (default 0.1)",
    )


def _hpa_config(args: argparse.Namespace) -> HpaControllerConfig | None:
    if not args.hpa_controller:
        return None
    return HpaControllerConfig(
        sync_period=args.horizontal_pod_autoscaler_sync_period,
        tolerance=args.horizontal_pod_autoscaler_tolerance,
        downscale_stabilization=args.horizontal_pod_autoscaler_downscale_stabilization,
        cpu_initialization_period=args.horizontal_pod_autoscaler_cpu_initialization_period,
        initial_readiness_delay=args.horizontal_pod_autoscaler_initial_readiness_delay,
    )


async def _serve(config: SandboxConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with Sandbox(config) as sb:
        print(
            f"sandbox serving on {sb.url} (port {sb.port}); kubeconfig {sb.kubeconfig}", flush=True
        )
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        args.event_loop = eventloop.chosen(args.event_loop)
    except eventloop.EventLoopError as err:
        parser.error(str(err))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    policy, plan = None, None
    if args.config:
        try:
            doc = yaml.safe_load(args.config.read_text())
            if isinstance(doc, dict) and "faults" in doc:
                doc = dict(doc)
                plan = parse_plan(doc.pop("faults"))
            policy = parse_policy(doc)
            if args.state_file:
                state.load(args.state_file)  # a bad file is an error now, not at start
        except (OSError, yaml.YAMLError, PolicyError, PlanError, state.StateError) as err:
            print(f"promscaler-sandbox: --config {args.config}: {err}", file=sys.stderr)
            return 2
    if args.hpa_controller and args.horizontal_pod_autoscaler_sync_period <= 0:
        print(
            "promscaler-sandbox: --horizontal-pod-autoscaler-sync-period: must be > 0",
            file=sys.stderr,
        )
        return 2
    directory = args.dir or args.kubeconfig.resolve().parent / "sandbox-pki"
    config = SandboxConfig(
        port=args.port,
        kubeconfig=args.kubeconfig,
        dir=directory,
        policy=policy,
        pod_ready_delay=args.pod_ready_delay,
        admin_token=args.admin_token,
        hpa_controller=_hpa_config(args),
        nodes=args.nodes,
        prometheus_url=args.prometheus_url,
        faults=plan,
        state_file=args.state_file,
        event_ttl=args.event_ttl,
    )
    gctune.apply(args.gc_threshold)
    with contextlib.suppress(KeyboardInterrupt):
        eventloop.run(_serve(config), loop=args.event_loop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
