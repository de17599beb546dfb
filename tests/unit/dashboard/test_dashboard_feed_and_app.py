"""DashboardFeed (rebuilds and deltas) and the web app (page, state, server-sent events)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from kubeloop.dashboard.app import dashboard_app
from kubeloop.dashboard.feed import DashboardFeed
from kubeloop.dashboard.model import ADDED, DELETED, MODIFIED, ClusterModel, Collection
from tests.unit.dashboard.builders import NOW, deployment


def make_feed() -> DashboardFeed:
    return DashboardFeed(ClusterModel(), interval=0.0, tick=60.0, clock=lambda: NOW)


def test_rebuild_sends_only_changed_workloads() -> None:
    feed = make_feed()
    assert feed.rebuild() is None
    feed.apply(Collection.DEPLOYMENTS, ADDED, deployment("a"))
    feed.apply(Collection.DEPLOYMENTS, ADDED, deployment("b"))
    first = orjson.loads(feed.rebuild() or b"")
    assert [v["name"] for v in first["upsert"]] == ["a", "b"] and first["remove"] == []
    assert feed.rebuild() is None
    feed.apply(Collection.DEPLOYMENTS, MODIFIED, deployment("b", replicas=7))
    second = orjson.loads(feed.rebuild() or b"")
    assert [(v["name"], v["progress"]["desired"]) for v in second["upsert"]] == [("b", 7)]
    feed.apply(Collection.DEPLOYMENTS, DELETED, deployment("a"))
    assert orjson.loads(feed.rebuild() or b"") == {"type": "delta", "time": NOW.timestamp(), "upsert": [],
                                                   "remove": ["Deployment/default/a"]}
    assert feed.version == 3


async def test_subscriber_gets_snapshot_then_deltas_and_slow_ones_are_dropped() -> None:
    feed = make_feed()
    feed.max_backlog = 2
    feed.apply(Collection.DEPLOYMENTS, ADDED, deployment("a"))
    feed.rebuild()
    stream = feed.subscribe()
    snapshot = orjson.loads(await anext(stream))
    assert snapshot["type"] == "snapshot" and [v["name"] for v in snapshot["workloads"]] == ["a"]
    for replicas in (2, 3, 4):
        feed.apply(Collection.DEPLOYMENTS, MODIFIED, deployment("a", replicas=replicas))
        feed.rebuild()
    # Two deltas were queued, the third overflowed the backlog: the stream ends after them.
    received = [orjson.loads(message) async for message in stream]
    assert [m["upsert"][0]["progress"]["desired"] for m in received] == [2, 3]


@pytest.fixture
async def client() -> AsyncIterator[tuple[TestClient[Any, Any], DashboardFeed]]:
    feed = make_feed()
    feed.apply(Collection.DEPLOYMENTS, ADDED, deployment("web"))
    feed.start()
    test_client: TestClient[Any, Any] = TestClient(TestServer(dashboard_app(feed, heartbeat=0.05)))
    await test_client.start_server()
    try:
        yield test_client, feed
    finally:
        await test_client.close()
        await feed.stop()


async def test_page_static_files_and_state(client: tuple[TestClient[Any, Any], DashboardFeed]) -> None:
    http, _ = client
    page = await http.get("/")
    text = await page.text()
    assert page.status == 200 and "/static/dashboard.js" in text
    # The page carries the current snapshot, so it shows the cluster before its stream opens.
    start = text.index('<script type="application/json" id="initial-state">')
    embedded = orjson.loads(text[text.index(">", start) + 1:text.index("</script>", start)])
    assert embedded["type"] == "snapshot" and [v["name"] for v in embedded["workloads"]] == ["web"]
    for name in ("dashboard.js", "dashboard.css"):
        assert (await http.get(f"/static/{name}")).status == 200
    assert (await http.get("/static/../app.py")).status in (403, 404)
    state = await (await http.get("/api/state")).json()
    assert state["type"] == "snapshot" and [v["name"] for v in state["workloads"]] == ["web"]
    assert state["time"] == NOW.timestamp()
    assert await (await http.get("/healthz")).text() == "ok"
    # Read-only: nothing accepts a write.
    assert (await http.post("/api/state", data=b"{}")).status == 405


async def read_event(response: Any) -> bytes:
    """The next ``data:`` payload of a server-sent event stream (heartbeat comments skipped)."""
    while True:
        line = await response.content.readline()
        assert line, "stream ended"
        if line.startswith(b"data: "):
            return bytes(line[len(b"data: "):].rstrip(b"\n"))


async def test_stream_sends_snapshot_then_live_deltas(client: tuple[TestClient[Any, Any], DashboardFeed]) -> None:
    http, feed = client
    response = await http.get("/api/stream")
    assert response.headers["Content-Type"].startswith("text/event-stream")
    snapshot = orjson.loads(await read_event(response))
    assert [v["name"] for v in snapshot["workloads"]] == ["web"]
    # A heartbeat comment arrives while nothing changes (after the blank line ending the event).
    assert await asyncio.wait_for(response.content.readline(), 5) == b"\n"
    assert (await asyncio.wait_for(response.content.readline(), 5)).startswith(b": keep-alive")
    feed.apply(Collection.DEPLOYMENTS, MODIFIED, deployment("web", replicas=9))
    delta = orjson.loads(await asyncio.wait_for(read_event(response), 10))
    assert delta["type"] == "delta" and delta["upsert"][0]["progress"]["desired"] == 9
    response.close()
