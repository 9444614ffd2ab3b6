"""`promscaler-autoscaler run`: the controller's command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import signal
import sys
from typing import NoReturn

from autoscaler import decisionlog
from autoscaler.app import Settings, serve
from autoscaler.controller import ControllerConfig
from autoscaler.kube.client import KubeError
from autoscaler.kube.lease import LeaseConfig
from autoscaler.reconcile import ControllerOptions
from common import eventloop, gctune

__all__ = ["main", "parse_duration"]

PROG = "promscaler-autoscaler run"
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds from a Go-style duration (`15s`, `1m30s`, `500ms`) or a plain number of seconds."""
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        pos, value = 0, 0.0
        for m in _PART.finditer(text):
            if m.start() != pos:
                break
            value += float(m.group(1)) * _UNITS[m.group(2)]
            pos = m.end()
        if pos != len(text) or not text:
            raise argparse.ArgumentTypeError(
                f"invalid duration {text!r} (use e.g. 15s, 1m, 1m30s, 500ms)"
            ) from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: must not be negative")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return value


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 10:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 10")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit status 2, as the issue asks."""
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Show a flag's default, unless it has none or its help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if default in (None, False, "", [], argparse.SUPPRESS) or "(default:" in text:
            return text
        if action.type is parse_duration and isinstance(default, int | float):
            return f"{text} (default: {_duration_text(default)})".lstrip()
        return f"{text} (default: {default})".lstrip()


