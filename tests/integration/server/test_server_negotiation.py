"""Metadata-only reads (PartialObjectMetadata), Accept negotiation and body framing over real HTTP."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
import yaml
from kubernetes.dynamic import DynamicClient
from server_harness import Cluster
from test_server_crd import GROUP, PLURAL, VERSION, widget, widget_crd

from kubeloop.server.codec import protobuf

POM = "application/json;as=PartialObjectMetadata;v={v};g=meta.k8s.io"
POML = "application/json;as=PartialObjectMetadataList;v={v};g=meta.k8s.io"
# What client-go's metadata client (garbage collector, metadata informers) sends.
CLIENT_GO_GET = ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
                 "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
CLIENT_GO_LIST = ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                  "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
PODS = "/api/v1/namespaces/default/pods"
ONLY_MEDIA_TYPES = ("only the following media types are accepted: application/json, application/yaml, "
                    "application/vnd.kubernetes.protobuf")


def _pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"app": "x"}, "annotations": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def _get(cluster: Cluster, path: str, accept: str) -> tuple[int, Any]:
    """Status and decoded body: protobuf, JSON as Go's encoder ends it, or (an error no range of
    ``accept`` can carry without a conversion) JSON indented as upstream's WriteRawJSON."""
    status, headers, body = cluster.raw("GET", path, headers={"Accept": accept})
    if headers["Content-Type"] == protobuf.MEDIA_TYPE:
        return status, protobuf.decode(body)
    if status >= 400 and not any(part.split(";")[0].strip() in ("application/json", "*/*", "application/*")
                                 and "as=" not in part for part in accept.split(",")):
        assert body.startswith(b'{\n  "kind": "Status"') and body.endswith(b"}")
    else:
        assert body.endswith(b"\n") and not body.endswith(b"\n\n")
    return status, orjson.loads(body)


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_get_as_partial_object_metadata(cluster: Cluster, version: str) -> None:
    cluster.core.create_namespaced_pod("default", _pod("p"))
    _, full = _get(cluster, f"{PODS}/p", "application/json")
    status, body = _get(cluster, f"{PODS}/p", POM.format(v=version))
    assert status == 200
    assert body == {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}",
                    "metadata": full["metadata"]}


@pytest.mark.parametrize("accept", [POML.format(v="v1"), CLIENT_GO_LIST])
def test_list_as_partial_object_metadata_list(cluster: Cluster, accept: str) -> None:
    for name in ("a", "b", "c"):
        cluster.core.create_namespaced_pod("default", _pod(name))
    _, full = _get(cluster, f"{PODS}?limit=2", "application/json")
    status, body = _get(cluster, f"{PODS}?limit=2", accept)
    assert status == 200
    # Items of a protobuf list carry no TypeMeta (PartialObjectMetadata's has no protobuf tag).
    type_meta = {} if accept == CLIENT_GO_LIST else {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1"}
    assert body == {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                    "metadata": full["metadata"],
                    "items": [{**type_meta, "metadata": item["metadata"]} for item in full["items"]]}
    assert body["metadata"]["continue"] and body["metadata"]["remainingItemCount"] == 1


def test_empty_partial_object_metadata_list_has_null_items_as_upstream(cluster: Cluster) -> None:
    status, body = _get(cluster, PODS, POML.format(v="v1beta1"))
    assert status == 200
    assert body["kind"] == "PartialObjectMetadataList" and body["apiVersion"] == "meta.k8s.io/v1beta1"
    assert body["items"] is None
    _, plain = _get(cluster, PODS, "application/json")
    assert plain["items"] == []


def test_custom_resources_as_partial_object_metadata(cluster: Cluster) -> None:
    cluster.extensions.create_custom_resource_definition(widget_crd())
    created = cluster.custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, widget("w"))
    base = f"/apis/{GROUP}/{VERSION}/namespaces/default/{PLURAL}"
    status, body = _get(cluster, f"{base}/w", CLIENT_GO_GET)
    assert status == 200
    assert body == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": created["metadata"]}
    status, body = _get(cluster, base, CLIENT_GO_LIST)
    assert [item["metadata"]["uid"] for item in body["items"]] == [created["metadata"]["uid"]]
    status, body = _get(cluster, base, POM.format(v="v1"))
    assert (status, body) == (406, _status(406, "NotAcceptable", "you requested PartialObjectMetadata, but the "
                                                                 "requested object is a list "
                                                                 "(*unstructured.UnstructuredList)"))


