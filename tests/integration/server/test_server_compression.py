"""gzip of large API answers over real HTTPS, as kube-apiserver 1.33's SerializeObject does it.

One server for the module, holding enough ConfigMaps that their LIST passes the 128 KiB
threshold while one ConfigMap stays far below it. The official Python client and kubectl
(which asks for gzip itself) must keep reading such lists.
"""

from __future__ import annotations

import gzip
import os
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import orjson
import pytest
from server_harness import ServerThread, make_api_client

from kubeloop.server.app import ServerConfig
from kubeloop.server.compression import GZIP_THRESHOLD_BYTES, accepts_gzip, gzip_body, should_compress

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
COUNT = 60
PAYLOAD = "x" * 3000  # 60 x ~3.2 KB: the list is ~190 KB, one object ~3 KB

KUBECTLS = sorted({path for path in (shutil.which("kubectl"), "/usr/lib/google-cloud-sdk/bin/kubectl.1.33",
                                      *os.environ.get("KUBELOOP_KUBECTL", "").split(os.pathsep))
                   if path and Path(path).exists()})


@pytest.mark.parametrize(("header", "expected"), [
    (None, False),
    ("", False),
    ("gzip", True),
    ("deflate, gzip", True),
    (" gzip , br", True),
    ("gzip, deflate, br, zstd", True),
    ("gzip;q=1.0", False),  # upstream compares whole tokens: parameters are not parsed
    ("x-gzip", False),
    ("GZIP", False),
    ("deflate", False),
    ("identity", False),
])
def test_accept_encoding_tokens(header: str | None, expected: bool) -> None:
    assert accepts_gzip(header) is expected


@pytest.mark.parametrize(("length", "expected"), [
    (GZIP_THRESHOLD_BYTES - 1, False),
    (GZIP_THRESHOLD_BYTES, False),  # strictly larger than the threshold
    (GZIP_THRESHOLD_BYTES + 1, True),
])
def test_threshold(length: int, expected: bool) -> None:
    assert should_compress("gzip", length) is expected
    assert should_compress(None, length) is False


def _ours(items: list[dict[str, object]]) -> int:
    """How many of the listed items the fixture made (each namespace also holds kube-root-ca.crt)."""
    return sum(1 for item in items if str(item["metadata"]["name"]).startswith("cm-"))  # type: ignore[index]


def _fetch(server: ServerThread, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """One request whose body is returned as it came over the wire (no transparent gunzip)."""

    async def go() -> tuple[int, dict[str, str], bytes]:
        context = ssl.create_default_context(cafile=server.ca_file)
        sent = {"Authorization": f"Bearer {server.token}", **headers}
        async with aiohttp.ClientSession(auto_decompress=False, skip_auto_headers=["Accept-Encoding"]) as session, \
                session.get(server.url + path, headers=sent, ssl=context) as response:
            return response.status, dict(response.headers), await response.read()

    result: tuple[int, dict[str, str], bytes] = server.call(go())
    return result


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    thread = ServerThread(ServerConfig(data_dir=tmp_path_factory.mktemp("gzip"), port=0, memory=True))
    try:
        async def fill() -> None:
            context = ssl.create_default_context(cafile=thread.ca_file)
            headers = {"Authorization": f"Bearer {thread.token}"}
            async with aiohttp.ClientSession(headers=headers) as session:
                for i in range(COUNT):
                    body = {"metadata": {"name": f"cm-{i:03d}"}, "data": {"payload": PAYLOAD}}
                    async with session.post(thread.url + CONFIGMAPS, json=body, ssl=context) as response:
                        assert response.status == 201, await response.text()

        thread.call(fill())
        yield thread
    finally:
        thread.stop()


def test_large_list_is_gzipped_when_asked(server: ServerThread) -> None:
    status, plain_headers, plain = _fetch(server, CONFIGMAPS, {})
    assert status == 200
    assert len(plain) > GZIP_THRESHOLD_BYTES
    assert "Content-Encoding" not in plain_headers
    assert "Vary" not in plain_headers
    status, headers, packed = _fetch(server, CONFIGMAPS, {"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Vary"] == "Accept-Encoding"
    assert headers["Content-Type"] == "application/json"
    assert int(headers["Content-Length"]) == len(packed) < len(plain) // 10
    assert gzip.decompress(packed) == plain
    assert _ours(orjson.loads(plain)["items"]) == COUNT


def test_other_codings_and_qualified_gzip_are_not_used(server: ServerThread) -> None:
    for accept in ("deflate, br", "gzip;q=0.9"):
        _, headers, body = _fetch(server, CONFIGMAPS, {"Accept-Encoding": accept})
        assert "Content-Encoding" not in headers, accept
        assert _ours(orjson.loads(body)["items"]) == COUNT


def test_small_answers_are_not_gzipped(server: ServerThread) -> None:
    status, headers, body = _fetch(server, f"{CONFIGMAPS}/cm-000", {"Accept-Encoding": "gzip"})
    assert status == 200
    assert "Content-Encoding" not in headers and "Vary" not in headers
    assert orjson.loads(body)["metadata"]["name"] == "cm-000"
    # A page under the threshold of the same list is sent plain too.
    _, headers, body = _fetch(server, f"{CONFIGMAPS}?limit=5", {"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in headers
    assert len(orjson.loads(body)["items"]) == 5


def test_tables_are_gzipped_like_other_answers(server: ServerThread) -> None:
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    _, headers, body = _fetch(server, f"{CONFIGMAPS}?includeObject=Object", {"Accept-Encoding": "gzip",
                                                                             "Accept": accept})
    assert headers["Content-Encoding"] == "gzip"
    assert len(orjson.loads(gzip.decompress(body))["rows"]) == COUNT + 1


def test_watch_streams_are_never_gzipped(server: ServerThread) -> None:
    # The initial ADDED events alone are larger than the threshold.
    status, headers, body = _fetch(server, f"{CONFIGMAPS}?watch=1&timeoutSeconds=1", {"Accept-Encoding": "gzip"})
    assert status == 200
    assert "Content-Encoding" not in headers
    lines = body.splitlines()
    assert len(body) > GZIP_THRESHOLD_BYTES and len(lines) == COUNT + 1
    assert orjson.loads(lines[0])["type"] == "ADDED"


def test_official_client_reads_large_lists(server: ServerThread) -> None:
    from kubernetes import client

    api = make_api_client(server.server.kubeconfig_path)
    try:
        items = client.CoreV1Api(api).list_namespaced_config_map("default").items
    finally:
        api.close()
    ours = [item for item in items if item.metadata.name.startswith("cm-")]
    assert len(ours) == COUNT and ours[0].data == {"payload": PAYLOAD}


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_reads_large_lists(server: ServerThread, tmp_path: Path, binary: str) -> None:
    done = subprocess.run([binary, "--kubeconfig", str(server.server.kubeconfig_path), "--cache-dir",
                           str(tmp_path / "cache"), "get", "configmaps", "-o", "json"],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    items = orjson.loads(done.stdout)["items"]
    assert _ours(items) == COUNT


def test_gzip_member_like_gos() -> None:
    body = orjson.dumps({"items": [{"metadata": {"name": f"cm-{i}"}, "data": {"p": PAYLOAD}} for i in range(COUNT)]})
    packed = gzip_body(body)
    assert packed[:3] == b"\x1f\x8b\x08"  # gzip magic, deflate
    assert packed[4:8] == b"\0\0\0\0"  # no modification time, as Go's gzip.Writer leaves it
    assert packed[8] == 4  # "fastest" extra flag: level 1
    assert gzip.decompress(packed) == body
