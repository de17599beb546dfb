"""``kubeloop up`` serves the rollout page too, and prints its address at start."""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
from pathlib import Path

import aiohttp
import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def line_with(stream: asyncio.StreamReader, fragment: str, seen: list[str]) -> str:
    async with asyncio.timeout(60):
        while True:
            raw = await stream.readline()
            assert raw, f"no line with {fragment!r} in:\n" + "".join(seen)
            line = raw.decode()
            seen.append(line)
            if fragment in line:
                return line


@pytest.mark.e2e
async def test_up_prints_and_serves_the_dashboard(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubeloop", "up", "--data-dir", str(tmp_path / "cluster"), "--memory",
        "--port", str(free_port()), "--dashboard-port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        assert process.stdout is not None
        seen: list[str] = []
        line = await line_with(process.stdout, "Rollout dashboard: http://", seen)
        url = line.split(": ", 1)[1].strip()
        await line_with(process.stdout, "kubeloop is ready", seen)
        async with aiohttp.ClientSession() as session:
            async with session.get(url) as response:
                assert "kubeloop rollouts" in await response.text()
            async with session.get(url + "api/state") as response:
                assert (await response.json())["type"] == "snapshot"
        process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.e2e
async def test_a_busy_dashboard_port_is_reported_without_a_stack_trace(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kubeloop", "up", "--data-dir", str(tmp_path / "cluster"), "--memory",
            "--port", str(free_port()), "--dashboard-port", str(taken),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output, _ = await asyncio.wait_for(process.communicate(), 60)
    text = output.decode()
    assert process.returncode == 1, text
    assert f"Error: cannot serve the dashboard on 127.0.0.1:{taken}: address already in use" in text
    assert "Traceback" not in text
