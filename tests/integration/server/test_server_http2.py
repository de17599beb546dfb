"""HTTP/2 (ALPN ``h2``) on the server's one TLS port, beside HTTP/1.1.

An h2 client (httpx) multiplexes reads, writes and a watch over one connection; flow control
is exercised both ways (an answer larger than the client's stream window, a request body
larger than the server's); kubectl, which negotiates h2 whenever the server offers it, runs
get, create and ``get -w``. The server's own count of HTTP/2 connections and streams shows
the protocol really used.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.errors import ErrorCodes
from h2.events import ConnectionTerminated, DataReceived, ResponseReceived, StreamEnded, StreamReset
from h2.settings import SettingCodes, Settings
from server_harness import ServerThread

from kubeloop.server import http2
from kubeloop.server.app import ServerConfig
from kubeloop.server.http2 import Http2Server
from kubeloop.testing.polling import eventually_blocking

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
KUBECTLS = sorted({path for path in (shutil.which("kubectl"), "/usr/lib/google-cloud-sdk/bin/kubectl.1.31",
                                      "/usr/lib/google-cloud-sdk/bin/kubectl.1.33",
                                      *os.environ.get("KUBELOOP_KUBECTL", "").split(os.pathsep))
                   if path and Path(path).exists()})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    thread = ServerThread(ServerConfig(data_dir=tmp_path_factory.mktemp("h2"), port=0, memory=True))
    try:
        yield thread
    finally:
        thread.stop()


def _h2(server: ServerThread) -> Http2Server:
    assert server.server.http2 is not None
    return server.server.http2


def _client(server: ServerThread, http2: bool = True) -> httpx.AsyncClient:
    context = ssl.create_default_context(cafile=server.ca_file)
    return httpx.AsyncClient(http2=http2, http1=not http2, verify=context, base_url=server.url,
                             headers={"Authorization": f"Bearer {server.token}"}, timeout=30)


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)



def test_requests_and_a_watch_share_one_connection(server: ServerThread) -> None:
    served = _h2(server).streams_served

    async def scenario() -> tuple[list[httpx.Response], list[dict[str, Any]], int]:
        async with _client(server) as client:
            # Opens the connection; every request below is a stream on it.
            first = await client.get("/version")
            events: list[dict[str, Any]] = []
            watching = asyncio.Event()

            async def watch() -> None:
                async with client.stream("GET", f"{CONFIGMAPS}?watch=1&fieldSelector=metadata.name%3Dmux"
                                                 "&timeoutSeconds=30") as stream:
                    assert stream.http_version == "HTTP/2"
                    watching.set()
                    async for line in stream.aiter_lines():
                        events.append(orjson.loads(line))
                        if events[-1]["type"] == "DELETED":
                            return

            watcher = asyncio.create_task(watch())
            await watching.wait()
            connections = len(_h2(server).connections)
            # Concurrent streams: a read, a list and a write at once, the watch still open.
            answers = list(await asyncio.gather(
                client.get("/api/v1/namespaces/default"),
                client.get("/api/v1/namespaces"),
                client.post(CONFIGMAPS, json={"metadata": {"name": "mux"}, "data": {"a": "1"}}),
            ))
            answers.append(await client.delete(f"{CONFIGMAPS}/mux"))
            await asyncio.wait_for(watcher, 30)
            return [first, *answers], events, connections

    answers, events, connections = _run(scenario())
    assert [a.http_version for a in answers] == ["HTTP/2"] * 5
    assert [a.status_code for a in answers] == [200, 200, 200, 201, 200]
    assert answers[1].json()["metadata"]["name"] == "default"
    assert {"default", "kube-system"} <= {i["metadata"]["name"] for i in answers[2].json()["items"]}
    assert connections == 1
    # Each event was flushed as it happened: the watch saw the write made while it was open.
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    assert events[0]["object"]["data"] == {"a": "1"}
    # Six streams, five answered in full (the watch was left by the client, as httpx leaves one).
    eventually_blocking(lambda: _h2(server).streams_served >= served + 5, what="every stream answered over HTTP/2",
                        timeout=10, interval=0.02)


def test_large_bodies_both_ways(server: ServerThread) -> None:
    # 400 KB of data: the POST body is larger than the server's 256 KiB stream window, so the
    # client must wait for the server's WINDOW_UPDATEs.
    payload = "y" * 400_000

    async def scenario() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with _client(server) as client:
            created = await client.post(CONFIGMAPS, json={"metadata": {"name": "big"}, "data": {"p": payload}})
            plain = await client.get(CONFIGMAPS, headers={"Accept-Encoding": "identity"})
            packed = await client.get(CONFIGMAPS, headers={"Accept-Encoding": "gzip"})
            await client.delete(f"{CONFIGMAPS}/big")
            return created, plain, packed

    created, plain, packed = _run(scenario())
    assert created.status_code == 201 and created.http_version == "HTTP/2"
    assert created.json()["data"]["p"] == payload
    assert "content-encoding" not in plain.headers and len(plain.content) > 400_000
    big = [i for i in plain.json()["items"] if i["metadata"]["name"] == "big"]
    assert big[0]["data"]["p"] == payload
    # gzip applies over HTTP/2 as over HTTP/1.1 (httpx unpacks it).
    assert packed.headers["content-encoding"] == "gzip" and packed.headers["vary"] == "Accept-Encoding"
    assert packed.json()["items"] == plain.json()["items"]
    assert len(gzip.compress(plain.content)) < 400_000


def test_http1_clients_are_served_on_the_same_port(server: ServerThread) -> None:
    async def scenario() -> httpx.Response:
        async with _client(server, http2=False) as client:
            return await client.get("/api/v1/namespaces/default")

    before = _h2(server).streams_served
    answer = _run(scenario())
    assert answer.http_version == "HTTP/1.1" and answer.status_code == 200
    assert _h2(server).streams_served == before


def _watchers(server: ServerThread) -> int:
    state = server.server.state
    assert state is not None
    return int(server.run(lambda: len(state.watchers)))


class _BareClient:
    """A bare h2 client on a socket, for what httpx does not do: a tiny receive window, and
    resetting a stream it stops reading (as Go clients do, with CANCEL)."""

    def __init__(self, server: ServerThread, tls: ssl.SSLSocket, window: int = 65535) -> None:
        self.server = server
        self.tls = tls
        assert tls.selected_alpn_protocol() == "h2"
        self.h2 = H2Connection(H2Configuration(client_side=True))
        self.h2.local_settings = Settings(client=True, initial_values={SettingCodes.INITIAL_WINDOW_SIZE: window})
        self.h2.initiate_connection()
        self.tls.sendall(self.h2.data_to_send())
        self.bodies: dict[int, bytes] = {}
        self.statuses: dict[int, bytes] = {}
        self.ended: set[int] = set()

    def send(self, stream_id: int, path: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        port = self.server.server.port
        self.h2.send_headers(stream_id, [(":method", "GET"), (":scheme", "https"), (":authority", f"127.0.0.1:{port}"),
                                         (":path", path), ("authorization", f"Bearer {self.server.token}"), *headers],
                             end_stream=True)
        self.tls.sendall(self.h2.data_to_send())

    def until(self, stream_id: int, ended: bool) -> bytes:
        """Read frames (giving back every window as data is read) until the stream's headers,
        or its end, arrived; returns the status."""
        status = b""
        done = False
        while not done:
            data = self.tls.recv(65536)
            assert data, "connection closed by the server"
            for event in self.h2.receive_data(data):
                if isinstance(event, ResponseReceived):
                    self.statuses[event.stream_id] = dict(event.headers)[b":status"]
                if isinstance(event, StreamEnded):
                    self.ended.add(event.stream_id)
                if isinstance(event, ResponseReceived) and event.stream_id == stream_id:
                    status = dict(event.headers)[b":status"]
                    done = done or not ended
                elif isinstance(event, DataReceived):
                    self.bodies[event.stream_id] = self.bodies.get(event.stream_id, b"") + event.data
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, StreamEnded) and event.stream_id == stream_id:
                    done = True
                elif isinstance(event, StreamReset) and event.stream_id == stream_id:
                    raise AssertionError(f"stream {stream_id} reset by the server: {event.error_code!r}")
            self.tls.sendall(self.h2.data_to_send())
        return status


def _bare(server: ServerThread) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=server.ca_file)
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection(("127.0.0.1", server.server.port), timeout=30)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def _watchers(server: ServerThread) -> int:
    state = server.server.state
    assert state is not None
    return int(server.run(lambda: len(state.watchers)))


def test_answers_wait_for_the_clients_window(server: ServerThread) -> None:
    async def make() -> None:
        async with _client(server) as client:
            for i in range(4):
                body = {"metadata": {"name": f"window-{i}"}, "data": {"p": "z" * 50_000}}
                assert (await client.post(CONFIGMAPS, json=body)).status_code == 201

    _run(make())
    with _bare(server) as tls:
        # A 1 KiB stream window: the 200 KB list leaves in some 200 window-sized pieces.
        client = _BareClient(server, tls, window=1024)
        client.send(1, CONFIGMAPS, (("accept-encoding", "identity"),))
        assert client.until(1, ended=True) == b"200"
        names = {i["metadata"]["name"] for i in orjson.loads(client.bodies[1])["items"]}
    assert {f"window-{i}" for i in range(4)} <= names


def test_a_reset_watch_stream_ends_its_watcher(server: ServerThread) -> None:
    with _bare(server) as tls:
        client = _BareClient(server, tls)
        client.send(1, f"{CONFIGMAPS}?watch=1&timeoutSeconds=300")
        assert client.until(1, ended=False) == b"200"
        eventually_blocking(lambda: _watchers(server) == 1, what="the watch to start", timeout=10, interval=0.02)
        client.h2.reset_stream(1, ErrorCodes.CANCEL)
        tls.sendall(client.h2.data_to_send())
        eventually_blocking(lambda: _watchers(server) == 0, what="the watch to end on RST_STREAM", timeout=10,
                            interval=0.02)
        # The connection outlives the stream.
        client.send(3, "/version")
        assert client.until(3, ended=True) == b"200"
        assert orjson.loads(client.bodies[3])["major"] == "1"


def test_idle_connections_get_goaway(server: ServerThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http2, "IDLE_TIMEOUT", 0.2)
    with _bare(server) as tls:
        client = _BareClient(server, tls)
        client.send(1, "/version")
        assert client.until(1, ended=True) == b"200"
        terminated = []
        while not terminated:
            data = tls.recv(65536)
            assert data, "closed without GOAWAY"
            terminated = [e for e in client.h2.receive_data(data) if isinstance(e, ConnectionTerminated)]
        assert terminated[0].error_code == ErrorCodes.NO_ERROR
        assert terminated[0].last_stream_id == 1


def test_a_malformed_request_is_refused_on_its_own_stream(server: ServerThread) -> None:
    # Go's server answers a bad request header block with RST_STREAM PROTOCOL_ERROR and keeps the
    # connection; the good requests written in the same packet are all answered.
    with _bare(server) as tls:
        client = _BareClient(server, tls)
        client.h2.config.validate_outbound_headers = False  # so that it sends what it is told
        client.h2.config.normalize_outbound_headers = False
        port = server.server.port
        for stream_id, extra in ((1, (b"connection", b"close")), (3, (b"x-ok", b"1")), (5, (b"x-ok", b"2"))):
            client.h2.send_headers(stream_id, [(b":method", b"GET"), (b":scheme", b"https"),
                                               (b":authority", f"127.0.0.1:{port}".encode()), (b":path", b"/version"),
                                               (b"authorization", f"Bearer {server.token}".encode()), extra],
                                   end_stream=True)
        tls.sendall(client.h2.data_to_send())
        with pytest.raises(AssertionError, match=r"stream 1 reset by the server: <ErrorCodes.PROTOCOL_ERROR: 1>"):
            client.until(1, ended=True)
        assert client.until(3, ended=True) == b"200"
        if 5 not in client.ended:
            client.until(5, ended=True)
        assert client.statuses[5] == b"200"
        assert orjson.loads(client.bodies[3])["major"] == orjson.loads(client.bodies[5])["major"] == "1"


def _kubectl(binary: str, server: ServerThread, tmp_path: Path, *args: str) -> str:
    done = subprocess.run([binary, "--kubeconfig", str(server.server.kubeconfig_path), "--cache-dir",
                           str(tmp_path / "cache"), *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_speaks_http2(server: ServerThread, tmp_path: Path, binary: str) -> None:
    name = f"kubectl-{Path(binary).name.replace('.', '-')}"
    before = _h2(server).streams_served
    assert "kube-system" in _kubectl(binary, server, tmp_path, "get", "namespaces")
    assert _h2(server).streams_served > before, "kubectl did not negotiate HTTP/2"
    watch = subprocess.Popen([binary, "--kubeconfig", str(server.server.kubeconfig_path), "--cache-dir",
                              str(tmp_path / "cache"), "get", "configmaps", "-w", "-o", "name"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watch.stdout is not None
        assert watch.stdout.readline().startswith("configmap/")  # the watch's initial list
        eventually_blocking(lambda: len(_h2(server).connections) >= 1, what="kubectl's watch on an HTTP/2 connection",
                            timeout=10, interval=0.02)
        # apply (JSON whatever the kubectl) rather than create (protobuf from kubectl 1.32 on).
        manifest = tmp_path / "cm.json"
        manifest.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                                           "data": {"a": "b"}}))
        assert f"configmap/{name} created" in _kubectl(binary, server, tmp_path, "apply", "-f", str(manifest))
        while (line := watch.stdout.readline()) and line.strip() != f"configmap/{name}":
            pass
        assert line.strip() == f"configmap/{name}"
    finally:
        watch.terminate()
        watch.communicate(timeout=30)
    # The connection dropped under the watch: its handler is ended, not left waiting for events.
    eventually_blocking(lambda: _watchers(server) == 0, what="kubectl's watch to end with its connection", timeout=10,
                        interval=0.02)
    assert _kubectl(binary, server, tmp_path, "get", "configmap", name, "-o", "jsonpath={.data.a}") == "b"
    _kubectl(binary, server, tmp_path, "delete", "configmap", name)
