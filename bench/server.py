"""Benchmark of the embedded API server over HTTPS, beside its two ceilings (not a test).

Run: ``.venv/bin/python bench/server.py [--creates N] [--list-sizes 10000,50000] [--memory]``

The server runs in a child process (SQLite in WAL mode unless ``--memory``), the clients are
aiohttp sessions in this process, so client and server each have a core of this 2-core
machine. Figures:

- pod creates and updates per second with 1 and with 8 concurrent clients;
- list latency of all pods at each store size (full list, and a first page of 500);
- watch fan-out: events per second delivered to 50 watchers while 8 clients update pods;
- the server process's CPU time per write request (all four write phases) and per watch
  event delivered during the fan-out: the figures to compare two versions of the server by
  on a shared machine (run this script with ``PYTHONPATH`` pointing at each checkout);
- ceilings, measured in the same run: an aiohttp HTTPS server that only parses and
  re-serialises the same pod JSON (the HTTP ceiling), and the bare SQLite insert rate of
  the store's change-log INSERT from Python (``bench/storage.py``'s measurement).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import ssl
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
from storage import bare_insert_ceiling, make_pod

from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.server.certs import ensure_credentials

NAMESPACES = 20
WATCHERS = 50
Endpoint = tuple[str, str, str]


def run_kube_server(data_dir: str, memory: bool, conn: multiprocessing.connection.Connection) -> None:
    """A child process's server: sends its endpoint, then its CPU seconds on each "cpu" asked."""
    async def main() -> None:
        server = KubeServer(ServerConfig(Path(data_dir), port=0, memory=memory))
        await server.start()
        assert server.credentials is not None
        conn.send((server.url, server.credentials.token, str(server.credentials.ca_cert)))
        while await asyncio.get_running_loop().run_in_executor(None, conn.recv) == "cpu":
            conn.send(time.process_time())
        await server.stop()

    asyncio.run(main())


def _run_echo_server(data_dir: str, conn: multiprocessing.connection.Connection) -> None:
    """The HTTP ceiling: parse the pod JSON and send it back, over the same kind of TLS."""

    async def echo(request: web.Request) -> web.Response:
        document = orjson.loads(await request.read())
        return web.Response(body=orjson.dumps(document), status=201, content_type="application/json")

    async def main() -> None:
        credentials = ensure_credentials(Path(data_dir), "127.0.0.1")
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(credentials.server_cert, credentials.server_key)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", echo)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
        await site.start()
        port = runner.addresses[0][1]
        conn.send((f"https://127.0.0.1:{port}", credentials.token, str(credentials.ca_cert)))
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)
        await runner.cleanup()

    asyncio.run(main())


def spawn(target: Callable[..., None], *args: Any) -> tuple[multiprocessing.Process, Any, Endpoint]:
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.Process(target=target, args=(*args, child), daemon=True)
    process.start()
    endpoint: Endpoint = parent.recv()
    return process, parent, endpoint


def _server_cpu(conn: Any) -> float:
    """CPU seconds the server process has used so far."""
    conn.send("cpu")
    seconds: float = conn.recv()
    return seconds


def _stop(process: multiprocessing.Process, conn: Any) -> None:
    conn.send("stop")
    process.join(30)


def _session(endpoint: Endpoint) -> tuple[aiohttp.ClientSession, ssl.SSLContext]:
    _, token, ca = endpoint
    connector = aiohttp.TCPConnector(limit=64)
    session = aiohttp.ClientSession(connector=connector, headers={"Authorization": f"Bearer {token}",
                                                                  "Content-Type": "application/json"})
    return session, ssl.create_default_context(cafile=ca)


async def _concurrently(count: int, clients: int, one: Callable[[int], Awaitable[None]]) -> float:
    """Seconds to run ``one(i)`` for i in range(count) with ``clients`` requests in flight."""
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < count:
            index = next_index
            next_index += 1
            await one(index)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return time.perf_counter() - start


AS_ADMITTED = False
"""``--as-admitted``: pods arrive with what kube-apiserver's admission plugins would add (no
token volume, both default tolerations, the default ServiceAccount), so servers with and without
those plugins store the same bytes: the comparison is of the machinery, not of pod sizes."""


def pod_body(index: int, as_admitted: bool) -> dict[str, Any]:
    """The pod sent for create ``index``; ``as_admitted`` as ``--as-admitted`` says."""
    pod = make_pod(index)
    meta = pod["metadata"]
    for key in ("uid", "creationTimestamp", "generateName"):
        meta.pop(key, None)
    pod.pop("status", None)
    if as_admitted:
        spec = pod["spec"]
        spec["automountServiceAccountToken"] = False
        spec["serviceAccountName"] = spec["serviceAccount"] = "default"
        spec["tolerations"] = [{"key": f"node.kubernetes.io/{taint}", "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": 300} for taint in ("not-ready", "unreachable")]
    return pod


