"""Simulated node identities, Node and Lease objects, pod addresses and reported image names."""

from typing import Any

import pytest

from kubeloop.kubelet.images import display_image, image_id, repository
from kubeloop.kubelet.nodes import NodeShape, free_pod_ip, lease_object, node_object, node_status, sim_nodes
from kubeloop.kubelet.podstatus import format_time_of

T0 = 1_700_000_000.0


def test_nodes_are_numbered_from_one_and_spread_over_zones_round_robin() -> None:
    nodes = sim_nodes(5, ("a", "b", "c"))
    assert [(n.name, n.zone) for n in nodes] == [
        ("kubeloop-node-1", "a"), ("kubeloop-node-2", "b"), ("kubeloop-node-3", "c"),
        ("kubeloop-node-4", "a"), ("kubeloop-node-5", "b"),
    ]
    assert len({n.internal_ip for n in nodes}) == 5 and len({n.pod_cidr for n in nodes}) == 5
    assert sim_nodes(0) == []
    with pytest.raises(ValueError):
        sim_nodes(251)


def test_node_object() -> None:
    [node] = sim_nodes(1, ("zone-a",))
    obj = node_object(node, NodeShape(cpu="4", memory="8Gi", pods=20), T0)
    assert obj["metadata"]["labels"]["kubernetes.io/hostname"] == "kubeloop-node-1"
    assert obj["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-a"
    status = obj["status"]
    assert status["capacity"] == status["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "20",
                                                           "ephemeral-storage": "100Gi"}
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["lastHeartbeatTime"]) == ("True", format_time_of(T0))
    assert {"type": "InternalIP", "address": node.internal_ip} in status["addresses"]


def test_node_status_keeps_transition_times_and_moves_heartbeats() -> None:
    [node] = sim_nodes(1)
    first = node_status(node, NodeShape(), T0)
    later = node_status(node, NodeShape(), T0 + 60, first)
    for before, after in zip(first["conditions"], later["conditions"]):
        assert after["lastTransitionTime"] == before["lastTransitionTime"] == format_time_of(T0)
        assert after["lastHeartbeatTime"] == format_time_of(T0 + 60)
    not_ready = {"conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}
    recovered = node_status(node, NodeShape(), T0, not_ready)
    assert next(c for c in recovered["conditions"] if c["type"] == "Ready")["lastTransitionTime"] == format_time_of(T0)


def test_lease_object_is_owned_by_its_node() -> None:
    lease = lease_object("kubeloop-node-1", "uid-1", 40, "2024-01-01T00:00:00.000000Z")
    assert lease["metadata"]["namespace"] == "kube-node-lease"
    assert lease["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "kubeloop-node-1",
                                                     "uid": "uid-1"}]
    assert lease["spec"] == {"holderIdentity": "kubeloop-node-1", "leaseDurationSeconds": 40,
                             "renewTime": "2024-01-01T00:00:00.000000Z"}


def test_free_pod_ip_takes_the_lowest_unused_address() -> None:
    [_, node] = sim_nodes(2)
    assert free_pod_ip(node, []) == "10.244.2.2"
    assert free_pod_ip(node, ["10.244.2.2", "10.244.2.4"]) == "10.244.2.3"
    with pytest.raises(RuntimeError):
        free_pod_ip(node, [f"10.244.2.{i}" for i in range(2, 255)])


@pytest.mark.parametrize(
    ("image", "shown", "repo"),
    [
        ("nginx", "nginx:latest", "nginx"),
        ("nginx:1.25", "nginx:1.25", "nginx"),
        ("registry:5000/team/app", "registry:5000/team/app:latest", "registry:5000/team/app"),
        ("registry:5000/team/app:v2", "registry:5000/team/app:v2", "registry:5000/team/app"),
        ("nginx@sha256:abc", "nginx@sha256:abc", "nginx"),
    ],
)
def test_images(image: str, shown: str, repo: str) -> None:
    assert display_image(image) == shown
    assert repository(image) == repo


def test_image_ids_are_stable_and_distinct() -> None:
    assert image_id("nginx") == image_id("nginx:latest")
    assert image_id("nginx:1.25") != image_id("nginx:1.26")
    assert image_id("nginx:1.25").startswith("nginx@sha256:")
    assert image_id("nginx@sha256:abc") == "nginx@sha256:abc"


@pytest.mark.parametrize("previous", ["x", 5, ["x"], {"conditions": "x"}, {"conditions": [1, "a"]}])
def test_node_status_replaces_a_stored_status_of_the_wrong_shape(previous: Any) -> None:
    # Issue #18 item 2: a Node status of "x" made every heartbeat fail, for good.
    node = sim_nodes(1)[0]
    status = node_status(node, NodeShape(), T0, previous)
    assert [c["type"] for c in status["conditions"]] == ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
    assert status == node_status(node, NodeShape(), T0)
