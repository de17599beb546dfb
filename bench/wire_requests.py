"""Server CPU per request, JSON beside protobuf, over one HTTP/2 connection (not a test).

Run: ``PYTHONPATH=$PWD .venv/bin/python bench/wire_requests.py [--requests 400] [--rounds 4]``
or, counting instructions instead of CPU time: ``... bench/wire_requests.py --callgrind
[--requests 20] [--rounds 3] [--list-size 500]`` (see :mod:`wire_instructions`).

What the issue on protobuf asks: serving a Go client in protobuf must cost the server no more
CPU per request than JSON. The embedded server runs in a child process (memory store; the
server of ``bench/server.py``); this process sends it, over one HTTP/2 connection (httpx), the
same pod creates and then gets of those pods, once with JSON bodies and ``Accept:
application/json`` and once in protobuf both ways (bodies encoded with the server's own codec,
``Accept: application/vnd.kubernetes.protobuf, */*`` as client-go sends it). Rounds alternate
between the two wires; each batch's server CPU (``time.process_time`` of the server process)
divided by its requests gives microseconds per request, and the table shows each round and the
median. The pods are ``bench/server.py --as-admitted`` pods, each batch in a namespace of its own.
"""

from __future__ import annotations

import argparse
import ssl
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import pod_body, run_kube_server, spawn

from kubeloop.server.codec import protobuf

PROTOBUF_ACCEPT = "application/vnd.kubernetes.protobuf, */*"


def _cpu(conn: Any) -> float:
    conn.send("cpu")
    value: float = conn.recv()
    return value


def _batch(client: httpx.Client, conn: Any, url: str, namespace: str, count: int, wire: str) -> tuple[float, float]:
    """Server CPU microseconds per create and per get of ``count`` pods on ``wire``."""
    created = client.post(f"{url}/api/v1/namespaces", json={"metadata": {"name": namespace}})
    assert created.status_code == 201, created.text
    pods = []
    for index in range(count):
        pod = pod_body(index, True)
        pod["metadata"]["namespace"] = namespace
        pods.append(pod)
    if wire == "json":
        bodies = [orjson.dumps(pod) for pod in pods]
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
    else:
        bodies = [protobuf.encode(pod) for pod in pods]
        headers = {"Content-Type": protobuf.MEDIA_TYPE, "Accept": PROTOBUF_ACCEPT}
    path = f"{url}/api/v1/namespaces/{namespace}/pods"
    start = _cpu(conn)
    for body in bodies:
        response = client.post(path, content=body, headers=headers)
        assert response.status_code == 201, response.text
    middle = _cpu(conn)
    for pod in pods:
        response = client.get(f"{path}/{pod['metadata']['name']}", headers={"Accept": headers["Accept"]})
        assert response.status_code == 200, response.text
    end = _cpu(conn)
    return (middle - start) / count * 1e6, (end - middle) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=None,
                        help="pod creates (and gets) per batch: 400, or 20 with --callgrind")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--callgrind", action="store_true",
                        help="count the server's instructions per request under callgrind (wire_instructions.py)")
    parser.add_argument("--list-size", type=int, default=500, help="pods per list (--callgrind)")
    parser.add_argument("--watchers", type=int, default=4, help="watchers per wire (--callgrind)")
    parser.add_argument("--checkout", type=Path, default=None,
                        help="the server's code from this checkout (--callgrind; default this one)")
    args = parser.parse_args()
    if args.callgrind:
        from wire_instructions import run

        run(requests=args.requests or 20, list_size=args.list_size, watchers=args.watchers, rounds=args.rounds,
            checkout=args.checkout)
        return
    args.requests = args.requests or 400
    figures: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as data_dir:
        process, conn, (url, token, ca) = spawn(run_kube_server, data_dir, True)
        tls = ssl.create_default_context(cafile=ca)
        with httpx.Client(http2=True, verify=tls, headers={"Authorization": f"Bearer {token}"}) as client:
            _batch(client, conn, url, "warm-up", 50, "json")
            _batch(client, conn, url, "warm-up-pb", 50, "protobuf")
            for round_ in range(args.rounds):
                for wire in ("json", "protobuf") if round_ % 2 == 0 else ("protobuf", "json"):
                    create, get = _batch(client, conn, url, f"{wire}-{round_}", args.requests, wire)
                    figures.setdefault((wire, "create"), []).append(create)
                    figures.setdefault((wire, "get"), []).append(get)
                    response = client.get(f"{url}/version")
                    assert response.http_version == "HTTP/2", response.http_version
        conn.send("stop")
        process.join(30)
    print(f"server CPU per request (us), {args.requests} pods per batch, HTTP/2, rounds alternated")
    print(f"{'request':28s} {'per round':>40s} | median")
    for verb in ("create", "get"):
        for wire in ("json", "protobuf"):
            values = figures[(wire, verb)]
            rounds = " ".join(f"{value:7.0f}" for value in values)
            print(f"{verb + ' pod, ' + wire:28s} {rounds:>40s} | {statistics.median(values):7.0f}")
        ratio = statistics.median(figures[("protobuf", verb)]) / statistics.median(figures[("json", verb)])
        print(f"{verb + ' pod, protobuf / json':28s} {'':>40s} | {ratio:7.2f}")


if __name__ == "__main__":
    main()
