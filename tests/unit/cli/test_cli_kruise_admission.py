"""``--no-kruise-admission`` of ``kubeloop server`` reaches the server's config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubeloop.cli import server as server_cli


@pytest.mark.parametrize(("args", "expected"), [([], True), (["--no-kruise-admission"], False)])
def test_the_flag_reaches_the_server_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str],
                                            expected: bool) -> None:
    seen: dict[str, Any] = {}

    async def serve(config: Any) -> None:
        seen["kruise_admission"] = config.kruise_admission

    monkeypatch.setattr(server_cli, "_serve", serve)
    monkeypatch.setattr(server_cli, "use_cache_friendly_gc", lambda: None)
    done = CliRunner().invoke(server_cli.server, ["--data-dir", str(tmp_path), *args])
    assert done.exit_code == 0, done.output
    assert seen == {"kruise_admission": expected}
