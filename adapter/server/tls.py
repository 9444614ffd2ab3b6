"""The serving TLS context: certificate files or a self-signed pair, rotated without restart.

Certificates come from --tls-cert-file/--tls-private-key-file, or else a self-signed pair made
with `cryptography` and kept in --cert-dir (reused on restart, like the generic apiserver's
`apiserver.crt`/`apiserver.key`). The context handed to the server has an `sni_callback` that
swaps in the newest context for each handshake: files (and the client CA bundle) are checked at
most once a second and a changed pair is loaded without restarting.

Client certificates are requested but optional when client CAs (request-header CA + client CA)
exist at start-up; a presented certificate must verify against them (Python's ssl cannot request
a certificate without verifying it, unlike Go's RequestClientCert).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import os
import socket
import ssl
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from adapter.errors import ConfigError

log = logging.getLogger(__name__)

TLS_VERSIONS = {
    "VersionTLS10": ssl.TLSVersion.TLSv1,
    "VersionTLS11": ssl.TLSVersion.TLSv1_1,
    "VersionTLS12": ssl.TLSVersion.TLSv1_2,
    "VersionTLS13": ssl.TLSVersion.TLSv1_3,
}
# Go's names (crypto/tls) for the TLS 1.2 suites -> OpenSSL's; TLS 1.3 suites are not
# configurable in Go either, so they are accepted and ignored.
GO_CIPHERS = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
}
TLS13_SUITES = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
RECHECK_SECONDS = 1.0  # how stale a rotated certificate may be; a stat per second is free


@dataclass(frozen=True)
class TLSOptions:
    cert_file: str | None = None  # --tls-cert-file (PEM, may include intermediates)
    key_file: str | None = None  # --tls-private-key-file
    cert_dir: str = "apiserver.local.config/certificates"  # --cert-dir (generic apiserver default)
    min_version: str = "VersionTLS12"  # --tls-min-version
    cipher_suites: tuple[str, ...] = ()  # --tls-cipher-suites, Go names; () = OpenSSL defaults


def check_options(options: TLSOptions) -> None:
    """Raise ConfigError naming the flag for a bad TLS setting."""
    if options.min_version not in TLS_VERSIONS:
        choices = ", ".join(TLS_VERSIONS)
        raise ConfigError(f"--tls-min-version: {options.min_version!r} is not one of {choices}")
    for suite in options.cipher_suites:
        if suite not in GO_CIPHERS and suite not in TLS13_SUITES:
            raise ConfigError(f"--tls-cipher-suites: unknown or insecure suite {suite!r}")
    if bool(options.cert_file) != bool(options.key_file):
        raise ConfigError("--tls-cert-file and --tls-private-key-file must be given together")


def ensure_self_signed(cert_dir: str, *, now: dt.datetime) -> tuple[str, str]:
    """The self-signed pair in `cert_dir`, created (valid one year) if missing."""
    directory = Path(cert_dir)
    cert, key = directory / "apiserver.crt", directory / "apiserver.key"
    if cert.exists() and key.exists():
        return str(cert), str(key)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"--cert-dir {cert_dir}: {err.strerror}") from err
    private = ec.generate_private_key(ec.SECP256R1())
    host = socket.gethostname()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{int(now.timestamp())}")])
    sans: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.DNSName(host)]
    sans += [x509.IPAddress(ipaddress.ip_address(a)) for a in ("127.0.0.1", "::1")]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    key_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    _write_atomic(key, key_pem, mode=0o600)
    _write_atomic(cert, certificate.public_bytes(serialization.Encoding.PEM), mode=0o644)
    log.info("generated a self-signed serving certificate in %s", cert_dir)
    return str(cert), str(key)


def _write_atomic(path: Path, data: bytes, *, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def _stamp(path: str) -> tuple[float, int, int]:
    st = os.stat(path)
    return (st.st_mtime, st.st_size, st.st_ino)


class ServingTLS:
    """Owns the serving contexts; `context` is what the server listens with."""

    def __init__(
        self,
        options: TLSOptions,
        *,
        client_cas: Callable[[], bytes | None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_options(options)
        self._options = options
        self._client_cas = client_cas
        self._clock = clock
        if options.cert_file and options.key_file:
            self._pair = (options.cert_file, options.key_file)
        else:
            self._pair = ensure_self_signed(options.cert_dir, now=dt.datetime.now(dt.UTC))
        self._key: tuple[object, ...] = ()
        self._checked = 0.0
        self._current = self._build()
        self.context = self._build()  # the outer context; handshakes switch to _current
        self.context.sni_callback = self._on_hello

    def _build(self) -> ssl.SSLContext:
        cas = self._client_cas()
        self._key = (_stamp(self._pair[0]), _stamp(self._pair[1]), cas)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = TLS_VERSIONS[self._options.min_version]
        ciphers = [GO_CIPHERS[s] for s in self._options.cipher_suites if s in GO_CIPHERS]
        try:
            if ciphers:
                ctx.set_ciphers(":".join(ciphers))
            ctx.load_cert_chain(*self._pair)
            if cas:
                ctx.load_verify_locations(cadata=cas.decode())
                ctx.verify_mode = ssl.CERT_OPTIONAL
        except (OSError, ssl.SSLError, ValueError) as err:
            raise ConfigError(f"serving certificate {self._pair[0]}: {err}") from err
        return ctx

    def current(self) -> ssl.SSLContext:
        """The newest context, rebuilt when the certificate, key or client CAs changed."""
        now = self._clock()
        if now - self._checked < RECHECK_SECONDS:
            return self._current
        self._checked = now
        try:
            key = (_stamp(self._pair[0]), _stamp(self._pair[1]), self._client_cas())
            if key != self._key:
                self._current = self._build()
                log.info("serving certificate or client CAs changed; reloaded")
        except (OSError, ConfigError) as err:
            # a half-written rotation: keep serving the last good pair, retry next second
            log.warning("keeping the previous serving certificate: %s", err)
        return self._current

    def _on_hello(self, sslobj: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        sslobj.context = self.current()
