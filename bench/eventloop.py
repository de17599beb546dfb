"""CPU per request on uvloop and on asyncio's loop, client and server side (not a test).

    .venv/bin/python bench/eventloop.py [--requests 3000] [--rounds 3] [--concurrency 8]

Each round starts ``kubeloop server --memory`` (HTTPS; the kubeconfig's bearer token) once
per server loop (``KUBELOOP_EVENT_LOOP=asyncio`` / ``uvloop``, server pinned to CPU 0) and
runs, against each, one fresh client process per client loop (pinned to CPU 1; the order
alternates between rounds). A client is kubeloop's ``ApiClient`` (aiohttp over TLS, HTTP/1.1,
``qps=0``): it creates ``--requests`` ConfigMaps, then merge-PATCHes each once -- B1's
request -- with ``--concurrency`` requests in flight. Reported per phase: the client's CPU
per request (``process_time`` around the phase only: no imports, no start-up), the server's
CPU per request (``/proc/<pid>/stat`` around the phase) and requests per second. The
machine is shared: compare the loops within a round, and read the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOOPS = ("asyncio", "uvloop")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _pinned(cpu: int, argv: list[str]) -> list[str]:
    return ["taskset", "-c", str(cpu), *argv] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else argv


async def _client(kubeconfig: str, requests: int, concurrency: int, server_pid: int, gated: bool) -> None:
    from kubeloop.client import CONFIG_MAPS, ApiClient, load_kubeconfig
    from kubeloop.runtime.eventloop import running_loop_name

    config = dataclasses.replace(load_kubeconfig(kubeconfig), qps=0)
    prefix = f"b{os.getpid()}"
    async with ApiClient(config) as client:
        await client.create(CONFIG_MAPS, {"metadata": {"name": f"{prefix}-warm"}}, namespace="default")

        async def phase(make: Any) -> dict[str, float]:
            queue = list(range(requests))

            async def worker() -> None:
                while queue:
                    await make(queue.pop())

            if gated:  # the parent zeroes a callgrind's counters now, and dumps them after the phase
                print("ready", flush=True)
                await asyncio.to_thread(sys.stdin.readline)
            cpu, server, wall = time.process_time(), _cpu_of(server_pid), time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            cpu, server, wall = time.process_time() - cpu, _cpu_of(server_pid) - server, time.perf_counter() - wall
            if gated:
                print("done", flush=True)
                await asyncio.to_thread(sys.stdin.readline)
            return {"client_us": cpu / requests * 1e6, "server_us": server / requests * 1e6, "rate": requests / wall}

        created = await phase(lambda i: client.create(CONFIG_MAPS, {"metadata": {"name": f"{prefix}-{i}"}},
                                                      namespace="default"))
        patched = await phase(lambda i: client.patch(CONFIG_MAPS, f"{prefix}-{i}",
                                                     {"metadata": {"annotations": {"bench/seen": "1"}}},
                                                     namespace="default"))
    print(json.dumps({"loop": running_loop_name(), "create": created, "patch": patched}))


def _run_client(loop: str, kubeconfig: Path, args: argparse.Namespace, server_pid: int) -> dict[str, Any]:
    env = {**os.environ, "KUBELOOP_EVENT_LOOP": loop, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(_pinned(1, [sys.executable, __file__, "--client", str(kubeconfig), "--requests",
                                      str(args.requests), "--concurrency", str(args.concurrency),
                                      "--server-pid", str(server_pid)]),
                          env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loop"] == loop, result
    return result


def _start_server(loop: str, data: Path, wrapper: list[str] | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "KUBELOOP_EVENT_LOOP": loop, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(_pinned(0, [*(wrapper or []), sys.executable, "-m", "kubeloop", "server",
                                           "--data-dir", str(data), "--port", "0", "--memory"]),
                               env=env, stdout=subprocess.DEVNULL, stderr=(data / "server.log").open("wb"))
    deadline = time.monotonic() + (600 if wrapper else 120)
    while not (data / "kubeconfig").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError((data / "server.log").read_text())
        time.sleep(0.05)
    return process


def _callgrind(out: Path) -> list[str]:
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]


class _Counted:
    """A process under callgrind: instrumentation on, counters zeroed and dumped by phase."""

    def __init__(self, pid: int, out: Path) -> None:
        self.pid, self.out, self.dumps = pid, out, 0

    def control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self.pid)], check=True, capture_output=True)

    def zero(self) -> None:
        if self.dumps == 0:
            self.control("-i", "on")
        self.control("-z")

    def dump(self) -> int:
        self.dumps += 1
        self.control("-d", f"phase{self.dumps}")
        path = Path(f"{self.out}.{self.dumps}")
        for _ in range(1200):
            if path.exists() and (found := re.search(r"^totals: (\d+)", path.read_text(), re.M)):
                return int(found[1])
            time.sleep(0.1)
        raise RuntimeError(f"no callgrind dump in {path}")


def _gated_client(loop: str, kubeconfig: Path, args: argparse.Namespace, server_pid: int,
                  counted: Path | None) -> tuple[subprocess.Popen[str], _Counted | None]:
    env = {**os.environ, "KUBELOOP_EVENT_LOOP": loop, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, __file__, "--client", str(kubeconfig), "--requests", str(args.requests),
            "--concurrency", str(args.concurrency), "--server-pid", str(server_pid), "--gated"]
    process = subprocess.Popen(_pinned(1, [*(_callgrind(counted) if counted else []), *argv]), env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return process, _Counted(process.pid, counted) if counted else None


def _drive(client: subprocess.Popen[str], counted: _Counted) -> dict[str, float]:
    """Zero before each of the client's phases, dump after: instructions per request by phase."""
    assert client.stdin is not None and client.stdout is not None
    counts: list[int] = []
    for line in client.stdout:
        if line.strip() == "ready":
            counted.zero()
        elif line.strip() == "done":
            counts.append(counted.dump())
        else:
            result = json.loads(line)
            break
        client.stdin.write("\n")
        client.stdin.flush()
    client.wait(600)
    return {"loop": result["loop"], "create": counts[0], "patch": counts[1]}


