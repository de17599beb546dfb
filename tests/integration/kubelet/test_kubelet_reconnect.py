"""The kubelet and the controllers ride out a restart of the API server underneath them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cluster_thread import ClusterThread, free_port

from kubeloop.testing.cluster import ClusterConfig, quick_kubelet_config
from kubeloop.testing.polling import eventually_blocking


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}


def ready_replicas(kube: ClusterThread, name: str) -> int:
    status = kube.apps.read_namespaced_deployment(name, "default").status
    return int(status.ready_replicas or 0) if status is not None else 0


def test_kubelet_and_controllers_reconnect_after_the_server_restarts(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path / "cluster", port=free_port(), memory=False,
                           kubelet=quick_kubelet_config())
    kube = ClusterThread(config)
    try:
        kube.apps.create_namespaced_deployment("default", deployment("web", 2))
        eventually_blocking(lambda: ready_replicas(kube, "web") == 2, what="2 ready replicas", timeout=30)

        kube.call(kube.cluster.server.stop())
        kube.call(kube.cluster.server.start())

        # Controllers see the scale-up (their watches came back) and the kubelet runs the new pod.
        kube.apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 3}})
        eventually_blocking(lambda: ready_replicas(kube, "web") == 3, timeout=60, what="3 ready replicas")
        kube.core.create_namespaced_pod("default", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo"},
                                                    "spec": {"containers": [{"name": "app", "image": "busybox"}]}})
        eventually_blocking(lambda: kube.core.read_namespaced_pod("solo", "default").status.phase == "Running",
                            timeout=60, what="the new pod to run")
    finally:
        kube.stop()
