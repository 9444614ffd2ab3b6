"""The authentication/authorization flags of k8s.io/apiserver, and the guard they build.

Flag names, defaults and syntax follow `DelegatingAuthenticationOptions` and
`DelegatingAuthorizationOptions` (durations like `10s`, `1m30s`; string lists comma-separated
or repeated; booleans as `--flag` or `--flag=false`), so prometheus-adapter's container
arguments keep working. `--authorization-mode` is ours: `Webhook` (the default, delegated to
the cluster) or `AlwaysAllow` (local development only; warned about at start-up).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapter.auth.authn import Authenticator
from adapter.auth.authn_config import (
    AUTH_CONFIGMAP_NAME,
    AUTH_CONFIGMAP_NAMESPACE,
    AuthnConfig,
    DynamicAuthnConfig,
    RequestHeaderConfig,
)
from adapter.auth.authz import AlwaysAllowPaths, Authorizer
from adapter.auth.certs import CABundle, CertificateError
from adapter.auth.follow import AuthBackend, ConfigMapFollower
from adapter.auth.guard import DelegatingGuard, Service
from adapter.errors import ConfigError
from adapter.server.auth_seam import ALLOW_ALL, RequestGuard

log = logging.getLogger(__name__)

MODE_WEBHOOK = "Webhook"
MODE_ALWAYS_ALLOW = "AlwaysAllow"
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration (`10s`, `1m30s`, `250ms`, `0`); ValueError otherwise."""
    text = text.strip()
    if text == "0":
        return 0.0
    matches = list(_DURATION.finditer(text))
    if not matches or "".join(m.group(0) for m in matches) != text:
        raise ValueError(f"invalid duration {text!r} (want e.g. 10s, 1m30s, 500ms)")
    return sum(float(m.group(1)) * _UNITS[m.group(2)] for m in matches)


def _go_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "t", "true"):
        return True
    if value in ("0", "f", "false"):
        return False
    raise ValueError(f"invalid boolean {text!r}")


