"""Instructions per request, JSON beside protobuf, a Go client's requests counted by callgrind (not a test).

Run: ``PYTHONPATH=$PWD .venv/bin/python bench/wire_requests.py --callgrind [--requests 20] [--rounds 3]
[--list-size 500] [--watchers 4] [--checkout DIR]``

CPU time per request moves by 20-40% between rounds on this shared 2-core machine, which hides
a codec's few percent (``bench/wire_requests.py`` without ``--callgrind``). Instruction counts
do not move with the machine's load (see ``bench/instructions.py``). Here one server
(``kubeloop.server.app.KubeServer``, memory store, imported from ``--checkout``, default this
one) runs under valgrind's callgrind, and this process talks to it over one HTTP/2 connection
(httpx), as client-go does: every request and every watch multiplexed on it. Around each
measured phase the server's counters are zeroed and dumped (``callgrind_control -z`` / ``-d``),
so start-up and the client's own preparations are outside every count; instrumentation is off
while the namespaces, the listed pods and a warm-up of each wire (the codec compiles its
readers and writers on first use) are set up.

Phases, each once per wire (JSON: ``application/json`` bodies and ``Accept``; protobuf: bodies
in ``application/vnd.kubernetes.protobuf`` and ``Accept: application/vnd.kubernetes.protobuf,
*/*``, as client-go sends them):

- ``create``: ``--requests`` pod creates (``bench/server.py --as-admitted`` pods), each answered
  with the created object: a first write of it in the wire's encoding;
- ``watched create``: the same creates into a namespace one watcher (in the wire) watches, the
  row counting everything the server does until the watcher has every new pod: a controller
  that watches what it creates (every one does) gets the object twice, as the answer and as
  the event;
- ``get``: a get of each of those pods;
- ``update``: a PUT of each, the object as read with one label changed (what a controller sends);
- ``list``: lists of a namespace of ``--list-size`` pods (created in JSON outside the count, and
  listed once in the wire outside it: an informer's relist reads objects served before);
- ``watch``: ``--watchers`` watches of the ``create`` namespace from the current revision, in
  the wire's stream form, while an update of each of its pods sends them one event; the row is
  the instructions per event and watcher, beyond the same updates without watchers (measured
  just before). The updates are sent in the wire (every writer speaks as the watchers do: an
  update's answer is the event's encoding), then again in the other wire. Two more rows set the
  watchers of the two wires side by side under the same writers: ``JSON writers`` (the protobuf
  watchers' event is a first write of the object in protobuf) and ``Go writers`` (the JSON
  watchers' event is a first write in JSON). Each is an encoding across wires, paid once per
  object and shared by the watchers; a cluster has both kinds of writers.

Needs ``valgrind``. Takes about ten minutes at the defaults.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from callgrind_counts import CallgrindCounts
from server import pod_body

from kubeloop.server.codec import protobuf

JSON = "application/json"
PROTOBUF_ACCEPT = "application/vnd.kubernetes.protobuf, */*"
WIRES = ("json", "protobuf")

_SERVE = """
import asyncio, json, sys
from pathlib import Path
from kubeloop.server.app import KubeServer, ServerConfig

