"""What every command shares: --version, a default data dir, --kubeconfig defaults, and usage
errors that come before anything starts."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubeloop._version import __version__
from kubeloop.cli.main import cli
from kubeloop.cli.up import default_data_dir
from kubeloop.controllers import CONTROLLERS


def test_version_flag() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert (result.exit_code, result.output) == (0, f"kubeloop {__version__}\n")


def test_default_data_dir_is_the_users_state_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_data_dir() == tmp_path / "state" / "kubeloop"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_data_dir() == tmp_path / ".local" / "state" / "kubeloop"


@pytest.mark.parametrize("command", ["up", "controllers"])
def test_controllers_help_names_every_controller(command: str) -> None:
    output = CliRunner().invoke(cli, [command, "--help"], terminal_width=1000).output
    assert all(name in output for name in CONTROLLERS)


def test_a_bad_apply_file_is_named_before_anything_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n")
    data_dir = tmp_path / "data"
    result = CliRunner().invoke(cli, ["up", "--data-dir", str(data_dir), "--apply", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}" in result.output and "line" in result.output
    assert not data_dir.exists()


def test_a_dashboard_port_in_use_is_reported_first(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        data_dir = tmp_path / "data"
        result = CliRunner().invoke(cli, ["up", "--data-dir", str(data_dir), "--port", "0",
                                          "--dashboard-port", str(port)])
    assert result.exit_code == 1
    assert result.output == f"Error: cannot serve the dashboard on 127.0.0.1:{port}: address already in use\n"
    assert not data_dir.exists()


@pytest.mark.parametrize("command", ["controllers", "kubelet"])
def test_without_a_kubeconfig_the_error_says_where_it_looked(command: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    result = CliRunner().invoke(cli, [command])
    assert result.exit_code == 1
    assert "no kubeconfig given" in result.output and "--kubeconfig" in result.output
    assert "Traceback" not in result.output
