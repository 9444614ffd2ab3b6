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

from sandbox.auth import PolicyError, parse_policy
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
        "--config", type=Path, metavar="FILE", help="policy YAML: users (tokens) and rules"
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
    return parser


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
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    policy = None
    if args.config:
        try:
            policy = parse_policy(yaml.safe_load(args.config.read_text()))
        except (OSError, yaml.YAMLError, PolicyError) as err:
            print(f"promscaler-sandbox: --config {args.config}: {err}", file=sys.stderr)
            return 2
    directory = args.dir or args.kubeconfig.resolve().parent / "sandbox-pki"
    config = SandboxConfig(
        port=args.port,
        kubeconfig=args.kubeconfig,
        dir=directory,
        policy=policy,
        pod_ready_delay=args.pod_ready_delay,
        admin_token=args.admin_token,
        nodes=args.nodes,
        prometheus_url=args.prometheus_url,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
