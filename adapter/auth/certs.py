"""Client certificates: which CA bundle issued one, and who it names (x509.go's verifier).

The TLS layer (`adapter/server/tls.py`) requests a client certificate, optionally, and verifies
it against the union of the request-header CA and the client CA (`client_cas()`), so a peer
certificate reaching us chains to one of them. Which one matters: only the request-header CA
makes `X-Remote-*` headers trustworthy. Python 3.11's ssl module exposes the leaf only, so we
check here that the leaf is directly issued by a CA of the bundle, within its validity period,
and usable for client authentication; results are cached by certificate bytes, because the
kube-aggregator reuses one certificate for every request.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


class CertificateError(ValueError):
    """A PEM bundle cannot be read, or a client certificate does not verify."""


@dataclass(frozen=True)
class CABundle:
    """A PEM bundle of CA certificates, parsed once."""

    pem: bytes
    certs: tuple[x509.Certificate, ...]

    @classmethod
    def from_pem(cls, pem: bytes, *, source: str) -> CABundle:
        """Parse `pem`; `source` names it (a file or ConfigMap key) in the error."""
        try:
            certs = tuple(x509.load_pem_x509_certificates(pem))
        except ValueError as exc:
            raise CertificateError(f"{source}: no valid PEM certificate found") from exc
        return cls(pem=pem, certs=certs)


@dataclass(frozen=True)
class CertIdentity:
    """The user a verified client certificate names: CN is the user, O the groups."""

    common_name: str
    organizations: tuple[str, ...]


@dataclass(frozen=True)
class _Checked:
    identity: CertIdentity | None  # None: not issued by this bundle or not for client auth
    not_before: datetime
    not_after: datetime


class ClientCertVerifier:
    """Checks peer certificates against one CA bundle, caching per certificate."""

    def __init__(self, bundle: CABundle, *, max_entries: int = 1024) -> None:
        self.bundle = bundle
        self._max = max_entries
        self._checked: OrderedDict[bytes, _Checked] = OrderedDict()

    def verify(self, der: bytes, *, now: datetime) -> CertIdentity:
        """The identity of `der` if a CA of the bundle issued it and it is valid at `now`.

        Raises CertificateError otherwise (the reason is safe to log: no certificate content).
        """
        checked = self._checked.get(der)
        if checked is None:
            checked = self._check(der)
            self._checked[der] = checked
            while len(self._checked) > self._max:
                self._checked.popitem(last=False)
        if checked.identity is None:
            raise CertificateError("certificate signed by unknown authority")
        if not checked.not_before <= now <= checked.not_after:
            raise CertificateError("certificate has expired or is not yet valid")
        return checked.identity

    def _check(self, der: bytes) -> _Checked:
        try:
            cert = x509.load_der_x509_certificate(der)
        except ValueError as exc:
            raise CertificateError("malformed client certificate") from exc
        window = (cert.not_valid_before_utc, cert.not_valid_after_utc)
        if not _issued_by_any(cert, self.bundle.certs) or not _for_client_auth(cert):
            return _Checked(None, *window)
        return _Checked(_identity(cert), *window)


def _issued_by_any(cert: x509.Certificate, cas: tuple[x509.Certificate, ...]) -> bool:
    for ca in cas:
        try:
            cert.verify_directly_issued_by(ca)
        except (ValueError, TypeError, InvalidSignature):
            continue
        return True
    return False


def _for_client_auth(cert: x509.Certificate) -> bool:
    # like Go's x509 verify with ExtKeyUsageClientAuth: no EKU extension means any usage
    try:
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True
    wanted = (ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE)
    return any(oid in usages for oid in wanted)


def _identity(cert: x509.Certificate) -> CertIdentity:
    def values(oid: x509.ObjectIdentifier) -> tuple[str, ...]:
        return tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(oid))

    names = values(NameOID.COMMON_NAME)
    return CertIdentity(
        common_name=names[0] if names else "", organizations=values(NameOID.ORGANIZATION_NAME)
    )
