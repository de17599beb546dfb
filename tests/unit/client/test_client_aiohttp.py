"""The real transport against small in-process aiohttp servers on 127.0.0.1."""

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from kubeloop.client import (
    PODS,
    ApiClient,
    ClientConfig,
    ConnectError,
    Gone,
    NotFound,
    TransportError,
    TransportTimeout,
)
from kubeloop.client._transport import environment_proxy

Route = Callable[[web.Request], Awaitable[web.StreamResponse]]


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Route], Awaitable[str]]]:
    servers: list[TestServer] = []

    async def start(handler: Route) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        servers.append(server)
        return f"http://127.0.0.1:{server.port}"

    yield start
    for server in servers:
        await server.close()


def event(kind: str, name: str, rv: str) -> bytes:
    return orjson.dumps({"type": kind, "object": {"kind": "Pod", "metadata": {"name": name,
                                                                            "resourceVersion": rv}}}) + b"\n"


async def test_crud_round_trip_over_http(serve: Callable[[Route], Awaitable[str]]) -> None:
    seen: list[tuple[str, str, str, bytes]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        seen.append((request.method, request.path_qs, request.headers.get("Content-Type", ""), body))
        if request.method == "DELETE":
            return web.json_response({"kind": "Status", "code": 404, "reason": "NotFound",
                                      "message": 'pods "p" not found'}, status=404)
        return web.json_response({"kind": "Pod", "metadata": {"name": "p"}})

    url = await serve(handler)
    async with ApiClient(ClientConfig(url, namespace="ns")) as client:
        assert (await client.get(PODS, "p"))["metadata"]["name"] == "p"
        await client.patch(PODS, "p", {"metadata": {"labels": {"a": "b"}}}, field_manager="me")
        with pytest.raises(NotFound):
            await client.delete(PODS, "p", propagation_policy="Background")
    assert seen == [
        ("GET", "/api/v1/namespaces/ns/pods/p", "", b""),
        ("PATCH", "/api/v1/namespaces/ns/pods/p?fieldManager=me", "application/merge-patch+json",
         b'{"metadata":{"labels":{"a":"b"}}}'),
        ("DELETE", "/api/v1/namespaces/ns/pods/p", "application/json",
         b'{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}'),
    ]


async def test_watch_streams_events_as_they_are_flushed(serve: Callable[[Route], Awaitable[str]]) -> None:
    release = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        assert request.query["watch"] == "true"
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(event("ADDED", "a", "2"))
        await release.wait()
        big = "x" * 500_000
        await response.write(orjson.dumps({"type": "MODIFIED", "object": {
            "kind": "Pod", "metadata": {"name": "a", "resourceVersion": "3"}, "data": big}}) + b"\n")
        await response.write(orjson.dumps({"type": "ERROR", "object": {
            "kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version: 1 (3)"}}) + b"\n")
        await response.write_eof()
        return response

    url = await serve(handler)
    async with ApiClient(ClientConfig(url)) as client:
        names = []
        with pytest.raises(Gone):
            async for item in client.watch(PODS, namespace="ns", resource_version="1"):
                names.append((item.type, len(item.object.get("data", ""))))
                release.set()
        assert names == [("ADDED", 0), ("MODIFIED", 500_000)]


async def test_clean_close_ends_the_watch(serve: Callable[[Route], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(event("ADDED", "a", "2") + event("ADDED", "b", "3"))
        await response.write_eof()
        return response

    url = await serve(handler)
    async with ApiClient(ClientConfig(url)) as client:
        watch = client.watch(PODS)
        assert [e.object["metadata"]["name"] async for e in watch] == ["a", "b"]
        assert watch.resource_version == "3"


async def test_watch_idle_timeout(serve: Callable[[Route], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await asyncio.sleep(30)
        return response

    url = await serve(handler)
    async with ApiClient(ClientConfig(url, watch_idle_timeout=0.2)) as client:
        with pytest.raises(TransportTimeout):
            async for _ in client.watch(PODS):
                pass


async def test_request_timeout(serve: Callable[[Route], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(30)
        return web.json_response({})

    url = await serve(handler)
    async with ApiClient(ClientConfig(url, request_timeout=0.2)) as client:
        with pytest.raises(TransportTimeout):
            await client.get(PODS, "p")


async def test_connection_dropped_mid_body(serve: Callable[[Route], Awaitable[str]]) -> None:
    calls = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        calls += 1
        response = web.StreamResponse(headers={"Content-Length": "1000", "Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(b'{"kind":')
        assert request.transport is not None
        request.transport.close()
        return response

    url = await serve(handler)
    async with ApiClient(ClientConfig(url, connection_retries=1, retry_backoff=0.0)) as client:
        with pytest.raises(TransportError):
            await client.get(PODS, "p")
    assert calls == 1


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_connection_refused_is_a_connect_error() -> None:
    config = ClientConfig(f"http://127.0.0.1:{closed_port()}", connection_retries=1, retry_backoff=0.0)
    async with ApiClient(config) as client:
        with pytest.raises(ConnectError):
            await client.get(PODS, "p")


async def test_proxy_url(serve: Callable[[Route], Awaitable[str]]) -> None:
    proxied: list[str] = []

    async def proxy(request: web.Request) -> web.StreamResponse:
        proxied.append(str(request.url))
        return web.json_response({"kind": "Pod", "via": "proxy"})

    proxy_url = await serve(proxy)
    config = ClientConfig("http://kubernetes.invalid:6443", proxy_url=proxy_url)
    async with ApiClient(config) as client:
        assert (await client.get(PODS, "p", namespace="ns"))["via"] == "proxy"
    assert proxied == ["http://kubernetes.invalid:6443/api/v1/namespaces/ns/pods/p"]


async def test_server_path_prefix(serve: Callable[[Route], Awaitable[str]]) -> None:
    paths: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        paths.append(request.path)
        return web.json_response({})

    url = await serve(handler)
    async with ApiClient(ClientConfig(url + "/k8s/clusters/c-1/")) as client:
        await client.get(PODS, "p", namespace="ns")
    assert paths == ["/k8s/clusters/c-1/api/v1/namespaces/ns/pods/p"]


async def test_close_from_another_task_ends_the_watch(serve: Callable[[Route], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(event("ADDED", "a", "2"))
        await asyncio.sleep(30)
        return response

    url = await serve(handler)
    async with ApiClient(ClientConfig(url)) as client:
        watch = client.watch(PODS)
        got_one = asyncio.Event()

        async def consume() -> list[str]:
            names = []
            async for item in watch:
                names.append(item.object["metadata"]["name"])
                got_one.set()
            return names

        task = asyncio.create_task(consume())
        await got_one.wait()
        await watch.close()
        assert await asyncio.wait_for(task, 5) == ["a"]


def test_environment_proxy_is_read_once_per_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert environment_proxy("https://k8s.example:6443") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("NO_PROXY", "internal.example,10.0.0.1")
    assert environment_proxy("https://k8s.example:6443") == "http://proxy:3128"
    assert environment_proxy("https://api.internal.example:6443") is None
    assert environment_proxy("https://10.0.0.1:443") is None
    assert environment_proxy("http://k8s.example:8080") is None


async def test_open_watches_do_not_starve_the_request_pool(serve: Callable[[Route], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") != "true":
            return web.json_response({"kind": "Pod"})
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(event("ADDED", "a", "2"))
        await asyncio.sleep(30)
        return response

    url = await serve(handler)
    async with ApiClient(ClientConfig(url, pool_limit=1, request_timeout=5)) as client:
        watches = [client.watch(PODS) for _ in range(3)]
        for watch in watches:
            assert (await anext(aiter(watch))).type == "ADDED"
        assert await client.get(PODS, "p", namespace="ns") == {"kind": "Pod"}
        assert await client.get(PODS, "p", namespace="ns") == {"kind": "Pod"}
        for watch in watches:
            await watch.close()
