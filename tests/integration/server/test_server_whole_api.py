"""The parts of the whole 1.33 API that are answered rather than stored: aggregated discovery,
reviews, component statuses, the bindings resource, evictions and the streaming subresources."""

from __future__ import annotations

from typing import Any

import orjson
from server_harness import Cluster

from kubeloop.api.catalog import CATALOG

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
JSON = {"Content-Type": "application/json"}


def get_json(cluster: Cluster, path: str, accept: str | None = None) -> tuple[int, dict[str, str], Any]:
    status, headers, raw = cluster.raw("GET", path, headers={"Accept": accept} if accept else None)
    return status, headers, orjson.loads(raw)


def post(cluster: Cluster, path: str, body: Any) -> tuple[int, Any]:
    status, _, raw = cluster.raw("POST", path, headers=JSON, body=orjson.dumps(body))
    return status, orjson.loads(raw)


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}


def test_aggregated_discovery_lists_every_catalog_resource(cluster: Cluster) -> None:
    status, headers, apis = get_json(cluster, "/apis", AGGREGATED)
    assert status == 200
    assert headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert apis["kind"] == "APIGroupDiscoveryList"
    _, _, core = get_json(cluster, "/api", AGGREGATED)
    served = {(group["metadata"]["name"], version["version"], resource["resource"])
              for document in (core, apis) for group in document["items"]
              for version in group["versions"] for resource in version["resources"]}
    assert {(e.group, e.version, e.resource) for e in CATALOG} <= served
    apps = next(g for g in apis["items"] if g["metadata"]["name"] == "apps")
    deployments = next(r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments")
    assert deployments["shortNames"] == ["deploy"] and deployments["scope"] == "Namespaced"
    scale = next(s for s in deployments["subresources"] if s["subresource"] == "scale")
    assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    autoscaling = next(g for g in apis["items"] if g["metadata"]["name"] == "autoscaling")
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]
    # Without the aggregated media type, the legacy documents.
    assert get_json(cluster, "/apis")[2]["kind"] == "APIGroupList"


def test_legacy_discovery_lists_pod_subresources(cluster: Cluster) -> None:
    _, _, core = get_json(cluster, "/api/v1")
    names = {r["name"] for r in core["resources"]}
    assert {"pods/log", "pods/exec", "pods/eviction", "pods/binding", "namespaces/finalize",
            "serviceaccounts/token"} <= names
    eviction = next(r for r in core["resources"] if r["name"] == "pods/eviction")
    assert (eviction["group"], eviction["version"], eviction["kind"]) == ("policy", "v1", "Eviction")


def test_reviews_are_answered_and_not_stored(cluster: Cluster) -> None:
    status, review = post(cluster, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "create", "resource": "pods", "namespace": "default"}}})
    assert status == 201 and review["status"] == {"allowed": True}
    status, who = post(cluster, "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert status == 201
    assert who["status"]["userInfo"]["groups"] == ["system:masters", "system:authenticated"]
    status, good = post(cluster, "/apis/authentication.k8s.io/v1/tokenreviews", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": cluster.server.token}})
    assert status == 201 and good["status"]["authenticated"] is True
    _, bad = post(cluster, "/apis/authentication.k8s.io/v1/tokenreviews", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "wrong"}})
    assert "authenticated" not in bad["status"]
    status, _, _ = cluster.raw("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
    assert status == 405


def test_component_statuses_are_healthy(cluster: Cluster) -> None:
    status, _, listed = get_json(cluster, "/api/v1/componentstatuses")
    assert status == 200
    assert [c["metadata"]["name"] for c in listed["items"]] == ["controller-manager", "scheduler", "etcd-0"]
    assert get_json(cluster, "/api/v1/componentstatuses/nope")[0] == 404


def test_bindings_resource_binds_the_named_pod(cluster: Cluster) -> None:
    assert post(cluster, "/api/v1/namespaces/default/pods", pod("b"))[0] == 201
    status, answer = post(cluster, "/api/v1/namespaces/default/bindings", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"}, "target": {"kind": "Node", "name": "n1"}})
    assert (status, answer["status"]) == (201, "Success")
    assert get_json(cluster, "/api/v1/namespaces/default/pods/b")[2]["spec"]["nodeName"] == "n1"


def test_eviction_deletes_and_streaming_subresources_say_why_not(cluster: Cluster) -> None:
    assert post(cluster, "/api/v1/namespaces/default/pods", pod("e"))[0] == 201
    status, answer = post(cluster, "/api/v1/namespaces/default/pods/e/eviction", {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "e"}})
    assert (status, answer["status"]) == (201, "Success")
    assert get_json(cluster, "/api/v1/namespaces/default/pods/e")[0] == 404
    assert post(cluster, "/api/v1/namespaces/default/pods", pod("l"))[0] == 201
    status, _, refused = get_json(cluster, "/api/v1/namespaces/default/pods/l/exec")
    assert (status, refused["reason"]) == (400, "BadRequest")
    assert refused["message"] == ("pods/exec is not available for pod 'l': "
                                  "kubeloop's simulated kubelet runs no containers")
    assert get_json(cluster, "/api/v1/namespaces/default/pods/l/ephemeralcontainers")[2]["metadata"]["name"] == "l"
