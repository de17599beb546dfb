"""Child processes of the harness: the pinned API server and line-reporting children.

CPU placement: the server, the observer and the harness itself share CPU 0; the contestant
alone gets CPU 1 (``taskset``, when the machine has two CPUs or more). Contestant CPU time
and peak RSS come from ``/proc/<pid>`` at the moment convergence is seen (so shutdown is
not billed) and, for the whole life, from ``os.wait4``.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

ROOT = Path(__file__).resolve().parents[2]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def pinned(cpu: int, argv: list[str]) -> list[str]:
    if shutil.which("taskset") and (os.cpu_count() or 1) > 1:
        return ["taskset", "-c", str(cpu), *argv]
    return argv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a live process (fields 14 and 15 of /proc/<pid>/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_memory_mib(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a live process, MiB."""
    rss = hwm = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    except OSError:
        pass
    return rss, hwm


class Child:
    """A child process whose stdout is JSON lines (``{"event": ...}``) read on a thread."""

    def __init__(self, argv: list[str], *, cpu: int | None, env: dict[str, str] | None = None,
                 stdin: bool = False, log: Path | None = None) -> None:
        self.started = time.monotonic()
        self._log: BinaryIO | None = open(log, "ab") if log else None  # noqa: SIM115 - closed in wait()
        self.proc = subprocess.Popen(pinned(cpu, argv) if cpu is not None else argv, cwd=ROOT,
                                     stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self._log or subprocess.DEVNULL, env=env)
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.usage: Any = None
        self.status: int | None = None
        threading.Thread(target=self._read, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                self.events.put(json.loads(raw))
            except ValueError:
                continue
        self.events.put({"event": "exit", "t": time.monotonic()})

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def wait_event(self, names: set[str], timeout: float) -> dict[str, Any] | None:
        """The next event named in ``names`` (or ``exit``), None after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                event = self.events.get(timeout=remaining)
            except queue.Empty:
                return None
            if event.get("event") in names or event.get("event") == "exit":
                return event

    def snapshot(self) -> dict[str, float]:
        rss, hwm = proc_memory_mib(self.pid)
        return {"cpu_s": proc_cpu_seconds(self.pid), "rss_mib": rss, "peak_rss_mib": hwm}

    def stop(self, grace: float = 30.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; reaps the process with wait4."""
        # os.kill, not Popen.send_signal: the latter polls, reaping the child before wait4 can.
        if self.status is None and not self.exited():
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        self.wait(grace)

    def exited(self) -> bool:
        """Reap the child if it has ended (keeping its rusage); True once it has."""
        if self.status is None:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                self.status, self.usage = status, usage
                self.proc.returncode = os.waitstatus_to_exitcode(status)
        return self.status is not None

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.exited():
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                _, self.status, self.usage = os.wait4(self.pid, 0)
                self.proc.returncode = -9
                break
            time.sleep(0.05)
        if self._log is not None and not self._log.closed:
            self._log.close()

    def final_usage(self) -> dict[str, float]:
        if self.usage is None:
            return {}
        return {"cpu_s_total": self.usage.ru_utime + self.usage.ru_stime,
                "peak_rss_mib_total": self.usage.ru_maxrss / 1024}


class Server:
    """``kubeloop server`` on CPU 0 over a data directory (HTTPS, bearer token)."""

    def __init__(self, data_dir: Path, port: int, watch_cache_size: int, log: Path, loop: str = "") -> None:
        self.data_dir, self.port, self.watch_cache_size, self.log = data_dir, port, watch_cache_size, log
        self.loop = loop
        """``KUBELOOP_EVENT_LOOP`` for the server ("": the command's default)."""
        self.child: Child | None = None
        self.cpu_at_start = 0.0

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    def start(self, timeout: float = 120.0) -> None:
        self.kubeconfig.unlink(missing_ok=True)
        argv = [sys.executable, "-m", "kubeloop", "server", "--data-dir", str(self.data_dir),
                "--port", str(self.port), "--watch-cache-size", str(self.watch_cache_size)]
        env = {**os.environ, "KUBELOOP_EVENT_LOOP": self.loop} if self.loop else None
        self.child = Child(argv, cpu=0, env=env, log=self.log)
        deadline = time.monotonic() + timeout
        while not self.kubeconfig.exists():
            if self.child.exited():
                raise RuntimeError(f"server exited early; see {self.log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"server did not start; see {self.log}")
            time.sleep(0.05)
        self.cpu_at_start = proc_cpu_seconds(self.child.pid)

    def cpu_seconds(self) -> float:
        """Server CPU since it finished starting."""
        return proc_cpu_seconds(self.child.pid) - self.cpu_at_start if self.child else 0.0

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop(grace=15.0)
            self.child = None
