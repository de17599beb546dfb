"""The command-line surface of ``kubeloop up``, ``kubeloop kubelet`` and ``kubeloop controllers``."""

import click
import pytest
from click.testing import CliRunner

from kubeloop.cli.controllers import controller_names
from kubeloop.cli.kubelet import kubelet_config
from kubeloop.cli.main import cli
from kubeloop.controllers import CONTROLLERS
from kubeloop.kubelet import BehaviourDefaults


@pytest.mark.parametrize("text", [None, "", " ", "*"])
def test_every_registered_controller_runs_by_default(text: str | None) -> None:
    assert controller_names(text) == tuple(CONTROLLERS)


def test_a_controller_list_is_taken_in_order_without_duplicates() -> None:
    assert controller_names("deployment, replicaset,deployment") == ("deployment", "replicaset")


def test_an_unknown_controller_is_a_usage_error() -> None:
    with pytest.raises(click.BadParameter, match="unknown controller 'nope'"):
        controller_names("replicaset,nope")


def test_kubelet_options_become_its_config() -> None:
    config = kubelet_config(5, 0.1, 0.2, 0.3)
    assert config.nodes == 5
    assert config.defaults == BehaviourDefaults(start_delay=0.1, ready_delay=0.2, termination_delay=0.3)


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("up", ["--data-dir", "--port", "--host", "--memory", "--nodes", "--pod-start-delay", "--pod-ready-delay",
                "--pod-termination-delay", "--controllers", "--health-port", "--single-process", "--kube-api-qps",
                "--kube-api-burst"]),
        ("kubelet", ["--kubeconfig", "--nodes", "--pod-start-delay", "--pod-ready-delay", "--pod-termination-delay",
                     "--kube-api-qps", "--kube-api-burst"]),
        ("controllers", ["--kubeconfig", "--controllers", "--leader-elect", "--health-port", "--kube-api-qps",
                         "--kube-api-burst"]),
    ],
)
def test_commands_offer_their_options(command: str, options: list[str]) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0, result.output
    for option in options:
        assert option in result.output


def test_negative_delays_are_refused() -> None:
    result = CliRunner().invoke(cli, ["kubelet", "--kubeconfig", __file__, "--pod-ready-delay", "-1"])
    assert result.exit_code == 2
    assert "--pod-ready-delay" in result.output
