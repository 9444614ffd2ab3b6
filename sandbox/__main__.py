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

from sandbox import state
from sandbox.auth import PolicyError, parse_policy
from sandbox.faultplan import PlanError, parse_plan
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
    serve.add_argument(
        "--state-file",
        type=Path,
        metavar="FILE",
        help="keep objects and CAs here, so a restarted sandbox has them (default: none)",
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
    directory = args.dir or args.kubeconfig.resolve().parent / "sandbox-pki"
    config = SandboxConfig(
        port=args.port,
        kubeconfig=args.kubeconfig,
        dir=directory,
        policy=policy,
        pod_ready_delay=args.pod_ready_delay,
        admin_token=args.admin_token,
        faults=plan,
        state_file=args.state_file,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
