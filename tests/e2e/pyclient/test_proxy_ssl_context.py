"""The official Python client's ``proxy_ssl_context`` case (upstream
``kubernetes/e2e_test/test_issue_2387_proxy_ssl_context.py``), restated with the embedded
cluster as the HTTPS destination behind an HTTPS forward proxy (CONNECT tunnel) that has its own
self-signed certificate: the client verifies the API server with the kubeconfig's CA and the
proxy only through ``proxy_ssl_context``."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from kubernetes import client

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def relay(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()


def tunnel(raw: socket.socket, context: ssl.SSLContext) -> None:
    """Serve one proxy connection: TLS with the proxy's certificate, then CONNECT host:port."""
    try:
        conn = context.wrap_socket(raw, server_side=True)
    except (ssl.SSLError, OSError):
        raw.close()  # the client refused our certificate
        return
    request = b""
    while not request.endswith(b"\r\n\r\n"):
        chunk = conn.recv(1)
        if not chunk:
            conn.close()
            return
        request += chunk
    method, target, _ = request.split(b"\r\n", 1)[0].decode().split(" ")
    if method != "CONNECT":
        conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
        conn.close()
        return
    host, port = target.rsplit(":", 1)
    upstream = socket.create_connection((host, int(port)), timeout=10)
    conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
    threading.Thread(target=relay, args=(conn, upstream), daemon=True).start()
    threading.Thread(target=relay, args=(upstream, conn), daemon=True).start()


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An HTTPS CONNECT proxy on a free port: its URL and its (self-signed) certificate."""
    openssl = shutil.which("openssl")
    assert openssl, "openssl is needed to make the proxy's certificate"
    directory = tmp_path_factory.mktemp("proxy")
    cert, key = directory / "proxy.crt", directory / "proxy.key"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=proxy.test", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=tunnel, args=(raw, context), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield f"https://127.0.0.1:{port}", cert
    listener.close()


def through_proxy(configuration: client.Configuration, proxy_url: str) -> client.Configuration:
    configuration.proxy = proxy_url
    assert configuration.verify_ssl and configuration.ssl_ca_cert, "the kubeconfig must verify the server"
    return configuration


def test_without_proxy_ssl_context_fails_when_proxy_ca_differs(configuration: client.Configuration,
                                                               proxy: tuple[str, Path]) -> None:
    with client.ApiClient(through_proxy(configuration, proxy[0])) as api_client, \
            pytest.raises(urllib3.exceptions.MaxRetryError) as failed:
        client.VersionApi(api_client).get_code()
    assert "CERTIFICATE_VERIFY_FAILED" in str(failed.value)


def test_with_proxy_ssl_context_succeeds_when_proxy_ca_differs(configuration: client.Configuration,
                                                               proxy: tuple[str, Path]) -> None:
    configured = through_proxy(configuration, proxy[0])
    configured.proxy_ssl_context = ssl.create_default_context(cafile=str(proxy[1]))
    with client.ApiClient(configured) as api_client:
        version = client.VersionApi(api_client).get_code()
    assert (version.major, version.minor) == ("1", "33")
    assert version.git_version.startswith("v1.33.")
