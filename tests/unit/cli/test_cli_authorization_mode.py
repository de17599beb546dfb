"""``--authorization-mode`` of ``kubeloop server`` and ``kubeloop up`` reaches the server's config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubeloop.cli import server as server_cli
from kubeloop.cli import up as up_cli
from kubeloop.server.app import build_authorizer
from kubeloop.server.auth.authorizer import AlwaysAllow
from kubeloop.server.auth.rbac.resolver import RBACAuthorizer
from kubeloop.server.storage import Storage


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def serve(config: Any) -> None:
        seen["server"] = config.authorization_mode

    async def up(*args: Any, **kwargs: Any) -> None:
        seen["up"] = kwargs["authorization_mode"]

    monkeypatch.setattr(server_cli, "_serve", serve)
    monkeypatch.setattr(up_cli, "_up", up)
    monkeypatch.setattr(server_cli, "use_cache_friendly_gc", lambda: None)
    monkeypatch.setattr(up_cli, "use_cache_friendly_gc", lambda: None)
    return seen


@pytest.mark.parametrize(("args", "mode"), [([], "RBAC"), (["--authorization-mode", "AlwaysAllow"], "AlwaysAllow")])
def test_the_flag_reaches_both_commands(captured: dict[str, Any], tmp_path: Path, args: list[str], mode: str) -> None:
    runner = CliRunner()
    done = runner.invoke(server_cli.server, ["--data-dir", str(tmp_path), *args])
    assert done.exit_code == 0, done.output
    done = runner.invoke(up_cli.up, ["--data-dir", str(tmp_path), "--no-dashboard", *args])
    assert done.exit_code == 0, done.output
    assert captured == {"server": mode, "up": mode}


def test_an_unknown_mode_is_refused(captured: dict[str, Any], tmp_path: Path) -> None:
    done = CliRunner().invoke(server_cli.server, ["--data-dir", str(tmp_path), "--authorization-mode", "Node"])
    assert done.exit_code == 2 and "Node" in done.output
    assert captured == {}


def test_build_authorizer_by_mode() -> None:
    storage = Storage.open(None, memory=True)
    try:
        assert isinstance(build_authorizer("RBAC", storage), RBACAuthorizer)
        assert isinstance(build_authorizer("AlwaysAllow", storage), AlwaysAllow)
        with pytest.raises(ValueError, match="unknown authorization mode"):
            build_authorizer("Webhook", storage)
    finally:
        storage.close()
