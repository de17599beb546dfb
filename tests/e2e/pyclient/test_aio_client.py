"""The official Python client's asyncio e2e cases (upstream ``kubernetes/aio/e2e_test``:
``test_api.py``, ``test_apply_patch.py``, ``test_batch.py``, ``test_dynamic_client.py``),
restated against the embedded cluster with ``kubernetes.aio`` (aiohttp)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from kubernetes.aio import client as aio_client
from kubernetes.aio import config as aio_config
from kubernetes.aio import utils as aio_utils
from kubernetes.aio.client.rest import ApiException
from kubernetes.aio.dynamic import DynamicClient

from kubeloop.testing.polling import eventually

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
        image: nginx:1.7.9
        ports:
        - containerPort: 80
"""


@pytest_asyncio.fixture
async def api(kubeconfig: Path) -> AsyncIterator[aio_client.ApiClient]:
    configuration = aio_client.Configuration()
    await aio_config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    async with aio_client.ApiClient(configuration=configuration) as opened:
        yield opened


def short_uuid() -> str:
    return str(uuid.uuid4())[-12:]


async def test_create_deployment(api: aio_client.ApiClient) -> None:
    apps = aio_client.AppsV1Api(api)
    name = "nginx-deployment-" + str(uuid.uuid4())
    created = await apps.create_namespaced_deployment(body=yaml.safe_load(DEPLOYMENT_YAML.format(name=name)),
                                                      namespace="default")
    assert created.metadata.name == name
    read = await apps.read_namespaced_deployment(name, "default")
    assert (read.metadata.name, read.spec.template.spec.containers[0].image) == (name, "nginx:1.7.9")
    await apps.delete_namespaced_deployment(name, "default", body=aio_client.V1DeleteOptions())
    with pytest.raises(ApiException) as missing:
        await apps.read_namespaced_deployment(name, "default")
    assert missing.value.status == 404


async def test_create_deployment_from_yaml_file(api: aio_client.ApiClient, tmp_path: Path) -> None:
    apps = aio_client.AppsV1Api(api)
    name = "nginx-deployment-" + str(uuid.uuid4())
    manifest = tmp_path / "temp.yaml"
    manifest.write_text(DEPLOYMENT_YAML.format(name=name))
    await aio_utils.create_from_yaml(api, str(manifest))
    read = await apps.read_namespaced_deployment(name, "default")
    assert read.spec.replicas == 3
    await apps.delete_namespaced_deployment(name, "default", body=aio_client.V1DeleteOptions())


async def test_create_daemonset(api: aio_client.ApiClient) -> None:
    apps = aio_client.AppsV1Api(api)
    name = "nginx-app-" + str(uuid.uuid4())
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"labels": {"app": "nginx"}, "name": name},
                 "spec": {"selector": {"matchLabels": {"app": "nginx"}},
                          "template": {"metadata": {"labels": {"app": "nginx"}, "name": name},
                                       "spec": {"containers": [{"name": "nginx-app", "image": "nginx:1.10"}]}},
                          "updateStrategy": {"type": "RollingUpdate"}}}
    await apps.create_namespaced_daemon_set("default", body=daemonset)
    read = await apps.read_namespaced_daemon_set(name, "default")
    assert read.spec.template.spec.containers[0].image == "nginx:1.10"
    await apps.delete_namespaced_daemon_set(name, "default", body=aio_client.V1DeleteOptions())


async def test_apply_patch(api: aio_client.ApiClient) -> None:
    """Server-side apply creates the ConfigMap; a strategic merge patch with the read object adds a key."""
    core = aio_client.CoreV1Api(api)
    name = "cm-test" + str(uuid.uuid4())
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "default", "name": name},
                "data": {"hello": "world!"}}
    applied = await core.patch_namespaced_config_map(_content_type="application/apply-patch+yaml", field_manager="test",
                                                     body=manifest, name=name, namespace="default")
    assert applied.metadata.name == name
    read = await core.read_namespaced_config_map(name=name, namespace="default")
    assert read.metadata.name == name
    read.data["new"] = "value"
    patched = await core.patch_namespaced_config_map(field_manager="test", body=read, name=name, namespace="default")
    assert patched.data == {"hello": "world!", "new": "value"}
    await core.delete_namespaced_config_map(name=name, body={}, namespace="default")


async def test_job_apis(api: aio_client.ApiClient) -> None:
    batch = aio_client.BatchV1Api(api)
    name = "test-job-" + str(uuid.uuid4())
    manifest = {"kind": "Job", "apiVersion": "batch/v1", "metadata": {"name": name},
                "spec": {"template": {"metadata": {"name": name},
                                      "spec": {"containers": [{"image": "busybox", "name": name,
                                                               "command": ["sh", "-c", "sleep 5"]}],
                                               "restartPolicy": "Never"}}}}
    assert (await batch.create_namespaced_job(body=manifest, namespace="default")).metadata.name == name
    assert (await batch.read_namespaced_job(name=name, namespace="default")).metadata.name == name
    deleted = await batch.delete_namespaced_job(name=name, body={"propagationPolicy": "Background"},
                                                namespace="default")
    assert isinstance(deleted, dict)
    assert deleted["kind"] in ("Job", "Status")
    if deleted["kind"] == "Job":
        assert deleted["metadata"]["name"] == name
    else:
        assert deleted["status"] == "Success"


async def test_dynamic_client_pod_apis(api: aio_client.ApiClient) -> None:
    """The asyncio dynamic client: discover Pod, create one, see it leave Pending, list, delete."""
    dynamic = await DynamicClient(api)
    pods = await dynamic.resources.get(kind="Pod", api_version="v1")
    name = "busybox-test-" + short_uuid()
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"image": "busybox", "name": "sleep",
                                         "args": ["/bin/sh", "-c", "while true;do date;sleep 5; done"]}]}}
    created = await dynamic.create(pods, body=manifest, namespace="default")
    assert created.metadata.name == name
    assert created.status.phase == "Pending"
    async def phase_after_pending() -> str | None:
        read = await dynamic.get(pods, name=name, namespace="default")
        return None if read.status.phase == "Pending" else str(read.status.phase)

    assert await eventually(phase_after_pending, timeout=30, what=f"pod {name} to leave Pending") == "Running"
    listed = await dynamic.get(pods)
    assert name in [item.metadata.name for item in listed.items]
    await dynamic.delete(pods, name=name, body={}, namespace="default")
