"""Instructions per pod PUT beside a create and a get, counted by callgrind (not a test).

Run: ``PYTHONPATH=$PWD .venv/bin/python bench/put_instructions.py [--requests 40] [--rounds 3]
[--wire json|protobuf] [--checkout DIR]``

What issue #20 asks of the server's writes: a CloneSet rolls its pods in place with PUTs of
whole pods (a new image, label and annotation on the main endpoint, then conditions on
``/status``), where a Deployment creates and deletes, and the server's instructions per PUT
decide how fast that roll can go. One server (memory store, imported from ``--checkout``,
default this one) runs under callgrind as in ``bench/wire_instructions.py`` (whose
:class:`Callgrind` this reuses); this process sends it, over one HTTP/2 connection, per round:

- ``create``: ``--requests`` pod creates (``bench/server.py --as-admitted`` pods);
- ``get``: a get of each;
- ``label``: a PUT of each as read, one label added (``bench/wire_instructions.py``'s update);
- ``in place``: a PUT of each as the label PUT answered it, as the CloneSet controller's
  in-place update writes it: a new container image, a new revision label, a new annotation;
- ``status``: a PUT to ``/status`` of each as the previous PUT answered it, one condition added
  (the controller's ``InPlaceUpdateReady``);
- ``no-op``: a PUT of each exactly as the previous PUT answered it (nothing stored).

Each phase sits between ``callgrind_control -z`` and ``-d``; a warm-up of every phase runs
with instrumentation off. Prints the median of ``--rounds`` rounds per row, and each round.
Needs ``valgrind``; about two minutes at the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import ssl
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import pod_body
from wire_instructions import Callgrind, _decode, _encode, _headers

PHASES = ("create", "get", "label", "in place", "status", "no-op")
CONDITION = {"type": "InPlaceUpdateReady", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}
STATE = "apps.kruise.io/inplace-update-state"


def changed(phase: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The body of ``phase``'s PUT of ``obj`` (as the server last answered it)."""
    body = copy.deepcopy(obj)
    meta = body["metadata"]
    if phase == "label":
        meta.setdefault("labels", {})["round"] = "update"
    elif phase == "in place":
        body["spec"]["containers"][0]["image"] = "nginx:1.26.0"
        meta["labels"]["controller-revision-hash"] = "web-5c9d7b8f4"
        meta.setdefault("annotations", {})[STATE] = orjson.dumps(
            {"revision": "web-5c9d7b8f4", "updateTimestamp": "2026-01-02T03:04:05Z"}).decode()
    elif phase == "status":
        body.setdefault("status", {}).setdefault("conditions", []).append(dict(CONDITION))
    return body


async def _session(server: Callgrind, requests: int, rounds: int, wire: str) -> dict[str, list[float]]:
    tls = ssl.create_default_context(cafile=server.ca)
    figures: dict[str, list[float]] = {}
    headers = _headers(wire)
    async with httpx.AsyncClient(http2=True, verify=tls, timeout=3600, base_url=server.url,
                                 headers={"Authorization": f"Bearer {server.token}"}) as client:

        async def one_round(name: str, count: int, counted: bool) -> None:
            response = await client.post("/api/v1/namespaces", content=orjson.dumps({"metadata": {"name": name}}),
                                         headers=_headers("json"))
            assert response.status_code == 201, response.content
            path = f"/api/v1/namespaces/{name}/pods"
            sent = []
            for index in range(count):
                pod = pod_body(index, True)
                pod["metadata"]["namespace"] = name
                sent.append(_encode(wire, pod))

            def start() -> None:
                if counted:
                    server.zero()

            def end(phase: str) -> None:
                if counted:
                    figures.setdefault(phase, []).append(server.dump(f"{name}-{phase}") / count)

            start()
            for body in sent:
                response = await client.post(path, content=body, headers=headers)
                assert response.status_code == 201, response.content
            end("create")
            names = [f"web-7d4b9c8f6d-{index:06d}" for index in range(count)]
            start()
            current = []
            for pod_name in names:
                response = await client.get(f"{path}/{pod_name}", headers={"Accept": headers["Accept"]})
                assert response.status_code == 200, response.content
                current.append(response.content)
            end("get")
            for phase in PHASES[2:]:
                bodies = [_encode(wire, changed(phase, _decode(wire, answer))) for answer in current]
                suffix = "/status" if phase == "status" else ""
                start()
                answers = []
                for pod_name, body in zip(names, bodies, strict=True):
                    response = await client.put(f"{path}/{pod_name}{suffix}", content=body, headers=headers)
                    assert response.status_code == 200, response.content
                    answers.append(response.content)
                end(phase)
                current = answers

        server.instrument(False)
        await one_round("warm", 5, False)
        server.instrument(True)
        for round_ in range(rounds):
            await one_round(f"round-{round_}", requests, True)
    return figures


def run(*, requests: int, rounds: int, wire: str, checkout: Path | None) -> dict[str, list[float]]:
    source = (checkout or Path(__file__).resolve().parent.parent).resolve()
    with tempfile.TemporaryDirectory() as work:
        server = Callgrind(source, Path(work))
        try:
            figures = asyncio.run(_session(server, requests, rounds, wire))
        finally:
            server.stop()
    print(f"server instructions per request (callgrind), {source}: {wire}, {requests} requests per row, "
          f"median of {rounds} rounds")
    for phase in PHASES:
        counts = figures[phase]
        print(f"{phase:10s} {statistics.median(counts):12,.0f}   " + " ".join(f"{c:,.0f}" for c in counts))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--wire", choices=("json", "protobuf"), default="json")
    parser.add_argument("--checkout", type=Path, default=None,
                        help="the server's code from this checkout (default this one)")
    args = parser.parse_args()
    run(requests=args.requests, rounds=args.rounds, wire=args.wire, checkout=args.checkout)


if __name__ == "__main__":
    main()
