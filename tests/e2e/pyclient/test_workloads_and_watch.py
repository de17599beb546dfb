"""The official Python client's apps, batch and watch e2e cases (upstream
``kubernetes/e2e_test/test_apps.py``, ``test_batch.py``, ``test_watch.py``), restated against
the embedded cluster."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import yaml
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

Obj = dict[str, Any]

DEPLOYMENT_YAML = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.15.4
        ports:
        - containerPort: 80
"""


def short_uuid() -> str:
    return str(uuid.uuid4())[-12:]


def test_create_deployment(api_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(api_client)
    name = "nginx-deployment-" + str(uuid.uuid4())
    apps.create_namespaced_deployment(body=yaml.safe_load(DEPLOYMENT_YAML.format(name=name)), namespace="default")
    read = apps.read_namespaced_deployment(name, "default")
    container = read.spec.template.spec.containers[0]
    assert (read.metadata.name, read.spec.replicas) == (name, 3)
    assert read.spec.selector.match_labels["app"] == read.spec.template.metadata.labels["app"] == "nginx"
    assert (container.name, container.image, container.ports[0].container_port) == ("nginx", "nginx:1.15.4", 80)
    apps.delete_namespaced_deployment(name, "default", body=client.V1DeleteOptions())
    with pytest.raises(ApiException) as missing:
        apps.read_namespaced_deployment(name, "default")
    assert missing.value.status == 404


def test_create_daemonset(api_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(api_client)
    name = "nginx-app-" + str(uuid.uuid4())
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"labels": {"app": "nginx"}, "name": name},
                 "spec": {"selector": {"matchLabels": {"app": "nginx"}},
                          "template": {"metadata": {"labels": {"app": "nginx"}, "name": name},
                                       "spec": {"containers": [{"name": "nginx-app", "image": "nginx:1.15.4"}]}},
                          "updateStrategy": {"type": "RollingUpdate"}}}
    apps.create_namespaced_daemon_set("default", body=daemonset)
    read = apps.read_namespaced_daemon_set(name, "default")
    container = read.spec.template.spec.containers[0]
    assert read.metadata.name == name
    assert read.spec.selector.match_labels["app"] == read.spec.template.metadata.labels["app"] == "nginx"
    assert (container.name, container.image) == ("nginx-app", "nginx:1.15.4")
    apps.delete_namespaced_daemon_set(name, "default", body=client.V1DeleteOptions())


def job_manifest(name: str) -> Obj:
    return {"kind": "Job", "apiVersion": "batch/v1", "metadata": {"name": name},
            "spec": {"template": {"metadata": {"name": name},
                                  "spec": {"containers": [{"image": "busybox", "name": name,
                                                           "command": ["sh", "-c", "sleep 5"]}],
                                           "restartPolicy": "Never"}}}}


def test_job_apis(api_client: client.ApiClient) -> None:
    """A Job round-trips; deleting it answers the Job (kube-apiserver 1.33: the object, since
    background propagation adds no finalizer) or a Success Status."""
    batch = client.BatchV1Api(api_client)
    name = "test-job-" + str(uuid.uuid4())
    assert batch.create_namespaced_job(body=job_manifest(name), namespace="default").metadata.name == name
    read = batch.read_namespaced_job(name=name, namespace="default")
    container = read.spec.template.spec.containers[0]
    assert (read.metadata.name, container.name, container.image) == (name, name, "busybox")
    assert container.command == ["sh", "-c", "sleep 5"]
    assert read.spec.template.spec.restart_policy == "Never"
    deleted = batch.delete_namespaced_job(name=name, namespace="default", body={"propagationPolicy": "Background"})
    assert isinstance(deleted, dict)
    assert deleted["kind"] in ("Job", "Status")
    if deleted["kind"] == "Job":
        assert deleted["metadata"]["name"] == name
    else:
        assert deleted["status"] == "Success"
        assert deleted.get("details", {"name": name})["name"] == name


def config_map(name: str, value: str, label: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {label: "true"}},
            "data": {"key": value, "config": "dummy"}}


def test_watch_configmaps(api_client: client.ApiClient) -> None:
    """A watch from a list's resourceVersion replays what happened after it: ADDED and MODIFIED
    for b, then DELETED for both (from deletecollection), and ends at timeoutSeconds."""
    core = client.CoreV1Api(api_client)
    label = "e2e-tests-" + short_uuid()
    name_a, name_b = "configmap-a-" + short_uuid(), "configmap-b-" + short_uuid()
    core.create_namespaced_config_map(body=config_map(name_a, "a", label), namespace="default")
    rv = core.list_namespaced_config_map("default", label_selector=f"{label}=true").metadata.resource_version
    configmap_b = config_map(name_b, "b", label)
    core.create_namespaced_config_map(body=configmap_b, namespace="default")
    configmap_b["data"]["config"] = "{}"
    core.patch_namespaced_config_map(name=name_b, namespace="default", body=configmap_b)
    core.delete_collection_namespaced_config_map(namespace="default", label_selector=f"{label}=true")

    events = [(event["type"], event["object"].metadata.name)
              for event in watch.Watch().stream(core.list_namespaced_config_map, namespace="default",
                                                resource_version=rv, timeout_seconds=5,
                                                label_selector=f"{label}=true")]
    assert events[:2] == [("ADDED", name_b), ("MODIFIED", name_b)]
    assert sorted(events[2:]) == [("DELETED", name_a), ("DELETED", name_b)]
