"""Instructions per pod create, counted by callgrind, for two checkouts side by side (not a test).

Run: ``.venv/bin/python bench/instructions.py OLD_CHECKOUT NEW_CHECKOUT [--small 50] [--large 250]
[--as-admitted] [--warm N]``

Wall-clock rates on a shared 2-core machine move by 15% between identical runs; an instruction
count does not (valgrind's callgrind counts the same total for the same program and input,
whatever else the machine does). Each checkout's server runs under callgrind in a child process
(``kubeloop.server.app.KubeServer`` on SQLite, imported from that checkout) while this process
sends it ``--small`` and then, in a second run, ``--large`` pod creates over one keep-alive TLS
connection, one at a time. The difference of the two totals divided by the difference of the
counts is the server's instructions per create, with start-up, imports and shutdown cancelled
out. ``--as-admitted`` sends pods as the admission plugins would leave them (as ``bench/server.py
--as-admitted``), so servers with and without those plugins store the same bytes.

Every run starts from a copy of one data directory that the checkout's server prepared without
valgrind (its keys, certificates and bootstrap objects): generating an RSA key takes a random
number of primality tests, and a server generating its service-account key inside the count
moved a total by up to 700 million instructions, several million per create.

``--warm N`` counts differently, for quick comparisons while working on one piece (about two
minutes a checkout): one server per checkout runs under callgrind with instrumentation off
(``--instr-atstart=no``) through start-up, the namespaces and 20 warm-up creates, then
``callgrind_control`` turns it on for N creates and dumps the count. Its figures are a little
lower than the two-run difference (no first-create costs) and are compared among themselves.

Needs ``valgrind`` (Debian's package). A run of both checkouts at the defaults takes about ten
minutes.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import pod_body
from storage import NAMESPACES

_SERVE = """
import asyncio, json, sys
from pathlib import Path
from kubeloop.server.app import KubeServer, ServerConfig

async def main() -> None:
    server = KubeServer(ServerConfig(Path(sys.argv[1]), port=0, memory=False))
    await server.start()
    print(json.dumps([server.url, server.credentials.token, str(server.credentials.ca_cert)]), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await server.stop()

asyncio.run(main())
"""


def prepare_data(checkout: Path, data: Path) -> None:
    """Start and stop ``checkout``'s server once (not counted) on the new directory ``data``."""
    with tempfile.TemporaryDirectory() as work:
        serve = Path(work) / "serve.py"
        serve.write_text(_SERVE)
        data.mkdir()
        server = subprocess.Popen([sys.executable, str(serve), str(data)], cwd=checkout,
                                  env={**os.environ, "PYTHONPATH": str(checkout)}, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert server.stdin is not None and server.stdout is not None
        server.stdout.readline()
        server.stdin.write("\n")
        server.stdin.flush()
        server.wait(600)


Post = Callable[[str, dict[str, Any]], None]


def _serve_under_callgrind(checkout: Path, serve: Path, data: Path, out: Path, *options: str,
                           ) -> tuple[subprocess.Popen[str], http.client.HTTPSConnection, Post]:
    """``checkout``'s server on ``data`` under callgrind (``options`` added), a keep-alive TLS
    connection to it, and a ``post(path, body)`` that expects 201."""
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", *options, f"--callgrind-out-file={out}", sys.executable, str(serve),
         str(data)],
        cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)}, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdin is not None and server.stdout is not None
    url, token, ca = json.loads(server.stdout.readline())
    found = re.match(r"https://([^:]+):(\d+)", url)
    assert found is not None
    connection = http.client.HTTPSConnection(found[1], int(found[2]), timeout=600,
                                             context=ssl.create_default_context(cafile=ca))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def post(path: str, body: dict[str, Any]) -> None:
        connection.request("POST", path, body=json.dumps(body), headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status != 201:
            raise RuntimeError(f"{path}: {response.status}")

    return server, connection, post


def _namespaces(post: Post) -> None:
    """The pods' namespaces, then a pause while each one's default ServiceAccount appears."""
    for index in range(NAMESPACES):
        post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{index:02d}"}})
    time.sleep(2)


def count_instructions(checkout: Path, creates: int, as_admitted: bool, prepared: Path | None = None) -> int:
    """Total instructions of one server run under callgrind that served ``creates`` pod creates,
    starting from a copy of the data directory ``prepared`` (see :func:`prepare_data`) if given."""
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "callgrind.out"
        serve = Path(work) / "serve.py"
        serve.write_text(_SERVE)
        data = Path(work) / "data"
        if prepared is not None:
            shutil.copytree(prepared, data)
        else:
            data.mkdir()
        server, connection, post = _serve_under_callgrind(checkout, serve, data, out)
        assert server.stdin is not None
        _namespaces(post)
        for index in range(creates):
            pod = pod_body(index, as_admitted)
            post(f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods", pod)
        connection.close()
        server.stdin.write("\n")
        server.stdin.flush()
        server.wait(600)
        for line in out.read_text().splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no total")


def count_warm(checkout: Path, creates: int, as_admitted: bool) -> int:
    """Instructions of ``creates`` pod creates on a warm server (see ``--warm``)."""
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "callgrind.out"
        serve = Path(work) / "serve.py"
        serve.write_text(_SERVE)
        data = Path(work) / "data"
        data.mkdir()
        server, connection, post = _serve_under_callgrind(checkout, serve, data, out, "--instr-atstart=no")
        assert server.stdin is not None

        def control(*args: str) -> None:
            subprocess.run(["callgrind_control", *args, str(server.pid)], check=True, capture_output=True)

        _namespaces(post)
        for index in range(20):
            pod = pod_body(100_000 + index, as_admitted)
            post(f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods", pod)
        control("-i", "on")
        control("-z")
        for index in range(creates):
            pod = pod_body(index, as_admitted)
            post(f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods", pod)
        control("-d", "measured")
        dumped = Path(f"{out}.1")
        total = None
        for _ in range(600):
            found = re.search(r"^totals: (\d+)", dumped.read_text(), re.M) if dumped.exists() else None
            if found is not None:
                total = int(found[1])
                break
            time.sleep(0.1)
        connection.close()
        server.stdin.write("\n")
        server.stdin.flush()
        server.wait(600)
    if total is None:
        raise RuntimeError("callgrind wrote no dump")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--large", type=int, default=250)
    parser.add_argument("--as-admitted", action="store_true")
    parser.add_argument("--warm", type=int, default=0, metavar="N")
    args = parser.parse_args()
    per_create: dict[str, float] = {}
    for side in ("old", "new"):
        checkout = getattr(args, side).resolve()
        if args.warm:
            total = count_warm(checkout, args.warm, args.as_admitted)
            per_create[side] = total / args.warm
            print(f"{side} ({checkout}), warm: {total:,} instructions for {args.warm} creates: "
                  f"{per_create[side]:,.0f} per create", flush=True)
            continue
        with tempfile.TemporaryDirectory() as work:
            prepared = Path(work) / "data"
            prepare_data(checkout, prepared)
            small = count_instructions(checkout, args.small, args.as_admitted, prepared)
            large = count_instructions(checkout, args.large, args.as_admitted, prepared)
        per_create[side] = (large - small) / (args.large - args.small)
        print(f"{side} ({checkout}): {small:,} instructions for {args.small} creates, {large:,} for "
              f"{args.large}: {per_create[side]:,.0f} per create", flush=True)
    print(f"new / old instructions per create: {per_create['new'] / per_create['old']:.3f}")


if __name__ == "__main__":
    main()
