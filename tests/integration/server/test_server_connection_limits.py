"""The API server cuts off clients that trickle a header, and caps its open connections (issue
#18 item 6; kube-apiserver's ``ReadHeaderTimeout``). The bounds are shortened for the test."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from server_harness import ServerThread, raw_request

from kubeloop.server import connection_limits
from kubeloop.server.app import ServerConfig

WAIT = 20.0
"""How long a test waits for the server to act (far above the shortened bounds)."""


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerThread]:
    monkeypatch.setattr(connection_limits, "HEADER_TIMEOUT", 0.5)
    monkeypatch.setattr(connection_limits, "MAX_CONNECTIONS", 3)
    thread = ServerThread(ServerConfig(data_dir=tmp_path / "data", port=0, memory=True))
    try:
        yield thread
    finally:
        thread.stop()


def connect(server: ServerThread) -> ssl.SSLSocket:
    """A TLS connection speaking HTTP/1.1 (the handshake done)."""
    context = ssl.create_default_context(cafile=server.ca_file)
    context.set_alpn_protocols(["http/1.1"])
    address = urlsplit(server.url)
    raw = socket.create_connection((address.hostname, address.port), timeout=WAIT)
    return context.wrap_socket(raw, server_hostname=address.hostname)


def closed_by_server(conn: ssl.SSLSocket) -> bool:
    """Whether the server ends the connection before :data:`WAIT` passes."""
    try:
        return conn.recv(1024) == b""
    except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_a_trickled_header_is_cut_off(server: ServerThread) -> None:
    with connect(server) as conn:
        conn.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\n")  # never finished
        assert closed_by_server(conn)


def test_a_complete_request_is_not_cut_off(server: ServerThread) -> None:
    with connect(server) as conn:
        conn.sendall(f"GET /readyz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode())
        assert conn.recv(1024).startswith(b"HTTP/1.1 200")
        conn.settimeout(1.5)  # three header deadlines: the kept-alive connection stays open
        with pytest.raises(TimeoutError):
            conn.recv(1024)


def test_connections_over_the_cap_are_refused(server: ServerThread) -> None:
    limits = server.server.connection_limits
    assert limits is not None
    assert limits.cap == 3
    held = [connect(server) for _ in range(3)]
    try:
        for conn in held:
            conn.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
            conn.recv(1024)
        extra = connect(server)
        with extra:
            assert closed_by_server(extra)
        assert limits.refused == 1
    finally:
        for conn in held:
            conn.close()
    # Once the held ones are gone, new connections are served again.
    assert raw_request(server, "GET", "/readyz")[0] == 200
