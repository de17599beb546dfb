"""The official Python client's core e2e cases (upstream ``kubernetes/e2e_test/test_client.py``),
restated against the embedded cluster (kubeloop issue 14, item 5).

Upstream's cases that need exec, attach or port-forward into containers are not restated: the
simulated kubelet runs no processes, so there is nothing to stream from.

- ``test_pod_apis``: its exec half (``connect_get/post_namespaced_pod_exec`` over websockets,
  reading stdout/stderr and the error channel). Its pod lifecycle half is
  :func:`test_pod_lifecycle` here.
- ``test_pod_exec_close_channel``: exec with the v5.channel.k8s.io CLOSE signal.
- ``test_exit_code``: exec'd commands' exit codes read from the error channel.
- ``test_portforward_raw``: port-forward to a Python echo server in a pod.
- ``test_portforward_http``: port-forward to nginx in a pod.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubeloop.testing.polling import eventually_blocking

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

Obj = dict[str, Any]


def short_uuid() -> str:
    return str(uuid.uuid4())[-12:]


def pod(name: str, command: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"image": "busybox", "name": "sleep", "args": ["/bin/sh", "-c", command]}]}}


def test_pod_lifecycle(api_client: client.ApiClient) -> None:
    """The default ServiceAccount exists; a created pod leaves Pending; it is listed across
    namespaces; it can be deleted."""
    core = client.CoreV1Api(api_client)
    account = core.read_namespaced_service_account(name="default", namespace="default")
    assert account.metadata.name == "default"

    name = "busybox-test-" + short_uuid()
    created = core.create_namespaced_pod(body=pod(name, "while true;do date;sleep 5; done"), namespace="default")
    assert created.metadata.name == name
    assert created.status.phase == "Pending"

    def phase_after_pending() -> str | None:
        read = core.read_namespaced_pod(name=name, namespace="default")
        assert read.metadata.name == name
        return None if read.status.phase == "Pending" else str(read.status.phase)

    assert eventually_blocking(phase_after_pending, timeout=30, what=f"pod {name} to leave Pending") == "Running"

    names = [item.metadata.name for item in core.list_pod_for_all_namespaces().items]
    assert name in names
    deleted = core.delete_namespaced_pod(name=name, body={}, namespace="default")
    assert deleted.metadata.name == name
    assert deleted.metadata.deletion_timestamp is not None


def test_service_apis(api_client: client.ApiClient) -> None:
    """Create, read, strategic-merge-patch (ports merge by port: two ports) and delete a Service."""
    core = client.CoreV1Api(api_client)
    name = "frontend-" + short_uuid()
    manifest: Obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"labels": {"name": name}, "name": name},
                     "spec": {"ports": [{"name": "port", "port": 80, "protocol": "TCP", "targetPort": 80}],
                              "selector": {"name": name}}}
    created = core.create_namespaced_service(body=manifest, namespace="default")
    assert created.metadata.name == name
    assert created.status is not None

    read = core.read_namespaced_service(name=name, namespace="default")
    assert read.metadata.name == name
    assert read.status is not None

    manifest["spec"]["ports"] = [{"name": "new", "port": 8080, "protocol": "TCP", "targetPort": 8080}]
    patched = core.patch_namespaced_service(body=manifest, name=name, namespace="default")
    assert sorted(p.port for p in patched.spec.ports) == [80, 8080]
    assert patched.status is not None

    core.delete_namespaced_service(name=name, body={}, namespace="default")
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_service(name=name, namespace="default")
    assert missing.value.status == 404


def test_replication_controller_apis(api_client: client.ApiClient) -> None:
    core = client.CoreV1Api(api_client)
    name = "frontend-" + short_uuid()
    manifest = {"apiVersion": "v1", "kind": "ReplicationController",
                "metadata": {"labels": {"name": name}, "name": name},
                "spec": {"replicas": 2, "selector": {"name": name},
                         "template": {"metadata": {"labels": {"name": name}},
                                      "spec": {"containers": [{"image": "nginx", "name": "nginx",
                                                               "ports": [{"containerPort": 80,
                                                                          "protocol": "TCP"}]}]}}}}
    created = core.create_namespaced_replication_controller(body=manifest, namespace="default")
    assert (created.metadata.name, created.spec.replicas) == (name, 2)
    read = core.read_namespaced_replication_controller(name=name, namespace="default")
    assert (read.metadata.name, read.spec.replicas) == (name, 2)
    core.delete_namespaced_replication_controller(name=name, namespace="default", propagation_policy="Background")


def test_configmap_apis(api_client: client.ApiClient) -> None:
    """JSON patch replacing /data, then a merge patch; delete; the label selector lists nothing."""
    core = client.CoreV1Api(api_client)
    name = "test-configmap-" + short_uuid()
    label = f"e2e-tests-{name}"
    manifest = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name, "labels": {label: "true"}},
                "data": {"config.json": '{"command":"/usr/bin/mysqld_safe"}',
                         "frontend.cnf": "[mysqld]\nbind-address = 10.0.0.3\nport = 3306\n"}}
    assert core.create_namespaced_config_map(body=manifest, namespace="default").metadata.name == name
    assert core.read_namespaced_config_map(name=name, namespace="default").metadata.name == name

    json_patch = [{"op": "replace", "path": "/data", "value": {"new_value": "json_patch_name"}}]
    patched = core.patch_namespaced_config_map(name=name, namespace="default", body=json_patch)
    assert patched.data == {"new_value": "json_patch_name"}

    patched = core.patch_namespaced_config_map(name=name, namespace="default",
                                               body={"data": {"new_value": "merge_patch_name"}})
    assert patched.data == {"new_value": "merge_patch_name"}

    core.delete_namespaced_config_map(name=name, body={}, namespace="default")
    assert core.list_namespaced_config_map("default", label_selector=f"{label}=true").items == []


def test_node_apis(api_client: client.ApiClient) -> None:
    core = client.CoreV1Api(api_client)
    nodes = core.list_node().items
    assert nodes
    for item in nodes:
        node = core.read_node(name=item.metadata.name)
        assert isinstance(node.metadata.labels, dict)
        assert node.metadata.labels["kubernetes.io/hostname"] == item.metadata.name
