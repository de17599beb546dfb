"""Chaos at small size (issue #18's deliverable): kill -9 each process of a split cluster during a
Deployment and a CloneSet rollout; both rollouts complete, with exactly the desired pods, none
orphaned or duplicated. (The audit's surge and availability bounds are checked by the rollout
tests of each controller; here the subject is surviving the kills.)"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

from kubernetes import client, config
from process_harness import KubeloopProcess, free_port

from kubeloop.testing.polling import eventually_blocking

QUICK = ("--pod-start-delay", "0.2", "--pod-ready-delay", "0.2", "--pod-termination-delay", "0.2")
REPLICAS = 6
LABELS = {"app": "chaos"}
CS_LABELS = {"app": "chaos-cs"}


def pod_template(labels: dict[str, str], image: str) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": image}]}}


def test_rollouts_complete_through_kill_9_of_every_process(tmp_path: Path, processes: list[KubeloopProcess]) -> None:
    data_dir, port = tmp_path / "data", free_port()
    kubeconfig = str(data_dir / "kubeconfig")
    commands = {
        "server": ("server", "--data-dir", str(data_dir), "--port", str(port)),
        "kubelet": ("kubelet", "--kubeconfig", kubeconfig, "--nodes", "2", *QUICK),
        "controllers": ("controllers", "--kubeconfig", kubeconfig),
    }
    ready_lines = {"server": "listening", "kubelet": "kubelet running", "controllers": "controllers running"}
    running: dict[str, KubeloopProcess] = {}

    def start(name: str) -> None:
        running[name] = KubeloopProcess(*commands[name])
        processes.append(running[name])
        running[name].wait_for_line(ready_lines[name])

    for name in ("server", "kubelet", "controllers"):
        start(name)
    api: client.ApiClient = config.new_client_from_config(config_file=kubeconfig)
    apps, custom, core = client.AppsV1Api(api), client.CustomObjectsApi(api), client.CoreV1Api(api)
    apps.create_namespaced_deployment("default", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "chaos"},
        "spec": {"replicas": REPLICAS, "selector": {"matchLabels": LABELS},
                 "template": pod_template(LABELS, "app:1")}})
    custom.create_namespaced_custom_object("apps.kruise.io", "v1alpha1", "default", "clonesets", {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "chaos-cs"},
        "spec": {"replicas": REPLICAS, "selector": {"matchLabels": CS_LABELS},
                 "template": pod_template(CS_LABELS, "app:1")}})

    def settled(image: str) -> bool:
        deployment = apps.read_namespaced_deployment_status("chaos", "default")
        cloneset = custom.get_namespaced_custom_object_status("apps.kruise.io", "v1alpha1", "default", "clonesets",
                                                              "chaos-cs")
        status = deployment.status
        cs_status = cloneset.get("status") or {}
        return (deployment.spec.template.spec.containers[0].image == image
                and status.observed_generation == deployment.metadata.generation
                and (status.updated_replicas, status.available_replicas, status.replicas) == (REPLICAS,) * 3
                and cs_status.get("observedGeneration") == cloneset["metadata"]["generation"]
                and (cs_status.get("updatedReadyReplicas"), cs_status.get("replicas")) == (REPLICAS, REPLICAS))

    eventually_blocking(lambda: settled("app:1"), timeout=120, what="the first revision to be ready",
                        interval=0.1, retry_on=(Exception,))
    apps.patch_namespaced_deployment("chaos", "default", {"spec": {"template": pod_template(LABELS, "app:2")}})
    custom.patch_namespaced_custom_object("apps.kruise.io", "v1alpha1", "default", "clonesets", "chaos-cs",
                                          {"spec": {"template": pod_template(CS_LABELS, "app:2")}})
    for victim in ("controllers", "kubelet", "server"):
        time.sleep(0.5)  # mid-rollout
        running[victim].signal(signal.SIGKILL, timeout=10)
        start(victim)
    eventually_blocking(lambda: settled("app:2"), timeout=180, what="both rollouts to complete after the kills",
                        interval=0.1, retry_on=(Exception,))
    for labels in (LABELS, CS_LABELS):
        selector = ",".join(f"{k}={v}" for k, v in labels.items())

        def exact(selector: str = selector) -> bool:
            pods = core.list_namespaced_pod("default", label_selector=selector).items
            live = [p for p in pods if p.metadata.deletion_timestamp is None]
            return len(live) == REPLICAS and all(p.metadata.owner_references for p in live) and all(
                c.image == "app:2" for p in live for c in p.spec.containers)

        eventually_blocking(exact, timeout=60, what=f"exactly {REPLICAS} owned pods of the new revision ({selector})",
                            interval=0.1, retry_on=(Exception,))
    api.close()
