import asyncio
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from client_testkit import FakeClock

from kubeloop.client import (
    PODS,
    ApiClient,
    ClientConfig,
    ConfigError,
    Credentials,
    ExecAuth,
    ExecConfig,
    ExecPluginError,
    MockResponse,
    MockTransport,
    Request,
)
from kubeloop.client._exec import parse_exec_output, parse_timestamp

PLUGIN = str(Path(__file__).parent / "data" / "fake_exec_plugin.py")
V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"
WALL = datetime(2026, 1, 1, tzinfo=UTC)


def plugin(tmp_path: Path, api_version: str = V1, **env: str) -> ExecConfig:
    return ExecConfig(command=sys.executable, api_version=api_version,
                      args=[PLUGIN, str(tmp_path / "runs")], env=env, interactive_mode="Never")


def runs(tmp_path: Path) -> int:
    counter = tmp_path / "runs"
    return int(counter.read_text()) if counter.exists() else 0


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
async def test_token_is_cached_until_expiry(tmp_path: Path, api_version: str) -> None:
    clock = FakeClock()
    expiry = (WALL + timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    auth = ExecAuth(plugin(tmp_path, api_version, FAKE_EXEC_EXPIRY=expiry), clock, wall=lambda: WALL)
    assert await auth.credentials() == Credentials("Bearer token-1")
    clock.advance(59)
    assert await auth.credentials() == Credentials("Bearer token-1")
    assert runs(tmp_path) == 1
    clock.advance(1)
    assert await auth.credentials() == Credentials("Bearer token-2")
    assert runs(tmp_path) == 2
    assert auth.runs == 2


async def test_without_expiry_the_credential_is_kept(tmp_path: Path) -> None:
    clock = FakeClock()
    auth = ExecAuth(plugin(tmp_path), clock)
    await auth.credentials()
    clock.advance(10 ** 6)
    await auth.credentials()
    assert runs(tmp_path) == 1


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
async def test_exec_info_env_and_no_stdin(tmp_path: Path, api_version: str) -> None:
    info_file = tmp_path / "info"
    config = plugin(tmp_path, api_version, FAKE_EXEC_INFO_OUT=str(info_file), FAKE_EXTRA="hello")
    config.provide_cluster_info = True
    config.cluster_info = {"server": "https://x", "config": {"audience": "a"}}
    await ExecAuth(config, FakeClock()).credentials()
    exec_info_line, stdin_line = info_file.read_text().splitlines()
    assert orjson.loads(exec_info_line) == {
        "kind": "ExecCredential", "apiVersion": api_version,
        "spec": {"interactive": False, "cluster": {"server": "https://x", "config": {"audience": "a"}}}}
    assert orjson.loads(stdin_line) == {"stdin_tty": False, "stdin": "", "extra": "hello"}


async def test_concurrent_callers_share_one_run(tmp_path: Path) -> None:
    auth = ExecAuth(plugin(tmp_path), FakeClock())
    results = await asyncio.gather(*(auth.credentials() for _ in range(5)))
    assert {r.authorization for r in results} == {"Bearer token-1"}
    assert runs(tmp_path) == 1


async def test_401_reruns_the_plugin_and_retries_once(tmp_path: Path) -> None:
    accepted = {"Bearer token-2"}

    def handler(request: Request) -> MockResponse:
        if request.headers.get("Authorization") in accepted:
            return MockResponse.json({"kind": "Pod"})
        return MockResponse.json({"kind": "Status", "code": 401, "reason": "Unauthorized"}, 401)

    transport = MockTransport(handler)
    client = ApiClient(ClientConfig("https://k8s:6443", exec=plugin(tmp_path), qps=0), transport=transport,
                       clock=FakeClock())
    assert await client.get(PODS, "p", namespace="ns") == {"kind": "Pod"}
    assert [r.headers["Authorization"] for r in transport.requests] == ["Bearer token-1", "Bearer token-2"]
    assert runs(tmp_path) == 2
    # The refreshed token is now cached.
    await client.get(PODS, "p", namespace="ns")
    assert runs(tmp_path) == 2


async def test_refresh_after_someone_else_refreshed_does_not_rerun(tmp_path: Path) -> None:
    auth = ExecAuth(plugin(tmp_path), FakeClock())
    first = await auth.credentials()
    assert await auth.refresh(first)
    assert runs(tmp_path) == 2
    assert await auth.refresh(first)
    assert runs(tmp_path) == 2


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("fail", "exited with status 3: plugin says no"),
        ("garbage", "printed invalid JSON"),
        ("wrong-version", "plugin returned version client.authentication.k8s.io/v1alpha1"),
    ],
)
async def test_plugin_failures(tmp_path: Path, mode: str, message: str) -> None:
    auth = ExecAuth(plugin(tmp_path, FAKE_EXEC_MODE=mode), FakeClock())
    with pytest.raises(ExecPluginError, match=message):
        await auth.credentials()


