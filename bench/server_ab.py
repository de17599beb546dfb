"""Two checkouts of the API server side by side: server CPU per request, batch by batch (not a test).

Run: ``.venv/bin/python bench/server_ab.py OLD_SRC NEW_SRC [--rounds 12] [--batch 200] [--watchers 10]
[--probe request-metrics]``

``OLD_SRC`` and ``NEW_SRC`` are directories holding a ``kubeloop`` package (e.g. ``git archive
<commit> kubeloop | tar -x -C /tmp/old``). Each runs as a memory-store ``KubeServer`` in a process
of its own; this process drives both over HTTPS with 8 requests in flight, alternating batches
between them (which one goes first alternates too), so that both meet the same load from the
rest of a shared machine. A batch is ``--batch`` each of pod create, get, merge patch, update
(PUT) and delete, plus a tenth as many lists of 100 pods, while ``--watchers`` watchers of the
namespace receive every change. The figure is each server's on-CPU time over the batch (the
scheduler's per-thread accounting in ``/proc/<pid>/task/*/schedstat``, nanoseconds) divided by
the batch's requests; reported: the median per request of each side and the median of the
per-round ratios NEW / OLD.

On a loaded machine the per-round figures scatter by 20% or more, so ``--probe NAME`` adds a
direct measurement, in a fresh interpreter on ``NEW_SRC`` right after the batches (the same
machine load): ``request-metrics`` times recording one request in the metrics with ``timeit``,
to set beside NEW's median CPU per request.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from storage import make_pod

_SERVER = """
import asyncio, json, sys
from pathlib import Path
from kubeloop.server.app import KubeServer, ServerConfig

