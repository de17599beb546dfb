"""Server CPU per request over HTTP/1.1 and HTTP/2, side by side (not a test).

Run: ``PYTHONPATH=. .venv/bin/python bench/http2.py [--requests 3000] [--rounds 2]``

Each server runs in a child process (so it has a core of this 2-core machine to itself) and
reports its own CPU time; the clients (httpx, 8 requests in flight) run in this process. The
figure is server CPU seconds per request, the one to compare on a shared machine. Rows:

- ``kubeloop`` -- the embedded API server answering ``GET`` of one ConfigMap (a real API
  request: authentication, routing, storage, encoding): over HTTP/1.1 with keep-alive, over
  HTTP/1.1 with a new TLS connection per request (what a Go client under load falls back to
  when its idle pool is short), and over HTTP/2 (one connection, every request a stream).
  HTTP/2 is measured with two clients: httpx, and a Go-like client (:class:`_GoLikeClient`,
  the header pattern of client-go, every field indexed in HPACK's dynamic table). With
  ``--baseline DIR`` the server of the checkout at DIR (e.g. ``git archive REV kubeloop | tar
  -x -C DIR``) is measured in the same run, each variant next to this checkout's.
- ``front`` -- the protocol layers alone, answering a fixed 1 KB JSON body: aiohttp over
  HTTP/1.1 (what the server used alone), the same aiohttp application behind
  ``kubeloop.server.http2`` over h2, and, when installed (``pip install hypercorn==0.18.0``;
  not a project dependency), hypercorn serving an ASGI callable over h11 and over h2.

Rounds alternate the variants, so that the machine's drift touches each alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import multiprocessing.connection
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import run_kube_server, spawn

from kubeloop.server.certs import ensure_credentials

try:
    from kubeloop.server.http2 import ALPN_PROTOCOLS, AlpnSwitch, Http2Server
except ImportError:  # a checkout from before HTTP/2: its HTTP/1.1 rows only
    ALPN_PROTOCOLS = ["http/1.1"]
    AlpnSwitch = Http2Server = None  # type: ignore[assignment,misc]

BODY = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"' + b"x" * 900 + b'"}}'
CONCURRENCY = 8
Endpoint = tuple[str, str, str]  # url, token, CA file


def _tls(data_dir: str) -> tuple[ssl.SSLContext, str, str, str]:
    credentials = ensure_credentials(Path(data_dir), "127.0.0.1")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(credentials.server_cert, credentials.server_key)
    context.set_alpn_protocols(ALPN_PROTOCOLS)
    return context, str(credentials.server_cert), str(credentials.server_key), str(credentials.ca_cert)


def _run_aiohttp_front(data_dir: str, conn: multiprocessing.connection.Connection) -> None:
    async def main() -> None:
        context, _, _, ca = _tls(data_dir)

        async def handle(_: web.Request) -> web.Response:
            return web.Response(body=BODY, content_type="application/json")

        app = web.Application()
        app.router.add_get("/", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        factory = runner.server
        assert factory is not None and Http2Server is not None and AlpnSwitch is not None
        http2 = Http2Server(factory)
        listener = await asyncio.get_running_loop().create_server(
            lambda: AlpnSwitch(factory, http2.protocol), "127.0.0.1", 0, ssl=context)
        port = listener.sockets[0].getsockname()[1]
        conn.send((f"https://127.0.0.1:{port}", "", ca))
        while await asyncio.get_running_loop().run_in_executor(None, conn.recv) == "cpu":
            conn.send(time.process_time())
        listener.close()
        http2.close()
        await runner.cleanup()

    asyncio.run(main())


def _run_hypercorn(data_dir: str, conn: multiprocessing.connection.Connection) -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    async def app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]})
        await send({"type": "http.response.body", "body": BODY})

    async def main() -> None:
        _, cert, key, ca = _tls(data_dir)
        config = Config()
        config.certfile, config.keyfile = cert, key
        config.bind = ["127.0.0.1:0"]
        config.alpn_protocols = ALPN_PROTOCOLS
        config.accesslog = None
        config.keep_alive_max_requests = 10**9  # its default GOAWAYs after 1,000 requests
        stop = asyncio.Event()
        config_port: list[int] = []
        # hypercorn binds itself; pick a free port first.
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            config_port.append(probe.getsockname()[1])
        config.bind = [f"127.0.0.1:{config_port[0]}"]
        task = asyncio.create_task(serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
        await asyncio.sleep(1.0)
        conn.send((f"https://127.0.0.1:{config_port[0]}", "", ca))
        while await asyncio.get_running_loop().run_in_executor(None, conn.recv) == "cpu":
            conn.send(time.process_time())
        stop.set()
        await task

    asyncio.run(main())


_CHECKOUT_SERVER = """
import asyncio, json, sys, time
from pathlib import Path

async def main():
    server = KubeServer(ServerConfig(Path(sys.argv[1]), port=0, memory=True))
    await server.start()
    print(json.dumps([server.url, server.credentials.token, str(server.credentials.ca_cert)]), flush=True)
    loop = asyncio.get_running_loop()
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "cpu":
        print(time.process_time(), flush=True)
    await server.stop()

