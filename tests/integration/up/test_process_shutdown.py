"""SIGTERM stops the kubelet and the controllers within 5 s, with the API server up or down
(issue #18 item 5: with the server down the kubelet never exited, the controllers took 16 s).

A split cluster runs as separate processes with a Deployment rolling, so that reconciles,
heartbeats and Events are in flight when the signal comes.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config
from process_harness import KubeloopProcess, free_port

from kubeloop.testing.polling import eventually_blocking

STOP_WITHIN = 5.0
QUICK = ("--pod-start-delay", "0.05", "--pod-ready-delay", "0.05", "--pod-termination-delay", "0.05")


def start(processes: list[KubeloopProcess], *args: str) -> KubeloopProcess:
    process = KubeloopProcess(*args)
    processes.append(process)
    return process


def stop_and_time(process: KubeloopProcess) -> float:
    """Send SIGTERM; seconds until the process exited (fails past :data:`STOP_WITHIN`)."""
    began = time.monotonic()
    process.signal(signal.SIGTERM, timeout=STOP_WITHIN)
    return time.monotonic() - began


@pytest.mark.parametrize("server_state", ["up", "down"])
def test_sigterm_stops_kubelet_and_controllers_within_5s(tmp_path: Path, processes: list[KubeloopProcess],
                                                          server_state: str) -> None:
    data_dir = tmp_path / "data"
    server = start(processes, "server", "--data-dir", str(data_dir), "--port", str(free_port()))
    server.wait_for_line("listening")
    kubeconfig = str(data_dir / "kubeconfig")
    kubelet = start(processes, "kubelet", "--kubeconfig", kubeconfig, "--nodes", "2", *QUICK)
    controllers = start(processes, "controllers", "--kubeconfig", kubeconfig)
    kubelet.wait_for_line("kubelet running")
    controllers.wait_for_line("controllers running")
    api: client.ApiClient = config.new_client_from_config(config_file=kubeconfig)
    with api:
        apps = client.AppsV1Api(api)
        labels = {"app": "web"}
        apps.create_namespaced_deployment("default", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 40, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
        # Stop mid-rollout: some pods ready, more on their way.
        eventually_blocking(lambda: (apps.read_namespaced_deployment("web", "default").status.ready_replicas or 0) >= 5,
                            timeout=120, what="pods becoming ready", interval=0.1, retry_on=(Exception,))
    if server_state == "down":
        server.signal(signal.SIGKILL, timeout=10)
    for process in (kubelet, controllers):
        assert stop_and_time(process) < STOP_WITHIN
    if server_state == "up":
        assert stop_and_time(server) < STOP_WITHIN


def test_sigterm_stops_a_kubelet_whose_caches_never_sync(tmp_path: Path, processes: list[KubeloopProcess]) -> None:
    # The kubelet reaches the server but may list nothing (an identity without RBAC rules), so
    # its caches never sync: it waits for them (120 s) and must still honour SIGTERM at once.
    # (A server that cannot be reached at all is refused before anything starts.)
    data_dir = tmp_path / "data"
    server = start(processes, "server", "--data-dir", str(data_dir), "--port", str(free_port()), "--memory")
    server.wait_for_line("listening")
    api = config.new_client_from_config(config_file=str(data_dir / "kubeconfig"))
    try:
        core = client.CoreV1Api(api)
        core.create_namespaced_service_account("default", {"metadata": {"name": "nobody"}})
        token = core.create_namespaced_service_account_token(
            "nobody", "default", {"spec": {"expirationSeconds": 3600}}).status.token
    finally:
        api.close()
    kubeconfig = yaml.safe_load((data_dir / "kubeconfig").read_text())
    for entry in kubeconfig["users"]:
        entry["user"] = {"token": token}
    nobody = tmp_path / "nobody.kubeconfig"
    nobody.write_text(yaml.safe_dump(kubeconfig))
    kubelet = start(processes, "kubelet", "--kubeconfig", str(nobody), "--nodes", "1")
    kubelet.wait_for_line("list/watch failed")
    assert stop_and_time(kubelet) < STOP_WITHIN
    assert "kubeloop kubelet running" not in "\n".join(kubelet.all_output())
