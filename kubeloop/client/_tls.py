"""TLS contexts built from a :class:`ClientConfig`.

The standard library loads client certificates only from files, so PEM data from a
kubeconfig (``client-certificate-data``) or an exec plugin is written to a private
temporary directory, loaded, and deleted straight away.
"""

from __future__ import annotations

import os
import ssl
import tempfile

from kubeloop.client._config import ClientConfig
from kubeloop.client._errors import ConfigError


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc}") from exc


def load_client_certificate(context: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """Install a client certificate given as PEM bytes into ``context``."""
    with tempfile.TemporaryDirectory(prefix="kubeloop-tls-") as tmp:
        cert_path = os.path.join(tmp, "client.crt")
        key_path = os.path.join(tmp, "client.key")
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        try:
            context.load_cert_chain(cert_path, key_path)
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(f"invalid client certificate or key: {exc}") from exc


def build_ssl_context(config: ClientConfig) -> ssl.SSLContext | None:
    """The TLS context for ``config.server``, or ``None`` for a plain ``http://`` server.

    Trust: ``ca_data`` / ``ca_file`` alone when given (client-go's ``RootCAs`` holds only that
    pool), else the system store. ``insecure_skip_tls_verify`` turns verification off; combining
    it with a CA is a configuration error, as in client-go. The system store is read only when it
    is the trust: loading it cost 36-56 ms of CPU at every client's start (docs/decisions.md).
    """
    if not config.server.lower().startswith("https://"):
        return None
    ca = config.ca_data
    if ca is None and config.ca_file:
        ca = _read(config.ca_file, "certificate authority")
    if config.insecure_skip_tls_verify:
        if ca is not None:
            raise ConfigError("specifying a root certificates file with the insecure flag is not allowed")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ca is not None:
        try:
            context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=ca.decode("ascii", "replace"))
        except ssl.SSLError as exc:
            raise ConfigError(f"invalid certificate authority data: {exc}") from exc
    else:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    cert = config.client_cert_data
    if cert is None and config.client_cert_file:
        cert = _read(config.client_cert_file, "client certificate")
    key = config.client_key_data
    if key is None and config.client_key_file:
        key = _read(config.client_key_file, "client key")
    if (cert is None) != (key is None):
        raise ConfigError("a client certificate needs both a certificate and a key")
    if cert is not None and key is not None:
        load_client_certificate(context, cert, key)
    return context
