"""The ``kubeloop_cluster`` pytest fixture, used as docs/testing.md shows: testing a controller of your own.

The controller under test is the ConfigMap checksum example: changing a ConfigMap must roll
the Deployment that mounts it, which takes the Deployment and ReplicaSet controllers and the
kubelet of the embedded cluster to finish.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examples.configmap_checksum.controller import ANNOTATION, setup
from kubeloop.client import CONFIG_MAPS, DEPLOYMENTS, NODES, PODS
from kubeloop.runtime.manager import Manager
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, has_condition, quick_kubelet_config


@pytest.fixture
def kubeloop_cluster_config(tmp_path: Path) -> ClusterConfig:
    """Only the controllers this test needs, and two nodes."""
    return ClusterConfig(data_dir=tmp_path / "cluster", kubelet=quick_kubelet_config(nodes=2),
                         controllers=("replicaset", "deployment"))


def web_deployment() -> dict[str, Any]:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "app", "image": "nginx:1.25",
                                    "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}]}],
                    "volumes": [{"name": "cfg", "configMap": {"name": "settings"}}],
                },
            },
        },
    }


def rolled_out(deployment: dict[str, Any]) -> bool:
    status = deployment.get("status") or {}
    template = deployment["spec"]["template"].get("metadata", {})
    return (ANNOTATION in template.get("annotations", {})
            and status.get("observedGeneration") == deployment["metadata"]["generation"]
            and status.get("updatedReplicas") == 2 and status.get("readyReplicas") == 2
            and status.get("replicas") == 2)


async def test_a_configmap_change_rolls_the_deployment(kubeloop_cluster: EmbeddedCluster) -> None:
    client = kubeloop_cluster.client
    await client.create(CONFIG_MAPS, {"metadata": {"name": "settings"}, "data": {"level": "info"}},
                        namespace="default")
    await client.create(DEPLOYMENTS, web_deployment(), namespace="default")

    manager = Manager(client)
    await setup(manager)
    await manager.start()
    try:
        first = await kubeloop_cluster.wait_for(DEPLOYMENTS, "web", rolled_out)
        checksum = first["spec"]["template"]["metadata"]["annotations"][ANNOTATION]

        await client.patch(CONFIG_MAPS, "settings", {"data": {"level": "debug"}}, namespace="default")
        second = await kubeloop_cluster.wait_for(
            DEPLOYMENTS, "web",
            lambda d: rolled_out(d) and d["spec"]["template"]["metadata"]["annotations"][ANNOTATION] != checksum,
        )
        assert has_condition(second, "Available")
        pods = (await client.list(PODS, namespace="default", label_selector="app=web"))["items"]
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        assert {p["metadata"]["annotations"][ANNOTATION] for p in live} == {
            second["spec"]["template"]["metadata"]["annotations"][ANNOTATION]}
    finally:
        await manager.stop()


async def test_the_fixture_runs_the_configured_cluster(kubeloop_cluster: EmbeddedCluster) -> None:
    assert kubeloop_cluster.ready()
    assert kubeloop_cluster.kubeconfig_path.is_file()
    nodes = (await kubeloop_cluster.client.list(NODES))["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == ["kubeloop-node-1", "kubeloop-node-2"]
    assert sorted(c.name for c in kubeloop_cluster.manager.controllers) == ["deployment", "kubelet", "replicaset"]
    with pytest.raises(TimeoutError, match="pods nothing"):
        await kubeloop_cluster.wait_for(PODS, "nothing", timeout=0.2)
