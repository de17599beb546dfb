"""CPU per request of ApiClient against a local aiohttp server (not a test; run by hand).

    .venv/bin/python bench/client.py [requests]

The server runs in a child process so only the client's CPU is counted (``process_time`` of
this process). Compares ApiClient GET / PATCH with a bare aiohttp session doing the same
requests and decoding with orjson, at concurrency 1 and 8.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import socket
import sys
import time
from collections.abc import Awaitable, Callable

import aiohttp
import orjson
from aiohttp import web

from kubeloop.client import PODS, ApiClient, ClientConfig, MockResponse, MockTransport, Request
from kubeloop.client._watch import LineSplitter, decode_event

POD = {
    "kind": "Pod", "apiVersion": "v1",
    "metadata": {"name": "web-0", "namespace": "default", "uid": "4c8c5f5e-0000-4000-8000-000000000000",
                 "resourceVersion": "12345", "labels": {"app": "web", "tier": "frontend"},
                 "annotations": {"note": "x" * 200}, "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {"containers": [{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
                             "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
             "nodeName": "node-1", "restartPolicy": "Always"},
    "status": {"phase": "Running", "podIP": "10.0.0.5",
               "conditions": [{"type": t, "status": "True"} for t in ("Ready", "Initialized", "PodScheduled")]},
}
BODY = orjson.dumps(POD)


def serve(port: int) -> None:
    async def answer(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=BODY, content_type="application/json")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


async def measure(label: str, requests: int, concurrency: int, call: Callable[[], Awaitable[object]],
                  rounds: int = 3) -> None:
    """Best of ``rounds`` (the machine is shared; the minimum is the least disturbed run)."""
    for _ in range(200):
        await call()
    per_worker = requests // concurrency
    done = per_worker * concurrency

    async def worker() -> None:
        for _ in range(per_worker):
            await call()

    best_cpu, best_rate = float("inf"), 0.0
    for _ in range(rounds):
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        best_cpu, best_rate = min(best_cpu, cpu / done), max(best_rate, done / wall)
    print(f"{label:<30} conc={concurrency}  {best_cpu * 1e6:7.1f} us CPU/request  {best_rate:8.0f} req/s")


def measure_watch_decoding(events: int = 20_000) -> None:
    """Split and decode a watch body of pod events arriving in 64 KiB chunks."""
    line = orjson.dumps({"type": "MODIFIED", "object": POD}) + b"\n"
    body = line * events
    chunks = [body[i:i + 65536] for i in range(0, len(body), 65536)]
    best = float("inf")
    for _ in range(3):
        cpu = time.process_time()
        splitter = LineSplitter()
        decoded = 0
        for chunk in chunks:
            for piece in splitter.feed(chunk):
                decode_event(piece)
                decoded += 1
        best = min(best, (time.process_time() - cpu) / decoded)
    print(f"{'watch event split + decode':<30}         {best * 1e6:7.1f} us CPU/event ({len(line)} bytes)")


async def main(requests: int, port: int) -> None:
    url = f"http://127.0.0.1:{port}"
    patch = {"metadata": {"labels": {"bench": "yes"}}}
    async with ApiClient(ClientConfig(url, qps=0)) as client, \
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as session:
        async def raw_get() -> object:
            async with session.get(f"{url}/api/v1/namespaces/default/pods/web-0") as response:
                return orjson.loads(await response.read())

        async def raw_patch() -> object:
            async with session.patch(f"{url}/api/v1/namespaces/default/pods/web-0", data=orjson.dumps(patch),
                                     headers={"Content-Type": "application/merge-patch+json"}) as response:
                return orjson.loads(await response.read())

        def canned(request: Request) -> MockResponse:
            return MockResponse(200, BODY)

        mocked = ApiClient(ClientConfig(url, qps=0), transport=MockTransport(canned))
        await measure("ApiClient.get, no network", requests, 1, lambda: mocked.get(PODS, "web-0"))
        for concurrency in (1, 8):
            await measure("aiohttp session GET", requests, concurrency, raw_get)
            await measure("ApiClient.get", requests, concurrency, lambda: client.get(PODS, "web-0"))
            await measure("aiohttp session PATCH", requests, concurrency, raw_patch)
            await measure("ApiClient.patch (merge)", requests, concurrency,
                          lambda: client.patch(PODS, "web-0", patch))


if __name__ == "__main__":
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free_port = sock.getsockname()[1]
    server = multiprocessing.Process(target=serve, args=(free_port,), daemon=True)
    server.start()
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", free_port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        measure_watch_decoding()
        asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000, free_port))
    finally:
        server.terminate()
        server.join()
