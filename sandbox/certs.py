"""The sandbox's PKI: a cluster CA (serving and client certificates), a request-header CA
(the aggregator's front-proxy client certificate). EC P-256 keys: fast enough for a
per-test sandbox."""

from __future__ import annotations

import ipaddress
import ssl
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = timedelta(days=365)  # long enough for any demo; tests rotate explicitly
BACKDATE = timedelta(hours=1)  # tolerate small clock differences, like kubeadm does


@dataclass(frozen=True)
class CertKey:
    """A certificate and its private key."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def write(self, directory: Path, stem: str) -> tuple[Path, Path]:
        cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
        cert_path.write_bytes(self.cert_pem)
        key_path.write_bytes(self.key_pem)
        key_path.chmod(0o600)
        return cert_path, key_path


def _name(cn: str, orgs: tuple[str, ...] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    return x509.Name([*attrs, x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca(cn: str, *, now: datetime) -> CertKey:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertKey(cert, key)


def issue(
    ca: CertKey,
    cn: str,
    *,
    now: datetime,
    orgs: tuple[str, ...] = (),
    hosts: tuple[str, ...] = (),
    server: bool = False,
    client: bool = False,
    not_after: datetime | None = None,
) -> CertKey:
    """A leaf certificate signed by `ca`: CN=user, O=groups for clients; SANs for servers.

    `not_after` overrides the validity end (tests make expired certificates with it).
    """
    key = ec.generate_private_key(ec.SECP256R1())
    usages = [ExtendedKeyUsageOID.SERVER_AUTH] * server + [ExtendedKeyUsageOID.CLIENT_AUTH] * client
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(cn, orgs))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(not_after or now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False
        )
    )
    if hosts:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([_san(h) for h in hosts]), critical=False
        )
    return CertKey(builder.sign(ca.key, hashes.SHA256()), key)


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def subject_identity(cert: x509.Certificate) -> tuple[str, tuple[str, ...]]:
    """(CN, O...) of a client certificate: Kubernetes' user name and groups."""
    cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    orgs = cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    return (str(cn[0].value) if cn else "", tuple(str(o.value) for o in orgs))


FRONT_PROXY_CN = "front-proxy-client"  # the aggregator's client certificate's CN


class Pki:
    """The sandbox's CAs and certificates, written as files under `dir`."""

    def __init__(
        self, directory: Path, *, now: datetime, host: str, cas: dict[str, CertKey] | None = None
    ) -> None:
        self.dir = directory
        cas = cas or {}  # CAs kept from before a restart (--state-file)
        self.cluster_ca = cas.get("cluster") or make_ca("sandbox-ca", now=now)
        serving = issue(
            self.cluster_ca,
            "kube-apiserver",
            now=now,
            hosts=(host, "127.0.0.1", "localhost", "kubernetes.default.svc"),
            server=True,
        )
        self.serving_cert, self.serving_key = serving.write(directory, "apiserver")
        self.ca_file = directory / "ca.crt"
        self.ca_file.write_bytes(self.cluster_ca.cert_pem)
        self.client_ca_file = directory / "client-ca.crt"
        self.client_ca_file.write_bytes(self.cluster_ca.cert_pem)
        self.requestheader_ca_file = directory / "requestheader-ca.crt"
        self.rotate_requestheader(now=now, ca=cas.get("requestheader"))

    def rotate_requestheader(self, *, now: datetime, ca: CertKey | None = None) -> None:
        self.requestheader_ca = ca or make_ca("sandbox-front-proxy-ca", now=now)
        self.requestheader_ca_file.write_bytes(self.requestheader_ca.cert_pem)
        self.front_proxy: CertKey = issue(
            self.requestheader_ca, FRONT_PROXY_CN, now=now, client=True
        )
        self.front_proxy_cert, self.front_proxy_key = self.front_proxy.write(
            self.dir, "front-proxy-client"
        )

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.serving_cert, self.serving_key)
        ctx.load_verify_locations(cadata=self.cluster_ca.cert_pem.decode())
        ctx.verify_mode = ssl.CERT_OPTIONAL  # client certificates authenticate when present
        return ctx
