"""Host-network pods get host ports from their container ports; pod templates do not (since 1.28)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission import default_object, validate_create

Port = dict[str, Any]


def pod(host_network: bool | None, ports: list[Port], init_ports: list[Port] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx", "ports": copy.deepcopy(ports)}]}
    if init_ports is not None:
        spec["initContainers"] = [{"name": "init", "image": "busybox", "ports": copy.deepcopy(init_ports)}]
    if host_network is not None:
        spec["hostNetwork"] = host_network
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}


def host_ports(obj: dict[str, Any], list_name: str) -> list[int | None]:
    return [port.get("hostPort") for port in obj["spec"][list_name][0]["ports"]]


@pytest.mark.parametrize(
    ("host_network", "ports", "expected"),
    [
        # hostNetwork: an unset or zero host port becomes the container port.
        (True, [{"containerPort": 80}], [80]),
        (True, [{"containerPort": 80, "hostPort": 0}], [80]),
        (True, [{"containerPort": 80}, {"containerPort": 443, "protocol": "UDP"}], [80, 443]),
        # A host port already given is kept (validation then insists it matches).
        (True, [{"containerPort": 80, "hostPort": 80}], [80]),
        (True, [{"containerPort": 80, "hostPort": 8080}], [8080]),
        # Without host networking nothing is defaulted.
        (False, [{"containerPort": 80}], [None]),
        (None, [{"containerPort": 80}], [None]),
        (False, [{"containerPort": 80, "hostPort": 0}], [0]),
    ],
)
def test_pod_host_ports(host_network: bool | None, ports: list[Port], expected: list[int | None]) -> None:
    obj = pod(host_network, ports, init_ports=ports)
    default_object("", "v1", "Pod", obj)
    assert host_ports(obj, "containers") == expected
    assert host_ports(obj, "initContainers") == expected


def test_defaulted_host_network_pod_is_valid_and_mismatch_is_not() -> None:
    obj = pod(True, [{"containerPort": 80}])
    default_object("", "v1", "Pod", obj)
    assert validate_create("", "v1", "Pod", obj, namespaced=True) == []
    mismatched = pod(True, [{"containerPort": 80, "hostPort": 8080}])
    default_object("", "v1", "Pod", mismatched)
    assert [str(e) for e in validate_create("", "v1", "Pod", mismatched, namespaced=True)] == [
        "spec.containers[0].ports[0].hostPort: Invalid value: 8080: "
        "must match `containerPort` when `hostNetwork` is true"
    ]


def test_port_without_container_port_is_left_for_validation() -> None:
    obj = pod(True, [{"name": "http"}])
    default_object("", "v1", "Pod", obj)
    assert "hostPort" not in obj["spec"]["containers"][0]["ports"][0]
    errors = [str(e) for e in validate_create("", "v1", "Pod", obj, namespaced=True)]
    assert "spec.containers[0].ports[0].containerPort: Required value" in errors


def template_spec(kind: str) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "a"}},
                "spec": {"hostNetwork": True, "containers": [{"name": "app", "image": "nginx",
                                                              "ports": [{"containerPort": 80}]}]}}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "d", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}}, "template": template}}


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet"])
def test_templates_keep_their_ports(kind: str) -> None:
    # Upstream moved this default from PodSpec to Pod in 1.28 (gate
    # DefaultHostNetworkHostPortsInPodTemplates, off): templates stay as written and are valid.
    obj = template_spec(kind)
    default_object("apps", "v1", kind, obj)
    assert "hostPort" not in obj["spec"]["template"]["spec"]["containers"][0]["ports"][0]
    assert validate_create("apps", "v1", kind, obj, namespaced=True) == []
