"""Running ``kubeloop`` commands as child processes and reading what they print."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port



class KubeloopProcess:
    """``kubeloop ARGS`` in a child process; stdout and stderr lines are collected as they come."""

    def __init__(self, *args: str, cwd: Path | None = None) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kubeloop.cli.main", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        self._pumps = [threading.Thread(target=self._pump, args=(stream,), daemon=True)
                       for stream in (self.process.stdout, self.process.stderr)]
        for pump in self._pumps:
            pump.start()

    def _pump(self, stream: Any) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))

    def wait_for_line(self, fragment: str, timeout: float = 60.0) -> str:
        """The first line containing ``fragment`` (earlier lines are kept in ``output``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None and self.lines.empty():
                    break
                continue
            self.output.append(line)
            if fragment in line:
                return line
        raise AssertionError(f"no line with {fragment!r}; output so far:\n" + "\n".join(self.output))

    def all_output(self) -> list[str]:
        """Every line the process printed (call once it has exited)."""
        for pump in self._pumps:
            pump.join(10)
        while not self.lines.empty():
            self.output.append(self.lines.get_nowait())
        return self.output

    def signal(self, signum: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send ``signum`` and wait for the exit code."""
        self.process.send_signal(signum)
        return self.process.wait(timeout)

    def close(self) -> None:
        """Kill the process if it still runs, and release its pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        for pump in self._pumps:
            pump.join(10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
