"""Protocol corners over plain HTTP: content types, sizes, Accept, query parsing, methods."""

from __future__ import annotations

import orjson
import pytest
from server_harness import Cluster

PODS = "/api/v1/namespaces/default/configmaps"


def _status(body: bytes) -> dict[str, object]:
    decoded: dict[str, object] = orjson.loads(body)
    assert decoded["kind"] == "Status"
    return decoded


def test_body_without_content_type_is_read_as_json(cluster: Cluster) -> None:
    status, headers, body = cluster.raw("POST", PODS, body=b'{"metadata":{"name":"plain"}}')
    assert status == 201
    assert headers["Content-Type"].startswith("application/json")
    assert orjson.loads(body)["kind"] == "ConfigMap"


def test_yaml_bodies_are_accepted(cluster: Cluster) -> None:
    status, _, body = cluster.raw("POST", PODS, headers={"Content-Type": "application/yaml"},
                                  body=b"metadata:\n  name: from-yaml\ndata:\n  a: b\n")
    assert status == 201 and orjson.loads(body)["data"] == {"a": "b"}


@pytest.mark.parametrize(("content_type", "body", "code", "reason"), [
    ("text/plain", b"{}", 415, "UnsupportedMediaType"),
    ("application/json", b"{not json", 400, "BadRequest"),
    ("application/json", b"[1, 2]", 400, "BadRequest"),
    ("application/json", b'{"metadata": 5}', 400, "BadRequest"),
    ("application/json", b'{"metadata": {"name": 5}}', 400, "BadRequest"),
    ("application/json", b'{"kind": "Secret", "metadata": {"name": "x"}}', 400, "BadRequest"),
    ("application/json", b'{"metadata": {}}', 422, "Invalid"),
])
def test_bad_bodies_get_a_status(cluster: Cluster, content_type: str, body: bytes, code: int, reason: str) -> None:
    status, _, answer = cluster.raw("POST", PODS, headers={"Content-Type": content_type}, body=body)
    assert status == code
    assert _status(answer)["reason"] == reason


def test_oversized_bodies_get_413(cluster: Cluster) -> None:
    big = orjson.dumps({"metadata": {"name": "big"}, "data": {"a": "x" * (3 * 1024 * 1024)}})
    status, _, body = cluster.raw("POST", PODS, body=big)
    assert status == 413
    assert _status(body)["reason"] == "RequestEntityTooLarge"
    status, _, _ = cluster.raw("GET", f"{PODS}/big")
    assert status == 404


def test_accept_that_names_nothing_served_gets_406(cluster: Cluster) -> None:
    status, headers, body = cluster.raw("GET", PODS, headers={"Accept": "text/html"})
    # Nothing acceptable for the Status either: upstream's WriteRawJSON, indented.
    assert (status, headers["Content-Type"]) == (406, "application/json")
    assert body.startswith(b'{\n  "kind": "Status"') and _status(body)["reason"] == "NotAcceptable"
    status, _, _ = cluster.raw("GET", PODS, headers={"Accept": "text/html, */*"})
    assert status == 200


@pytest.mark.parametrize(("value", "ok"), [("1", True), ("t", True), ("TRUE", True), ("True", True),
                                           ("yes", False), ("", True)])
def test_boolean_query_parameters_parse_like_go(cluster: Cluster, value: str, ok: bool) -> None:
    status, _, _ = cluster.raw("GET", f"{PODS}?watch={value}&timeoutSeconds=1")
    assert status == (200 if ok else 400)


def test_methods_that_do_not_apply(cluster: Cluster) -> None:
    cluster.raw("POST", PODS, body=b'{"metadata":{"name":"m"}}')
    for method, path in [("POST", f"{PODS}/m"), ("PUT", PODS), ("PATCH", PODS), ("POST", "/api/v1/configmaps"),
                         ("DELETE", "/api/v1/namespaces/default/pods/m/status"), ("POST", "/api/v1")]:
        status, _, body = cluster.raw(method, path, body=b"{}")
        assert status == 405, (method, path)
        assert _status(body)["reason"] == "MethodNotAllowed"
    status, _, body = cluster.raw("DELETE", "/api/v1/namespaces", body=b"")
    assert status == 405


@pytest.mark.parametrize("query", ["limit=abc", "timeoutSeconds=x&watch=1", "resourceVersion=-1",
                                   "dryRun=Some", "labelSelector=a%20in", "fieldSelector=x"])
def test_bad_query_parameters_get_400(cluster: Cluster, query: str) -> None:
    status, _, body = cluster.raw("GET", f"{PODS}?{query}") if "dryRun" not in query else cluster.raw(
        "POST", f"{PODS}?{query}", body=b'{"metadata":{"name":"d"}}')
    assert status == 400, query
    assert _status(body)["code"] == 400


def test_tolerated_parameters_are_ignored(cluster: Cluster) -> None:
    status, _, _ = cluster.raw("POST", f"{PODS}?fieldManager=kubectl-create&fieldValidation=Strict&pretty=true",
                               body=b'{"metadata":{"name":"t"}}')
    assert status == 201


TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def test_table_output_for_get_list_and_watch(cluster: Cluster) -> None:
    # "a" lists before the namespace's kube-root-ca.crt.
    cluster.raw("POST", PODS, body=b'{"metadata":{"name":"a"},"data":{"a":"b"}}')
    for path in (PODS, f"{PODS}/a"):
        status, _, body = cluster.raw("GET", path, headers={"Accept": TABLE_ACCEPT})
        assert status == 200
        table = orjson.loads(body)
        assert table["kind"] == "Table"
        assert table["columnDefinitions"][0]["name"] == "Name"
        assert table["rows"][0]["cells"][0] == "a"
    status, _, body = cluster.raw("GET", f"{PODS}?watch=1&timeoutSeconds=1", headers={"Accept": TABLE_ACCEPT})
    event = orjson.loads(body.splitlines()[0])
    assert event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    status, _, body = cluster.raw("GET", f"{PODS}?includeObject=Everything", headers={"Accept": TABLE_ACCEPT})
    assert status == 400


def test_openapi_is_served_behind_the_token(cluster: Cluster) -> None:
    status, headers, body = cluster.raw(
        "GET", "/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert status == 200 and body
    assert "@" not in headers["Content-Type"]
    status, _, _ = cluster.raw("GET", "/openapi/v2", auth=False)
    assert status == 403


@pytest.mark.parametrize("path", ["/api/v1/namespaces/default/pods/%0A", "/%0A", "/apis/apps/v1/%0A/x"])
def test_paths_with_encoded_newlines_get_a_status(cluster: Cluster, path: str) -> None:
    status, _, body = cluster.raw("GET", path)
    assert status == 404
    assert orjson.loads(body)["kind"] == "Status"
