"""The command line: prometheus-adapter's flags with the same meaning and defaults, plus ours.

Go-style flags work as pflag parses them: `--flag=value` or `--flag value`, booleans as `--flag`
or `--flag=false`, repeatable lists, durations like `30s`, `1m`, `1h30m`. A bad value exits 2
with one line; the server itself is started by `adapter.__main__`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

from adapter.auth.options import AuthOptions, add_auth_arguments, parse_duration
from adapter.eventloop import EVENT_LOOPS
from adapter.partial import WARNINGS_POLICIES
from adapter.prometheus import PrometheusOptions
from adapter.prometheus_auth import COMPRESSIONS
from adapter.server.tls import GO_CIPHERS, TLS13_SUITES, TLS_VERSIONS, TLSOptions
from common import gctune
from common.eventloop import HELP as EVENT_LOOP_HELP
from common.version import version_line

PROG = "promscaler-adapter"
BATCH_WINDOW = 5.0  # seconds: a third of the HPA's 15 s sync period, under any usual scrape
# interval (15 s-1 m), so a shared namespace-wide answer is at most one scrape behind
EXTERNAL_BATCH_WINDOW = 2.0  # seconds: a target asleep at zero is woken by an External answer,
# read every controller --zero-poll-interval (1 s): it sees a fresh one at least every other poll


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # one line, like pflag's "invalid argument ... for --flag": no usage dump
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(2)


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _positive_duration(text: str) -> float:
    value = _duration(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, not {text!r}")
    return value


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "t", "true"):
        return True
    if value in ("0", "f", "false"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean {text!r}")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}") from err
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range 0-65535")
    return port


def _header(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"want key=value, got {text!r}")
    return key.strip(), value


def _verb(text: str) -> str:
    if text.upper() not in ("GET", "POST"):
        raise argparse.ArgumentTypeError(f"must be GET or POST, not {text!r}")
    return text.upper()


def _tls_version(text: str) -> str:
    if text not in TLS_VERSIONS:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(TLS_VERSIONS)}")
    return text


class _Slice(argparse.Action):
    """pflag's StringSlice: comma-separated and repeatable."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        current = list(getattr(namespace, self.dest) or [])
        current += [v.strip() for v in str(values).split(",") if v.strip()]
        setattr(namespace, self.dest, current)