@pytest.mark.parametrize(("path", "accept", "message"), [
    (PODS, POM.format(v="v1"),
     "you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)"),
    (f"{PODS}/p", POML.format(v="v1"),
     "you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)"),
    ("/apis/apps/v1/namespaces/default/deployments", POM.format(v="v1beta1"),
     "you requested PartialObjectMetadata, but the requested object is a list (*apps.DeploymentList)"),
    (PODS, "application/json;as=Foo;v=v1;g=meta.k8s.io", ONLY_MEDIA_TYPES),
    (f"{PODS}/p", "application/json;as=PartialObjectMetadata;v=v2;g=meta.k8s.io", ONLY_MEDIA_TYPES),
    (f"{PODS}/p", "application/json;as=PartialObjectMetadata", ONLY_MEDIA_TYPES),
    (f"{PODS}?watch=1", "application/json;as=Unknown;v=v1;g=meta.k8s.io", ONLY_MEDIA_TYPES),
])
def test_unservable_conversions_are_406_with_upstream_texts(cluster: Cluster, path: str, accept: str,
                                                            message: str) -> None:
    cluster.core.create_namespaced_pod("default", _pod("p"))
    status, body = _get(cluster, path, accept)
    assert (status, body) == (406, _status(406, "NotAcceptable", message))


def test_accept_lists_pick_by_quality_then_order(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", _pod("p"))
    _, body = _get(cluster, f"{PODS}/p", f"application/json;q=0.9, {POM.format(v='v1')}")
    assert body["kind"] == "PartialObjectMetadata"
    _, body = _get(cluster, f"{PODS}/p", f"application/json, {POM.format(v='v1')}")
    assert body["kind"] == "Pod"
    _, body = _get(cluster, f"{PODS}/p", f"application/json;as=Foo;v=v1;g=meta.k8s.io, {POM.format(v='v1beta1')}")
    assert body["apiVersion"] == "meta.k8s.io/v1beta1"
    _, body = _get(cluster, f"{PODS}/p", "application/json;as=Table;v=v1;g=meta.k8s.io")
    assert body["kind"] == "Table"


def test_a_missing_object_is_404_before_the_conversion_is_judged(cluster: Cluster) -> None:
    status, body = _get(cluster, f"{PODS}/nope", POML.format(v="v1"))
    assert status == 404 and body["reason"] == "NotFound"


def test_watch_sends_partial_object_metadata_events_and_bookmarks(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", _pod("p"))
    status, _, body = cluster.raw(
        "GET", f"{PODS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
               "&timeoutSeconds=1", headers={"Accept": POM.format(v="v1")})
    assert status == 200
    assert body.endswith(b"\n")
    events = [orjson.loads(line) for line in body.splitlines()]
    assert [e["type"] for e in events[:2]] == ["ADDED", "BOOKMARK"]
    _, pod = _get(cluster, f"{PODS}/p", "application/json")
    assert events[0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                   "metadata": pod["metadata"]}
    for event in events[1:]:
        assert event["type"] == "BOOKMARK"
        assert set(event["object"]) == {"kind", "apiVersion", "metadata"}
        assert (event["object"]["kind"], event["object"]["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_watch_changes_and_deletions_as_metadata(cluster: Cluster) -> None:
    cluster.core.create_namespaced_pod("default", _pod("p"))
    rv = cluster.core.list_namespaced_pod("default").metadata.resource_version
    cluster.core.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"app": "y"}}})
    cluster.core.delete_namespaced_pod("p", "default", grace_period_seconds=0)
    status, headers, body = cluster.raw("GET", f"{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=1",
                                        headers={"Accept": CLIENT_GO_GET})
    # client-go's metadata informer asks protobuf first: a protobuf stream of metadata objects.
    assert (status, headers["Content-Type"]) == (200, "application/vnd.kubernetes.protobuf;stream=watch")
    events = [{"type": kind, "object": obj} for kind, obj in protobuf.decode_watch_frames(body)]
    assert [e["type"] for e in events][:1] == ["MODIFIED"]
    assert "DELETED" in [e["type"] for e in events]
    assert all(e["object"]["kind"] == "PartialObjectMetadata" and "spec" not in e["object"] for e in events)
    assert events[0]["object"]["metadata"]["labels"] == {"app": "y"}


