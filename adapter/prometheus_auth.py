"""How the Prometheus client reaches a backend: credentials (bearer token file re-read on
change, basic auth, in-cluster service account, kubeconfig-format auth file), TLS, and the
headers every call carries (Accept-Encoding chosen per backend)."""

from __future__ import annotations

import base64
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import yaml

from adapter.errors import ConfigError, PrometheusUnavailable

if TYPE_CHECKING:
    from adapter.prometheus import PrometheusOptions

__all__ = ["COMPRESSIONS", "Auth", "TokenSource", "accept_encoding", "resolve_auth"]

IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
IN_CLUSTER_CA = Path("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")


class TokenSource:
    """A bearer token from a file, re-read when its mtime or size changes (rotation)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._stamp: tuple[float, int] | None = None
        self._token = ""

    def get(self) -> str:
        try:
            st = os.stat(self._path)
        except OSError as err:
            raise PrometheusUnavailable() from err
        stamp = (st.st_mtime, st.st_size)
        if stamp != self._stamp:
            self._token = Path(self._path).read_text().strip()
            self._stamp = stamp
        return self._token


@dataclass
class Auth:
    """Resolved credentials: static headers, an optional token source, the TLS context."""

    headers: dict[str, str]
    token: TokenSource | None
    ssl_context: ssl.SSLContext | bool


def resolve_auth(options: PrometheusOptions) -> Auth:
    headers = dict(options.headers)
    token_file = options.token_file
    ca_file, cert, key = options.ca_file, options.client_cert_file, options.client_key_file
    insecure = options.insecure_skip_verify
    basic: tuple[str, str] | None = options.basic_auth
    if options.in_cluster:
        token_file = token_file or str(IN_CLUSTER_TOKEN)
        ca_file = ca_file or str(IN_CLUSTER_CA)
    if options.auth_config:
        kc = _KubeconfigAuth.load(options.auth_config)
        token_file = token_file or kc.token_file
        ca_file, cert, key = ca_file or kc.ca_file, cert or kc.cert_file, key or kc.key_file
        insecure = insecure or kc.insecure
        basic = basic or kc.basic
        if kc.token and not token_file:
            headers.setdefault("Authorization", f"Bearer {kc.token}")
    headers.setdefault("Accept-Encoding", accept_encoding(options.compression, options.url))
    if basic is not None:
        raw = f"{basic[0]}:{basic[1]}".encode()
        headers.setdefault("Authorization", "Basic " + base64.b64encode(raw).decode())
    if (cert is None) != (key is None):
        raise ConfigError(
            "--prometheus-client-tls-cert-file and --prometheus-client-tls-key-file go together"
        )
    context: ssl.SSLContext | bool = True
    if options.url.startswith("https") or ca_file or cert:
        context = _ssl_context(ca_file=ca_file, cert=cert, key=key, insecure=insecure)
    return Auth(headers, TokenSource(token_file) if token_file else None, context)


COMPRESSIONS = ("auto", "gzip", "none")


def accept_encoding(compression: str, url: str) -> str:
    """The Accept-Encoding asked of a backend. gzip shrinks a 100-pod answer about 10x, which
    pays across a network; on loopback it only costs: decompressing was ~15% of a request's
    CPU and bytes cost nothing there, so `auto` asks for gzip unless the host is loopback."""
    if compression == "auto":
        host = urlsplit(url).hostname or ""
        loopback = host == "localhost" or _is_loopback(host)
        compression = "none" if loopback else "gzip"
    return "identity" if compression == "none" else "gzip"


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: only `localhost` is known to be local
        return False


def _ssl_context(
    *, ca_file: str | None, cert: str | None, key: str | None, insecure: bool
) -> ssl.SSLContext:
    try:
        ctx = ssl.create_default_context(cafile=ca_file)
        if insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if cert and key:
            ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as err:
        raise ConfigError(f"prometheus TLS settings: {err}") from err
    return ctx


@dataclass(frozen=True)
class _KubeconfigAuth:
    """The credentials a kubeconfig's current context gives (the peer's --prometheus-auth-config
    is read with client-go's BuildConfigFromFlags; only its auth is used, never its server)."""

    token: str | None = None
    token_file: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False
    basic: tuple[str, str] | None = None

    @classmethod
    def load(cls, path: str) -> _KubeconfigAuth:
        try:
            doc = yaml.safe_load(Path(path).read_text()) or {}
            return cls._from_doc(doc, base=Path(path).parent)
        except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as err:
            raise ConfigError(f"--prometheus-auth-config {path}: cannot read it: {err}") from err

    @classmethod
    def _from_doc(cls, doc: dict[str, Any], *, base: Path) -> _KubeconfigAuth:
        contexts = {c["name"]: c.get("context", {}) for c in doc.get("contexts") or []}
        name = doc.get("current-context") or next(iter(contexts), None)
        ctx = contexts.get(name, {}) if name else {}
        cluster = _named(doc.get("clusters"), ctx.get("cluster"), "cluster")
        user = _named(doc.get("users"), ctx.get("user"), "user")

        def path_or_data(path_key: str, data_key: str, src: dict[str, Any]) -> str | None:
            if src.get(path_key):
                return str(base / src[path_key])
            if src.get(data_key):
                return _spill(base64.b64decode(src[data_key]))
            return None

        basic = (user["username"], user.get("password", "")) if user.get("username") else None
        return cls(
            token=user.get("token"),
            token_file=str(base / user["tokenFile"]) if user.get("tokenFile") else None,
            ca_file=path_or_data("certificate-authority", "certificate-authority-data", cluster),
            cert_file=path_or_data("client-certificate", "client-certificate-data", user),
            key_file=path_or_data("client-key", "client-key-data", user),
            insecure=bool(cluster.get("insecure-skip-tls-verify")),
            basic=basic,
        )


def _named(items: Any, name: str | None, key: str) -> dict[str, Any]:
    entries = {i["name"]: i.get(key, {}) for i in items or []}
    if name in entries:
        return dict(entries[name])
    return dict(next(iter(entries.values()), {}))


def _spill(data: bytes) -> str:
    # ssl only loads certificates from files; inline kubeconfig data goes to a private temp file
    fd, name = tempfile.mkstemp(prefix="promscaler-", suffix=".pem")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return name