asyncio.run(main())
"""


class _CheckoutServer:
    """The embedded server of another checkout (``--baseline DIR``) in a child process, driven
    over its stdin/stdout as the other children are over a pipe: the two versions are measured
    in the same run, rounds alternated, so that the machine's drift touches both alike."""

    def __init__(self, checkout: str, data_dir: str) -> None:
        # -P: with -c, Python would put the working directory (this checkout) first on the path.
        self._process = subprocess.Popen([sys.executable, "-P", "-c", _CHECKOUT_SERVER, data_dir], text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env={**os.environ, "PYTHONPATH": os.path.abspath(checkout)})
        assert self._process.stdout is not None and self._process.stdin is not None
        self._in, self._out = self._process.stdin, self._process.stdout
        url, token, ca = json.loads(self._out.readline())
        self.endpoint: Endpoint = (url, token, ca)

    def send(self, message: str) -> None:
        self._in.write(message + "\n")
        self._in.flush()

    def recv(self) -> float:
        return float(self._out.readline())

    def join(self, timeout: float) -> None:
        self._process.wait(timeout)


def _cpu(conn: Any) -> float:
    conn.send("cpu")
    value: float = conn.recv()
    return value


class _GoLikeClient(asyncio.Protocol):
    """An h2 client that frames requests as Go's ``http2.Transport`` does (client-go, kubectl):
    the same header fields on every request, each indexed in HPACK's dynamic table (so from the
    second request on a header block is mostly one-byte references; httpx instead sends
    ``authorization`` as a never-indexed Huffman literal each time), a 4 MiB stream window and
    window updates only when half a window is spent. ``CONCURRENCY`` streams in flight."""

    def __init__(self, authority: str, path: str, token: str, requests: int) -> None:
        from h2.config import H2Configuration
        from h2.connection import H2Connection
        from h2.settings import SettingCodes, Settings

        self._h2 = H2Connection(H2Configuration(client_side=True, header_encoding=None,
                                                validate_outbound_headers=False, normalize_outbound_headers=False,
                                                validate_inbound_headers=False))
        self._h2.local_settings = Settings(client=True, initial_values={SettingCodes.INITIAL_WINDOW_SIZE: 4 << 20,
                                                                        SettingCodes.ENABLE_PUSH: 0})
        self._headers = [(b":authority", authority.encode()), (b":method", b"GET"), (b":path", path.encode()),
                         (b":scheme", b"https"), (b"accept", b"application/json, */*"),
                         (b"user-agent", b"kubectl/v1.33.0 (linux/amd64) kubernetes/60a317e"),
                         *([(b"authorization", f"Bearer {token}".encode())] if token else []),
                         (b"kubectl-command", b"kubectl get"), (b"accept-encoding", b"gzip")]
        self._remaining = requests
        self._in_flight = 0
        self._transport: asyncio.Transport | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._h2.initiate_connection()
        self._h2.increment_flow_control_window(1 << 30)
        while self._in_flight < CONCURRENCY and self._remaining:
            self._send()
        self._transport.write(self._h2.data_to_send())  # type: ignore[union-attr]

    def _send(self) -> None:
        self._remaining -= 1
        self._in_flight += 1
        self._h2.send_headers(self._h2.get_next_available_stream_id(), self._headers, end_stream=True)

    def data_received(self, data: bytes) -> None:
        from h2.events import DataReceived, ResponseReceived, StreamEnded, StreamReset

        for event in self._h2.receive_data(data):
            if isinstance(event, ResponseReceived):
                status = dict(event.headers)[b":status"]
                if status != b"200" and not self.done.done():
                    self.done.set_exception(AssertionError(f"status {status!r}"))
            elif isinstance(event, DataReceived):
                self._h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, StreamEnded):
                self._in_flight -= 1
                if self._remaining:
                    self._send()
                elif not self._in_flight and not self.done.done():
                    self.done.set_result(None)
            elif isinstance(event, StreamReset) and not self.done.done():
                self.done.set_exception(AssertionError(f"stream reset: {event!r}"))
        if self._transport is not None and (out := self._h2.data_to_send()):
            self._transport.write(out)

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self.done.done():
            self.done.set_exception(ConnectionResetError(f"connection lost: {exc!r}"))


async def _measure_go_like(endpoint: Endpoint, path: str, requests: int) -> None:
    url, token, ca = endpoint
    context = ssl.create_default_context(cafile=ca)
    context.set_alpn_protocols(["h2"])
    host, port = url.removeprefix("https://").rsplit(":", 1)
    transport, client = await asyncio.get_running_loop().create_connection(
        lambda: _GoLikeClient(f"{host}:{port}", path, token, requests), host, int(port), ssl=context)
    try:
        await asyncio.wait_for(client.done, 120)
    finally:
        transport.close()


