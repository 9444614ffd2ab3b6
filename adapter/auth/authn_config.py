"""Where the authentication settings come from: flags, or the cluster's published ConfigMap.

As `DelegatingAuthenticationOptions` does: a `--client-ca-file` flag wins over the ConfigMap's
`client-ca-file`; a `--requestheader-client-ca-file` flag makes the request-header settings
come from flags, otherwise they come from the ConfigMap (`requestheader-client-ca-file`,
`requestheader-allowed-names`, `requestheader-username-headers`, `requestheader-group-headers`,
`requestheader-extra-headers-prefix`, `requestheader-uid-headers`; the lists are JSON arrays).
The ConfigMap is followed, so a rotated front-proxy CA takes effect without a restart.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from adapter.auth.certs import CABundle, CertificateError, ClientCertVerifier

log = logging.getLogger(__name__)

AUTH_CONFIGMAP_NAMESPACE = "kube-system"
AUTH_CONFIGMAP_NAME = "extension-apiserver-authentication"

# k8s.io/apiserver's defaults when the request-header settings come from flags
DEFAULT_USERNAME_HEADERS = ("X-Remote-User",)
DEFAULT_GROUP_HEADERS = ("X-Remote-Group",)
DEFAULT_EXTRA_PREFIXES = ("X-Remote-Extra-",)


@dataclass(frozen=True)
class RequestHeaderConfig:
    """Front-proxy trust: whose certificate makes `X-Remote-*` headers believable."""

    ca: CABundle
    allowed_names: tuple[str, ...] = ()  # client certificate CNs allowed; empty means any
    username_headers: tuple[str, ...] = DEFAULT_USERNAME_HEADERS
    group_headers: tuple[str, ...] = DEFAULT_GROUP_HEADERS
    extra_prefixes: tuple[str, ...] = DEFAULT_EXTRA_PREFIXES
    uid_headers: tuple[str, ...] = ()  # Kubernetes 1.32+ (RemoteRequestHeaderUID), off by default


@dataclass(frozen=True)
class AuthnConfig:
    """The certificate-based half of authentication; either part may be absent."""

    client_ca: CABundle | None = None
    request_header: RequestHeaderConfig | None = None


def config_from_configmap(data: Mapping[str, str]) -> AuthnConfig:
    """The settings a `extension-apiserver-authentication` ConfigMap publishes.

    Raises ValueError naming the key when a value cannot be read.
    """
    client_ca = None
    if data.get("client-ca-file", "").strip():
        client_ca = _bundle(data["client-ca-file"], "client-ca-file")
    request_header = None
    if data.get("requestheader-client-ca-file", "").strip():
        request_header = RequestHeaderConfig(
            ca=_bundle(data["requestheader-client-ca-file"], "requestheader-client-ca-file"),
            allowed_names=_json_list(data, "requestheader-allowed-names"),
            username_headers=_json_list(data, "requestheader-username-headers"),
            group_headers=_json_list(data, "requestheader-group-headers"),
            extra_prefixes=_json_list(data, "requestheader-extra-headers-prefix"),
            uid_headers=_json_list(data, "requestheader-uid-headers"),
        )
    return AuthnConfig(client_ca=client_ca, request_header=request_header)


def _bundle(pem: str, key: str) -> CABundle:
    return CABundle.from_pem(pem.encode(), source=f"configmap key {key}")


def _json_list(data: Mapping[str, str], key: str) -> tuple[str, ...]:
    raw = data.get(key, "").strip()
    if not raw:
        return ()
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"configmap key {key}: not a JSON list of strings") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"configmap key {key}: not a JSON list of strings")
    return tuple(v for v in value if v.strip())


class DynamicAuthnConfig:
    """The current certificate settings, merged from flags and the followed ConfigMap.

    `flags` parts always win; `update_from_configmap` fills the parts flags leave empty.
    """

    def __init__(self, flags: AuthnConfig, *, follow_configmap: bool) -> None:
        self._flags = flags
        self._published = AuthnConfig()  # the ConfigMap's settings, as last read
        self.follows_configmap = follow_configmap
        self.generation = 0  # bumped on every change, so the TLS layer can rebuild its context
        self._set(flags)

    @property
    def config(self) -> AuthnConfig:
        return self._config

    @property
    def client_verifier(self) -> ClientCertVerifier | None:
        return self._client

    @property
    def front_proxy_verifier(self) -> ClientCertVerifier | None:
        return self._front_proxy

    def update_from_configmap(self, data: Mapping[str, str] | None) -> None:
        """Apply the ConfigMap's content (None: it is gone); a bad ConfigMap keeps the old one."""
        if data is None:
            published = AuthnConfig()
        else:
            try:
                published = config_from_configmap(data)
            except (ValueError, CertificateError) as exc:
                log.error("ignoring unreadable %s ConfigMap: %s", AUTH_CONFIGMAP_NAME, exc)
                return
        self._published = published
        self._merge(f"{AUTH_CONFIGMAP_NAME} ConfigMap")

    def update_flags(self, flags: AuthnConfig) -> None:
        """New settings from the flag files (re-read after they changed on disk)."""
        self._flags = flags
        self._merge("CA files given by flags")

    def _merge(self, source: str) -> None:
        merged = replace(
            self._published,
            client_ca=self._flags.client_ca or self._published.client_ca,
            request_header=self._flags.request_header or self._published.request_header,
        )
        if merged != self._config:
            log.info("authentication settings changed (%s)", source)
            self._set(merged)

    def client_cas(self) -> bytes | None:
        """PEM of every CA whose client certificates the TLS layer should request and verify.

        While the followed ConfigMap has not given any CA yet, a placeholder CA (whose key is
        thrown away) stands in: OpenSSL fixes whether client certificates are requested when a
        connection starts, from the serving context made at start-up, so that context must
        request them for CAs that arrive later to take effect without a restart.
        """
        parts = [b.pem.strip() + b"\n" for b in self._bundles()]
        if not parts and self.follows_configmap:
            return _placeholder_ca()
        return b"".join(parts) or None

    def _bundles(self) -> list[CABundle]:
        config = self._config
        bundles = [config.request_header.ca] if config.request_header else []
        return bundles + ([config.client_ca] if config.client_ca else [])

    def _set(self, config: AuthnConfig) -> None:
        self._config = config
        self._client = ClientCertVerifier(config.client_ca) if config.client_ca else None
        rh = config.request_header
        self._front_proxy = ClientCertVerifier(rh.ca) if rh else None
        self.generation += 1


@functools.cache
def _placeholder_ca() -> bytes:
    """A CA nobody can issue for (its private key is never kept): verifies no certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "promscaler-no-client-ca-yet")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)
