"""``kubeloop up`` (and its pieces as separate processes), driven as a user would."""

from __future__ import annotations

import signal
import socket
import ssl
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from process_harness import KubeloopProcess, free_port

from kubeloop.testing.polling import eventually_blocking

QUICK = ("--pod-start-delay", "0.05", "--pod-ready-delay", "0.05", "--pod-termination-delay", "0.05")


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}


def api_for(kubeconfig: Path) -> client.ApiClient:
    api: client.ApiClient = config.new_client_from_config(config_file=str(kubeconfig))
    return api


def ready_replicas(apps: client.AppsV1Api, name: str) -> int:
    status = apps.read_namespaced_deployment(name, "default").status
    return int(status.ready_replicas or 0) if status is not None else 0


def test_up_serves_stops_on_signals_and_resumes(tmp_path: Path, processes: list[KubeloopProcess]) -> None:
    data_dir, port, health_port = tmp_path / "cluster", free_port(), free_port()
    args = ("up", "--data-dir", str(data_dir), "--port", str(port), "--nodes", "2", *QUICK,
            "--health-port", str(health_port))
    first = KubeloopProcess(*args)
    processes.append(first)
    export = first.wait_for_line("export KUBECONFIG=")
    assert export.strip() == f"export KUBECONFIG={data_dir / 'kubeconfig'}"
    first.wait_for_line("kubeloop is ready")
    with urllib.request.urlopen(f"http://127.0.0.1:{health_port}/readyz") as response:
        assert response.status == 200
    insecure = ssl.create_default_context()
    insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=insecure) as response:
        assert response.status == 200  # the API server's own readiness includes the controllers

    api = api_for(data_dir / "kubeconfig")
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    assert sorted(n.metadata.name for n in core.list_node().items) == ["kubeloop-node-1", "kubeloop-node-2"]

    def control_plane_running() -> bool:
        pods = core.list_namespaced_pod("kube-system", label_selector="tier=control-plane").items
        return sorted(p.metadata.name for p in pods if p.status.phase == "Running") == [
            "kube-apiserver-kubeloop-node-1", "kube-controller-manager-kubeloop-node-1",
            "kube-scheduler-kubeloop-node-1"]

    eventually_blocking(control_plane_running, what="the control plane's mirror pods running in kube-system",
                        timeout=30, interval=0.1, retry_on=(Exception,))
    created = apps.create_namespaced_deployment("default", deployment("web", 2))
    eventually_blocking(lambda: ready_replicas(apps, "web") == 2, what="2 ready replicas", timeout=30,
                        interval=0.1, retry_on=(Exception,))
    pods_before = {p.metadata.uid for p in core.list_namespaced_pod("default").items}
    api.close()

    assert first.signal(signal.SIGTERM) == 0
    first.wait_for_line("kubeloop stopped")

    second = KubeloopProcess(*args)
    processes.append(second)
    second.wait_for_line("kubeloop is ready")
    api = api_for(data_dir / "kubeconfig")
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    try:
        assert apps.read_namespaced_deployment("web", "default").metadata.uid == created.metadata.uid
        assert {p.metadata.uid for p in core.list_namespaced_pod("default").items} == pods_before
        assert ready_replicas(apps, "web") == 2
        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 3}})
        eventually_blocking(lambda: ready_replicas(apps, "web") == 3, what="3 ready replicas after the restart",
                            timeout=30, interval=0.1, retry_on=(Exception,))
    finally:
        api.close()
    assert second.signal(signal.SIGINT) == 0


