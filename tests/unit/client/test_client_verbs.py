from typing import Any

import orjson
import pytest
from client_testkit import mock_client

from kubeloop.client import (
    DEPLOYMENTS,
    NAMESPACES,
    PODS,
    Expired,
    MockResponse,
    NotFound,
    Request,
    delete_options,
)

DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment",
          "metadata": {"name": "web", "namespace": "prod", "resourceVersion": "5"}, "spec": {"replicas": 2}}


def echo(request: Request) -> MockResponse:
    return MockResponse.json({"echo": request.method})


def shape(request: Request) -> tuple[str, str, dict[str, str], str | None, Any]:
    body = orjson.loads(request.body) if request.body else None
    return request.method, request.path, request.query_dict(), request.headers.get("Content-Type"), body


async def test_get_uses_argument_then_default_namespace() -> None:
    client, transport = mock_client(echo, namespace="team")
    await client.get(DEPLOYMENTS, "web", namespace="prod")
    await client.get(DEPLOYMENTS, "web")
    await client.get(NAMESPACES, "kube-system", namespace="ignored")
    await client.get(PODS, "p", subresource="status")
    assert [(r.method, r.path, r.body) for r in transport.requests] == [
        ("GET", "/apis/apps/v1/namespaces/prod/deployments/web", None),
        ("GET", "/apis/apps/v1/namespaces/team/deployments/web", None),
        ("GET", "/api/v1/namespaces/kube-system", None),
        ("GET", "/api/v1/namespaces/team/pods/p/status", None),
    ]


async def test_create_takes_namespace_from_the_object() -> None:
    client, transport = mock_client(echo)
    await client.create(DEPLOYMENTS, DEPLOY, dry_run=True, field_manager="me", field_validation="Strict")
    assert shape(transport.requests[0]) == (
        "POST", "/apis/apps/v1/namespaces/prod/deployments",
        {"dryRun": "All", "fieldManager": "me", "fieldValidation": "Strict"}, "application/json", DEPLOY)


async def test_create_with_bytes_body_and_subresource() -> None:
    client, transport = mock_client(echo)
    eviction = orjson.dumps({"apiVersion": "policy/v1", "kind": "Eviction",
                             "metadata": {"name": "p", "namespace": "ns"}})
    await client.create(PODS, eviction, subresource="eviction")
    request = transport.requests[0]
    assert (request.method, request.path, request.body) == ("POST", "/api/v1/namespaces/ns/pods/p/eviction",
                                                            eviction)


async def test_update_and_update_status() -> None:
    client, transport = mock_client(echo)
    await client.update(DEPLOYMENTS, DEPLOY)
    await client.update_status(DEPLOYMENTS, DEPLOY, field_manager="ctl")
    assert [shape(r) for r in transport.requests] == [
        ("PUT", "/apis/apps/v1/namespaces/prod/deployments/web", {}, "application/json", DEPLOY),
        ("PUT", "/apis/apps/v1/namespaces/prod/deployments/web/status", {"fieldManager": "ctl"},
         "application/json", DEPLOY),
    ]


@pytest.mark.parametrize(
    ("patch_type", "content_type", "body"),
    [
        ("merge", "application/merge-patch+json", {"spec": {"replicas": 3}}),
        ("strategic", "application/strategic-merge-patch+json", {"spec": {"replicas": 3}}),
        ("json", "application/json-patch+json", [{"op": "replace", "path": "/spec/replicas", "value": 3}]),
    ],
)
async def test_patch_types(patch_type: str, content_type: str, body: Any) -> None:
    client, transport = mock_client(echo)
    await client.patch(DEPLOYMENTS, "web", body, patch_type=patch_type, namespace="prod")
    assert shape(transport.requests[0]) == (
        "PATCH", "/apis/apps/v1/namespaces/prod/deployments/web", {}, content_type, body)


async def test_server_side_apply() -> None:
    client, transport = mock_client(echo)
    await client.patch(DEPLOYMENTS, "web", DEPLOY, patch_type="apply", namespace="prod", field_manager="me",
                       force=True, dry_run=True)
    assert shape(transport.requests[0]) == (
        "PATCH", "/apis/apps/v1/namespaces/prod/deployments/web",
        {"dryRun": "All", "fieldManager": "me", "force": "true"}, "application/apply-patch+yaml", DEPLOY)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"patch_type": "yaml"}, "patch_type must be one of"),
        ({"patch_type": "apply"}, "field_manager"),
        ({"patch_type": "merge", "force": True}, "force is only valid"),
    ],
)
async def test_patch_argument_errors(kwargs: dict[str, Any], message: str) -> None:
    client, transport = mock_client(echo)
    with pytest.raises(ValueError, match=message):
        await client.patch(DEPLOYMENTS, "web", {}, **kwargs)
    assert transport.requests == []


async def test_delete_without_options_sends_no_body() -> None:
    client, transport = mock_client(echo)
    await client.delete(PODS, "p", namespace="ns")
    assert shape(transport.requests[0]) == ("DELETE", "/api/v1/namespaces/ns/pods/p", {}, None, None)


async def test_delete_with_options() -> None:
    client, transport = mock_client(echo)
    await client.delete(DEPLOYMENTS, "web", namespace="prod", propagation_policy="Foreground",
                        grace_period_seconds=0, preconditions={"uid": "u-1", "resourceVersion": "5"}, dry_run=True)
    assert shape(transport.requests[0]) == (
        "DELETE", "/apis/apps/v1/namespaces/prod/deployments/web", {}, "application/json",
        {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground",
         "gracePeriodSeconds": 0, "preconditions": {"uid": "u-1", "resourceVersion": "5"}, "dryRun": ["All"]})