async def _measure(endpoint: Endpoint, path: str, requests: int, *, http2: bool | str, reuse: bool) -> None:
    if http2 == "go":
        return await _measure_go_like(endpoint, path, requests)
    url, token, ca = endpoint
    context = ssl.create_default_context(cafile=ca)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    limits = httpx.Limits(max_connections=CONCURRENCY if reuse else None, max_keepalive_connections=CONCURRENCY
                          if reuse else 0)
    async with httpx.AsyncClient(http2=http2, http1=not http2, verify=context, headers=headers, limits=limits,
                                 base_url=url, timeout=60) as client:
        remaining = iter(range(requests))

        async def worker() -> None:
            for _ in remaining:
                response = await client.get(path)
                assert response.status_code == 200, response.text
                assert response.http_version == ("HTTP/2" if http2 else "HTTP/1.1")

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


def _row(conn: Any, endpoint: Endpoint, path: str, requests: int, *, http2: bool | str, reuse: bool = True) -> float:
    # A short warm-up (connections, caches), then the measured requests.
    asyncio.run(_measure(endpoint, path, 50, http2=http2, reuse=reuse))
    before = _cpu(conn)
    asyncio.run(_measure(endpoint, path, requests, http2=http2, reuse=reuse))
    return (_cpu(conn) - before) / requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=["kubeloop", "front"], default=None)
    parser.add_argument("--no-fresh", action="store_true", help="leave out the new-TLS-connection row (slow)")
    parser.add_argument("--baseline", metavar="DIR", help="also measure the kubeloop server of the checkout at DIR "
                        "(its rows marked 'baseline'), alternated with this one")
    args = parser.parse_args()
    try:
        import hypercorn  # noqa: F401
        has_hypercorn = True
    except ImportError:
        has_hypercorn = False
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as data_dir:
        servers: dict[str, tuple[multiprocessing.Process, Any, Endpoint]] = {}
        if args.only in (None, "kubeloop"):
            servers["kubeloop"] = spawn(run_kube_server, data_dir + "/k", True)
            if args.baseline:
                baseline = _CheckoutServer(args.baseline, data_dir + "/b")
                servers["baseline"] = (baseline, baseline, baseline.endpoint)  # type: ignore[assignment]
        for name in ("kubeloop", "baseline"):
            if name in servers:
                url, token, ca = servers[name][2]
                created = httpx.post(url + "/api/v1/namespaces/default/configmaps", verify=ssl.create_default_context(
                    cafile=ca), headers={"Authorization": f"Bearer {token}"}, json={"metadata": {"name": "bench"},
                                                                                     "data": {"a": "b"}})
                assert created.status_code == 201, created.text
        if args.only in (None, "front"):
            assert Http2Server is not None, "the front rows need kubeloop.server.http2"
            servers["aiohttp"] = spawn(_run_aiohttp_front, data_dir + "/a")
            if has_hypercorn:
                servers["hypercorn"] = spawn(_run_hypercorn, data_dir + "/h")
        cases: list[tuple[str, str, str, bool | str, bool]] = []
        if "kubeloop" in servers:
            path = "/api/v1/namespaces/default/configmaps/bench"
            variants: list[tuple[str, bool | str, bool]] = [
                ("HTTP/1.1 keep-alive", False, True),
                *([] if args.no_fresh else [("HTTP/1.1 new TLS connection each", False, False)]),
                # A baseline from before HTTP/2 fails these rows (its ALPN offers http/1.1 only).
                *([("HTTP/2 one connection", True, True), ("HTTP/2, Go-like client", "go", True)]
                  if Http2Server is not None else [])]
            # Each variant of this checkout next to the same of the baseline's.
            cases += [(f"kubeloop GET, {variant}{'' if name == 'kubeloop' else ' (baseline)'}", name, path, http2,
                       reuse)
                      for variant, http2, reuse in variants for name in ("kubeloop", "baseline") if name in servers]
        if "aiohttp" in servers:
            cases += [("front: aiohttp HTTP/1.1", "aiohttp", "/", False, True),
                      ("front: aiohttp + kubeloop.server.http2, h2", "aiohttp", "/", True, True),
                      ("front: aiohttp + kubeloop.server.http2, h2 Go-like client", "aiohttp", "/", "go", True)]
        if "hypercorn" in servers:
            cases += [("front: hypercorn h11", "hypercorn", "/", False, True),
                      ("front: hypercorn h2", "hypercorn", "/", True, True)]
        for round_ in range(args.rounds):
            ordered = cases if round_ % 2 == 0 else list(reversed(cases))
            for label, server, path, http2, reuse in ordered:
                _, conn, endpoint = servers[server]
                count = args.requests if reuse else max(args.requests // 5, 100)
                try:
                    figures.setdefault(label, []).append(_row(conn, endpoint, path, count, http2=http2, reuse=reuse))
                except httpx.TransportError as error:
                    print(f"{label}: {error!r}", file=sys.stderr)
                    raise
        for process, conn, _ in servers.values():
            conn.send("stop")
            process.join(10)
    width = max(len(label) for label in figures)
    print(f"{'variant':<{width}}  server CPU per request (us), per round; median")
    for label, values in figures.items():
        rounds = ' '.join(f'{v * 1e6:7.0f}' for v in values)
        print(f"{label:<{width}}  {rounds}  | {statistics.median(values) * 1e6:7.0f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
