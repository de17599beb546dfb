"""CustomResourceDefinitions: serving, schema validation, pruning, subresources, persistence."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from server_harness import Cluster, ServerThread, make_api_client

GROUP, VERSION, PLURAL = "demo.example.com", "v1", "widgets"


def widget_crd() -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 0},
                    "replicas": {"type": "integer", "default": 1},
                    "color": {"type": "string", "enum": ["red", "blue"]},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "port": {"x-kubernetes-int-or-string": True},
                    "note": {"type": "string", "nullable": True},
                },
            },
            "status": {"type": "object", "properties": {"replicas": {"type": "integer"},
                                                        "selector": {"type": "string"}}},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget", "shortNames": ["wd"],
                      "categories": ["all"]},
            "versions": [{"name": VERSION, "served": True, "storage": True, "schema": {"openAPIV3Schema": schema},
                          "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                                   "statusReplicasPath": ".status.replicas",
                                                                   "labelSelectorPath": ".status.selector"}}}],
        },
    }


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget", "metadata": {"name": name},
            "spec": {"size": 1, **spec}}


def _create(cluster: Cluster, body: dict[str, Any]) -> dict[str, Any]:
    created: dict[str, Any] = cluster.custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
    return created


def test_crd_is_served_at_once_with_discovery(cluster: Cluster) -> None:
    definition = cluster.extensions.create_custom_resource_definition(widget_crd())
    conditions = {c.type: c.status for c in definition.status.conditions}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    resources = {r.name: r for r in cluster.custom.get_api_resources(GROUP, VERSION).resources}
    assert resources["widgets"].short_names == ["wd"]
    assert resources["widgets/scale"].group == "autoscaling"
    assert "widgets/status" in resources
    groups = [g.name for g in client.ApisApi(cluster.api).get_api_versions().groups]
    assert GROUP in groups


def test_custom_resource_round_trip_with_validation_and_pruning(cluster: Cluster) -> None:
    cluster.extensions.create_custom_resource_definition(widget_crd())
    created = _create(cluster, widget("w1", unknown="dropped", extra={"free": {"form": 1}}, port="http",
                                      note=None))
    assert "unknown" not in created["spec"]
    assert created["spec"]["extra"] == {"free": {"form": 1}}
    assert created["spec"]["replicas"] == 1
    assert created["metadata"]["generation"] == 1
    listed = cluster.custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
    assert listed["kind"] == "WidgetList"
    assert listed["items"][0]["kind"] == "Widget" and listed["items"][0]["apiVersion"] == f"{GROUP}/{VERSION}"
    for bad, field in [(widget("w2", size=-1), "spec.size"), (widget("w3", size="big"), "spec.size"),
                       (widget("w4", color="green"), "spec.color"),
                       ({**widget("w5"), "spec": {}}, "spec.size")]:
        with pytest.raises(ApiException) as caught:
            _create(cluster, bad)
        assert caught.value.status == 422
        body = orjson.loads(caught.value.body)
        assert body["details"]["kind"] == "Widget" and body["details"]["group"] == GROUP
        assert body["details"]["causes"][0]["field"] == field
    names = [i["metadata"]["name"] for i in cluster.custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL)["items"]]
    assert names == ["w1"]


def test_custom_resource_updates_patches_and_subresources(cluster: Cluster) -> None:
    cluster.extensions.create_custom_resource_definition(widget_crd())
    _create(cluster, {**widget("w"), "status": {"replicas": 9}})
    current = cluster.custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "w")
    assert "status" not in current
    patched = cluster.custom.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "w",
                                                            {"spec": {"size": 3}, "status": {"replicas": 2}})
    assert patched["spec"]["size"] == 3 and "status" not in patched
    assert patched["metadata"]["generation"] == 2
    status = cluster.custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, "default", PLURAL, "w", {"status": {"replicas": 2, "selector": "app=w"}, "spec": {"size": 7}})
    assert status["status"]["replicas"] == 2 and status["spec"]["size"] == 3
    assert status["metadata"]["generation"] == 2
    scale = cluster.custom.get_namespaced_custom_object_scale(GROUP, VERSION, "default", PLURAL, "w")
    assert scale["spec"]["replicas"] == 1 and scale["status"] == {"replicas": 2, "selector": "app=w"}
    scaled = cluster.custom.patch_namespaced_custom_object_scale(GROUP, VERSION, "default", PLURAL, "w",
                                                                 {"spec": {"replicas": 4}})
    assert scaled["spec"]["replicas"] == 4
    current = cluster.custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "w")
    assert current["spec"]["replicas"] == 4 and current["metadata"]["generation"] == 3
    current["spec"]["size"] = -5
    with pytest.raises(ApiException) as caught:
        cluster.custom.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "w", current)
    assert caught.value.status == 422
    status_code, _, _ = cluster.raw("PATCH", f"/apis/{GROUP}/{VERSION}/namespaces/default/{PLURAL}/w",
                                    headers={"Content-Type": "application/strategic-merge-patch+json"},
                                    body=b'{"spec":{"size":2}}')
    assert status_code == 415


def test_deleting_the_crd_stops_serving_its_resources(cluster: Cluster) -> None:
    cluster.extensions.create_custom_resource_definition(widget_crd())
    _create(cluster, widget("w"))
    cluster.extensions.delete_custom_resource_definition(f"{PLURAL}.{GROUP}")
    status, _, _ = cluster.raw("GET", f"/apis/{GROUP}/{VERSION}/namespaces/default/{PLURAL}")
    assert status == 404
    cluster.extensions.create_custom_resource_definition(widget_crd())
    assert cluster.custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)["items"] == []


def test_invalid_crds_are_rejected(cluster: Cluster) -> None:
    bad = widget_crd()
    bad["metadata"]["name"] = "wrong.name.com"
    with pytest.raises(ApiException) as caught:
        cluster.extensions.create_custom_resource_definition(bad)
    assert caught.value.status == 422
    builtin = widget_crd()
    builtin["spec"]["group"] = "apps"
    with pytest.raises(ApiException) as caught:
        cluster.extensions.create_custom_resource_definition(builtin)
    assert caught.value.status == 422


def test_crds_and_their_objects_survive_restart(start_server: Callable[..., ServerThread], tmp_path: Path) -> None:
    first = start_server(data_dir=tmp_path / "d", memory=False)
    api = make_api_client(first.server.kubeconfig_path)
    try:
        client.ApiextensionsV1Api(api).create_custom_resource_definition(widget_crd())
        client.CustomObjectsApi(api).create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL,
                                                                     widget("kept"))
    finally:
        api.close()
    first.stop()
    second = start_server(data_dir=tmp_path / "d", memory=False)
    api = make_api_client(second.server.kubeconfig_path)
    try:
        found = client.CustomObjectsApi(api).get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "kept")
        assert found["spec"]["size"] == 1
    finally:
        api.close()


def test_metadata_declared_as_a_bare_object_is_not_pruned(cluster: Cluster) -> None:
    body = widget_crd()
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"] = {"type": "object"}
    cluster.extensions.create_custom_resource_definition(body)
    created = _create(cluster, {**widget("meta"), "metadata": {"name": "meta", "labels": {"a": "b"}}})
    assert created["metadata"]["name"] == "meta" and created["metadata"]["labels"] == {"a": "b"}


def test_the_builtin_cloneset_crd_accepts_a_cloneset(cluster: Cluster) -> None:
    cloneset = {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}},
    }
    created = cluster.custom.create_namespaced_custom_object("apps.kruise.io", "v1alpha1", "default", "clonesets",
                                                             cloneset)
    assert created["metadata"]["name"] == "web"
    assert created["spec"]["updateStrategy"]["type"] == "ReCreate"  # CloneSet defaulting ran


def test_the_builtin_image_pull_job_crd_accepts_an_image_pull_job(cluster: Cluster) -> None:
    job = {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob",
        "metadata": {"name": "pull-nginx"},
        "spec": {"image": "nginx:1.26", "parallelism": 2, "completionPolicy": {"type": "Always"}},
    }
    created = cluster.custom.create_namespaced_custom_object("apps.kruise.io", "v1alpha1", "default",
                                                             "imagepulljobs", job)
    assert created["metadata"]["name"] == "pull-nginx" and created["spec"]["parallelism"] == 2
