"""``--client-cert`` of ``kubeloop server`` and ``kubeloop up`` reaches the server's config (the
kubeconfig it then writes is tested end to end in tests/integration/server/test_server_authn.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubeloop.cli import server as server_cli
from kubeloop.cli import up as up_cli
from kubeloop.cli.main import cli


@pytest.mark.parametrize(("flags", "expected"), [([], False), (["--client-cert"], True)])
def test_server_passes_the_flag(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flags: list[str],
                                expected: bool) -> None:
    seen: list[Any] = []

    async def serve(config: Any) -> None:
        seen.append(config)

    monkeypatch.setattr(server_cli, "_serve", serve)
    monkeypatch.setattr(server_cli, "use_cache_friendly_gc", lambda: None)
    result = CliRunner().invoke(cli, ["server", "--data-dir", str(tmp_path), *flags])
    assert result.exit_code == 0, result.output
    assert [config.client_cert for config in seen] == [expected]


@pytest.mark.parametrize(("flags", "expected"), [([], False), (["--client-cert"], True)])
def test_up_passes_the_flag(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flags: list[str],
                            expected: bool) -> None:
    seen: list[bool] = []

    async def up(*args: Any, client_cert: bool = False, **kwargs: Any) -> None:
        seen.append(client_cert)

    monkeypatch.setattr(up_cli, "_up", up)
    monkeypatch.setattr(up_cli, "use_cache_friendly_gc", lambda: None)
    result = CliRunner().invoke(cli, ["up", "--data-dir", str(tmp_path), *flags])
    assert result.exit_code == 0, result.output
    assert seen == [expected]