@pytest.mark.parametrize("header", ["Accept", "aCcePt"])
def test_kubernetes_dynamic_client_metadata_reads(cluster: Cluster, header: str) -> None:
    cluster.core.create_namespaced_pod("default", _pod("p"))
    pods = DynamicClient(cluster.api).resources.get(api_version="v1", kind="Pod")
    found = pods.get(namespace="default", header_params={header: POML.format(v="v1")})
    assert (found.kind, found.apiVersion) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert [(item.kind, item.metadata.name, dict(item.metadata.labels)) for item in found.items] == [
        ("PartialObjectMetadata", "p", {"app": "x"})]
    one = pods.get(namespace="default", name="p", header_params={header: POM.format(v="v1")})
    assert one.kind == "PartialObjectMetadata" and dict(one.metadata.annotations) == {"a": "b"}
    assert "spec" not in one.to_dict()


@pytest.mark.parametrize("path", ["/api", "/apis", "/api/v1", "/apis/apps/v1", PODS, "/api/v1/namespaces/default",
                                  "/api/v1/namespaces/default/pods/missing"])
def test_json_bodies_end_with_one_newline(cluster: Cluster, path: str) -> None:
    status, _, body = cluster.raw("GET", path)
    assert status in (200, 404)
    assert body.endswith(b"}\n")
    orjson.loads(body)


def test_version_and_health_bodies_are_as_upstream_writes_them(cluster: Cluster) -> None:
    _, _, body = cluster.raw("GET", "/version", auth=False)
    assert body.startswith(b'{\n  "major": ') and body.endswith(b"}")
    _, _, body = cluster.raw("GET", "/healthz", auth=False)
    assert body == b"ok"


def test_unknown_field_labels_of_custom_resources_are_worded_as_1_33(cluster: Cluster) -> None:
    cluster.extensions.create_custom_resource_definition(widget_crd())
    status, body = _get(cluster, f"/apis/{GROUP}/{VERSION}/namespaces/default/{PLURAL}?fieldSelector=spec.size%3D1",
                        "application/json")
    assert (status, body) == (400, _status(400, "BadRequest", "field label not supported: spec.size"))


def test_yaml_is_served_for_objects_and_lists_and_json_for_watches(cluster: Cluster) -> None:
    created = cluster.core.create_namespaced_config_map(
        "default", {"metadata": {"name": "y", "labels": {"b": "2", "a": "1"}}, "data": {"k": "v"}})
    assert created.metadata.name == "y"
    status, headers, body = cluster.raw("GET", "/api/v1/namespaces/default/configmaps/y",
                                        headers={"Accept": "application/yaml"})
    assert (status, headers["Content-Type"]) == (200, "application/yaml")
    document = yaml.safe_load(body)
    assert document["data"] == {"k": "v"} and document["kind"] == "ConfigMap"
    assert body.index(b"  labels:\n    a: '1'\n    b: '2'\n") > 0  # keys sorted, as sigs.k8s.io/yaml writes them
    status, headers, body = cluster.raw("GET", "/api/v1/namespaces/default/configmaps",
                                        headers={"Accept": "application/yaml"})
    assert (status, headers["Content-Type"], yaml.safe_load(body)["kind"]) == (200, "application/yaml",
                                                                               "ConfigMapList")
    status, headers, body = cluster.raw("GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
                                        headers={"Accept": "application/yaml"})
    assert (status, headers["Content-Type"]) == (200, "application/json")
    assert orjson.loads(body.splitlines()[0])["type"] == "ADDED"
