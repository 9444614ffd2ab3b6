"""`backends:` in the rule file: named Prometheus-compatible servers a rule can be sent to.

```yaml
backends:
  thanos:
    url: https://thanos-query.monitoring.svc:9090
    headers: {X-Scope-OrgID: team-a}
    bearerTokenFile: /var/run/secrets/thanos/token     # or basicAuth, not both
    basicAuth: {username: adapter, passwordFile: /etc/thanos/password}
    tls: {caFile: ..., certFile: ..., keyFile: ..., insecureSkipVerify: false}
    timeout: 10s
    queryParameters: {dedup: "true", partial_response: "false"}
    warnings: reject        # an answer with warnings (partial data) is a 503; or accept
rules:
- seriesQuery: ...
  backend: thanos
```

A rule without `backend:` (or with `backend: default`) uses the backend the command line
describes (`--prometheus-url` and the other `--prometheus-*` flags). Pure: files named here
are read by `adapter.backends` when the clients are built, never at load time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from adapter.rules.durations import parse_duration
from adapter.rules.yamlfields import ANY_KEYS, Place, boolean, mapping, string

__all__ = ["DEFAULT_BACKEND", "Backend", "BackendTLS", "BasicAuth", "load_backends"]

DEFAULT_BACKEND = "default"  # the backend of the --prometheus-* flags; the name is reserved
_NAME = re.compile(r"^[a-z0-9]([-_a-z0-9]{0,61}[a-z0-9])?$")  # a label value and a DNS label
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 header field name
# parameters the client sets itself: a backend may not replace the query or its time range
_RESERVED_PARAMETERS = frozenset({"query", "time", "match[]", "start", "end", "timeout"})


@dataclass(frozen=True)
class BasicAuth:
    """HTTP basic authentication; the password never appears in a repr, log or error."""

    username: str
    password: str = field(default="", repr=False)
    password_file: str = ""  # read when the client is built (and on every reload)


@dataclass(frozen=True)
class BackendTLS:
    """TLS to the backend; empty fields mean the system's CAs and no client certificate."""

    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    insecure_skip_verify: bool = False


@dataclass(frozen=True)
class Backend:
    """One entry of `backends:`. Compared by value: an unchanged entry keeps its client across
    a reload. Header values may be credentials, so the repr shows header names only."""

    name: str
    url: str
    where: str  # e.g. "config: backends.thanos", for messages about files read later
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    bearer_token_file: str = ""
    basic_auth: BasicAuth | None = None
    tls: BackendTLS = BackendTLS()
    timeout: float | None = None  # seconds per query; None: --prometheus-timeout
    query_parameters: tuple[tuple[str, str], ...] = ()  # added to every call (Thanos: dedup)
    compression: str = ""  # gzip, none or auto (Accept-Encoding); "": the flag's
    warnings: str = ""  # reject or accept an answer with warnings; "": the flag's

    @property
    def header_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.headers)


_KEYS = frozenset(
    {
        "url",
        "headers",
        "bearerTokenFile",
        "basicAuth",
        "tls",
        "timeout",
        "queryParameters",
        "compression",
        "warnings",
    }
)


def load_backends(value: Any, place: Place) -> Mapping[str, Backend]:
    """`backends:` -> name -> Backend; RuleError naming the field of the first problem."""
    out: dict[str, Backend] = {}
    for name, raw in mapping(value, place, ANY_KEYS).items():
        at = place / str(name)
        if not isinstance(name, str) or not _NAME.match(name):
            raise at.error(
                f"backend name {name!r} must be 1-63 lower-case letters, digits, '-' or '_'"
            )
        if name == DEFAULT_BACKEND:
            raise at.error(f"{DEFAULT_BACKEND!r} is reserved for the --prometheus-* flags")
        out[name] = _backend(name, raw, at)
    return MappingProxyType(out)


def _backend(name: str, value: Any, place: Place) -> Backend:
    raw = mapping(value, place, _KEYS)
    token = string(raw.get("bearerTokenFile"), place / "bearerTokenFile")
    basic = _basic_auth(raw.get("basicAuth"), place / "basicAuth")
    if token and basic is not None:
        raise place.error("bearerTokenFile and basicAuth cannot be used together")
    return Backend(
        name=name,
        url=_url(raw.get("url"), place / "url"),
        where=place.path,
        headers=_headers(raw.get("headers"), place / "headers"),
        bearer_token_file=token,
        basic_auth=basic,
        tls=_tls(raw.get("tls"), place / "tls"),
        timeout=_timeout(raw.get("timeout"), place / "timeout"),
        query_parameters=_parameters(raw.get("queryParameters"), place / "queryParameters"),
        compression=_choice(raw.get("compression"), place / "compression", COMPRESSIONS),
        warnings=_choice(raw.get("warnings"), place / "warnings", WARNINGS_POLICIES),
    )


