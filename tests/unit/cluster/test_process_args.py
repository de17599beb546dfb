"""The command lines ``kubeloop up``'s supervisor builds: every setting reaches its process, and
each command line parses with the real command (an option renamed on one side fails here)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import yaml

from kubeloop.cli.main import cli
from kubeloop.cluster.inprocess import ClientLimits, ClusterConfig
from kubeloop.cluster.processes import MultiProcessCluster, component_kubeconfig
from kubeloop.kubelet import BehaviourDefaults, KubeletConfig


def parse(args: list[str]) -> dict[str, object]:
    """The parameters the real ``kubeloop`` subcommand gets from ``args``."""
    command = cli.commands[args[0]]
    context = command.make_context(args[0], list(args[1:]))
    return dict(context.params)


@pytest.fixture
def cluster(tmp_path: Path) -> MultiProcessCluster:
    kubelet = KubeletConfig(nodes=4, defaults=BehaviourDefaults(start_delay=0.25, ready_delay=0.5,
                                                                termination_delay=1.5), control_plane_pods=True)
    (tmp_path / "kubelet.kubeconfig").write_text("")
    (tmp_path / "controllers.kubeconfig").write_text("")
    return MultiProcessCluster(ClusterConfig(
        data_dir=tmp_path, port=7443, memory=True, kubelet=kubelet, controllers=("replicaset", "deployment"),
        health_port=9911, feature_gates={"CloneSetShortHash": True, "AllAlpha": False}, client_cert=True,
        authorization_mode="AlwaysAllow", client_limits=ClientLimits(qps=300.0, burst=600)))


def test_server_args(cluster: MultiProcessCluster, tmp_path: Path) -> None:
    params = parse(cluster._server_args())
    assert params["data_dir"] == tmp_path and params["port"] == 7443 and params["memory"] is True
    assert params["client_cert"] is True and params["authorization_mode"] == "AlwaysAllow"


def test_kubelet_args(cluster: MultiProcessCluster, tmp_path: Path) -> None:
    params = parse(cluster._kubelet_args())
    assert params["kubeconfig"] == tmp_path / "kubelet.kubeconfig"
    assert (params["nodes"], params["pod_start_delay"], params["pod_ready_delay"],
            params["pod_termination_delay"]) == (4, 0.25, 0.5, 1.5)
    assert params["control_plane_pods"] is True
    assert (params["kube_api_qps"], params["kube_api_burst"]) == (300.0, 600)


def test_controllers_args(cluster: MultiProcessCluster, tmp_path: Path) -> None:
    params = parse(cluster._controllers_args())
    assert params["kubeconfig"] == tmp_path / "controllers.kubeconfig"
    assert params["controllers_text"] == "replicaset,deployment"
    assert params["feature_gates_text"] == "CloneSetShortHash=true,AllAlpha=false"
    assert params["health_port"] == 9911
    assert (params["kube_api_qps"], params["kube_api_burst"]) == (300.0, 600)


def test_default_limits_are_the_commands_defaults(tmp_path: Path) -> None:
    (tmp_path / "controllers.kubeconfig").write_text("")
    args = MultiProcessCluster(ClusterConfig(data_dir=tmp_path))._controllers_args()
    assert "--kube-api-qps" not in args
    params = parse(args)
    defaults = {p.name: p.default for p in cli.commands["controllers"].params if isinstance(p, click.Option)}
    assert params["kube_api_qps"] == defaults["kube_api_qps"]


def test_component_kubeconfig_keeps_the_cluster_and_replaces_the_credentials() -> None:
    admin = {"apiVersion": "v1", "kind": "Config", "current-context": "kubeloop",
             "clusters": [{"name": "kubeloop", "cluster": {"server": "https://127.0.0.1:1",
                                                           "certificate-authority-data": "Q0E="}}],
             "contexts": [{"name": "kubeloop", "context": {"cluster": "kubeloop", "user": "admin"}}],
             "users": [{"name": "admin", "user": {"client-certificate-data": "Y2VydA==",
                                                  "client-key-data": "a2V5"}}]}
    written = yaml.safe_load(component_kubeconfig(yaml.safe_dump(admin), "the-token"))
    assert written["users"] == [{"name": "admin", "user": {"token": "the-token"}}]
    assert written["clusters"] == admin["clusters"] and written["contexts"] == admin["contexts"]


@pytest.mark.parametrize(("limits", "expected"), [
    (ClientLimits(), (50.0, 100)),
    (ClientLimits(qps=0.0), (0.0, 100)),
    (ClientLimits(qps=400.0, burst=800), (400.0, 800)),
    (ClientLimits(burst=7), (50.0, 7)),
])
def test_client_limits_apply(limits: ClientLimits, expected: tuple[float, int]) -> None:
    from kubeloop.client import ClientConfig

    config = limits.apply(ClientConfig("https://127.0.0.1:1", qps=50.0, burst=100))
    assert (config.qps, config.burst) == expected