def test_delete_options_validation() -> None:
    assert delete_options() is None
    with pytest.raises(ValueError, match="propagation_policy"):
        delete_options("Sideways")


async def test_delete_collection() -> None:
    client, transport = mock_client(echo)
    await client.delete_collection(PODS, namespace="ns", label_selector="app=web", field_selector="status.phase=Failed",
                                   propagation_policy="Background")
    await client.delete_collection(NAMESPACES, label_selector="tmp")
    assert shape(transport.requests[0]) == (
        "DELETE", "/api/v1/namespaces/ns/pods", {"labelSelector": "app=web", "fieldSelector": "status.phase=Failed"},
        "application/json", {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
    assert shape(transport.requests[1]) == ("DELETE", "/api/v1/namespaces", {"labelSelector": "tmp"}, None, None)


async def test_scale_verbs() -> None:
    client, transport = mock_client(echo)
    await client.get_scale(DEPLOYMENTS, "web", namespace="prod")
    await client.update_scale(DEPLOYMENTS, "web", 4, namespace="prod")
    scale = {"kind": "Scale", "apiVersion": "autoscaling/v1",
             "metadata": {"name": "web", "namespace": "prod", "resourceVersion": "9"}, "spec": {"replicas": 1}}
    await client.update_scale(DEPLOYMENTS, "web", scale, namespace="prod")
    await client.patch_scale(DEPLOYMENTS, "web", {"spec": {"replicas": 2}}, namespace="prod")
    path = "/apis/apps/v1/namespaces/prod/deployments/web/scale"
    assert [shape(r) for r in transport.requests] == [
        ("GET", path, {}, None, None),
        ("PUT", path, {}, "application/json", {"kind": "Scale", "apiVersion": "autoscaling/v1",
                                               "metadata": {"name": "web", "namespace": "prod"},
                                               "spec": {"replicas": 4}}),
        ("PUT", path, {}, "application/json", scale),
        ("PATCH", path, {}, "application/merge-patch+json", {"spec": {"replicas": 2}}),
    ]


def page(items: list[str], rv: str, token: str | None, remaining: int | None = None) -> MockResponse:
    metadata: dict[str, Any] = {"resourceVersion": rv}
    if token:
        metadata["continue"] = token
    if remaining is not None:
        metadata["remainingItemCount"] = remaining
    return MockResponse.json({"kind": "PodList", "apiVersion": "v1", "metadata": metadata,
                              "items": [{"metadata": {"name": n}} for n in items]})


async def test_list_follows_continue_and_keeps_the_list_resource_version() -> None:
    answers = [page(["a", "b"], "10", "t1", 3), page(["c", "d"], "10", "t2", 1), page(["e"], "10", None)]
    client, transport = mock_client(lambda r: answers.pop(0))
    result = await client.list(PODS, namespace="ns", label_selector="app=web", limit=2, resource_version="0")
    assert [i["metadata"]["name"] for i in result["items"]] == ["a", "b", "c", "d", "e"]
    assert result["metadata"] == {"resourceVersion": "10"}
    assert result["kind"] == "PodList"
    assert [r.query_dict() for r in transport.requests] == [
        {"labelSelector": "app=web", "resourceVersion": "0", "limit": "2"},
        {"labelSelector": "app=web", "limit": "2", "continue": "t1"},
        {"labelSelector": "app=web", "limit": "2", "continue": "t2"},
    ]
    assert {r.path for r in transport.requests} == {"/api/v1/namespaces/ns/pods"}


async def test_list_all_namespaces_without_limit() -> None:
    client, transport = mock_client(lambda r: page(["a"], "3", None))
    await client.list(PODS, limit=None)
    assert (transport.requests[0].path, transport.requests[0].query_dict()) == ("/api/v1/pods", {})


async def test_list_pages_yields_each_page() -> None:
    answers = [page(["a"], "1", "t"), page(["b"], "1", None)]
    client, _ = mock_client(lambda r: answers.pop(0))
    pages = [p async for p in client.list_pages(PODS, limit=1)]
    assert [[i["metadata"]["name"] for i in p["items"]] for p in pages] == [["a"], ["b"]]


async def test_expired_continue_token_falls_back_to_a_full_list() -> None:
    expired = MockResponse.json({"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}, 410)
    answers = [page(["a"], "1", "t"), expired, page(["a", "b"], "7", None)]
    client, transport = mock_client(lambda r: answers.pop(0))
    result = await client.list(PODS, limit=1)
    assert [i["metadata"]["name"] for i in result["items"]] == ["a", "b"]
    assert result["metadata"]["resourceVersion"] == "7"
    assert transport.requests[-1].query_dict() == {}


async def test_expired_first_page_is_raised() -> None:
    client, _ = mock_client(lambda r: MockResponse.json(
        {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}, 410))
    with pytest.raises(Expired):
        await client.list(PODS, resource_version="3", limit=1)


async def test_not_found_carries_the_status() -> None:
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": 'deployments.apps "web" not found', "reason": "NotFound",
              "details": {"name": "web", "group": "apps", "kind": "deployments"}, "code": 404}
    client, _ = mock_client(lambda r: MockResponse.json(status, 404))
    with pytest.raises(NotFound) as info:
        await client.get(DEPLOYMENTS, "web")
    assert info.value.status() == status


async def test_version() -> None:
    client, transport = mock_client(lambda r: MockResponse.json({"major": "1", "minor": "20"}))
    assert (await client.get_version())["minor"] == "20"
    assert transport.requests[0].path == "/version"