COMPRESSIONS = ("auto", "gzip", "none")  # as adapter.prometheus.COMPRESSIONS (pure: no import)
WARNINGS_POLICIES = ("reject", "accept")  # as adapter.partial.WARNINGS_POLICIES


def _choice(value: Any, place: Place, choices: tuple[str, ...]) -> str:
    text = string(value, place)
    if text and text not in choices:
        raise place.error(f"must be one of {', '.join(choices)}, not {text!r}")
    return text


def _url(value: Any, place: Place) -> str:
    text = string(value, place, required=True).strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError as err:
        raise place.error(f"not a valid URL: {err}") from err
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise place.error("must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        # a URL is logged and shown in errors: credentials belong in basicAuth
        raise place.error("must not contain credentials (use basicAuth or bearerTokenFile)")
    if parts.query or parts.fragment:
        raise place.error("must not have a query or fragment (use queryParameters)")
    return text.rstrip("/")


def _headers(value: Any, place: Place) -> tuple[tuple[str, str], ...]:
    out = []
    for key, raw in mapping(value, place, ANY_KEYS).items():
        at = place / str(key)
        if not isinstance(key, str) or not _TOKEN.match(key):
            raise at.error(f"{key!r} is not a valid HTTP header name")
        # the value is not quoted in the message: it may be a credential
        text = string(raw, at)
        if any((ord(ch) < 0x20 and ch != "\t") or ord(ch) == 0x7F for ch in text):
            raise at.error("the value must not contain control characters")
        out.append((key, text))
    return tuple(sorted(out))


def _basic_auth(value: Any, place: Place) -> BasicAuth | None:
    if value is None:
        return None
    raw = mapping(value, place, frozenset({"username", "password", "passwordFile"}))
    username = string(raw.get("username"), place / "username", required=True)
    password = string(raw.get("password"), place / "password")
    password_file = string(raw.get("passwordFile"), place / "passwordFile")
    if bool(password) == bool(password_file):
        raise place.error("needs exactly one of password and passwordFile")
    return BasicAuth(username, password, password_file)


def _tls(value: Any, place: Place) -> BackendTLS:
    keys = frozenset({"caFile", "certFile", "keyFile", "insecureSkipVerify"})
    raw = mapping(value, place, keys)
    tls = BackendTLS(
        ca_file=string(raw.get("caFile"), place / "caFile"),
        cert_file=string(raw.get("certFile"), place / "certFile"),
        key_file=string(raw.get("keyFile"), place / "keyFile"),
        insecure_skip_verify=boolean(
            raw.get("insecureSkipVerify"), place / "insecureSkipVerify", False
        ),
    )
    if bool(tls.cert_file) != bool(tls.key_file):
        raise place.error("certFile and keyFile go together")
    return tls


def _timeout(value: Any, place: Place) -> float | None:
    if value is None:
        return None
    text = string(value, place, required=True)
    try:
        seconds = parse_duration(text)
    except ValueError as err:
        raise place.error(str(err)) from err
    if seconds <= 0:
        raise place.error(f"must be greater than 0, not {text!r}")
    return seconds


def _parameters(value: Any, place: Place) -> tuple[tuple[str, str], ...]:
    out = []
    for key, raw in mapping(value, place, ANY_KEYS).items():
        at = place / str(key)
        if not isinstance(key, str) or not key:
            raise at.error("a parameter name must be a non-empty string")
        if key in _RESERVED_PARAMETERS:
            raise at.error(f"{key!r} is set by the adapter itself and cannot be overridden")
        out.append((key, string(raw, at)))
    return tuple(sorted(out))


def check_backend_name(value: Any, place: Place, known: Mapping[str, Backend]) -> str:
    """A rule's `backend:`; absent means the default backend."""
    if value is None:
        return DEFAULT_BACKEND
    name = string(value, place, required=True)
    if name != DEFAULT_BACKEND and name not in known:
        defined = ", ".join([DEFAULT_BACKEND, *sorted(known)])
        raise place.error(f"unknown backend {name!r} (defined: {defined})")
    return name
