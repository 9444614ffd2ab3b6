"""A tiny PKI for security tests, on top of the sandbox's certificate helpers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from sandbox import certs

NOW = dt.datetime.now(dt.UTC)


class Issued(certs.CertKey):
    """A certificate and key, with the forms the security tests hand around."""

    @property
    def pem(self) -> bytes:
        return self.cert_pem

    @property
    def der(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.DER)

    def write(self, directory: Path, stem: str) -> tuple[str, str]:  # type: ignore[override]
        cert, key = super().write(directory, stem)
        return str(cert), str(key)


def make_ca(cn: str) -> Issued:
    ca = certs.make_ca(cn, now=NOW)
    return Issued(ca.cert, ca.key)


def issue(
    ca: Issued,
    cn: str,
    *,
    orgs: tuple[str, ...] = (),
    server: bool = False,
    not_after: dt.datetime | None = None,
) -> Issued:
    """A client certificate (CN=user, O=groups), or a server one for localhost/127.0.0.1."""
    leaf = certs.issue(
        ca,
        cn,
        now=NOW,
        orgs=orgs,
        hosts=("localhost", "127.0.0.1") if server else (),
        server=server,
        client=not server,
        not_after=not_after,
    )
    return Issued(leaf.cert, leaf.key)
