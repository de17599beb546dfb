from typing import Any

import orjson
import pytest
from client_testkit import mock_client

from kubeloop.client import PODS, Expired, Gone, MockResponse, Request, TransportError, WatchEvent


def line(kind: str, name: str, rv: str) -> bytes:
    return orjson.dumps({"type": kind, "object": {"kind": "Pod", "metadata": {"name": name,
                                                                            "resourceVersion": rv}}}) + b"\n"


def bookmark(rv: str) -> bytes:
    return orjson.dumps({"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                        "metadata": {"resourceVersion": rv}}}) + b"\n"


def stream(*chunks: bytes, error: Exception | None = None) -> MockResponse:
    return MockResponse(200, b"", {"Content-Type": "application/json"}, chunks=list(chunks),
                        error_after_chunks=error)


async def test_watch_request_shape() -> None:
    client, transport = mock_client(lambda r: stream())
    events = [e async for e in client.watch(PODS, namespace="ns", resource_version="5", label_selector="a=b",
                                            field_selector="metadata.name=x", timeout_seconds=30)]
    assert events == []
    request = transport.requests[0]
    assert request.method == "GET"
    assert request.path == "/api/v1/namespaces/ns/pods"
    assert request.stream
    assert request.timeout is None
    assert request.query_dict() == {"watch": "true", "labelSelector": "a=b", "fieldSelector": "metadata.name=x",
                                    "resourceVersion": "5", "allowWatchBookmarks": "true", "timeoutSeconds": "30"}


async def test_watch_options_off_and_on() -> None:
    client, transport = mock_client(lambda r: stream())
    async with client.watch("pods", allow_bookmarks=False, send_initial_events=True,
                            resource_version_match="NotOlderThan") as events:
        assert [e async for e in events] == []
    assert transport.requests[0].path == "/api/v1/pods"
    assert transport.requests[0].query_dict() == {"watch": "true", "resourceVersionMatch": "NotOlderThan",
                                                  "sendInitialEvents": "true"}


async def test_events_split_across_chunks_and_bookmarks_move_the_resource_version() -> None:
    body = line("ADDED", "a", "6") + line("MODIFIED", "a", "7") + bookmark("9") + line("DELETED", "a", "10")
    chunks = [body[i:i + 7] for i in range(0, len(body), 7)]
    client, _ = mock_client(lambda r: stream(*chunks))
    watch = client.watch(PODS, resource_version="5")
    assert watch.resource_version == "5"
    seen: list[tuple[str, str]] = []
    async for event in watch:
        assert isinstance(event, WatchEvent)
        seen.append((event.type, event.object["metadata"]["resourceVersion"]))
        assert watch.resource_version == event.object["metadata"]["resourceVersion"]
    assert seen == [("ADDED", "6"), ("MODIFIED", "7"), ("BOOKMARK", "9"), ("DELETED", "10")]
    assert watch.resource_version == "10"


async def test_final_event_without_newline_is_delivered() -> None:
    client, _ = mock_client(lambda r: stream(line("ADDED", "a", "2").rstrip(b"\n")))
    assert [e.type async for e in client.watch(PODS)] == ["ADDED"]


async def test_error_event_410_raises_gone_after_earlier_events() -> None:
    error = orjson.dumps({"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 5 (20)", "reason": "Expired", "code": 410}}) + b"\n"
    client, _ = mock_client(lambda r: stream(line("ADDED", "a", "6"), error, line("ADDED", "b", "7")))
    seen: list[Any] = []
    with pytest.raises(Gone) as info:
        async for event in client.watch(PODS, resource_version="5"):
            seen.append(event.object["metadata"]["name"])
    assert isinstance(info.value, Expired)
    assert seen == ["a"]


async def test_http_410_on_watch_is_raised_too() -> None:
    client, _ = mock_client(lambda r: MockResponse.json(
        {"kind": "Status", "code": 410, "reason": "Gone", "message": "gone"}, 410))
    with pytest.raises(Gone):
        async for _ in client.watch(PODS, resource_version="1"):
            pass


async def test_broken_stream_raises_transport_error_and_closes_the_response() -> None:
    response = stream(line("ADDED", "a", "2"), error=ConnectionResetError("reset"))
    client, _ = mock_client(lambda r: response)
    seen = []
    with pytest.raises(TransportError):
        async for event in client.watch(PODS):
            seen.append(event.type)
    assert seen == ["ADDED"]
    assert response.closed


async def test_closing_a_watch_early_releases_the_response() -> None:
    response = stream(line("ADDED", "a", "2"), line("ADDED", "b", "3"))

    def handler(request: Request) -> MockResponse:
        return response

    client, _ = mock_client(handler)
    async with client.watch(PODS) as watch:
        async for event in watch:
            assert event.object["metadata"]["name"] == "a"
            break
    assert response.closed
    await watch.close()
