"""Nodes, their heartbeats and where pods go, seen through the official client."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_thread import ClusterThread

from kubeloop.api.pods import node_name
from kubeloop.testing.cluster import ClusterConfig, quick_kubelet_config
from kubeloop.testing.polling import eventually_blocking


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}], **spec}}


def node_of(kube: ClusterThread, name: str) -> str:
    """The node the pod was placed on (empty while unplaced)."""
    raw = kube.api.sanitize_for_serialization(kube.core.read_namespaced_pod(name, "default"))
    return node_name(raw)


def test_nodes_register_with_labels_capacity_and_ready(kube: ClusterThread) -> None:
    nodes = sorted(kube.core.list_node().items, key=lambda n: n.metadata.name)
    assert [n.metadata.name for n in nodes] == ["kubeloop-node-1", "kubeloop-node-2", "kubeloop-node-3"]
    assert [n.metadata.labels["topology.kubernetes.io/zone"] for n in nodes] == ["zone-a", "zone-b", "zone-c"]
    for node in nodes:
        assert node.metadata.labels["kubernetes.io/hostname"] == node.metadata.name
        assert node.status.capacity["pods"] == node.status.allocatable["pods"] == "110"
        assert node.status.capacity["cpu"] and node.status.capacity["memory"]
        ready = next(c for c in node.status.conditions if c.type == "Ready")
        assert ready.status == "True"
        assert any(a.type == "InternalIP" for a in node.status.addresses)


def test_nodes_heartbeat_through_leases(kube: ClusterThread) -> None:
    leases = {lease.metadata.name: lease for lease in kube.coordination.list_namespaced_lease("kube-node-lease").items}
    assert sorted(leases) == ["kubeloop-node-1", "kubeloop-node-2", "kubeloop-node-3"]
    first = leases["kubeloop-node-1"]
    assert first.spec.holder_identity == "kubeloop-node-1"
    assert first.spec.lease_duration_seconds == 40
    assert first.metadata.owner_references[0].kind == "Node"

    def renewed() -> bool:
        lease = kube.coordination.read_namespaced_lease("kubeloop-node-1", "kube-node-lease")
        return bool(lease.spec.renew_time > first.spec.renew_time)

    eventually_blocking(renewed, what="the lease to be renewed", timeout=30)


def test_pods_spread_over_the_least_loaded_nodes(kube: ClusterThread) -> None:
    for i in range(6):
        kube.core.create_namespaced_pod("default", pod(f"spread-{i}"))

    def placements() -> list[str] | None:
        nodes = [node_of(kube, f"spread-{i}") for i in range(6)]
        return nodes if all(nodes) else None

    placed = eventually_blocking(placements, what="all pods placed", timeout=30)
    assert sorted(placed) == ["kubeloop-node-1"] * 2 + ["kubeloop-node-2"] * 2 + ["kubeloop-node-3"] * 2


def test_node_selector_is_respected(kube: ClusterThread) -> None:
    for i in range(3):
        selector = {"topology.kubernetes.io/zone": "zone-b"}
        kube.core.create_namespaced_pod("default", pod(f"zoned-{i}", nodeSelector=selector))
    for i in range(3):
        assert eventually_blocking(lambda i=i: node_of(kube, f"zoned-{i}"), timeout=30) == "kubeloop-node-2"


def test_a_pod_no_node_fits_is_marked_unschedulable(kube: ClusterThread) -> None:
    kube.core.create_namespaced_pod("default", pod("nowhere", nodeSelector={"disk": "ssd"}))

    def unschedulable() -> Any:
        status = kube.core.read_namespaced_pod("nowhere", "default").status
        return next((c for c in status.conditions or () if c.type == "PodScheduled" and c.status == "False"), None)

    condition = eventually_blocking(unschedulable, what="PodScheduled=False", timeout=30)
    assert condition.reason == "Unschedulable"
    assert "nodeSelector" in condition.message
    assert node_of(kube, "nowhere") == ""
    assert kube.core.read_namespaced_pod("nowhere", "default").status.phase == "Pending"


def test_a_pod_for_another_scheduler_stays_pending(kube: ClusterThread) -> None:
    kube.core.create_namespaced_pod("default", pod("elsewhere", schedulerName="unschedulable"))
    kube.core.create_namespaced_pod("default", pod("after"))
    # The kubelet has handled the later pod, so it has seen the first one too.
    eventually_blocking(lambda: kube.core.read_namespaced_pod("after", "default").status.phase == "Running", timeout=30)
    elsewhere = kube.core.read_namespaced_pod("elsewhere", "default")
    assert node_of(kube, "elsewhere") == ""
    assert elsewhere.status.phase == "Pending"
    assert not elsewhere.status.conditions


@pytest.fixture
def kube_without_retries(tmp_path: Path) -> Iterator[ClusterThread]:
    """As ``kube``, but an unschedulable pod is not retried on a timer (in an hour): only a
    node event can get it placed."""
    config = dataclasses.replace(quick_kubelet_config(), unschedulable_retry=3600.0)
    cluster = ClusterThread(ClusterConfig(data_dir=tmp_path / "cluster", kubelet=config, controllers=()))
    try:
        yield cluster
    finally:
        cluster.stop()


def test_a_node_that_comes_to_fit_gets_the_pending_pod(kube_without_retries: ClusterThread) -> None:
    kube = kube_without_retries
    kube.core.create_namespaced_pod("default", pod("waiting", nodeSelector={"disk": "ssd"}))

    def unschedulable() -> bool:
        status = kube.core.read_namespaced_pod("waiting", "default").status
        return any(c.type == "PodScheduled" and c.status == "False" for c in status.conditions or ())

    eventually_blocking(unschedulable, what="PodScheduled=False", timeout=30)
    kube.core.patch_node("kubeloop-node-2", {"metadata": {"labels": {"disk": "ssd"}}})
    assert eventually_blocking(lambda: node_of(kube, "waiting"), what="the pod placed", timeout=30) == "kubeloop-node-2"
