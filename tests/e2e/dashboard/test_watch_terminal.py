"""``kubeloop watch`` under a pseudo-terminal, against the embedded cluster: exit codes and the final frame.

The command runs as a child process on the slave side of a pty (so rich sees a real terminal
of 120 columns) while the cluster runs in the test's event loop; a thread collects what the
child writes. Frames are separated by rich's cursor movements; once the escape sequences are
stripped, the final frame is the text after the last header line.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from kubeloop.client import DEPLOYMENTS
from kubeloop.testing.cluster import EmbeddedCluster
from tests.e2e.dashboard.manifests import web_deployment

ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\r")
HEADER = "kubeloop watch: namespace default"


class PtyCommand:
    """A child process whose stdin, stdout and stderr are a pseudo-terminal."""

    def __init__(self, argv: list[str], columns: int = 120, rows: int = 60) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows)}
        env.pop("NO_COLOR", None)
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                        start_new_session=True)
        os.close(slave)
        self._master = master
        self._output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not chunk:
                break
            with self._lock:
                self._output.extend(chunk)

    def text(self) -> str:
        with self._lock:
            data = bytes(self._output)
        return ANSI.sub(b"", data).decode("utf-8", "replace")

    async def wait_for_text(self, fragment: str, timeout: float = 60.0) -> None:
        async with asyncio.timeout(timeout):
            while fragment not in self.text():
                assert self.process.poll() is None, f"exited {self.process.returncode}:\n{self.text()}"
                await asyncio.sleep(0.05)

    async def exit_code(self, timeout: float = 60.0) -> int:
        code = await asyncio.to_thread(self.process.wait, timeout)
        await asyncio.to_thread(self._reader.join, 10)
        os.close(self._master)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def watch_command(kubeconfig: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "kubeloop", "watch", *args, "--kubeconfig", str(kubeconfig), "-n", "default"]


def final_frame(text: str) -> list[str]:
    return [line.rstrip() for line in text.rsplit(HEADER, 1)[-1].splitlines() if line.strip()]


@pytest.mark.e2e
async def test_watch_follows_a_rollout_to_completion(kubeloop_cluster: EmbeddedCluster) -> None:
    client = kubeloop_cluster.client
    await client.create(DEPLOYMENTS, web_deployment("registry.example/web:1", ready_delay="0.2"), namespace="default")
    await kubeloop_cluster.wait_for(DEPLOYMENTS, "web",
                                    lambda d: (d.get("status") or {}).get("availableReplicas") == 4)
    # Paused, the new template waits: the watch is certainly running before the rollout starts.
    deployment = await client.get(DEPLOYMENTS, "web", namespace="default")
    deployment["spec"]["paused"] = True
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/web:2"
    await client.update(DEPLOYMENTS, deployment, namespace="default")
    await kubeloop_cluster.wait_for(DEPLOYMENTS, "web",
                                    lambda d: (d.get("status") or {}).get("observedGeneration") == 2)

    command = PtyCommand(watch_command(kubeloop_cluster.kubeconfig_path, "deployment/web"))
    try:
        await command.wait_for_text("0 out of 4 new replicas have been updated")
        assert "Deployment default/web  [paused]" in command.text()
        await client.patch(DEPLOYMENTS, "web", {"spec": {"paused": False}}, namespace="default")
        assert await command.exit_code() == 0
    finally:
        command.kill()
    frame = final_frame(command.text())
    assert frame[0].startswith("Deployment default/web  [complete]  RollingUpdate"), frame
    rows = [line.split() for line in frame if line.strip().startswith("rev ")]
    assert rows[0] == ["rev", "2", "update", "■", "■", "■", "■", "registry.example/web:2"], frame
    # An old pod may still be shutting down (the rollout counts it as gone): drawn as terminating.
    for row in rows[1:]:
        assert row[:2] == ["rev", "1"] and set(row[2:-1]) == {"·"}, frame
    assert any(line.strip().startswith("available") and line.endswith(" 4/4") for line in frame), frame
    assert frame[-1] == 'deployment "web" successfully rolled out'


@pytest.mark.e2e
async def test_watch_exits_1_when_the_progress_deadline_passes(kubeloop_cluster: EmbeddedCluster) -> None:
    never_ready = web_deployment("registry.example/web:1", replicas=2, progressDeadlineSeconds=1,
                                 extra_annotations={"sim.kubeloop.io/never-ready": "true"})
    await kubeloop_cluster.client.create(DEPLOYMENTS, never_ready, namespace="default")
    command = PtyCommand(watch_command(kubeloop_cluster.kubeconfig_path, "deploy/web"))
    try:
        assert await command.exit_code() == 1
    finally:
        command.kill()
    frame = final_frame(command.text())
    assert frame[0].startswith("Deployment default/web  [failed]"), frame
    rows = [line.split() for line in frame if line.strip().startswith("rev ")]
    # Both pods run but never turn ready.
    assert rows == [["rev", "1", "update", "◧", "◧", "registry.example/web:1"]], frame
    assert frame[-1] == 'deployment "web" exceeded its progress deadline'


@pytest.mark.e2e
async def test_watch_of_a_missing_workload_exits_1(kubeloop_cluster: EmbeddedCluster) -> None:
    command = PtyCommand(watch_command(kubeloop_cluster.kubeconfig_path, "cloneset/nothing"))
    try:
        assert await command.exit_code() == 1
    finally:
        command.kill()
    assert 'cloneset "nothing" not found in namespace "default"' in command.text()


@pytest.mark.e2e
async def test_watch_into_a_pipe_prints_lines_like_rollout_status(kubeloop_cluster: EmbeddedCluster) -> None:
    client = kubeloop_cluster.client
    await client.create(DEPLOYMENTS, web_deployment("registry.example/web:1", ready_delay="0.3"),
                        namespace="default")
    process = await asyncio.create_subprocess_exec(
        *watch_command(kubeloop_cluster.kubeconfig_path, "deployment/web"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    lines = out.decode().splitlines()
    assert process.returncode == 0, err.decode()
    assert lines[-1] == 'deployment "web" successfully rolled out', lines
    assert all(line.startswith(('Waiting for deployment "web"', 'deployment "web"')) for line in lines), lines
    assert len(lines) == len(set(lines))  # each state once, no redrawn frames
    assert "\x1b[" not in out.decode() and "available" not in out.decode()


@pytest.mark.e2e
async def test_follow_keeps_watching_and_ctrl_c_ends_it_quietly(kubeloop_cluster: EmbeddedCluster) -> None:
    client = kubeloop_cluster.client
    await client.create(DEPLOYMENTS, web_deployment("registry.example/web:1"), namespace="default")
    await kubeloop_cluster.wait_for(DEPLOYMENTS, "web",
                                    lambda d: (d.get("status") or {}).get("availableReplicas") == 4)
    command = PtyCommand(watch_command(kubeloop_cluster.kubeconfig_path, "--follow"))
    try:
        await command.wait_for_text("[complete]")
        await asyncio.sleep(1.0)
        assert command.process.poll() is None  # a finished rollout does not end --follow
        command.process.send_signal(signal.SIGINT)
        assert await command.exit_code() == 130
    finally:
        command.kill()
    assert "Aborted" not in command.text() and "Traceback" not in command.text()