def _duration_text(seconds: float) -> str:
    """15.0 -> '15s', 300.0 -> '5m', 0.5 -> '500ms': the form the flag accepts."""
    if seconds and seconds < 1:
        return f"{seconds * 1000:g}ms"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Run the Autoscaler controller: watch promscaler.dev/v1alpha1 Autoscalers "
        "and drive their targets' /scale with the upstream HPA rules, plus scale to zero.",
        epilog="Durations: 15s, 1m, 1m30s, 500ms, or plain seconds.",
        formatter_class=_DefaultsFormatter,
    )
    c, o = ControllerConfig(), ControllerOptions()
    g = p.add_argument_group("cluster")
    g.add_argument("--kubeconfig", metavar="PATH", help="kubeconfig file (default: in-cluster)")
    g.add_argument(
        "--namespace",
        action="append",
        default=[],
        metavar="NS",
        help="watch only this namespace; repeat for more (default: all namespaces)",
    )
    g.add_argument(
        "--request-timeout",
        type=parse_duration,
        default=10.0,
        metavar="DUR",
        help="limit on each call to the Kubernetes API",
    )
    g = p.add_argument_group("scheduling")
    g.add_argument(
        "--sync-period",
        type=parse_duration,
        default=c.sync_period,
        metavar="DUR",
        help="reconcile every autoscaler this often (jittered by up to 10%%)",
    )
    g.add_argument(
        "--zero-poll-interval",
        type=parse_duration,
        default=c.zero_poll_interval,
        metavar="DUR",
        help="check a target at zero replicas this often, to wake fast",
    )
    g.add_argument(
        "--history-refresh",
        type=parse_duration,
        default=o.history_refresh,
        metavar="DUR",
        help="how far the stabilization history persisted in status may fall behind when "
        "nothing else changed (at most half the downscale window): each Autoscaler writes its "
        "status about once per this period; longer means fewer writes, and a replica taking "
        "an Autoscaler over after a crash starting from older timestamps",
    )
    g.add_argument(
        "--share-pod-metrics",
        type=parse_duration,
        default=0.0,
        metavar="DUR",
        help="for many Autoscalers on one Pods metric in a namespace: read the metric for "
        "the whole namespace at most once per this window and give each pass its own pods' "
        "values from that answer (values up to this old; the pod cache picks the pods); "
        "it switches on per metric only while enough passes ask for it; 0, the default, "
        "reads per pass, as upstream",
    )
    g.add_argument(
        "--workers",
        type=_positive_int,
        default=c.workers,
        metavar="N",
        help="reconcile passes at a time",
    )
    g = p.add_argument_group("decision (kube-controller-manager's --horizontal-pod-autoscaler-*)")
    g.add_argument(
        "--controller-tolerance",
        type=_ratio,
        default=o.tolerance,
        metavar="RATIO",
        help="metric ratios within 1 +/- this leave replicas alone (per metric; 0 means 0.1)",
    )
    g.add_argument(
        "--controller-cpu-initialization-period",
        type=parse_duration,
        default=o.cpu_initialization_period,
        metavar="DUR",
        help="after a pod starts, CPU samples count only once it is Ready and the sample is fresh",
    )
    g.add_argument(
        "--controller-initial-readiness-delay",
        type=parse_duration,
        default=o.initial_readiness_delay,
        metavar="DUR",
        help="a pod not Ready this soon after starting counts as never ready (CPU metrics)",
    )
    g.add_argument(
        "--controller-downscale-stabilization",
        type=parse_duration,
        default=o.downscale_stabilization,
        metavar="DUR",
        help="without spec.behavior: the highest recommendation of this window wins",
    )
    g = p.add_argument_group("leader election (coordination.k8s.io/v1 Lease)")
    lease = LeaseConfig()
    g.add_argument("--leader-elect", action="store_true", help="only the Lease holder acts")
    g.add_argument(
        "--leader-elect-lease-duration",
        type=parse_duration,
        default=lease.lease_duration,
        metavar="DUR",
        help="how long a Lease holds without renewal before another may take it",
    )
    g.add_argument(
        "--leader-elect-renew-deadline",
        type=parse_duration,
        default=lease.renew_deadline,
        metavar="DUR",
        help="the holder gives up leadership if it cannot renew within this",
    )
    g.add_argument(
        "--leader-elect-retry-period",
        type=parse_duration,
        default=lease.retry_period,
        metavar="DUR",
        help="how often candidates try to take or renew the Lease",
    )
    g.add_argument(
        "--leader-elect-resource-name",
        default=lease.name,
        metavar="NAME",
        help="the Lease's name",
    )
    g.add_argument(
        "--leader-elect-resource-namespace",
        default=lease.namespace,
        metavar="NS",
        help="the Lease's namespace",
    )
    g.add_argument(
        "--leader-elect-identity",
        default="",
        metavar="ID",
        help="holder identity (default: hostname_pid)",
    )
    g.add_argument(
        "--shards",
        type=_positive_int,
        default=1,
        metavar="N",
        help="split the Autoscalers into N shards, each a Lease <resource-name>-shard-<k>; "
        "replicas share them fairly (ceil(N / live replicas) each) and reconcile only the "
        "Autoscalers of the shards they hold. 1: one leader (with --leader-elect). Uses the "
        "lease flags above whether or not --leader-elect is given",
    )
    decisionlog.add_flags(p, positive_int=_positive_int)
    g = p.add_argument_group("serving")
    g.add_argument(
        "--metrics-port",
        type=_port,
        default=8080,
        metavar="PORT",
        help="/metrics, /healthz, /readyz (0: off)",
    )
    g.add_argument(
        "--metrics-bind-address",
        default="0.0.0.0",
        metavar="ADDR",
        help="address of the metrics port",
    )
    g.add_argument(
        "--tls-cert-file",
        default="",
        metavar="FILE",
        help="serve the metrics port over HTTPS with this certificate (PEM)",
    )
    g.add_argument(
        "--tls-private-key-file",
        default="",
        metavar="FILE",
        help="the key of --tls-cert-file (PEM)",
    )
    g.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="least severe log level written",
    )
    g.add_argument(
        "--log-format",
        default="json",
        choices=["json", "text"],
        help="json: one object per line with the autoscaler's namespace/name; text: for people",
    )
    g.add_argument(
        "--event-loop", choices=eventloop.EVENT_LOOPS, default="auto", help=eventloop.HELP
    )
    gctune.add_flag(g)
    return p


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings from parsed flags; ValueError names a flag combination that cannot work."""
    if args.leader_elect_renew_deadline >= args.leader_elect_lease_duration:
        raise ValueError("--leader-elect-renew-deadline must be less than the lease duration")
    if args.leader_elect_retry_period >= args.leader_elect_renew_deadline:
        raise ValueError("--leader-elect-retry-period must be less than the renew deadline")
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        raise ValueError("--tls-cert-file and --tls-private-key-file go together")
    if args.sync_period <= 0 or args.zero_poll_interval <= 0:
        raise ValueError("--sync-period and --zero-poll-interval must be positive")
    if args.history_refresh <= 0:
        raise ValueError("--history-refresh must be positive")
    return Settings(
        kubeconfig=args.kubeconfig,
        namespaces=tuple(dict.fromkeys(args.namespace)),
        controller=ControllerConfig(
            sync_period=args.sync_period,
            zero_poll_interval=args.zero_poll_interval,
            workers=args.workers,
            pass_timeout=max(2 * args.request_timeout, 5.0),
        ),
        options=ControllerOptions(
            tolerance=args.controller_tolerance,
            cpu_initialization_period=args.controller_cpu_initialization_period,
            initial_readiness_delay=args.controller_initial_readiness_delay,
            downscale_stabilization=args.controller_downscale_stabilization,
            history_refresh=args.history_refresh,
        ),
        leader_elect=args.leader_elect,
        shards=args.shards,
        lease=LeaseConfig(
            name=args.leader_elect_resource_name,
            namespace=args.leader_elect_resource_namespace,
            identity=args.leader_elect_identity,
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
        ),
        metrics_host=args.metrics_bind_address,
        metrics_port=args.metrics_port,
        tls_cert_file=args.tls_cert_file,
        tls_key_file=args.tls_private_key_file,
        request_timeout=args.request_timeout,
        decision_log=decisionlog.settings_from(args),
        share_pod_metrics=args.share_pod_metrics,
    )


class JsonFormatter(logging.Formatter):
    """One JSON object per line; `autoscaler` (namespace/name) when the record has one."""

    def format(self, record: logging.LogRecord) -> str:
        doc = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in ("autoscaler", "reason"):
            if hasattr(record, key):
                doc[key] = getattr(record, key)
        if record.exc_info:
            doc["error"] = self.formatException(record.exc_info)
        return json.dumps(doc)


def _setup_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter()
        if fmt == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = settings_from(args)
    except ValueError as e:
        parser.error(str(e))
    try:
        loop = eventloop.chosen(args.event_loop)
    except eventloop.EventLoopError as e:
        parser.error(str(e))
    _setup_logging(args.log_level, args.log_format)
    gctune.apply(args.gc_threshold)
    return eventloop.run(_run(settings), loop=loop)


async def _run(settings: Settings) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await serve(settings, stop=stop)
    except (KubeError, OSError) as e:
        logging.getLogger(__name__).error("cannot run: %s", e)
        return 1
    return 0
