"""The /status and /scale subresources, and every patch type."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from kubernetes.client.rest import ApiException
from server_harness import Cluster
from test_server_objects import deployment, pod


def test_status_writes_change_only_status(cluster: Cluster) -> None:
    created = cluster.apps.create_namespaced_deployment("default", deployment("web"))
    body = cluster.api.sanitize_for_serialization(created)
    body["status"] = {"replicas": 2, "observedGeneration": 1}
    body["spec"]["replicas"] = 9
    body["metadata"]["annotations"] = {"kept": "yes"}
    body["metadata"]["labels"] = {"dropped": "yes"}
    updated = cluster.apps.replace_namespaced_deployment_status("web", "default", body)
    assert updated.status.replicas == 2
    assert updated.spec.replicas == 1
    assert updated.metadata.generation == 1
    assert updated.metadata.annotations == {"kept": "yes"}
    assert updated.metadata.labels is None
    body["status"] = {"replicas": 3}
    with pytest.raises(ApiException) as caught:
        cluster.apps.replace_namespaced_deployment_status("web", "default", body)
    assert caught.value.status == 409
    patched = cluster.apps.patch_namespaced_deployment_status("web", "default", {"status": {"readyReplicas": 1}})
    assert patched.status.ready_replicas == 1 and patched.status.replicas == 2
    read = cluster.apps.read_namespaced_deployment_status("web", "default")
    assert read.status.ready_replicas == 1


def test_pod_status_subresource(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", pod("p"))
    patched = cluster.core.patch_namespaced_pod_status("p", "default", {"status": {"phase": "Running"}})
    assert patched.status.phase == "Running"
    main = cluster.core.patch_namespaced_pod("p", "default", {"status": {"phase": "Failed"}})
    assert main.status.phase == "Running"


def test_scale_subresource_reads_and_writes_replicas(cluster: Cluster) -> None:
    cluster.apps.create_namespaced_deployment("default", deployment("web", replicas=2))
    scale = cluster.apps.read_namespaced_deployment_scale("web", "default")
    assert scale.spec.replicas == 2
    assert scale.status.selector == "app=web"
    scaled = cluster.apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 5}})
    assert scaled.spec.replicas == 5
    parent = cluster.apps.read_namespaced_deployment("web", "default")
    assert parent.spec.replicas == 5 and parent.metadata.generation == 2
    scale = cluster.apps.read_namespaced_deployment_scale("web", "default")
    scale.spec.replicas = 1
    assert cluster.apps.replace_namespaced_deployment_scale("web", "default", scale).spec.replicas == 1
    scale.spec.replicas = 4
    with pytest.raises(ApiException) as caught:
        cluster.apps.replace_namespaced_deployment_scale("web", "default", scale)
    assert caught.value.status == 409
    with pytest.raises(ApiException) as caught:
        cluster.apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": -1}})
    assert caught.value.status == 422
    assert orjson.loads(caught.value.body)["details"]["kind"] == "Scale"
    status, _, body = cluster.raw("PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale",
                                  headers={"Content-Type": "application/json-patch+json"},
                                  body=b'[{"op":"replace","path":"/spec/replicas","value":3}]')
    assert status == 200 and orjson.loads(body)["spec"]["replicas"] == 3
    with pytest.raises(ApiException) as caught:
        cluster.apps.read_namespaced_deployment_scale("missing", "default")
    assert caught.value.status == 404


def _patch(cluster: Cluster, content_type: str, body: object, name: str = "web",
           query: str = "") -> tuple[int, dict[str, object]]:
    status, _, raw = cluster.raw("PATCH", f"/apis/apps/v1/namespaces/default/deployments/{name}{query}",
                                 headers={"Content-Type": content_type}, body=orjson.dumps(body))
    decoded: dict[str, object] = orjson.loads(raw)
    return status, decoded


def test_every_patch_type(cluster: Cluster) -> None:
    cluster.apps.create_namespaced_deployment("default", deployment("web"))
    # Strategic merge (what the Python client sends for dicts): containers merge by name.
    patched = cluster.apps.patch_namespaced_deployment("web", "default", {"spec": {"template": {"spec": {
        "containers": [{"name": "side", "image": "busybox"}]}}}})
    # Upstream puts patch-only elements first (as in the kubectl patch documentation).
    assert [c.name for c in patched.spec.template.spec.containers] == ["side", "app"]
    assert patched.metadata.generation == 2
    # JSON patch (lists) replaces by pointer.
    patched = cluster.apps.patch_namespaced_deployment("web", "default", [
        {"op": "replace", "path": "/spec/replicas", "value": 4}])
    assert patched.spec.replicas == 4
    # Merge patch replaces lists wholesale.
    status, body = _patch(cluster, "application/merge-patch+json", {"spec": {"template": {"spec": {
        "containers": [{"name": "only", "image": "redis"}]}}}})
    assert status == 200
    assert [c["name"] for c in body["spec"]["template"]["spec"]["containers"]] == ["only"]  # type: ignore[index]
    # Server-side apply needs a field manager, creates when missing, then applies changes.
    status, body = _patch(cluster, "application/apply-patch+yaml", deployment("applied"), name="applied")
    assert status == 422 and "fieldManager: Required value" in str(body["message"])
    status, body = _patch(cluster, "application/apply-patch+yaml", deployment("applied"), name="applied",
                          query="?fieldManager=tester")
    assert status == 201
    changed = deployment("applied")
    changed["spec"]["replicas"] = 3
    status, body = _patch(cluster, "application/apply-patch+yaml", changed, name="applied",
                          query="?fieldManager=tester")
    assert status == 200 and body["spec"]["replicas"] == 3  # type: ignore[index]
    managers = {(m["manager"], m["operation"]) for m in body["metadata"]["managedFields"]}  # type: ignore[index]
    assert ("tester", "Apply") in managers


def test_patch_errors(cluster: Cluster) -> None:
    cluster.apps.create_namespaced_deployment("default", deployment("web"))
    status, body = _patch(cluster, "text/plain", {})
    assert status == 415 and body["reason"] == "UnsupportedMediaType"
    status, body = _patch(cluster, "application/json-patch+json", [{"op": "test", "path": "/spec/replicas",
                                                                    "value": 9}])
    assert status == 422
    status, body = _patch(cluster, "application/json-patch+json", {"not": "a list"})
    assert status == 400
    status, body = _patch(cluster, "application/merge-patch+json", {"metadata": {"resourceVersion": "1"}})
    assert status == 409
    status, body = _patch(cluster, "application/merge-patch+json", {"spec": {"replicas": 1}}, name="missing")
    assert status == 404
    status, body = _patch(cluster, "application/merge-patch+json", {"spec": {"replicas": -2}})
    assert status == 422 and body["reason"] == "Invalid"
    assert cluster.apps.read_namespaced_deployment("web", "default").spec.replicas == 1


def test_no_op_patch_keeps_resource_version(cluster: Cluster) -> None:
    created = cluster.apps.create_namespaced_deployment("default", deployment("web"))
    same = cluster.apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 1}})
    assert same.metadata.resource_version == created.metadata.resource_version


def _binding(name: str, node: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, **meta},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}


def test_pod_binding_assigns_the_node_once(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", {
        "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    status, _, body = cluster.raw("POST", "/api/v1/namespaces/default/pods/b/binding",
                                  body=orjson.dumps(_binding("b", "node-1", annotations={"a": "b"})))
    assert status == 201 and orjson.loads(body)["status"] == "Success"
    pod = cluster.core.read_namespaced_pod("b", "default")
    assert pod.spec.node_name == "node-1" and pod.metadata.annotations == {"a": "b"}
    assert [(c.type, c.status) for c in pod.status.conditions] == [("PodScheduled", "True")]
    status, _, body = cluster.raw("POST", "/api/v1/namespaces/default/pods/b/binding",
                                  body=orjson.dumps(_binding("b", "node-2")))
    assert status == 409 and 'pod b is already assigned to node "node-1"' in orjson.loads(body)["message"]


def test_pod_binding_errors(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", {
        "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    path = "/api/v1/namespaces/default/pods/b/binding"
    status, _, body = cluster.raw("POST", path, body=orjson.dumps(_binding("other", "n")))
    assert status == 400
    status, _, body = cluster.raw("POST", path, body=orjson.dumps(_binding("b", "")))
    assert status == 422 and orjson.loads(body)["details"]["causes"][0]["field"] == "target.name"
    status, _, body = cluster.raw("POST", path, body=orjson.dumps(_binding("b", "n", uid="wrong")))
    assert status == 409
    status, _, _ = cluster.raw("POST", "/api/v1/namespaces/default/pods/missing/binding",
                               body=orjson.dumps(_binding("missing", "n")))
    assert status == 404
    resources = {r.name: r for r in cluster.core.get_api_resources().resources}
    assert resources["pods/binding"].verbs == ["create"]
