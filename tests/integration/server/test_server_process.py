"""The ``kubeloop server`` process: clean stop on signals, and durability under kill -9."""

from __future__ import annotations

import asyncio
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import orjson
import yaml

_LAUNCH = "from kubeloop.cli.main import main; main()"


def _start(data_dir: Path) -> tuple[subprocess.Popen[bytes], str, str, str]:
    """Start ``kubeloop server`` on a free port; returns (process, url, token, CA file)."""
    kubeconfig = data_dir / "kubeconfig"
    kubeconfig.unlink(missing_ok=True)
    with (data_dir / "server.log").open("ab") as log:
        process = subprocess.Popen([sys.executable, "-c", _LAUNCH, "server", "--data-dir", str(data_dir),
                                    "--port", "0"], stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 30
    while not kubeconfig.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise AssertionError(f"server did not start: {(data_dir / 'server.log').read_text()[-2000:]}")
        time.sleep(0.05)
    config = yaml.safe_load(kubeconfig.read_text())
    return process, config["clusters"][0]["cluster"]["server"], config["users"][0]["user"]["token"], str(
        data_dir / "ca.crt")


async def _write_until_killed(url: str, token: str, ca: str, process: subprocess.Popen[bytes],
                              kill_after: int, prefix: str = "w") -> list[tuple[str, int]]:
    """Create config maps from 4 concurrent writers; kill -9 the server after ``kill_after`` acks."""
    acknowledged: list[tuple[str, int]] = []
    context = ssl.create_default_context(cafile=ca)
    headers = {"Authorization": f"Bearer {token}"}

    async def writer(session: aiohttp.ClientSession, prefix: str) -> None:
        index = 0
        while True:
            name = f"{prefix}-{index}"
            index += 1
            try:
                async with session.post(f"{url}/api/v1/namespaces/default/configmaps", ssl=context,
                                        json={"metadata": {"name": name}, "data": {"n": name}}) as response:
                    if response.status != 201:
                        return
                    body = await response.json()
            except (aiohttp.ClientError, OSError):
                return
            acknowledged.append((name, int(body["metadata"]["resourceVersion"])))
            if len(acknowledged) == kill_after:
                process.send_signal(signal.SIGKILL)

    async with aiohttp.ClientSession(headers=headers) as session:
        await asyncio.gather(*(writer(session, f"{prefix}{n}") for n in range(4)))
    return acknowledged


async def _list(url: str, token: str, ca: str) -> dict[str, int]:
    context = ssl.create_default_context(cafile=ca)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session, session.get(
            f"{url}/api/v1/namespaces/default/configmaps", ssl=context) as response:
        body = orjson.loads(await response.read())
    return {item["metadata"]["name"]: int(item["metadata"]["resourceVersion"]) for item in body["items"]}


def test_sigterm_stops_the_server_cleanly(tmp_path: Path) -> None:
    process, url, token, ca = _start(tmp_path)
    assert set(asyncio.run(_list(url, token, ca))) == {"kube-root-ca.crt"}
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0
    assert "stopped" in (tmp_path / "server.log").read_text()


def test_every_acknowledged_write_survives_kill_9(tmp_path: Path) -> None:
    process, url, token, ca = _start(tmp_path)
    acknowledged = asyncio.run(_write_until_killed(url, token, ca, process, kill_after=300))
    process.wait(timeout=20)
    assert process.returncode == -signal.SIGKILL
    assert len(acknowledged) >= 300
    restarted, url, token, ca = _start(tmp_path)
    try:
        stored = asyncio.run(_list(url, token, ca))
        missing = [name for name, _ in acknowledged if name not in stored]
        assert missing == []
        assert all(stored[name] == rv for name, rv in acknowledged)
        newest = max(rv for _, rv in acknowledged)
        later = asyncio.run(_write_until_killed(url, token, ca, restarted, kill_after=1, prefix="after"))
        assert later and later[0][1] > newest
    finally:
        restarted.kill()
        restarted.wait(timeout=20)