def count_instructions(args: argparse.Namespace) -> None:
    """Instructions per request: the client's (server on asyncio, uncounted), then the server's
    (client on asyncio, uncounted), each on both loops, alternating by round."""
    rows: list[dict[str, Any]] = []
    for round_ in range(1, args.rounds + 1):
        order = LOOPS if round_ % 2 else LOOPS[::-1]
        for loop in order:
            with tempfile.TemporaryDirectory(prefix="kubeloop-bench-loop-") as tmp:
                server = _start_server("asyncio", Path(tmp))
                try:
                    client, counted = _gated_client(loop, Path(tmp) / "kubeconfig", args, server.pid,
                                                    Path(tmp) / "client.out")
                    assert counted is not None
                    result = _drive(client, counted)
                    assert result["loop"] == loop, result
                finally:
                    server.terminate()
                    server.wait(30)
            rows.append({"side": "client", "loop": loop, **result})
            print(f"round {round_} client on {loop:<7}: {result['create'] / args.requests:9.0f} instructions/create "
                  f"{result['patch'] / args.requests:9.0f} /patch", flush=True)
        for loop in order:
            with tempfile.TemporaryDirectory(prefix="kubeloop-bench-loop-") as tmp:
                out = Path(tmp) / "server.out"
                server = _start_server(loop, Path(tmp), _callgrind(out))
                try:
                    client, _ = _gated_client("asyncio", Path(tmp) / "kubeconfig", args, server.pid, None)
                    result = {**_drive(client, _Counted(server.pid, out)), "loop": loop}
                finally:
                    server.terminate()
                    server.wait(120)
                assert f"event loop: {loop}" in (Path(tmp) / "server.log").read_text()
            rows.append({"side": "server", **result})
            print(f"round {round_} server on {loop:<7}: {result['create'] / args.requests:9.0f} instructions/create "
                  f"{result['patch'] / args.requests:9.0f} /patch", flush=True)
    print("medians, instructions per request:")
    for side in ("client", "server"):
        for loop in LOOPS:
            mine = [r for r in rows if (r["side"], r["loop"]) == (side, loop)]
            print(f"  {side} on {loop:<7}: create {statistics.median(r['create'] for r in mine) / args.requests:9.0f}"
                  f"  patch {statistics.median(r['patch'] for r in mine) / args.requests:9.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--gated", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--callgrind", action="store_true",
                        help="count instructions per request (callgrind) instead of CPU time: the client's, "
                             "then the server's, on each loop")
    args = parser.parse_args()
    if args.client:
        from kubeloop.runtime.eventloop import run

        run(_client(args.client, args.requests, args.concurrency, args.server_pid, args.gated))
        return
    if args.callgrind:
        count_instructions(args)
        return
    rows: list[dict[str, Any]] = []
    for round_ in range(1, args.rounds + 1):
        order = LOOPS if round_ % 2 else LOOPS[::-1]
        print(f"round {round_}: load average {os.getloadavg()[0]:.2f}", flush=True)
        for server_loop in order:
            with tempfile.TemporaryDirectory(prefix="kubeloop-bench-loop-") as tmp:
                server = _start_server(server_loop, Path(tmp))
                try:
                    for client_loop in order:
                        result = _run_client(client_loop, Path(tmp) / "kubeconfig", args, server.pid)
                        for phase in ("create", "patch"):
                            row = {"round": round_, "server": server_loop, "client": client_loop, "phase": phase,
                                   **result[phase]}
                            rows.append(row)
                            print(f"  server={server_loop:<7} client={client_loop:<7} {phase:<6} "
                                  f"client {row['client_us']:6.0f} us/req  server {row['server_us']:6.0f} us/req  "
                                  f"{row['rate']:6.0f} req/s", flush=True)
                finally:
                    server.terminate()
                    server.wait(30)
    print("medians:")
    for phase in ("create", "patch"):
        for server_loop in LOOPS:
            for client_loop in LOOPS:
                mine = [r for r in rows if (r["phase"], r["server"], r["client"]) == (phase, server_loop, client_loop)]
                print(f"  server={server_loop:<7} client={client_loop:<7} {phase:<6} "
                      f"client {statistics.median(r['client_us'] for r in mine):6.0f} us/req  "
                      f"server {statistics.median(r['server_us'] for r in mine):6.0f} us/req  "
                      f"{statistics.median(r['rate'] for r in mine):6.0f} req/s")


if __name__ == "__main__":
    main()