def _duration_arg(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _bool_arg(text: str) -> bool:
    try:
        return _go_bool(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


class _StringSlice(argparse.Action):
    """Go's StringSlice: comma-separated, and the first use replaces the default."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        seen = f"_{self.dest}_seen"
        current = list(getattr(namespace, self.dest)) if getattr(namespace, seen, False) else []
        current += [v.strip() for v in str(values).split(",") if v.strip()]
        setattr(namespace, self.dest, current)
        setattr(namespace, seen, True)


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the delegated authentication and authorization flags to `parser`."""
    g = parser.add_argument_group("authentication and authorization (as k8s.io/apiserver)")
    boolean: dict[str, Any] = {"type": _bool_arg, "nargs": "?", "const": True, "metavar": "BOOL"}
    seconds: dict[str, Any] = {"type": _duration_arg, "metavar": "DURATION"}
    g.add_argument(
        "--authentication-kubeconfig",
        default="",
        metavar="FILE",
        help="kubeconfig for TokenReviews and the ConfigMap (default: in-cluster)",
    )
    g.add_argument(
        "--authentication-skip-lookup",
        default=False,
        **boolean,
        help="do not read kube-system/extension-apiserver-authentication",
    )
    g.add_argument(
        "--authentication-tolerate-lookup-failure",
        default=False,
        **boolean,
        help="start even if the authentication ConfigMap cannot be read",
    )
    g.add_argument(
        "--authentication-token-webhook-cache-ttl",
        default=10.0,
        **seconds,
        help="how long TokenReview answers are cached (default 10s)",
    )
    g.add_argument(
        "--client-ca-file",
        default="",
        metavar="FILE",
        help="CA bundle for client certificates (user = CN, groups = O)",
    )
    g.add_argument(
        "--requestheader-client-ca-file",
        default="",
        metavar="FILE",
        help="CA bundle of the front proxy whose X-Remote-* headers are trusted",
    )
    g.add_argument(
        "--requestheader-allowed-names",
        default=[],
        action=_StringSlice,
        metavar="NAMES",
        help="front-proxy certificate CNs allowed (empty: any)",
    )
    g.add_argument(
        "--requestheader-username-headers",
        default=["X-Remote-User"],
        action=_StringSlice,
        metavar="HEADERS",
        help="request headers holding the user name, first non-empty wins (front proxy only)",
    )
    g.add_argument(
        "--requestheader-group-headers",
        default=["X-Remote-Group"],
        action=_StringSlice,
        metavar="HEADERS",
        help="request headers holding the groups (front proxy only)",
    )
    g.add_argument(
        "--requestheader-extra-headers-prefix",
        default=["X-Remote-Extra-"],
        action=_StringSlice,
        metavar="PREFIXES",
        help="prefixes of request headers holding extra user attributes (front proxy only)",
    )
    g.add_argument(
        "--requestheader-uid-headers",
        default=[],
        action=_StringSlice,
        metavar="HEADERS",
        help="headers carrying the user's UID (Kubernetes 1.32+, e.g. X-Remote-Uid)",
    )
    g.add_argument(
        "--anonymous-auth",
        default=True,
        **boolean,
        help="treat requests without credentials as system:anonymous (default true)",
    )
    g.add_argument(
        "--authorization-kubeconfig",
        default="",
        metavar="FILE",
        help="kubeconfig for SubjectAccessReviews (default: in-cluster)",
    )
    g.add_argument(
        "--authorization-always-allow-paths",
        default=["/healthz", "/readyz", "/livez"],
        action=_StringSlice,
        metavar="PATHS",
        help="paths never authorized (default /healthz,/readyz,/livez)",
    )
    g.add_argument(
        "--authorization-webhook-cache-authorized-ttl",
        default=10.0,
        **seconds,
        help="how long allowed SubjectAccessReview answers are cached (default 10s)",
    )
    g.add_argument(
        "--authorization-webhook-cache-unauthorized-ttl",
        default=10.0,
        **seconds,
        help="how long denied SubjectAccessReview answers are cached (default 10s)",
    )
    g.add_argument(
        "--authorization-mode",
        default=MODE_WEBHOOK,
        choices=[MODE_WEBHOOK, MODE_ALWAYS_ALLOW],
        help="Webhook: ask the cluster; AlwaysAllow: local development only",
    )


@dataclass(frozen=True)
class AuthOptions:
    """Parsed authentication/authorization flags; durations in seconds."""

    authentication_kubeconfig: str = ""
    authentication_skip_lookup: bool = False
    authentication_tolerate_lookup_failure: bool = False
    token_cache_ttl: float = 10.0  # seconds; upstream default
    client_ca_file: str = ""
    requestheader_client_ca_file: str = ""
    requestheader_allowed_names: tuple[str, ...] = ()
    requestheader_username_headers: tuple[str, ...] = ("X-Remote-User",)
    requestheader_group_headers: tuple[str, ...] = ("X-Remote-Group",)
    requestheader_extra_headers_prefix: tuple[str, ...] = ("X-Remote-Extra-",)
    requestheader_uid_headers: tuple[str, ...] = ()
    anonymous_auth: bool = True
    authorization_kubeconfig: str = ""
    always_allow_paths: tuple[str, ...] = ("/healthz", "/readyz", "/livez")
    authorized_ttl: float = 10.0  # seconds; upstream default
    unauthorized_ttl: float = 10.0  # seconds; upstream default
    authorization_mode: str = MODE_WEBHOOK

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> AuthOptions:
        return cls(
            authentication_kubeconfig=ns.authentication_kubeconfig,
            authentication_skip_lookup=bool(ns.authentication_skip_lookup),
            authentication_tolerate_lookup_failure=bool(ns.authentication_tolerate_lookup_failure),
            token_cache_ttl=ns.authentication_token_webhook_cache_ttl,
            client_ca_file=ns.client_ca_file,
            requestheader_client_ca_file=ns.requestheader_client_ca_file,
            requestheader_allowed_names=tuple(ns.requestheader_allowed_names),
            requestheader_username_headers=tuple(ns.requestheader_username_headers),
            requestheader_group_headers=tuple(ns.requestheader_group_headers),
            requestheader_extra_headers_prefix=tuple(ns.requestheader_extra_headers_prefix),
            requestheader_uid_headers=tuple(ns.requestheader_uid_headers),
            anonymous_auth=bool(ns.anonymous_auth),
            authorization_kubeconfig=ns.authorization_kubeconfig,
            always_allow_paths=tuple(ns.authorization_always_allow_paths),
            authorized_ttl=ns.authorization_webhook_cache_authorized_ttl,
            unauthorized_ttl=ns.authorization_webhook_cache_unauthorized_ttl,
            authorization_mode=ns.authorization_mode,
        )

    def flag_config(self) -> AuthnConfig:
        """The certificate settings given by flags; raises ConfigError naming the flag."""
        client_ca = _read_bundle(self.client_ca_file, "--client-ca-file")
        front_ca = _read_bundle(self.requestheader_client_ca_file, "--requestheader-client-ca-file")
        request_header = None
        if front_ca is not None:
            request_header = RequestHeaderConfig(
                ca=front_ca,
                allowed_names=self.requestheader_allowed_names,
                username_headers=self.requestheader_username_headers,
                group_headers=self.requestheader_group_headers,
                extra_prefixes=self.requestheader_extra_headers_prefix,
                uid_headers=self.requestheader_uid_headers,
            )
        return AuthnConfig(client_ca=client_ca, request_header=request_header)


def _read_bundle(path: str, flag: str) -> CABundle | None:
    if not path:
        return None
    try:
        return CABundle.from_pem(Path(path).read_bytes(), source=f"{flag} {path}")
    except OSError as exc:
        raise ConfigError(f"{flag}: cannot read {path}: {exc.strerror}") from exc
    except CertificateError as exc:
        raise ConfigError(str(exc)) from exc


class FlagFileReloader:
    """Re-reads --client-ca-file and --requestheader-client-ca-file when they change on disk,
    as upstream's dynamic CA file content does (a rotated CA needs no restart)."""

    def __init__(
        self,
        options: AuthOptions,
        config: DynamicAuthnConfig,
        *,
        period: float = 1.0,  # seconds between stat() checks; a stat per second is free
    ) -> None:
        self._options = options
        self._config = config
        self._period = period
        self._paths = [
            p for p in (options.client_ca_file, options.requestheader_client_ca_file) if p
        ]
        self._stamp = self._stamps()
        self._task: asyncio.Task[None] | None = None

    def _stamps(self) -> tuple[tuple[float, int, int] | None, ...]:
        out: list[tuple[float, int, int] | None] = []
        for path in self._paths:
            try:
                st = os.stat(path)
            except OSError:
                out.append(None)
            else:
                out.append((st.st_mtime, st.st_size, st.st_ino))
        return tuple(out)

    def check(self) -> None:
        """Reload the files if any changed; an unreadable file keeps the previous CAs."""
        stamp = self._stamps()
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            self._config.update_flags(self._options.flag_config())
        except ConfigError as exc:
            log.error("keeping the previous client CAs: %s", exc)

    async def start(self) -> None:
        if self._paths and self._task is None:
            self._task = asyncio.create_task(self._run(), name="reload-ca-files")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._period)
            self.check()


def build_guard(options: AuthOptions, *, kube: AuthBackend | None) -> RequestGuard:
    """The guard for `options`; `kube` answers TokenReviews/SARs and serves the ConfigMap.

    Returns a `DelegatingGuard` (call `await guard.start()` before serving, `close()` after),
    or ALLOW_ALL for `--authorization-mode=AlwaysAllow` without a cluster.
    """
    if options.authorization_mode == MODE_ALWAYS_ALLOW:
        log.warning(
            "--authorization-mode=AlwaysAllow: every request is allowed; for local development"
            " only, never expose this server"
        )
        if kube is None:
            return ALLOW_ALL
    elif kube is None:
        raise ConfigError("delegated authorization needs a Kubernetes client")
    follow = not options.authentication_skip_lookup
    config = DynamicAuthnConfig(options.flag_config(), follow_configmap=follow)
    authenticator = Authenticator(
        config=config,
        tokens=kube,
        token_ttl=options.token_cache_ttl,
        anonymous=options.anonymous_auth,
        clock=time.monotonic,
        wall_clock=lambda: datetime.now(UTC),
    )
    authorizer = None
    if options.authorization_mode != MODE_ALWAYS_ALLOW:
        authorizer = Authorizer(
            reviewer=kube,
            authorized_ttl=options.authorized_ttl,
            unauthorized_ttl=options.unauthorized_ttl,
            clock=time.monotonic,
        )
    services: list[Service] = [FlagFileReloader(options, config)]
    if follow:
        follower = ConfigMapFollower(
            kube,
            config,
            namespace=AUTH_CONFIGMAP_NAMESPACE,
            name=AUTH_CONFIGMAP_NAME,
            tolerate_failure=options.authentication_tolerate_lookup_failure,
        )
        services.append(follower)
    return DelegatingGuard(
        authenticator=authenticator,
        authorizer=authorizer,
        always_allow=AlwaysAllowPaths(options.always_allow_paths),
        config=config,
        services=tuple(services),
        clock=time.monotonic,
    )


def client_cas_provider(guard: RequestGuard) -> Callable[[], bytes | None]:
    """The TLS seam's `client_cas`: the guard's current CA bundle (None: request no certs)."""
    if isinstance(guard, DelegatingGuard):
        return guard.client_cas
    return lambda: None


__all__: Sequence[str] = (
    "AuthOptions",
    "add_auth_arguments",
    "build_guard",
    "client_cas_provider",
    "parse_duration",
)
