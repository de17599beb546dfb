"""``kubeloop`` and other commands as child processes, awaited without blocking the event loop,
for tests whose API server runs in-process on that same loop (a blocking wait would stop the
server the child talks to)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path


async def run(*args: str) -> str:
    """A command's stdout; AssertionError with its stderr unless it exits 0."""
    process = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, f"{args}: {err.decode()}"
    return out.decode()


class Kubeloop:
    """``kubeloop ARGS`` with stdout and stderr going to ``log``."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path) -> None:
        self.process = process
        self.log = log

    @classmethod
    async def start(cls, log: Path, *args: str, env: Mapping[str, str] | None = None) -> Kubeloop:
        """Started with this process's environment, ``env`` added."""
        with log.open("w") as out:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kubeloop.cli.main", *args, stdout=out, stderr=out,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        return cls(process, log)

    def output(self) -> str:
        return self.log.read_text()

    async def wait_for_output(self, fragment: str, timeout: float = 60.0) -> None:
        """Until ``fragment`` is in the output; AssertionError (with the output) if the process
        exits or ``timeout`` passes first."""
        deadline = asyncio.get_running_loop().time() + timeout
        while fragment not in self.output():
            if self.process.returncode is not None or asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"no {fragment!r} in the output of {self.log.name}:\n{self.output()}")
            await asyncio.sleep(0.1)

    async def exit_code(self, timeout: float = 60.0) -> int:
        return await asyncio.wait_for(self.process.wait(), timeout)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 15)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
