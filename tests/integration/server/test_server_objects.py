"""Create, get, update through the official client: system fields, conflicts, no-ops, generation."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from kubernetes.client.rest import ApiException
from server_harness import Cluster


def pod(name: str = "", generate: str = "", labels: dict[str, str] | None = None, node: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name} if name else {"generateName": generate}
    if labels:
        meta["labels"] = labels
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.19"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def deployment(name: str, replicas: int = 1, image: str = "nginx:1.19") -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "app", "image": image}]}}},
    }


def error_body(caught: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads(caught.value.body)
    return body


def test_create_sets_system_fields_and_pending_phase(cluster: Cluster) -> None:
    created = cluster.api.sanitize_for_serialization(
        cluster.core.create_namespaced_pod("default", pod(generate="web-")))
    meta = created["metadata"]
    assert meta["name"].startswith("web-") and len(meta["name"]) == len("web-") + 5
    assert meta["uid"] and meta["creationTimestamp"]
    assert int(meta["resourceVersion"]) > 0
    assert created["status"]["phase"] == "Pending"
    assert created["spec"]["restartPolicy"] == "Always"  # defaulted by admission
    fetched = cluster.core.read_namespaced_pod(meta["name"], "default")
    assert fetched.metadata.uid == meta["uid"]


def test_create_errors(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", pod("dup"))
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_pod("default", pod("dup"))
    assert caught.value.status == 409
    assert error_body(caught)["reason"] == "AlreadyExists"
    assert error_body(caught)["message"] == 'pods "dup" already exists'
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_pod("nowhere", pod("p"))
    assert caught.value.status == 404
    assert error_body(caught)["message"] == 'namespaces "nowhere" not found'
    other = pod("p")
    other["metadata"]["namespace"] = "kube-system"
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_pod("default", other)
    assert caught.value.status == 400
    with_rv = pod("q")
    with_rv["metadata"]["resourceVersion"] = "5"
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_pod("default", with_rv)
    assert caught.value.status == 400
    bad = pod("Bad_Name")
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_pod("default", bad)
    assert caught.value.status == 422
    assert error_body(caught)["details"]["causes"][0]["field"] == "metadata.name"


def test_generation_and_status_wiped_on_create(cluster: Cluster) -> None:
    body = deployment("web")
    body["status"] = {"replicas": 7}
    body["metadata"]["generation"] = 9
    created = cluster.apps.create_namespaced_deployment("default", body)
    assert created.metadata.generation == 1
    assert created.status is None or created.status.replicas is None
    assert created.spec.strategy.rolling_update.max_surge == "25%"
    config_map = cluster.core.create_namespaced_config_map(
        "default", {"metadata": {"name": "cm", "generation": 3}, "data": {"a": "b"}})
    assert config_map.metadata.generation is None


def test_update_conflicts_on_stale_resource_version(cluster: Cluster) -> None:
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    first = cluster.core.read_namespaced_config_map("cm", "default")
    first.data = {"a": "2"}
    updated = cluster.core.replace_namespaced_config_map("cm", "default", first)
    assert int(updated.metadata.resource_version) > int(first.metadata.resource_version)
    first.data = {"a": "3"}
    with pytest.raises(ApiException) as caught:
        cluster.core.replace_namespaced_config_map("cm", "default", first)
    assert caught.value.status == 409
    body = error_body(caught)
    assert body["reason"] == "Conflict"
    assert body["message"] == ('Operation cannot be fulfilled on configmaps "cm": the object has been modified; '
                               "please apply your changes to the latest version and try again")
    unconditional = {"metadata": {"name": "cm"}, "data": {"a": "4"}}
    assert cluster.core.replace_namespaced_config_map("cm", "default", unconditional).data == {"a": "4"}
    with pytest.raises(ApiException) as caught:
        cluster.core.replace_namespaced_config_map("missing", "default", {"metadata": {"name": "missing"}})
    assert caught.value.status == 404
    with pytest.raises(ApiException) as caught:
        cluster.core.replace_namespaced_config_map("cm", "default", {"metadata": {"name": "other"}})
    assert caught.value.status == 400


def test_no_op_update_keeps_resource_version(cluster: Cluster) -> None:
    created = cluster.apps.create_namespaced_deployment("default", deployment("web"))
    again = cluster.apps.replace_namespaced_deployment("web", "default", created)
    assert again.metadata.resource_version == created.metadata.resource_version
    assert again.metadata.generation == 1


def test_deployment_generation_follows_spec_and_annotations(cluster: Cluster) -> None:
    created = cluster.apps.create_namespaced_deployment("default", deployment("web"))
    created.spec.replicas = 3
    scaled = cluster.apps.replace_namespaced_deployment("web", "default", created)
    assert scaled.metadata.generation == 2
    scaled.metadata.annotations = {"note": "x"}
    annotated = cluster.apps.replace_namespaced_deployment("web", "default", scaled)
    assert annotated.metadata.generation == 3
    annotated.metadata.labels = {"tier": "web"}
    labelled = cluster.apps.replace_namespaced_deployment("web", "default", annotated)
    assert labelled.metadata.generation == 3


def test_replica_set_generation_ignores_annotations(cluster: Cluster) -> None:
    body = deployment("rs")
    body["kind"] = "ReplicaSet"
    created = cluster.apps.create_namespaced_replica_set("default", body)
    created.metadata.annotations = {"a": "b"}
    annotated = cluster.apps.replace_namespaced_replica_set("rs", "default", created)
    assert annotated.metadata.generation == 1
    annotated.spec.replicas = 2
    assert cluster.apps.replace_namespaced_replica_set("rs", "default", annotated).metadata.generation == 2


def test_main_endpoint_cannot_change_status(cluster: Cluster) -> None:
    created = cluster.apps.create_namespaced_deployment("default", deployment("web"))
    body = cluster.api.sanitize_for_serialization(created)
    body["status"] = {"replicas": 5}
    updated = cluster.apps.replace_namespaced_deployment("web", "default", body)
    assert updated.status is None or updated.status.replicas is None
    assert updated.metadata.resource_version == created.metadata.resource_version


def test_immutable_selector_is_rejected(cluster: Cluster) -> None:
    created = cluster.apps.create_namespaced_deployment("default", deployment("web"))
    body = cluster.api.sanitize_for_serialization(created)
    body["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    body["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    with pytest.raises(ApiException) as caught:
        cluster.apps.replace_namespaced_deployment("web", "default", body)
    assert caught.value.status == 422


def test_dry_run_create_and_update_store_nothing(cluster: Cluster) -> None:
    created = cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}}, dry_run="All")
    assert created.metadata.uid
    with pytest.raises(ApiException) as caught:
        cluster.core.read_namespaced_config_map("cm", "default")
    assert caught.value.status == 404
    cluster.core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    dry = cluster.core.replace_namespaced_config_map("cm", "default", {"metadata": {"name": "cm"},
                                                                        "data": {"a": "2"}}, dry_run="All")
    assert dry.data == {"a": "2"}
    assert cluster.core.read_namespaced_config_map("cm", "default").data == {"a": "1"}


def test_cluster_scoped_objects_have_no_namespace(cluster: Cluster) -> None:
    node = cluster.core.create_node({"metadata": {"name": "n1", "namespace": "ignored"}})
    assert node.metadata.namespace is None
    assert cluster.core.read_node("n1").metadata.name == "n1"


def test_leases_keep_micro_time(cluster: Cluster) -> None:
    lease = {"metadata": {"name": "leader"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
                                                      "renewTime": "2021-01-02T03:04:05.123456Z"}}
    status, _, body = cluster.raw("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                                  body=orjson.dumps(lease))
    assert status == 201
    assert orjson.loads(body)["spec"]["renewTime"] == "2021-01-02T03:04:05.123456Z"
