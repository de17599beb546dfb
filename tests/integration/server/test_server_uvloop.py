"""The server on uvloop's event loop, as ``kubeloop server`` and ``kubeloop up`` run it by default.

uvloop replaces asyncio's transports and its TLS (``sslproto``); the server leans on both: ALPN
picks HTTP/1.1 or HTTP/2 per connection from the TLS object (``kubeloop.server.http2``), and a
client certificate is read from it for authentication (``kubeloop.server.app``). So here one
server on uvloop, writing a client-certificate kubeconfig as ``--client-cert`` does, serves
kubectl 1.33 (HTTP/2, certificate auth: create, get, and a watch that sees the create),
an HTTP/1.1 client with a bearer token (a list and a watch), and the process itself reports
its loop in its log.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import orjson
import pytest
import uvloop
from server_harness import ServerThread

from kubeloop.runtime.eventloop import running_loop_name
from kubeloop.server.app import ServerConfig
from kubeloop.testing.polling import eventually_blocking

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    thread = ServerThread(ServerConfig(data_dir=tmp_path_factory.mktemp("uvloop"), port=0, memory=True,
                                       client_cert=True), loop_factory=uvloop.new_event_loop)
    try:
        yield thread
    finally:
        thread.stop()


def test_the_server_runs_on_uvloop(server: ServerThread) -> None:
    async def name() -> str:
        return running_loop_name()

    assert server.call(name()) == "uvloop"


def _kubectl(server: ServerThread, home: Path, *args: str) -> str:
    done = subprocess.run([KUBECTL, "--kubeconfig", str(server.server.kubeconfig_path), "--cache-dir",
                           str(home / "cache"), *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.e2e
def test_kubectl_over_http2_with_a_client_certificate(server: ServerThread, tmp_path: Path) -> None:
    assert server.server.http2 is not None
    h2 = server.server.http2
    before = h2.streams_served
    # The certificate's CN is the user: TLS on uvloop handed the server the peer certificate.
    review = orjson.loads(_kubectl(server, tmp_path, "auth", "whoami", "-o", "json"))
    assert review["status"]["userInfo"]["username"] == "kubernetes-admin"
    assert h2.streams_served > before, "kubectl did not negotiate HTTP/2"
    watch = subprocess.Popen([KUBECTL, "--kubeconfig", str(server.server.kubeconfig_path), "--cache-dir",
                              str(tmp_path / "cache"), "get", "configmaps", "-w", "-o", "name"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watch.stdout is not None
        assert watch.stdout.readline().startswith("configmap/")  # the watch's initial list
        eventually_blocking(lambda: len(h2.connections) >= 1, what="kubectl's watch on an HTTP/2 connection",
                            timeout=10, interval=0.02)
        assert "configmap/on-uvloop created" in _kubectl(server, tmp_path, "create", "configmap", "on-uvloop",
                                                         "--from-literal=a=b")
        while (line := watch.stdout.readline()) and line.strip() != "configmap/on-uvloop":
            pass
        assert line.strip() == "configmap/on-uvloop"
    finally:
        watch.terminate()
        watch.communicate(timeout=30)
    assert _kubectl(server, tmp_path, "get", "configmap", "on-uvloop", "-o", "jsonpath={.data.a}") == "b"


def test_an_http1_client_lists_and_watches(server: ServerThread) -> None:
    async def scenario() -> tuple[int, str, list[str]]:
        context = ssl.create_default_context(cafile=server.ca_file)
        headers = {"Authorization": f"Bearer {server.token}"}
        url = f"{server.url}/api/v1/namespaces/default/configmaps"
        async with aiohttp.ClientSession(headers=headers) as session:
            async with session.get(url, ssl=context) as listed:
                body = await listed.json()
            seen: list[str] = []
            async with session.get(url, ssl=context, params={"watch": "1", "resourceVersion":
                                                              body["metadata"]["resourceVersion"]}) as watch:
                async with session.post(url, ssl=context, json={"metadata": {"name": "over-http1"}}) as created:
                    assert created.status == 201
                line = await asyncio.wait_for(watch.content.readline(), 30)
                event = orjson.loads(line)
                seen.append(f"{event['type']} {event['object']['metadata']['name']}")
        # aiohttp's documented graceful close: let the TLS transports finish closing.
        await asyncio.sleep(0.25)
        return listed.status, f"{listed.version.major}.{listed.version.minor}", seen

    status, version, seen = asyncio.run(scenario())
    assert (status, version, seen) == (200, "1.1", ["ADDED over-http1"])


def test_the_server_process_logs_its_loop(tmp_path: Path) -> None:
    """``kubeloop server`` runs on uvloop unless told otherwise, and says which loop it runs."""
    for setting, expected in (("", "event loop: uvloop"), ("asyncio", "event loop: asyncio")):
        data = tmp_path / (setting or "default")
        data.mkdir()
        log = data / "server.log"
        env = {**os.environ, "KUBELOOP_EVENT_LOOP": setting}
        with log.open("wb") as err:
            process = subprocess.Popen([sys.executable, "-m", "kubeloop", "server", "--data-dir", str(data),
                                        "--port", "0", "--memory"], stdout=subprocess.DEVNULL, stderr=err, env=env)
        try:
            deadline = time.monotonic() + 60
            while not (data / "kubeconfig").exists():
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        finally:
            process.terminate()
            assert process.wait(30) == 0, log.read_text()
        assert expected in log.read_text()


def test_a_bad_setting_stops_the_command_with_a_message(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kubeloop", "server", "--data-dir", str(tmp_path), "--port", "0",
                           "--memory"], capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "KUBELOOP_EVENT_LOOP": "tokio"})
    assert (done.returncode, done.stderr.strip()) == (
        1, "Error: KUBELOOP_EVENT_LOOP='tokio': expected one of auto, uvloop, asyncio")
