"""Serving credentials: a private CA, a serving certificate, a bearer token, the service-account
signing key, and the kubeconfig.

On first start a CA, a token and an RSA service-account signing key (``sa.key``, as kubeadm's)
are made and kept in the data directory (mode 0600), so clients configured once, and tokens
issued once, keep working across restarts; the serving certificate is re-issued from that CA on
every start, for the names and addresses of the host it binds. kubectl only sends kubeconfig
credentials over TLS, hence HTTPS even on loopback.

The kubeconfig authenticates as ``kubernetes-admin`` (group ``system:masters``) with the token,
or, with ``client_cert``, with a client certificate of that subject issued by the CA (as kind's
kubeconfig does); the server verifies client certificates against the same CA.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubeloop.server.private_files import private_directory

CA_CERT_FILE = "ca.crt"
CA_KEY_FILE = "ca.key"
SERVER_CERT_FILE = "server.crt"
SERVER_KEY_FILE = "server.key"
TOKEN_FILE = "token"
SA_KEY_FILE = "sa.key"
KUBECONFIG_FILE = "kubeconfig"
_CA_DAYS = 3650
_SERVING_DAYS = 365


@dataclass(frozen=True)
class Credentials:
    """Paths of the PEM files and the bearer token clients must present."""

    ca_cert: Path
    server_cert: Path
    server_key: Path
    token: str
    service_account_key: Path | None = None
    """The PEM RSA key that signs service-account tokens."""


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(path, 0o600)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _new_ca(directory: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"kubeloop-ca@{secrets.token_hex(4)}")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=_CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    _write_private(directory / CA_KEY_FILE, _key_pem(key))
    _write_private(directory / CA_CERT_FILE, cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _load_ca(directory: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    try:
        cert = x509.load_pem_x509_certificate((directory / CA_CERT_FILE).read_bytes())
        key = serialization.load_pem_private_key((directory / CA_KEY_FILE).read_bytes(), password=None)
    except (OSError, ValueError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    if cert.not_valid_after_utc < datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=30):
        return None
    return cert, key


def subject_alt_names(host: str) -> list[x509.GeneralName]:
    """SANs of the serving certificate: localhost, the loopback addresses, and the bound host."""
    dns = {"localhost"}
    addresses = {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")}
    for candidate in (host, socket.gethostname()):
        try:
            address = ipaddress.ip_address(candidate)
        except ValueError:
            if candidate:
                dns.add(candidate)
        else:
            if not address.is_unspecified:
                addresses.add(address)
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in sorted(dns)]
    names += [x509.IPAddress(a) for a in sorted(addresses, key=str)]
    return names


def ensure_credentials(directory: Path, host: str) -> Credentials:
    """Load or create the CA and token in ``directory``; issue a fresh serving certificate."""
    private_directory(directory)
    loaded = _load_ca(directory)
    ca_cert, ca_key = loaded if loaded is not None else _new_ca(directory)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubeloop-apiserver")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=_SERVING_DAYS))
            .add_extension(x509.SubjectAlternativeName(subject_alt_names(host)), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write_private(directory / SERVER_KEY_FILE, _key_pem(key))
    _write_private(directory / SERVER_CERT_FILE, cert.public_bytes(serialization.Encoding.PEM))
    token_path = directory / TOKEN_FILE
    try:
        token = token_path.read_text().strip()
    except OSError:
        token = ""
    if not token:
        token = secrets.token_urlsafe(32)
        _write_private(token_path, token.encode())
    ensure_service_account_key(directory)
    return Credentials(directory / CA_CERT_FILE, directory / SERVER_CERT_FILE, directory / SERVER_KEY_FILE, token,
                       directory / SA_KEY_FILE)


def ensure_service_account_key(directory: Path) -> rsa.RSAPrivateKey:
    """The service-account signing key of ``directory``, created (0600) the first time."""
    path = directory / SA_KEY_FILE
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError):
        key = None
    if isinstance(key, rsa.RSAPrivateKey):
        return key
    # 2048 bits, e = 65537: what kubeadm makes for sa.key.
    fresh = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write_private(path, _key_pem(fresh))
    return fresh


def load_service_account_key(credentials: Credentials) -> rsa.RSAPrivateKey:
    path = credentials.service_account_key
    if path is None:
        raise ValueError("no service-account signing key in these credentials")
    return ensure_service_account_key(path.parent)


def issue_client_certificate(credentials: Credentials, common_name: str,
                             organizations: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
    """A client certificate (PEM) and its key (PEM) for ``common_name`` / ``organizations``,
    signed by the cluster CA: the user x509 authentication names (CN user, O groups)."""
    ca_cert = x509.load_pem_x509_certificate(credentials.ca_cert.read_bytes())
    ca_key = serialization.load_pem_private_key((credentials.ca_cert.parent / CA_KEY_FILE).read_bytes(), password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the cluster CA key is not an EC key")
    key = ec.generate_private_key(ec.SECP256R1())
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(x509.Name(attributes))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=_SERVING_DAYS))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=False,
                                         content_commitment=False, data_encipherment=False, key_agreement=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def server_url(host: str, port: int) -> str:
    """The URL clients use: loopback when bound to every address; IPv6 in brackets."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"https://{host}:{port}"


ADMIN_NAME = "kubernetes-admin"
ADMIN_GROUP = "system:masters"


def write_kubeconfig(path: Path, url: str, credentials: Credentials, name: str = "kubeloop",
                     client_cert: bool = False) -> None:
    """(Re)write a kubeconfig for ``url`` with the CA data and the token (or, with
    ``client_cert``, a fresh admin client certificate), readable by the owner only."""
    ca_data = base64.b64encode(credentials.ca_cert.read_bytes()).decode()
    user: dict[str, str] = {"token": credentials.token}
    if client_cert:
        cert_pem, key_pem = issue_client_certificate(credentials, ADMIN_NAME, (ADMIN_GROUP,))
        user = {"client-certificate-data": base64.b64encode(cert_pem).decode(),
                "client-key-data": base64.b64encode(key_pem).decode()}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url, "certificate-authority-data": ca_data}}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }
    _write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