def test_server_kubelet_and_controllers_run_as_separate_processes(tmp_path: Path,
                                                                  processes: list[KubeloopProcess]) -> None:
    data_dir, port = tmp_path / "cluster", free_port()
    server = KubeloopProcess("server", "--data-dir", str(data_dir), "--port", str(port), "--memory")
    processes.append(server)
    server.wait_for_line("kubeconfig:")
    kubeconfig = str(data_dir / "kubeconfig")
    kubelet = KubeloopProcess("kubelet", "--kubeconfig", kubeconfig, "--nodes", "1", *QUICK)
    controllers = KubeloopProcess("controllers", "--kubeconfig", kubeconfig, "--controllers",
                                  "replicaset,deployment", "--leader-elect")
    processes.extend([kubelet, controllers])
    kubelet.wait_for_line("kubelet running 1 nodes")
    controllers.wait_for_line("controllers running: replicaset, deployment")

    api = api_for(data_dir / "kubeconfig")
    try:
        apps = client.AppsV1Api(api)
        apps.create_namespaced_deployment("default", deployment("apart", 2))
        eventually_blocking(lambda: ready_replicas(apps, "apart") == 2, timeout=60, what="2 ready replicas",
                            interval=0.1, retry_on=(Exception,))
        nodes = {p.spec.node_name or (p.metadata.annotations or {}).get("sim.kubeloop.io/node")
                 for p in client.CoreV1Api(api).list_namespaced_pod("default").items}
        assert nodes == {"kubeloop-node-1"}
    finally:
        api.close()
    assert controllers.signal() == 0
    assert kubelet.signal() == 0
    assert server.signal() == 0


def test_an_unknown_controller_name_is_a_usage_error(tmp_path: Path, processes: list[KubeloopProcess]) -> None:
    process = KubeloopProcess("up", "--data-dir", str(tmp_path), "--controllers", "replicaset,nope")
    processes.append(process)
    assert process.process.wait(60) == 2
    process.wait_for_line("unknown controller 'nope'")


@pytest.mark.parametrize("layout", [(), ("--single-process",)], ids=["processes", "single-process"])
def test_a_busy_port_is_reported_without_a_stack_trace(tmp_path: Path, processes: list[KubeloopProcess],
                                                       layout: tuple[str, ...]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        process = KubeloopProcess("up", "--data-dir", str(tmp_path), "--port", str(port), *layout)
        processes.append(process)
        assert process.process.wait(60) == 1
    output = process.all_output()
    assert f"Error: cannot serve on 127.0.0.1:{port}: address already in use" in output
    assert not any("Traceback" in line for line in output)


def test_an_unusable_kubeconfig_is_reported_without_a_stack_trace(tmp_path: Path,
                                                                  processes: list[KubeloopProcess]) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n")
    for command in ("kubelet", "controllers"):
        process = KubeloopProcess(command, "--kubeconfig", str(kubeconfig))
        processes.append(process)
        assert process.process.wait(60) == 1
        output = process.all_output()
        assert any(line.startswith(f"Error: {kubeconfig}: ") for line in output), output
        assert not any("Traceback" in line for line in output)


@pytest.mark.parametrize("layout", [(), ("--single-process",)], ids=["processes", "single-process"])
def test_up_applies_the_sample_manifests(tmp_path: Path, processes: list[KubeloopProcess],
                                         layout: tuple[str, ...]) -> None:
    manifest = Path(__file__).resolve().parents[3] / "examples" / "manifests" / "deployment.yaml"
    data_dir, port = tmp_path / "cluster", free_port()
    process = KubeloopProcess("up", "--data-dir", str(data_dir), "--port", str(port), "--memory", *QUICK,
                              "--no-dashboard", "--apply", str(manifest), "--apply", str(manifest), *layout)
    processes.append(process)
    process.wait_for_line("kubeloop is ready")
    process.wait_for_line("deployment.apps/web created")
    process.wait_for_line("deployment.apps/web unchanged")  # the second application changes nothing
    api = api_for(data_dir / "kubeconfig")
    try:
        apps = client.AppsV1Api(api)
        eventually_blocking(lambda: ready_replicas(apps, "web") == 3, timeout=60, what="3 ready replicas",
                            interval=0.1, retry_on=(Exception,))
    finally:
        api.close()
    assert process.signal(signal.SIGINT) == 0