def _pod_body(index: int) -> dict[str, Any]:
    return pod_body(index, AS_ADMITTED)


async def _write_rates(endpoint: Endpoint, creates: int) -> dict[str, float]:
    """Creates and updates per second at 1 and 8 clients against the API server."""
    url = endpoint[0]
    session, tls = _session(endpoint)
    results: dict[str, float] = {}
    async with session:
        for index in range(NAMESPACES):
            async with session.post(f"{url}/api/v1/namespaces", ssl=tls,
                                    data=orjson.dumps({"metadata": {"name": f"team-{index:02d}"}})) as response:
                assert response.status == 201, await response.text()
        offset = 0
        for clients in (1, 8):
            count = creates if clients == 8 else creates // 4
            bodies = [orjson.dumps(_pod_body(offset + i)) for i in range(count)]
            namespaces = [f"team-{(offset + i) % NAMESPACES:02d}" for i in range(count)]

            created: list[dict[str, Any]] = [{} for _ in range(count)]

            async def create(i: int, bodies: list[bytes] = bodies, namespaces: list[str] = namespaces,
                             created: list[dict[str, Any]] = created) -> None:
                async with session.post(f"{url}/api/v1/namespaces/{namespaces[i]}/pods", data=bodies[i],
                                        ssl=tls) as response:
                    if response.status != 201:
                        raise RuntimeError(await response.text())
                    created[i] = orjson.loads(await response.read())

            results[f"create x{clients}"] = count / await _concurrently(count, clients, create)
            # An update sends back what the create answered, changed, as clients do (the server
            # adds fields on create that an update may not take away).
            updated = [orjson.dumps(_labelled(created[i])) for i in range(count)]
            names = [_pod_body(offset + i)["metadata"]["name"] for i in range(count)]

            async def update(i: int, bodies: list[bytes] = updated, names: list[str] = names,
                             namespaces: list[str] = namespaces) -> None:
                async with session.put(f"{url}/api/v1/namespaces/{namespaces[i]}/pods/{names[i]}", data=bodies[i],
                                       ssl=tls) as response:
                    if response.status != 200:
                        raise RuntimeError(await response.text())
                    await response.read()

            results[f"update x{clients}"] = count / await _concurrently(count, clients, update)
            offset += count
        results["pods"] = offset
    return results


def _labelled(pod: dict[str, Any]) -> dict[str, Any]:
    pod["metadata"]["labels"] = {**pod["metadata"]["labels"], "touched": "yes"}
    return pod


async def _fill(endpoint: Endpoint, start: int, total: int) -> None:
    url = endpoint[0]
    session, tls = _session(endpoint)
    async with session:

        async def create(i: int) -> None:
            pod = _pod_body(start + i)
            async with session.post(f"{url}/api/v1/namespaces/{pod['metadata']['namespace']}/pods",
                                    data=orjson.dumps(pod), ssl=tls) as response:
                await response.read()

        await _concurrently(total - start, 8, create)


async def _list_latency(endpoint: Endpoint, repeats: int = 3) -> dict[str, float]:
    url = endpoint[0]
    session, tls = _session(endpoint)
    results: dict[str, float] = {}
    async with session:
        for label, query in (("list all", ""), ("first page of 500", "?limit=500")):
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                async with session.get(f"{url}/api/v1/pods{query}", ssl=tls) as response:
                    body = await response.read()
                best = min(best, time.perf_counter() - start)
            assert orjson.loads(body)["kind"] == "PodList"
            results[label] = best
    return results


async def _fan_out(endpoint: Endpoint, updates: int) -> tuple[float, int]:
    """Events per second delivered to WATCHERS watchers while 8 clients update pods, and how many."""
    url = endpoint[0]
    session, tls = _session(endpoint)
    async with session:
        async with session.get(f"{url}/api/v1/namespaces/team-00/pods?limit=1", ssl=tls) as response:
            listed = orjson.loads(await response.read())
        revision = listed["metadata"]["resourceVersion"]
        names = [f"web-7d4b9c8f6d-{i:06d}" for i in range(0, updates * NAMESPACES, NAMESPACES)][:updates]
        received = 0
        ready = asyncio.Event()
        done = asyncio.Event()

        async def watcher() -> None:
            nonlocal received
            async with session.get(f"{url}/api/v1/namespaces/team-00/pods?watch=1&resourceVersion={revision}",
                                   ssl=tls, timeout=aiohttp.ClientTimeout(total=None)) as response:
                ready.set()
                async for _ in response.content:
                    received += 1
                    if received >= updates * WATCHERS:
                        done.set()
                        return

        tasks = [asyncio.create_task(watcher()) for _ in range(WATCHERS)]
        await ready.wait()
        await asyncio.sleep(0.5)
        start = time.perf_counter()

        async def update(i: int) -> None:
            body = orjson.dumps({"metadata": {"labels": {"round": str(i)}}})
            async with session.patch(f"{url}/api/v1/namespaces/team-00/pods/{names[i]}", data=body, ssl=tls,
                                     headers={"Content-Type": "application/merge-patch+json"}) as response:
                await response.read()

        await _concurrently(len(names), 8, update)
        await asyncio.wait_for(done.wait(), 120)
        elapsed = time.perf_counter() - start
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return received / elapsed, received


