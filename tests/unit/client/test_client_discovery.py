from typing import Any

import pytest
from client_testkit import FakeClock, mock_client

from kubeloop.client import DEPLOYMENTS, PODS, Discovery, MockResponse, NotFound, Request, Resource, parse_resource_list

APPS_V1 = {"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": [
    {"name": "deployments", "singularName": "deployment", "namespaced": True, "kind": "Deployment",
     "verbs": ["get", "list"], "shortNames": ["deploy"]},
    {"name": "deployments/scale", "singularName": "", "namespaced": True, "group": "autoscaling",
     "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]},
    {"name": "deployments/status", "singularName": "", "namespaced": True, "kind": "Deployment",
     "verbs": ["get"]},
]}


def server(widgets: list[dict[str, Any]], failing: set[str] | None = None) -> Any:
    groups = {
        "/api": {"kind": "APIVersions", "versions": ["v1"]},
        "/apis": {"kind": "APIGroupList", "groups": [
            {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
             "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}},
            {"name": "example.com", "versions": [
                {"groupVersion": "example.com/v1beta1", "version": "v1beta1"},
                {"groupVersion": "example.com/v1", "version": "v1"}],
             "preferredVersion": {"groupVersion": "example.com/v1", "version": "v1"}},
            {"name": "metrics.k8s.io", "versions": [{"groupVersion": "metrics.k8s.io/v1beta1",
                                                     "version": "v1beta1"}]},
        ]},
        "/api/v1": {"kind": "APIResourceList", "resources": [
            {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "shortNames": ["po"]},
            {"name": "pods/status", "namespaced": True, "kind": "Pod"}]},
        "/apis/apps/v1": APPS_V1,
        "/apis/example.com/v1": {"kind": "APIResourceList", "resources": widgets},
        "/apis/example.com/v1beta1": {"kind": "APIResourceList", "resources": [
            {"name": "widgets", "singularName": "widget", "namespaced": False, "kind": "Widget"},
            {"name": "gadgets", "singularName": "gadget", "namespaced": True, "kind": "Gadget"}]},
    }

    def handler(request: Request) -> MockResponse:
        if request.path == "/apis/metrics.k8s.io/v1beta1" or request.path in (failing or set()):
            return MockResponse.json({"kind": "Status", "code": 503, "reason": "ServiceUnavailable"}, 503)
        return MockResponse.json(groups[request.path])

    return handler


WIDGET = {"name": "widgets", "singularName": "widget", "namespaced": True, "kind": "Widget",
          "shortNames": ["wd"], "verbs": ["get", "list", "watch"]}


def test_parse_resource_list_folds_subresources() -> None:
    resources = parse_resource_list("apps", "v1", APPS_V1)
    assert resources == [Resource("apps", "v1", "deployments", "Deployment", True,
                                  frozenset({"scale", "status"}), ("deploy",), "deployment",
                                  frozenset({"get", "list"}))]


@pytest.mark.parametrize("name", ["widgets", "widget", "Widget", "wd", "widgets.example.com",
                                  "widgets.v1.example.com"])
async def test_resolve_custom_resource_at_preferred_version(name: str) -> None:
    client, _ = mock_client(server([WIDGET]))
    resource = await client.resource(name)
    assert (resource.group, resource.version, resource.plural, resource.namespaced) == \
        ("example.com", "v1", "widgets", True)


async def test_resolve_non_preferred_version_and_other_group_versions() -> None:
    client, _ = mock_client(server([WIDGET]))
    old = await client.resource("widgets.v1beta1.example.com")
    assert (old.version, old.namespaced) == ("v1beta1", False)
    gadget = await client.resource("gadgets")
    assert gadget.version == "v1beta1"


async def test_builtins_need_no_requests() -> None:
    client, transport = mock_client(server([WIDGET]))
    assert await client.resource("deploy") == DEPLOYMENTS
    assert await client.resource(PODS) == PODS
    assert transport.requests == []


async def test_cache_and_failing_group_versions() -> None:
    client, transport = mock_client(server([WIDGET]))
    await client.resource("widgets")
    count = len(transport.requests)
    assert count == 7  # /api, /apis and five group versions (one failing)
    await client.resource("gadgets")
    assert len(transport.requests) == count
    names = {r.plural for r in await client.discovery.server_resources()}
    assert names == {"pods", "deployments", "widgets", "gadgets"}


async def test_miss_reloads_once_then_raises_not_found() -> None:
    widgets: list[dict[str, Any]] = []
    client, transport = mock_client(server(widgets))
    with pytest.raises(NotFound, match="doesn't have a resource type 'sprockets'"):
        await client.resource("sprockets")
    assert len(transport.requests) == 14
    # A CRD appears: the next miss reloads and finds it.
    widgets.append({**WIDGET, "name": "sprockets", "singularName": "sprocket", "kind": "Sprocket"})
    assert (await client.resource("sprockets")).kind == "Sprocket"


async def test_invalidate_and_ttl() -> None:
    client, transport = mock_client(server([WIDGET]))
    await client.discovery.server_resources()
    client.discovery.invalidate()
    await client.discovery.server_resources()
    assert len(transport.requests) == 14
    clock = FakeClock()
    with_ttl = Discovery(client, clock=clock, ttl=600)
    await with_ttl.server_resources()
    clock.advance(599)
    await with_ttl.server_resources()
    assert len(transport.requests) == 21
    clock.advance(1)
    await with_ttl.server_resources()
    assert len(transport.requests) == 28


async def test_verbs_resolve_names() -> None:
    handler = server([WIDGET])

    def with_objects(request: Request) -> MockResponse:
        if request.path.startswith("/apis/example.com/v1/namespaces"):
            return MockResponse.json({"kind": "Widget", "metadata": {"name": "w"}})
        return handler(request)  # type: ignore[no-any-return]

    client, transport = mock_client(with_objects)
    assert (await client.get("widgets", "w", namespace="ns"))["kind"] == "Widget"
    assert transport.requests[-1].path == "/apis/example.com/v1/namespaces/ns/widgets/w"
