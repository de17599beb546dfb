"""The webhook's self-signed CA and serving certificate, and the Secret that holds them.

As OpenKruise's webhook does without cert-manager (kruise ``pkg/webhook/util/generator``
``SelfSignedCertGenerator``, ``writer/certwriter.go`` ``validCert``, ``writer/secret.go``): a CA
of its own signs a serving certificate for the Service's DNS names; both live in a Secret in
the install namespace under kruise's keys (``ca-key.pem``, ``ca-cert.pem``, ``key.pem`` and
``cert.pem``, the last two also as ``tls.key`` / ``tls.crt``). A certificate is kept while it
chains to the CA, matches its key, holds every name and is valid for six more months; else a new
one is issued, by the same CA while that CA is valid for one more year.

Pure functions of their inputs and the time given; keys are ECDSA P-256 (upstream uses RSA 2048,
which nothing here depends on, and which costs a tenth of a second per key on a small machine).
"""

from __future__ import annotations

import base64
import datetime
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_KEY = "ca-key.pem"
CA_CERT = "ca-cert.pem"
SERVER_KEY = "key.pem"
SERVER_CERT = "cert.pem"
SERVER_KEY_TLS = "tls.key"
SERVER_CERT_TLS = "tls.crt"

CA_COMMON_NAME = "webhook-cert-ca"
VALIDITY = datetime.timedelta(days=3650)
"""How long the CA and a serving certificate are issued for (kruise: ten years)."""
RENEW_BEFORE = datetime.timedelta(days=182)
"""A serving certificate expiring sooner than this is replaced (kruise: six months)."""
CA_REUSE_MARGIN = datetime.timedelta(days=365)
"""A CA expiring sooner than this is not reused to sign a new certificate (kruise: one year)."""


@dataclass(frozen=True)
class Artifacts:
    """PEM bytes of the CA and of the serving certificate."""

    ca_key: bytes
    ca_cert: bytes
    key: bytes
    cert: bytes


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def _load(key_pem: bytes, cert_pem: bytes) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate] | None:
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
        cert = x509.load_pem_x509_certificate(cert_pem)
    except (ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    if key.public_key().public_numbers() != getattr(cert.public_key(), "public_numbers", lambda: None)():
        return None
    return key, cert


def _new_ca(now: datetime.datetime) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_COMMON_NAME)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _usable_ca(artifacts: Artifacts | None, now: datetime.datetime) -> tuple[ec.EllipticCurvePrivateKey,
                                                                              x509.Certificate] | None:
    if artifacts is None:
        return None
    loaded = _load(artifacts.ca_key, artifacts.ca_cert)
    if loaded is None or loaded[1].not_valid_after_utc < now + CA_REUSE_MARGIN:
        return None
    return loaded


def issue(dns_names: Sequence[str], now: datetime.datetime, previous: Artifacts | None = None) -> Artifacts:
    """A serving certificate for ``dns_names`` (the first is its common name), signed by the CA
    of ``previous`` when that CA is still good for a year, else by a new CA."""
    ca = _usable_ca(previous, now) or _new_ca(now)
    ca_key, ca_cert = ca
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(secrets.randbits(63) + 1)
        .not_valid_before(ca_cert.not_valid_before_utc)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in ["localhost", *dns_names]]),
                       critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return Artifacts(_key_pem(ca_key), ca_cert.public_bytes(serialization.Encoding.PEM),
                     _key_pem(key), cert.public_bytes(serialization.Encoding.PEM))


def is_valid(artifacts: Artifacts | None, dns_names: Sequence[str], now: datetime.datetime) -> bool:
    """Whether ``artifacts`` can keep serving: key and certificate match, the CA signed it, it
    holds every one of ``dns_names`` and stays valid for :data:`RENEW_BEFORE`."""
    if artifacts is None:
        return False
    server = _load(artifacts.key, artifacts.cert)
    ca = _load(artifacts.ca_key, artifacts.ca_cert)
    if server is None or ca is None:
        return False
    cert, ca_cert = server[1], ca[1]
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return False
    if cert.not_valid_before_utc > now or cert.not_valid_after_utc < now + RENEW_BEFORE:
        return False
    try:
        names = set(cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                    .get_values_for_type(x509.DNSName))
    except x509.ExtensionNotFound:
        return False
    return set(dns_names) <= names


def to_secret_data(artifacts: Artifacts) -> dict[str, str]:
    """The Secret's ``data`` (base64), under kruise's keys."""

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return {CA_KEY: b64(artifacts.ca_key), CA_CERT: b64(artifacts.ca_cert),
            SERVER_KEY: b64(artifacts.key), SERVER_KEY_TLS: b64(artifacts.key),
            SERVER_CERT: b64(artifacts.cert), SERVER_CERT_TLS: b64(artifacts.cert)}


def from_secret(secret: Mapping[str, Any]) -> Artifacts | None:
    """The artifacts a Secret holds, ``None`` when any of them is missing or not base64."""
    data = secret.get("data")
    if not isinstance(data, Mapping):
        return None
    try:
        values = [base64.b64decode(str(data[key]), validate=True) for key in (CA_KEY, CA_CERT, SERVER_KEY, SERVER_CERT)]
    except (KeyError, ValueError):
        return None
    return Artifacts(*values)