async def _echo_rate(endpoint: Endpoint, count: int, clients: int) -> float:
    url = endpoint[0]
    session, tls = _session(endpoint)
    body = orjson.dumps(_pod_body(0))
    async with session:

        async def one(_: int) -> None:
            async with session.post(f"{url}/api/v1/namespaces/team-00/pods", data=body, ssl=tls) as response:
                await response.read()

        return count / await _concurrently(count, clients, one)


def report(label: str, figure: str) -> None:
    print(f"  {label:<52}{figure}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--creates", type=int, default=8000, help="pods created (and updated) with 8 clients")
    parser.add_argument("--list-sizes", default="10000,50000", help="comma-separated pod counts for list latency")
    parser.add_argument("--memory", action="store_true", help="memory-only store instead of SQLite")
    parser.add_argument("--as-admitted", action="store_true",
                        help="send pods as admission would leave them (compare servers on equal objects)")
    args = parser.parse_args()
    global AS_ADMITTED
    AS_ADMITTED = args.as_admitted
    print(f"server benchmark: {len(orjson.dumps(_pod_body(0)))} bytes of pod JSON per request, HTTPS, "
          f"{'memory' if args.memory else 'SQLite WAL'} store")
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        echo, echo_conn, echo_endpoint = spawn(_run_echo_server, str(directory / "echo"))
        http_ceiling = {clients: asyncio.run(_echo_rate(echo_endpoint, 4000, clients)) for clients in (1, 8)}
        _stop(echo, echo_conn)
        bodies = [orjson.dumps(make_pod(i)) for i in range(20000)]
        sqlite_ceiling = len(bodies) / bare_insert_ceiling(directory, bodies)
        report("HTTP ceiling (aiohttp parse + re-serialise), 1 client", f"{http_ceiling[1]:>10,.0f} /s")
        report("HTTP ceiling, 8 clients", f"{http_ceiling[8]:>10,.0f} /s")
        report("bare SQLite insert ceiling (commit per row)", f"{sqlite_ceiling:>10,.0f} /s")

        server, conn, endpoint = spawn(run_kube_server, str(directory / "kube"), args.memory)
        try:
            cpu_before = _server_cpu(conn)
            rates = asyncio.run(_write_rates(endpoint, args.creates))
            write_cpu = _server_cpu(conn) - cpu_before
            for label in ("create x1", "update x1", "create x8", "update x8"):
                clients = int(label.split("x")[1])
                report(f"pod {label.replace('x', 'with ')} client(s)",
                       f"{rates[label]:>10,.0f} /s   {rates[label] / http_ceiling[clients]:.2f} of HTTP, "
                       f"{rates[label] / sqlite_ceiling:.2f} of SQLite")
            writes = NAMESPACES + 2 * rates["pods"]
            report("server CPU per write request (all write phases)", f"{write_cpu / writes * 1e6:>10,.0f} us")
            filled = int(rates["pods"])
            for size in (int(v) for v in args.list_sizes.split(",") if v):
                asyncio.run(_fill(endpoint, filled, size))
                filled = max(filled, size)
                for label, seconds in asyncio.run(_list_latency(endpoint)).items():
                    report(f"{size:>6,} pods: {label}", f"{seconds * 1000:>10.1f} ms")
            cpu_before = _server_cpu(conn)
            delivered, events = asyncio.run(_fan_out(endpoint, 200))
            fan_out_cpu = _server_cpu(conn) - cpu_before
            report(f"watch fan-out to {WATCHERS} watchers (events delivered)", f"{delivered:>10,.0f} /s")
            report("server CPU per event delivered (updates included)", f"{fan_out_cpu / events * 1e6:>10,.1f} us")
        finally:
            _stop(server, conn)


if __name__ == "__main__":
    main()