async def main() -> None:
    server = KubeServer(ServerConfig(Path(sys.argv[1]), port=0, memory=True))
    await server.start()
    print(json.dumps([server.url, server.credentials.token, str(server.credentials.ca_cert)]), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await server.stop()

asyncio.run(main())
"""


class Callgrind:
    """The server under callgrind, and its counters driven through ``callgrind_control``."""

    def __init__(self, checkout: Path, work: Path) -> None:
        self.out = work / "callgrind.out"
        serve = work / "serve.py"
        serve.write_text(_SERVE)
        data = work / "data"
        data.mkdir()
        self.process = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={self.out}",
             sys.executable, str(serve), str(data)],
            cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        self.url, self.token, self.ca = json.loads(self.process.stdout.readline())
        self.counts = CallgrindCounts(self.process.pid, self.out)

    def instrument(self, on: bool) -> None:
        self.counts.instrument(on)

    def zero(self) -> None:
        self.counts.zero()

    def dump(self, name: str) -> int:
        """The instructions counted since the last zero or dump, which this dump then zeroes."""
        return self.counts.dump(name, timeout=60.0)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        self.process.wait(600)


def _headers(wire: str) -> dict[str, str]:
    if wire == "json":
        return {"Content-Type": JSON, "Accept": JSON}
    return {"Content-Type": protobuf.MEDIA_TYPE, "Accept": PROTOBUF_ACCEPT}


def _encode(wire: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) if wire == "json" else protobuf.encode(obj)


def _decode(wire: str, body: bytes) -> dict[str, Any]:
    decoded: dict[str, Any] = orjson.loads(body) if wire == "json" else protobuf.decode(body)
    return decoded


class Watcher:
    """One watch stream, counting the events it has received."""

    def __init__(self, wire: str) -> None:
        self.wire = wire
        self.events = 0
        self.changed = asyncio.Event()
        self._buffer = b""

    def feed(self, chunk: bytes) -> None:
        if self.wire == "json":
            self.events += chunk.count(b"\n")
        else:
            self._buffer += chunk
            while len(self._buffer) >= 4:
                (length,) = struct.unpack_from(">I", self._buffer)
                if len(self._buffer) < 4 + length:
                    break
                self._buffer = self._buffer[4 + length:]
                self.events += 1
        self.changed.set()

    async def run(self, client: httpx.AsyncClient, path: str, revision: str) -> None:
        params = {"watch": "true", "resourceVersion": revision}
        async with client.stream("GET", path, params=params, headers={"Accept": _headers(self.wire)["Accept"]}) as got:
            assert got.status_code == 200, await got.aread()
            async for chunk in got.aiter_raw():
                self.feed(chunk)

    async def wait_for(self, events: int) -> None:
        while self.events < events:
            self.changed.clear()
            await self.changed.wait()


async def _session(server: Callgrind, requests: int, list_size: int, watchers: int,
                   rounds: int) -> dict[tuple[str, str], list[float]]:
    tls = ssl.create_default_context(cafile=server.ca)
    figures: dict[tuple[str, str], list[float]] = {}
    async with httpx.AsyncClient(http2=True, verify=tls, timeout=3600, base_url=server.url,
                                 headers={"Authorization": f"Bearer {server.token}"}) as client:
        url = server.url

        async def post(path: str, body: bytes, wire: str) -> httpx.Response:
            response = await client.post(f"{url}{path}", content=body, headers=_headers(wire))
            assert response.status_code == 201, response.content
            return response

        async def namespace(name: str) -> str:
            await post("/api/v1/namespaces", orjson.dumps({"metadata": {"name": name}}), "json")
            return f"/api/v1/namespaces/{name}/pods"

        def pods(namespace_name: str, count: int, offset: int = 0) -> list[dict[str, Any]]:
            made = []
            for index in range(offset, offset + count):
                pod = pod_body(index, True)
                pod["metadata"]["namespace"] = namespace_name
                made.append(pod)
            return made

        async def read_all(path: str, names: list[str], wire: str) -> list[dict[str, Any]]:
            got = []
            for name in names:
                response = await client.get(f"{path}/{name}", headers={"Accept": _headers(wire)["Accept"]})
                assert response.status_code == 200, response.content
                got.append(_decode(wire, response.content))
            return got

        async def put_all(path: str, objects: list[dict[str, Any]], wire: str, mark: str) -> None:
            bodies = []
            for obj in objects:
                obj["metadata"].setdefault("labels", {})["round"] = mark
                bodies.append(_encode(wire, obj))
            for obj, body in zip(objects, bodies, strict=True):
                response = await client.put(f"{path}/{obj['metadata']['name']}", content=body,
                                            headers=_headers(wire))
                assert response.status_code == 200, response.content

        async def updates(path: str, names: list[str], writer: str, mark: str) -> None:
            """A PUT of each pod in ``writer``'s wire, its bodies encoded before the first."""
            current = await read_all(path, names, "json")
            for obj in current:
                obj["metadata"]["labels"]["round"] = mark
            bodies = [_encode(writer, obj) for obj in current]
            server.zero()
            for name, body in zip(names, bodies, strict=True):
                response = await client.put(f"{path}/{name}", content=body, headers=_headers(writer))
                assert response.status_code == 200, response.content

        async def watch_phase(path: str, names: list[str], wire: str, writer: str, label: str) -> float:
            """Instructions per event and watcher: ``watchers`` watches in ``wire`` while each pod
            is updated in ``writer``'s wire, beyond the same updates without watchers."""
            await updates(path, names, writer, f"alone-{label}")
            without = server.dump(f"{label}-watch-base")
            listing = await client.get(path, headers={"Accept": JSON})
            revision = listing.json()["metadata"]["resourceVersion"]
            streams = [Watcher(wire) for _ in range(watchers)]
            # A connection per watch: two watches streaming on one httpx HTTP/2 connection stall
            # (the first one gets no events), so each has its own; the event is encoded once
            # per wire either way.
            watch_clients = [httpx.AsyncClient(http2=True, verify=tls, timeout=3600, base_url=server.url,
                                               headers={"Authorization": f"Bearer {server.token}"})
                             for _ in streams]
            tasks = [asyncio.create_task(stream.run(watch_client, path, revision))
                     for stream, watch_client in zip(streams, watch_clients, strict=True)]
            # One event through every stream before the count: each watch is registered and
            # its headers are out.
            await updates(path, names[:1], "json", f"opened-{label}")
            for stream in streams:
                await stream.wait_for(1)
            await updates(path, names, writer, f"watched-{label}")
            for stream in streams:
                await stream.wait_for(1 + len(names))
            with_watchers = server.dump(f"{label}-watch")
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for watch_client in watch_clients:
                await watch_client.aclose()
            return (with_watchers - without) / (len(names) * watchers)

        async def watched_creates(wire: str, round_: int) -> float:
            """Instructions per create when one watcher of the namespace, in the wire, receives
            each created pod (a controller watching what it creates): the whole phase."""
            name = f"{wire}-{round_}-watched"
            path = await namespace(name)
            sent = pods(name, requests + 1)
            bodies = [_encode(wire, pod) for pod in sent]
            listing = await client.get(path, headers={"Accept": JSON})
            stream = Watcher(wire)
            watch_client = httpx.AsyncClient(http2=True, verify=tls, timeout=3600, base_url=server.url,
                                             headers={"Authorization": f"Bearer {server.token}"})
            task = asyncio.create_task(stream.run(watch_client, path, listing.json()["metadata"]["resourceVersion"]))
            # One create through the stream before the count: the watch is registered.
            await post(path, bodies[0], wire)
            await stream.wait_for(1)
            server.zero()
            for body in bodies[1:]:
                await post(path, body, wire)
            await stream.wait_for(1 + requests)
            counted = server.dump(f"{wire}-watched-create-{round_}") / requests
            task.cancel()
            await watch_client.aclose()
            return counted

        server.instrument(False)
        listed = await namespace("listed")
        for pod in pods("listed", list_size):
            await post(listed, orjson.dumps(pod), "json")
        for wire in WIRES:
            warm = await namespace(f"warm-{wire}")
            for pod in pods(f"warm-{wire}", 5):
                await post(warm, _encode(wire, pod), wire)
            objects = await read_all(warm, [f"web-7d4b9c8f6d-{index:06d}" for index in range(5)], wire)
            await put_all(warm, objects, wire, "warm")
            response = await client.get(listed, headers={"Accept": _headers(wire)["Accept"]})
            assert response.status_code == 200
        server.instrument(True)

        for round_ in range(rounds):
            for wire in WIRES if round_ % 2 == 0 else WIRES[::-1]:
                path = await namespace(f"{wire}-{round_}")
                sent = pods(f"{wire}-{round_}", requests)
                names = [pod["metadata"]["name"] for pod in sent]
                bodies = [_encode(wire, pod) for pod in sent]
                server.zero()
                for body in bodies:
                    await post(path, body, wire)
                figures.setdefault((wire, "create"), []).append(server.dump(f"{wire}-create") / requests)

                server.zero()
                objects = await read_all(path, names, wire)
                figures.setdefault((wire, "get"), []).append(server.dump(f"{wire}-get") / requests)

                marked = objects
                for obj in marked:
                    obj["metadata"].setdefault("labels", {})["round"] = "update"
                update_bodies = [_encode(wire, obj) for obj in marked]
                server.zero()
                for obj, body in zip(marked, update_bodies, strict=True):
                    response = await client.put(f"{path}/{obj['metadata']['name']}", content=body,
                                                headers=_headers(wire))
                    assert response.status_code == 200, response.content
                figures.setdefault((wire, "update"), []).append(server.dump(f"{wire}-update") / requests)

                server.zero()
                lists = 3
                for _ in range(lists):
                    response = await client.get(listed, headers={"Accept": _headers(wire)["Accept"]})
                    assert response.status_code == 200
                figures.setdefault((wire, "list"), []).append(server.dump(f"{wire}-list") / lists)

                figures.setdefault((wire, "watched create"), []).append(await watched_creates(wire, round_))

                # The watch rows: the same updates without and with watchers of the wire, written
                # in the wire (the writers speak as the watchers do), then in the other wire. The
                # two "writes" rows each set the two wires' watchers of the same writers side by
                # side: under JSON writers the protobuf watchers encode across wires, under Go
                # writers the JSON watchers do.
                same = await watch_phase(path, names, wire, wire, f"{wire}-{wire}-{round_}")
                other = "json" if wire == "protobuf" else "protobuf"
                across = await watch_phase(path, names, wire, other, f"{wire}-{other}-{round_}")
                figures.setdefault((wire, "watch"), []).append(same)
                figures.setdefault((wire, WRITES_ROW[wire]), []).append(same)
                figures.setdefault((wire, WRITES_ROW[other]), []).append(across)
    return figures


ROWS = (("create", "create a pod"), ("watched create", "  the same, one watcher of the wire"),
        ("get", "get a pod"), ("update", "update a pod (PUT)"),
        ("list", "list of {list_size} pods"), ("watch", "watch event, per watcher"),
        ("watch, JSON writes", "  the same, JSON writers"), ("watch, Go writes", "  the same, Go writers"))

WRITES_ROW = {"json": "watch, JSON writes", "protobuf": "watch, Go writes"}
"""The watch row of each writer's wire: every watcher, of either wire, gets that writer's updates."""


def run(*, requests: int, list_size: int, watchers: int, rounds: int = 3,
        checkout: Path | None = None) -> dict[tuple[str, str], list[float]]:
    """Count and print the table (medians of ``rounds``, wires taking turns to go first);
    returns instructions per request by (wire, row), one figure per round."""
    source = (checkout or Path(__file__).resolve().parent.parent).resolve()
    with tempfile.TemporaryDirectory() as work:
        server = Callgrind(source, Path(work))
        try:
            figures = asyncio.run(_session(server, requests, list_size, watchers, rounds))
        finally:
            server.stop()
    print(f"server instructions per request (callgrind), {source}: {requests} requests per row, "
          f"{watchers} watchers, HTTP/2, median of {rounds} rounds (protobuf / JSON per round)")
    print(f"{'request':34s} {'JSON':>12s} {'protobuf':>12s} {'pb / JSON':>10s}   rounds")
    for key, label in ROWS:
        json_counts, pb_counts = figures[("json", key)], figures[("protobuf", key)]
        ratios = " ".join(f"{pb / js:.3f}" for js, pb in zip(json_counts, pb_counts, strict=True))
        json_median, pb_median = statistics.median(json_counts), statistics.median(pb_counts)
        print(f"{label.format(list_size=list_size):34s} {json_median:12,.0f} {pb_median:12,.0f} "
              f"{pb_median / json_median:10.3f}   {ratios}")
    return figures
