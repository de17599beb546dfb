"""Who may read the dashboard (issue #18 item 6): loopback Host names, same-origin requests, and
a token when the page is bound off loopback (:mod:`kubeloop.dashboard.access`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from kubeloop.dashboard.access import COOKIE, Policy, check, host_name, is_loopback, session_value
from kubeloop.dashboard.app import dashboard_app
from kubeloop.dashboard.feed import DashboardFeed
from kubeloop.dashboard.model import ClusterModel

LOOPBACK = Policy(loopback_only=True, token=None)
EXPOSED = Policy(loopback_only=False, token="s3cret")


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("LOCALHOST", True), ("0.0.0.0", False), ("", False), ("192.168.1.5", False), ("evil.example", False),
    ("localhost.evil.example", False), ("::", False),
])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(("header", "name"), [
    ("127.0.0.1:8765", "127.0.0.1"), ("localhost", "localhost"), ("[::1]:80", "::1"), ("[::1]", "::1"),
    ("evil.example:8765", "evil.example"),
])
def test_host_name(header: str, name: str) -> None:
    assert host_name(header) == name


@pytest.mark.parametrize(("policy", "headers", "cookies", "query", "status"), [
    (LOOPBACK, {"Host": "127.0.0.1:8765"}, {}, {}, 200),
    (LOOPBACK, {"Host": "localhost:8765"}, {}, {}, 200),
    # DNS rebinding: the attacker's name resolved to 127.0.0.1.
    (LOOPBACK, {"Host": "rebind.evil.example:8765"}, {}, {}, 403),
    (LOOPBACK, {}, {}, {}, 403),
    (LOOPBACK, {"Host": "127.0.0.1:8765", "Origin": "http://127.0.0.1:8765"}, {}, {}, 200),
    (LOOPBACK, {"Host": "127.0.0.1:8765", "Origin": "http://evil.example"}, {}, {}, 403),
    (LOOPBACK, {"Host": "127.0.0.1:8765", "Origin": "null"}, {}, {}, 403),
    (EXPOSED, {"Host": "10.0.0.5:8765"}, {}, {}, 401),
    (EXPOSED, {"Host": "10.0.0.5:8765", "Authorization": "Bearer s3cret"}, {}, {}, 200),
    (EXPOSED, {"Host": "10.0.0.5:8765", "Authorization": "Bearer wrong"}, {}, {}, 401),
    (EXPOSED, {"Host": "10.0.0.5:8765"}, {COOKIE: session_value("s3cret")}, {}, 200),
    (EXPOSED, {"Host": "10.0.0.5:8765"}, {COOKIE: "s3cret"}, {}, 401),  # the cookie is not the token
    (EXPOSED, {"Host": "10.0.0.5:8765"}, {}, {"token": "s3cret"}, 200),
    (EXPOSED, {"Host": "10.0.0.5:8765"}, {}, {"token": "wrong"}, 401),
    (EXPOSED, {"Host": "10.0.0.5:8765", "Origin": "http://evil.example"}, {}, {"token": "s3cret"}, 403),
])
def test_check(policy: Policy, headers: dict[str, str], cookies: dict[str, str], query: dict[str, str],
               status: int) -> None:
    decision = check(policy, headers, cookies, query)
    assert (decision.status if not decision.allow else 200) == status
    assert decision.set_session is (status == 200 and "token" in query)


async def served(policy: Policy) -> AsyncIterator[TestClient[Any, Any]]:
    feed = DashboardFeed(ClusterModel())
    client: TestClient[Any, Any] = TestClient(TestServer(dashboard_app(feed, policy=policy)))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()
        await feed.stop()


@pytest.fixture
async def loopback_page() -> AsyncIterator[TestClient[Any, Any]]:
    async for client in served(LOOPBACK):
        yield client


@pytest.fixture
async def exposed_page() -> AsyncIterator[TestClient[Any, Any]]:
    async for client in served(EXPOSED):
        yield client


async def test_a_rebound_host_gets_403_on_every_route(loopback_page: TestClient[Any, Any]) -> None:
    for path in ("/", "/api/state", "/api/stream", "/static/app.js", "/healthz"):
        response = await loopback_page.get(path, headers={"Host": "rebind.evil.example"})
        assert response.status == 403, path
    assert (await loopback_page.get("/api/state")).status == 200


async def test_the_token_url_sets_a_session_and_leaves_the_address_bar(exposed_page: TestClient[Any, Any]) -> None:
    assert (await exposed_page.get("/api/state")).status == 401
    response = await exposed_page.get("/?token=s3cret", allow_redirects=False)
    assert response.status == 303
    assert response.headers["Location"] == "/"
    assert response.cookies[COOKIE].value == session_value("s3cret")
    assert response.cookies[COOKIE]["httponly"]
    # The client keeps the cookie: the bare URLs now answer.
    assert (await exposed_page.get("/api/state")).status == 200
    assert (await exposed_page.get("/")).status == 200


@pytest.mark.parametrize("bad", [{"metadata": {"name": "bad", "namespace": "default", "annotations": ["a"]}},
                                 {"metadata": {"name": "bad", "namespace": "default", "annotations": "x"}}])
def test_a_workload_of_an_impossible_shape_is_left_out_not_fatal(bad: dict[str, Any]) -> None:
    # Issue #18 item 8: a Deployment whose metadata.annotations was a list ended the dashboard.
    from kubeloop.dashboard.model import ADDED, Collection
    from tests.unit.dashboard.builders import NOW, deployment

    feed = DashboardFeed(ClusterModel(), interval=0.0, tick=60.0, clock=lambda: NOW)
    feed.apply(Collection.DEPLOYMENTS, ADDED, deployment("good"))
    odd = {**deployment("bad"), **bad}
    odd["metadata"] = {**odd["metadata"], "name": "bad", "uid": "bad-uid"}
    feed.apply(Collection.DEPLOYMENTS, ADDED, odd)
    feed.rebuild()
    assert [view["name"] for view in feed.model.views(NOW)] == ["good"]
