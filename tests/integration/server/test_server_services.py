"""Services, Endpoints and EndpointSlices over HTTP: the default/kubernetes Service, allocation
of cluster IPs and node ports (persistent across restarts, released on delete), immutability,
and kubectl's service commands."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from server_harness import Cluster, ServerThread, make_api_client

NS = "default"
KUBECTLS = [f"/usr/lib/google-cloud-sdk/bin/kubectl.1.{minor}" for minor in range(27, 34)
                 if Path(f"/usr/lib/google-cloud-sdk/bin/kubectl.1.{minor}").exists()]


def body(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec}}


def refusal(caught: pytest.ExceptionInfo[ApiException]) -> tuple[int, str]:
    status: dict[str, Any] = orjson.loads(caught.value.body)
    return int(status["code"]), str(status["message"])


def test_the_kubernetes_service_and_its_endpoints_name_the_server(cluster: Cluster) -> None:
    port = cluster.server.server.port
    service = cluster.core.read_namespaced_service("kubernetes", NS)
    assert service.spec.cluster_ip == "10.96.0.1"
    assert service.spec.cluster_ips == ["10.96.0.1"]
    assert [(p.name, p.port, p.protocol, p.target_port) for p in service.spec.ports] == [("https", 443, "TCP", port)]
    assert service.metadata.labels == {"component": "apiserver", "provider": "kubernetes"}
    endpoints = cluster.core.read_namespaced_endpoints("kubernetes", NS)
    assert [a.ip for a in endpoints.subsets[0].addresses] == ["127.0.0.1"]
    assert [(p.name, p.port) for p in endpoints.subsets[0].ports] == [("https", port)]
    slice_ = client.DiscoveryV1Api(cluster.api).read_namespaced_endpoint_slice("kubernetes", NS)
    assert slice_.address_type == "IPv4"
    assert [e.addresses for e in slice_.endpoints] == [["127.0.0.1"]]
    assert [(p.name, p.port) for p in slice_.ports] == [("https", port)]
    assert slice_.metadata.labels == {"kubernetes.io/service-name": "kubernetes"}


def test_allocation_refuses_taken_addresses_until_their_service_is_deleted(cluster: Cluster) -> None:
    first = cluster.core.create_namespaced_service(NS, body("first"))
    ip = first.spec.cluster_ip
    assert ip.startswith("10.") and first.spec.cluster_ips == [ip]
    assert first.spec.ip_families == ["IPv4"] and first.spec.ip_family_policy == "SingleStack"
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_service(NS, body("second", clusterIP=ip))
    assert refusal(caught) == (422, f'Service "second" is invalid: spec.clusterIPs: Invalid value: []string{{"{ip}"}}: '
                                    f"failed to allocate IP {ip}: provided IP is already allocated")
    cluster.core.delete_namespaced_service("first", NS)
    second = cluster.core.create_namespaced_service(NS, body("second", clusterIP=ip))
    assert second.spec.cluster_ip == ip


def test_node_ports_are_allocated_once_and_released_on_delete(cluster: Cluster) -> None:
    first = cluster.core.create_namespaced_service(NS, body("np", type="NodePort"))
    port = first.spec.ports[0].node_port
    assert 30000 <= port <= 32767
    assert first.spec.external_traffic_policy == "Cluster"
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_service(NS, body("np2", type="NodePort", ports=[{"port": 80, "nodePort": port}]))
    assert refusal(caught) == (422, f'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: {port}: '
                                    "provided port is already allocated")
    cluster.core.delete_namespaced_service("np", NS)
    again = cluster.core.create_namespaced_service(NS, body("np2", type="NodePort",
                                                            ports=[{"port": 80, "nodePort": port}]))
    assert again.spec.ports[0].node_port == port


def test_updates_keep_allocations_and_refuse_changing_the_cluster_ip(cluster: Cluster) -> None:
    created = cluster.core.create_namespaced_service(NS, body("web", type="NodePort"))
    replacement = body("web", type="NodePort")
    replacement["metadata"]["labels"] = {"changed": "yes"}
    replaced = cluster.core.replace_namespaced_service("web", NS, replacement)
    assert replaced.spec.cluster_ip == created.spec.cluster_ip
    assert replaced.spec.ports[0].node_port == created.spec.ports[0].node_port
    assert replaced.metadata.labels == {"changed": "yes"}
    with pytest.raises(ApiException) as caught:
        cluster.core.patch_namespaced_service("web", NS, {"spec": {"clusterIP": "10.96.0.99",
                                                                   "clusterIPs": ["10.96.0.99"]}})
    code, message = refusal(caught)
    assert code == 422
    assert 'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: may not change once set' in message
    to_cluster_ip = cluster.core.patch_namespaced_service("web", NS, {"spec": {"type": "ClusterIP"}})
    assert to_cluster_ip.spec.ports[0].node_port is None
    assert to_cluster_ip.spec.external_traffic_policy is None


def test_allocations_survive_a_restart(start_server: Callable[..., ServerThread], tmp_path: Path) -> None:
    first = start_server(data_dir=tmp_path / "d", memory=False)
    api = make_api_client(first.server.kubeconfig_path)
    try:
        created = client.CoreV1Api(api).create_namespaced_service(NS, body("web", type="NodePort"))
    finally:
        api.close()
    first.stop()
    second = start_server(data_dir=tmp_path / "d", memory=False)
    api = make_api_client(second.server.kubeconfig_path)
    try:
        core = client.CoreV1Api(api)
        with pytest.raises(ApiException) as caught:
            core.create_namespaced_service(NS, body("again", clusterIP=created.spec.cluster_ip))
        assert "provided IP is already allocated" in refusal(caught)[1]
        with pytest.raises(ApiException) as caught:
            core.create_namespaced_service(NS, body("again", type="NodePort",
                                                    ports=[{"port": 80, "nodePort": created.spec.ports[0].node_port}]))
        assert "provided port is already allocated" in refusal(caught)[1]
        kubernetes = core.read_namespaced_service("kubernetes", NS)
        assert kubernetes.spec.ports[0].target_port == second.server.port
        endpoints = core.read_namespaced_endpoints("kubernetes", NS)
        assert endpoints.subsets[0].ports[0].port == second.server.port
    finally:
        api.close()


def _kubectl(binary: str, cluster: Cluster, tmp_path: Path, *args: str, ok: bool = True) -> str:
    done = subprocess.run([binary, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path / "cache"),
                           *args], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode == 0) == ok, (args, done.stdout, done.stderr)
    return done.stdout + done.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_service_commands(cluster: Cluster, tmp_path: Path, binary: str) -> None:
    assert "service/cip created" in _kubectl(binary, cluster, tmp_path, "create", "service", "clusterip", "cip",
                                             "--tcp=80:8080")
    assert "service/np created" in _kubectl(binary, cluster, tmp_path, "create", "service", "nodeport", "np",
                                            "--tcp=80:8080", "--node-port=30123")
    assert "service/hl created" in _kubectl(binary, cluster, tmp_path, "create", "service", "clusterip", "hl",
                                            "--clusterip=None")
    refused = _kubectl(binary, cluster, tmp_path, "create", "service", "nodeport", "np2", "--tcp=80",
                       "--node-port=30123", ok=False)
    assert "spec.ports[0].nodePort: Invalid value: 30123: provided port is already allocated" in refused
    table = _kubectl(binary, cluster, tmp_path, "get", "svc,endpoints,endpointslices")
    lines = [line.split() for line in table.splitlines() if line.strip()]
    assert ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"] in lines
    assert ["NAME", "ENDPOINTS", "AGE"] in lines
    assert ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"] in lines
    rows = {line[0]: line for line in lines}
    assert rows["service/np"][1:5] == ["NodePort", rows["service/np"][2], "<none>", "80:30123/TCP"]
    assert rows["service/hl"][1:3] == ["ClusterIP", "None"]
    assert rows["service/kubernetes"][2:5] == ["10.96.0.1", "<none>", "443/TCP"]
    port = cluster.server.server.port
    assert rows["endpoints/kubernetes"][1] == f"127.0.0.1:{port}"
    assert rows["endpointslice.discovery.k8s.io/kubernetes"][1:4] == ["IPv4", str(port), "127.0.0.1"]
    assert cluster.server.url in _kubectl(binary, cluster, tmp_path, "cluster-info")
    wide = _kubectl(binary, cluster, tmp_path, "get", "svc", "cip", "-o", "wide")
    assert wide.splitlines()[0].split()[-1] == "SELECTOR" and wide.splitlines()[1].split()[-1] == "app=cip"