async def test_missing_command_shows_the_install_hint(tmp_path: Path) -> None:
    config = ExecConfig(command=str(tmp_path / "no-such-plugin"), api_version=V1, interactive_mode="Never",
                        install_hint="brew install it")
    with pytest.raises(ExecPluginError, match="brew install it"):
        await ExecAuth(config, FakeClock()).credentials()


async def test_interactive_always_is_refused(tmp_path: Path) -> None:
    config = plugin(tmp_path)
    config.interactive_mode = "Always"
    with pytest.raises(ExecPluginError, match="interactive"):
        await ExecAuth(config, FakeClock()).credentials()
    assert runs(tmp_path) == 0


@pytest.mark.parametrize(("field", "value"), [("api_version", "client.authentication.k8s.io/v1alpha1"),
                                              ("interactive_mode", "Sometimes")])
def test_bad_exec_config(tmp_path: Path, field: str, value: str) -> None:
    config = plugin(tmp_path)
    setattr(config, field, value)
    with pytest.raises(ConfigError):
        ExecAuth(config, FakeClock())


def credential(status: dict[str, Any], api_version: str = V1) -> bytes:
    return orjson.dumps({"kind": "ExecCredential", "apiVersion": api_version, "status": status})


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (orjson.dumps({"kind": "Other"}), "did not print an ExecCredential"),
        (orjson.dumps({"kind": "ExecCredential", "apiVersion": V1}), "returned no status"),
        (credential({}), "didn't return a token or cert/key pair"),
        (credential({"clientCertificateData": "c"}), "only one of"),
        (credential({"token": "t", "expirationTimestamp": "tomorrow"}), "invalid expirationTimestamp"),
        (credential({"token": "t", "expirationTimestamp": "2026-01-01T00:00:00"}), "no time zone"),
    ],
)
def test_invalid_plugin_output(output: bytes, message: str) -> None:
    config = ExecConfig(command="p", api_version=V1)
    with pytest.raises(ExecPluginError, match=message):
        parse_exec_output(config, output)


def test_certificate_credential_and_timestamp_forms() -> None:
    config = ExecConfig(command="p", api_version=V1)
    credentials, expiry = parse_exec_output(config, credential(
        {"clientCertificateData": "CERT", "clientKeyData": "KEY",
         "expirationTimestamp": "2026-01-01T00:00:00.5+01:00"}))
    assert credentials == Credentials(None, b"CERT", b"KEY")
    assert expiry == parse_timestamp("2025-12-31T23:00:00.5Z")


async def test_an_already_expired_credential_is_fetched_every_time(tmp_path: Path) -> None:
    expired = (WALL - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    auth = ExecAuth(plugin(tmp_path, FAKE_EXEC_EXPIRY=expired), FakeClock(), wall=lambda: WALL)
    await auth.credentials()
    assert await auth.credentials() == Credentials("Bearer token-2")
