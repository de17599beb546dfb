"""``--feature-gates`` of ``kubeloop up`` and ``kubeloop controllers``: parsed with upstream's
names, refused with a usage error (never a stack trace) when wrong."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kubeloop.cli.controllers import describe_feature_gates, feature_gate_settings
from kubeloop.cli.main import cli


def test_settings_from_the_option() -> None:
    assert feature_gate_settings(None) == {}
    assert feature_gate_settings("AllAlpha=true,CloneSetShortHash=false") == {"AllAlpha": True,
                                                                             "CloneSetShortHash": False}


@pytest.mark.parametrize("text", ["Bogus=true", "CloneSetShortHash", "CloneSetShortHash=maybe"])
def test_bad_settings_are_bad_parameters(text: str) -> None:
    with pytest.raises(click.BadParameter) as caught:
        feature_gate_settings(text)
    assert caught.value.param_hint == "--feature-gates"


def test_description_spells_settings_as_the_flag_does() -> None:
    assert describe_feature_gates({}) == "upstream defaults"
    assert describe_feature_gates({"AllAlpha": True, "CloneSetShortHash": False}) == \
        "AllAlpha=true,CloneSetShortHash=false"


@pytest.mark.parametrize("command", ["up", "controllers"])
def test_commands_document_the_option(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert "--feature-gates" in result.output and "PreparingUpdateAsUpdate" in result.output


@pytest.mark.parametrize("command", ["up", "controllers"])
def test_unknown_gate_is_a_usage_error(command: str, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    target = ["--data-dir", str(tmp_path / "data")] if command == "up" else ["--kubeconfig", str(kubeconfig)]
    result = CliRunner().invoke(cli, [command, *target, "--feature-gates", "CloneSetShortHsh=true"])
    assert result.exit_code == 2
    assert "Invalid value for --feature-gates" in result.output
    assert "unrecognized feature gate: 'CloneSetShortHsh'" in result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, ValueError)