def _ciphers(text: str) -> str:
    for suite in (s.strip() for s in text.split(",") if s.strip()):
        if suite not in GO_CIPHERS and suite not in TLS13_SUITES:
            raise argparse.ArgumentTypeError(f"unknown or insecure cipher suite {suite!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Kubernetes custom and external metrics API server backed by Prometheus "
        "(a drop-in for prometheus-adapter: same rule file, same flags).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    boolean: dict[str, Any] = {"type": _bool, "nargs": "?", "const": True, "metavar": "BOOL"}
    parser.add_argument("--version", action="version", version=version_line(PROG))

    g = parser.add_argument_group("rules and discovery")
    g.add_argument(
        "--config",
        metavar="FILE",
        default="",
        help="rule file (prometheus-adapter format); required",
    )
    g.add_argument(
        "--metrics-relist-interval",
        type=_positive_duration,
        default=600.0,
        metavar="DURATION",
        help="how often to rediscover series (seconds shown)",
    )
    g.add_argument(
        "--metrics-max-age",
        type=_duration,
        default=0.0,
        metavar="DURATION",
        help="a series stays listed until it has had no sample for this long (discovery "
        "looks back this far); unset or 0: the larger of twice --metrics-relist-interval and "
        "5m; any other value is used as given",
    )
    g.add_argument(
        "--cache-ttl",
        type=_duration,
        default=1.0,
        metavar="DURATION",
        help="reuse an identical query's result this long; 0 disables "
        "(identical concurrent requests still share one query)",
    )
    g.add_argument(
        "--batch-window",
        type=_duration,
        default=BATCH_WINDOW,
        metavar="DURATION",
        help="answer Pods and Object metric requests from one namespace-wide query per metric, "
        "shared for this long by every request in the namespace, whatever objects it names "
        "(External requests share one query per metric when the rule groups by every label "
        "their selectors name, or when their queries are the same); so Prometheus sees one "
        "query per metric and namespace instead of one per HPA. Default 5s: a third of the "
        "HPA's 15s sync period, and shorter than any usual scrape interval, so a shared "
        "answer is at most one scrape behind; 0 disables (one query per request)",
    )
    g.add_argument(
        "--external-batch-window",
        type=_duration,
        default=EXTERNAL_BATCH_WINDOW,
        metavar="DURATION",
        help="share an External answer at most this long (and never longer than "
        "--batch-window): External metrics are what wakes a target asleep at zero, polled "
        "every second, so their answers are kept fresher than the Pods and Object ones. "
        "Default 2s: Prometheus still sees at most one query per External query (per metric "
        "and namespace when batched) every 2s, however many Autoscalers read it",
    )

    g = parser.add_argument_group("Prometheus")
    g.add_argument(
        "--prometheus-url", default="https://localhost", metavar="URL", help="Prometheus base URL"
    )
    g.add_argument(
        "--prometheus-verb",
        type=_verb,
        default="GET",
        metavar="GET|POST",
        help="HTTP verb for queries (long queries always use POST)",
    )
    g.add_argument(
        "--prometheus-timeout",
        type=_positive_duration,
        default=5.0,
        metavar="DURATION",
        help="limit on every Prometheus call (seconds shown)",
    )
    g.add_argument(
        "--prometheus-compression",
        choices=COMPRESSIONS,
        default="auto",
        help="ask Prometheus for gzip answers or not: gzip saves bytes across a network but "
        "costs adapter CPU to decompress (~15%% of a request), which buys nothing on loopback; "
        "auto (default): none for a localhost/loopback URL, gzip otherwise. A `backends:` entry "
        "sets its own with `compression:`",
    )
    g.add_argument(
        "--prometheus-warnings",
        choices=WARNINGS_POLICIES,
        default="reject",
        help="an answer that carries warnings (Thanos partial response, a failed remote read, "
        "a PromQL warning) may be missing data, and a sum over it is too low: reject "
        "(default) answers 503 like any backend failure, so autoscalers hold their replicas; "
        "accept serves it. Always counted in promscaler_adapter_prometheus_warnings_total. A "
        "`backends:` entry sets its own with `warnings:`",
    )
    g.add_argument(
        "--prometheus-auth-incluster",
        default=False,
        **boolean,
        help="authenticate with the pod's service account token and CA",
    )
    g.add_argument(
        "--prometheus-auth-config",
        default="",
        metavar="FILE",
        help="kubeconfig-format file whose current context's credentials are used",
    )
    g.add_argument(
        "--prometheus-ca-file", default="", metavar="FILE", help="CA bundle to verify Prometheus"
    )
    g.add_argument(
        "--prometheus-client-tls-cert-file",
        default="",
        metavar="FILE",
        help="client certificate presented to Prometheus (PEM)",
    )
    g.add_argument(
        "--prometheus-client-tls-key-file",
        default="",
        metavar="FILE",
        help="key of --prometheus-client-tls-cert-file (PEM)",
    )
    g.add_argument(
        "--prometheus-token-file",
        default="",
        metavar="FILE",
        help="bearer token file, re-read when it changes",
    )
    g.add_argument(
        "--prometheus-header",
        type=_header,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra request header (repeatable)",
    )

    g = parser.add_argument_group("serving")
    g.add_argument(
        "--secure-port", type=_port, default=6443, metavar="PORT", help="HTTPS port to serve on"
    )
    g.add_argument("--bind-address", default="0.0.0.0", metavar="IP", help="address to listen on")
    g.add_argument(
        "--cert-dir",
        default="apiserver.local.config/certificates",
        metavar="DIR",
        help="where the self-signed certificate is kept when no files are given",
    )
    g.add_argument(
        "--tls-cert-file",
        default="",
        metavar="FILE",
        help="serving certificate (re-read when it changes)",
    )
    g.add_argument(
        "--tls-private-key-file",
        default="",
        metavar="FILE",
        help="key of --tls-cert-file (PEM); re-read when it changes",
    )
    g.add_argument(
        "--tls-min-version",
        type=_tls_version,
        default="VersionTLS12",
        metavar="VERSION",
        help=", ".join(TLS_VERSIONS),
    )
    g.add_argument(
        "--tls-cipher-suites",
        type=_ciphers,
        action="append",
        default=[],
        metavar="SUITES",
        help="comma-separated Go cipher suite names",
    )
    g.add_argument(
        "--event-loop",
        choices=EVENT_LOOPS,
        default="auto",
        help=EVENT_LOOP_HELP,
    )
    gctune.add_flag(g)

    g = parser.add_argument_group("Kubernetes")
    g.add_argument(
        "--lister-kubeconfig",
        "--kubeconfig",
        dest="lister_kubeconfig",
        default="",
        metavar="FILE",
        help="kubeconfig for object look-ups (default: in-cluster)",
    )

    g = parser.add_argument_group("logging")
    g.add_argument(
        "-v",
        "--v",
        dest="v",
        type=int,
        default=0,
        metavar="LEVEL",
        help="verbosity: 0 warnings, 1-2 info, 3+ debug, 4+ every request",
    )
    g.add_argument(
        "--logtostderr",
        "--alsologtostderr",
        default=True,
        **boolean,
        help="accepted for compatibility (logs always go to stderr as JSON lines)",
    )
    add_auth_arguments(parser)
    return parser


@dataclass(frozen=True)
class AdapterOptions:
    """Everything the command line decides, typed."""

    config: str
    relist_interval: float  # seconds
    max_age: float  # seconds
    cache_ttl: float  # seconds; 0 disables
    batch_window: float  # seconds a namespace-wide answer is shared; 0: no batching
    external_batch_window: float  # seconds an External answer is shared (<= batch_window)
    prometheus: PrometheusOptions
    tls: TLSOptions
    bind_address: str
    secure_port: int
    lister_kubeconfig: str
    verbosity: int
    auth: AuthOptions
    event_loop: str = "auto"  # --event-loop: auto, uvloop or asyncio (adapter.eventloop)
    gc_threshold: tuple[int, int, int] = gctune.parse(gctune.DEFAULT)  # --gc-threshold


MIN_DEFAULT_MAX_AGE = 300.0  # seconds: outlasts a few missed scrapes of a slow (1m) job


def default_max_age(relist_interval: float) -> float:
    """The look-back when --metrics-max-age is not given: twice the relist interval, so a
    series seen by one relist is still inside the next one's window even if that one starts
    late, and never under 5 minutes. (The peer uses the interval itself, so a series whose
    last sample falls just before a relist's window drops out and comes back: issue #229.)"""
    return max(2 * relist_interval, MIN_DEFAULT_MAX_AGE)


def parse_args(argv: list[str] | None = None) -> AdapterOptions:
    parser = build_parser()
    ns = parser.parse_args(argv)
    if not ns.config:
        parser.error("--config is required (the prometheus-adapter rule file)")
    if bool(ns.prometheus_client_tls_cert_file) != bool(ns.prometheus_client_tls_key_file):
        parser.error(
            "--prometheus-client-tls-cert-file and --prometheus-client-tls-key-file go together"
        )
    if bool(ns.tls_cert_file) != bool(ns.tls_private_key_file):
        parser.error("--tls-cert-file and --tls-private-key-file must be given together")
    suites = tuple(s.strip() for text in ns.tls_cipher_suites for s in text.split(",") if s.strip())
    prometheus = PrometheusOptions(
        url=ns.prometheus_url,
        verb=ns.prometheus_verb,
        timeout=ns.prometheus_timeout,
        token_file=ns.prometheus_token_file or None,
        ca_file=ns.prometheus_ca_file or None,
        client_cert_file=ns.prometheus_client_tls_cert_file or None,
        client_key_file=ns.prometheus_client_tls_key_file or None,
        headers=dict(ns.prometheus_header),
        in_cluster=bool(ns.prometheus_auth_incluster),
        auth_config=ns.prometheus_auth_config or None,
        compression=ns.prometheus_compression,
        warnings=ns.prometheus_warnings,
    )
    tls = TLSOptions(
        cert_file=ns.tls_cert_file or None,
        key_file=ns.tls_private_key_file or None,
        cert_dir=ns.cert_dir,
        min_version=ns.tls_min_version,
        cipher_suites=suites,
    )
    return AdapterOptions(
        config=ns.config,
        relist_interval=ns.metrics_relist_interval,
        max_age=ns.metrics_max_age or default_max_age(ns.metrics_relist_interval),
        cache_ttl=ns.cache_ttl,
        batch_window=ns.batch_window,
        # an External answer is one kind of shared answer: batching off turns it off too
        external_batch_window=min(ns.external_batch_window, ns.batch_window),
        prometheus=prometheus,
        tls=tls,
        bind_address=ns.bind_address,
        secure_port=ns.secure_port,
        lister_kubeconfig=ns.lister_kubeconfig,
        verbosity=ns.v,
        auth=AuthOptions.from_namespace(ns),
        event_loop=ns.event_loop,
        gc_threshold=ns.gc_threshold,
    )