async def main():
    server = KubeServer(ServerConfig(Path(sys.argv[1]), port=0, memory=True))
    await server.start()
    print(json.dumps([server.url, server.credentials.token, str(server.credentials.ca_cert)]), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.stop()

asyncio.run(main())
"""
NAMESPACE = "bench"

# Microsecond cost of one call of what a probe names, best of 9 runs of timeit; prints one line each.
_PROBES = {"request-metrics": """
import sys, timeit
from aiohttp.test_utils import make_mocked_request
from kubeloop.server.app import build_registry
from kubeloop.server.metrics import ApiMetrics
from kubeloop.server.routing import resolve
registry, metrics = build_registry(), ApiMetrics()
for label, method, path, headers in [
        ("create", "POST", "/api/v1/namespaces/bench/pods", {"Content-Type": "application/json"}),
        ("update", "PUT", "/api/v1/namespaces/bench/pods/p", {"Content-Type": "application/json"}),
        ("get", "GET", "/api/v1/namespaces/bench/pods/p", {}),
        ("list", "GET", "/api/v1/namespaces/bench/pods?limit=100", {}),
        ("merge patch", "PATCH", "/api/v1/namespaces/bench/pods/p", {"Content-Type": "application/merge-patch+json"})]:
    request = make_mocked_request(method, path, headers=headers)
    target = resolve(registry, request.path)
    request.query  # parsed by every handler before the recorder sees it
    def one(): metrics.observe_request(request, target, 200, 0.0004)
    best = min(timeit.repeat(one, number=20000, repeat=9)) / 20000
    print(f"  recording one {label} request: {best * 1e6:.2f} us", flush=True)
"""}


class Side:
    """One server process and a client session to it."""

    def __init__(self, name: str, source: str, data_dir: Path) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": source}
        self.process = subprocess.Popen([sys.executable, "-c", _SERVER, str(data_dir)], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url, token, ca = orjson.loads(self.process.stdout.readline())
        self.tls = ssl.create_default_context(cafile=ca)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.per_request: list[float] = []

    def cpu_ns(self) -> int:
        total = 0
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass  # a thread that just ended
        return total

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(30)


async def _concurrently(count: int, one: Callable[[int], Awaitable[None]], clients: int = 8) -> None:
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < count:
            index = next_index
            next_index += 1
            await one(index)

    await asyncio.gather(*(worker() for _ in range(clients)))


async def _batch(session: aiohttp.ClientSession, side: Side, start: int, size: int) -> int:
    """One batch of requests against ``side``; returns how many were made."""
    base = f"{side.url}/api/v1/namespaces/{NAMESPACE}/pods"
    pods = []
    for index in range(start, start + size):
        pod = make_pod(index)
        pod["metadata"] = {"name": f"pod-{index:07d}", "namespace": NAMESPACE, "labels": {"app": "bench"}}
        pod.pop("status", None)
        pods.append(pod)

    async def call(method: str, url: str, body: Any = None, content_type: str = "application/json") -> None:
        data = None if body is None else orjson.dumps(body)
        async with session.request(method, url, data=data, ssl=side.tls,
                                   headers={**side.headers, "Content-Type": content_type}) as response:
            await response.read()
            if response.status >= 300:
                raise RuntimeError(f"{method} {url}: {response.status}")

    async def create(i: int) -> None:
        await call("POST", base, pods[i])

    async def get(i: int) -> None:
        await call("GET", f"{base}/{pods[i]['metadata']['name']}")

    async def patch(i: int) -> None:
        await call("PATCH", f"{base}/{pods[i]['metadata']['name']}", {"metadata": {"labels": {"round": str(i)}}},
                   "application/merge-patch+json")

    async def update(i: int) -> None:
        async with session.get(f"{base}/{pods[i]['metadata']['name']}", ssl=side.tls,
                               headers=side.headers) as response:
            current = orjson.loads(await response.read())
        current["metadata"]["labels"]["touched"] = "yes"
        await call("PUT", f"{base}/{pods[i]['metadata']['name']}", current)

    async def listing(_: int) -> None:
        await call("GET", f"{base}?limit=100")

    async def delete(i: int) -> None:
        await call("DELETE", f"{base}/{pods[i]['metadata']['name']}")

    for step in (create, get, patch, update, delete):
        await _concurrently(size, step)
    await _concurrently(size // 10, listing)
    return size * 6 + size // 10  # update is a GET and a PUT


async def _watch(session: aiohttp.ClientSession, side: Side) -> None:
    url = f"{side.url}/api/v1/namespaces/{NAMESPACE}/pods?watch=1&timeoutSeconds=3600"
    async with session.get(url, ssl=side.tls, headers=side.headers,
                           timeout=aiohttp.ClientTimeout(total=None)) as response:
        async for _ in response.content:
            pass


async def run(sides: list[Side], rounds: int, batch: int, watchers: int) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200)) as session:
        for side in sides:
            async with session.post(f"{side.url}/api/v1/namespaces", ssl=side.tls, headers=side.headers,
                                    data=orjson.dumps({"metadata": {"name": NAMESPACE}})) as response:
                assert response.status == 201, await response.text()
        watches = [asyncio.create_task(_watch(session, side)) for side in sides for _ in range(watchers)]
        await asyncio.sleep(0.5)
        await _batch(session, sides[0], 0, batch)  # warm-up, both sides
        await _batch(session, sides[1], 0, batch)
        ratios = []
        for round_index in range(rounds):
            order = sides if round_index % 2 == 0 else sides[::-1]
            figures = {}
            for side in order:
                before = side.cpu_ns()
                requests = await _batch(session, side, (round_index + 1) * batch, batch)
                figures[side.name] = (side.cpu_ns() - before) / requests / 1000
                side.per_request.append(figures[side.name])
            ratios.append(figures[sides[1].name] / figures[sides[0].name])
            print(f"  round {round_index + 1:>2}: " + "  ".join(f"{n} {v:7.1f} us/request" for n, v in figures.items())
                  + f"  ratio {ratios[-1]:.3f}", flush=True)
        for task in watches:
            task.cancel()
        await asyncio.gather(*watches, return_exceptions=True)
    for side in sides:
        print(f"  {side.name}: median {statistics.median(side.per_request):.1f} us of server CPU per request")
    print(f"  median ratio {sides[1].name} / {sides[0].name}: {statistics.median(ratios):.3f} "
          f"(quartiles {statistics.quantiles(ratios, n=4)[0]:.3f}-{statistics.quantiles(ratios, n=4)[2]:.3f})")


def _probe(source: str, name: str) -> None:
    subprocess.run([sys.executable, "-c", _PROBES[name]], env={**os.environ, "PYTHONPATH": source}, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", help="directory holding the old kubeloop package")
    parser.add_argument("new", help="directory holding the new kubeloop package")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--batch", type=int, default=200, help="pods per batch (each created, read, patched, ...)")
    parser.add_argument("--watchers", type=int, default=10, help="watchers of the namespace on each server")
    parser.add_argument("--probe", choices=sorted(_PROBES), help="also time this piece of NEW directly")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        sides = [Side("old", args.old, Path(temporary) / "old"), Side("new", args.new, Path(temporary) / "new")]
        try:
            print(f"server A/B: {args.rounds} rounds of {args.batch * 6 + args.batch // 10} requests per side, "
                  f"{args.watchers} watchers each, load average {os.getloadavg()[0]:.1f}")
            asyncio.run(run(sides, args.rounds, args.batch, args.watchers))
        finally:
            for side in sides:
                side.stop()
    if args.probe:
        _probe(args.new, args.probe)


if __name__ == "__main__":
    main()
