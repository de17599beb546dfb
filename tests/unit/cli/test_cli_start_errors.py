"""Start-up failures are one paragraph naming the cause and the fix, never a traceback."""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kubeloop.cli.controllers import check_cluster
from kubeloop.cli.main import cli
from kubeloop.cli.starterrors import start_failure
from kubeloop.client import ApiClient, load_kubeconfig
from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.server.storage import Storage, StorageError


@pytest.mark.parametrize(("error", "expected"), [
    (StorageError("data directory /d is in use by another process"),
     "data directory /d is in use by another process. Stop the kubeloop that uses it, or pass another --data-dir."),
    (StorageError("cannot open /d/storage.sqlite3: file is not a database"),
     "cannot open /d/storage.sqlite3: file is not a database. The cluster's objects cannot be read from it: move "
     "the database file away to start with an empty cluster (the credentials in /d stay valid), or restore it "
     "from a copy."),
    (PermissionError(13, "Permission denied", "/d"),
     "cannot use the data directory /d: /d: permission denied. Pass a --data-dir you can write to."),
    (OSError(98, "Address already in use"), "cannot serve on 127.0.0.1:6443: address already in use"),
])
def test_start_failures_are_worded(error: BaseException, expected: str) -> None:
    failure = start_failure(error, Path("/d"), "127.0.0.1", 6443)
    assert failure is not None and failure.message == expected


def test_unknown_failures_are_left_alone() -> None:
    assert start_failure(RuntimeError("x"), Path("/d"), "127.0.0.1", 6443) is None


def test_a_truncated_database_is_refused_not_started_empty(tmp_path: Path) -> None:
    Storage.open(tmp_path).close()
    (tmp_path / "storage.sqlite3").write_bytes(b"")
    for leftover in ("storage.sqlite3-wal", "storage.sqlite3-shm"):
        (tmp_path / leftover).unlink(missing_ok=True)
    with pytest.raises(StorageError, match="is empty \\(0 bytes\\)"):
        Storage.open(tmp_path)
    result = CliRunner().invoke(cli, ["server", "--data-dir", str(tmp_path), "--port", "0"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "is empty (0 bytes): every object it held is lost" in result.output


def test_a_damaged_database_and_an_unusable_directory(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "storage.sqlite3").write_bytes(b"garbage" * 600)
    result = CliRunner().invoke(cli, ["server", "--data-dir", str(damaged), "--port", "0"])
    assert result.exit_code == 1 and "file is not a database" in result.output and "Traceback" not in result.output
    blocked = tmp_path / "file"
    blocked.write_text("")
    result = CliRunner().invoke(cli, ["server", "--data-dir", str(blocked / "sub"), "--port", "0"])
    assert result.exit_code == 1 and "cannot use the data directory" in result.output
    assert "cannot serve" not in result.output


async def test_check_cluster_names_refused_credentials_and_unreachable_servers(tmp_path: Path) -> None:
    server = KubeServer(ServerConfig(data_dir=tmp_path, port=0, memory=True))
    await server.start()
    try:
        config = load_kubeconfig(str(server.kubeconfig_path))
        async with ApiClient(config) as client:
            await check_cluster(client)
        async with ApiClient(dataclasses.replace(config, token="wrong")) as client:
            with pytest.raises(click.ClickException, match="refused the kubeconfig's credentials \\(401"):
                await check_cluster(client)
    finally:
        await server.stop()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    far = dataclasses.replace(config, server=f"https://127.0.0.1:{free}", connection_retries=0)
    async with ApiClient(far) as client:
        with pytest.raises(click.ClickException, match="cannot reach the API server at"):
            await check_cluster(client)
