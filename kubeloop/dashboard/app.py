"""The dashboard's web server: one page, its static files, a state endpoint and an event stream.

Routes (all ``GET``; the server has no route that changes anything, and the cluster client it
holds is used only by the informers to list and watch):

``/``
    ``static/index.html``: the page (its script and style are in ``static/``).
``/static/{file}``
    the page's own files, written for kubeloop: no build step, nothing vendored.
``/api/state``
    the current views as ``{"type": "snapshot", "workloads": [...]}``.
``/api/stream``
    server-sent events: one ``message`` event per feed message (snapshot first, then deltas,
    see :mod:`kubeloop.dashboard.feed`), and a comment line every ``heartbeat`` seconds so that
    proxies and browsers keep the connection open.
``/healthz``
    ``ok``.

Every route is behind :mod:`kubeloop.dashboard.access` (Host and Origin checks; a token when
the page is bound off loopback).

:func:`start_dashboard` is the one-call entry used by ``kubeloop dashboard`` and ``kubeloop up``.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

from aiohttp import web

from kubeloop.client import ApiClient
from kubeloop.dashboard.access import Policy, access_middleware, is_loopback
from kubeloop.dashboard.feed import DashboardFeed, watch_cluster
from kubeloop.dashboard.model import ClusterModel

STATIC_DIR = Path(__file__).with_name("static")
HEARTBEAT_SECONDS = 15.0

FEED_KEY = web.AppKey("dashboard_feed", DashboardFeed)
HEARTBEAT_KEY = web.AppKey("dashboard_heartbeat", float)

Stop = Callable[[], Awaitable[None]]
LOOPBACK = Policy(loopback_only=True, token=None)
"""A dashboard on loopback: loopback ``Host`` names only, no token."""


async def _index(_request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})


async def _state(request: web.Request) -> web.Response:
    feed = request.app[FEED_KEY]
    return web.Response(body=feed.snapshot_message(), content_type="application/json")


async def _healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def _stream(request: web.Request) -> web.StreamResponse:
    feed = request.app[FEED_KEY]
    heartbeat = request.app[HEARTBEAT_KEY]
    response = web.StreamResponse(headers={
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
    })
    await response.prepare(request)
    subscription = feed.open_subscription()
    try:
        while True:
            try:
                message = await asyncio.wait_for(subscription.next(), heartbeat)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            if message is None:
                break
            await response.write(b"data: " + message + b"\n\n")
    except ConnectionError:
        pass  # the browser went away
    finally:
        subscription.close()
    return response


def dashboard_app(feed: DashboardFeed, *, heartbeat: float = HEARTBEAT_SECONDS,
                  policy: Policy = LOOPBACK) -> web.Application:
    """The aiohttp application serving ``feed`` (which the caller starts and stops), to the
    readers ``policy`` admits (:mod:`kubeloop.dashboard.access`)."""
    app = web.Application(middlewares=[access_middleware(policy)])
    app[FEED_KEY] = feed
    app[HEARTBEAT_KEY] = heartbeat
    app.router.add_get("/", _index)
    app.router.add_get("/api/state", _state)
    app.router.add_get("/api/stream", _stream)
    app.router.add_get("/healthz", _healthz)
    app.router.add_static("/static/", STATIC_DIR, show_index=False)

    async def end_streams(_app: web.Application) -> None:
        # Open event streams would otherwise hold the shutdown until their clients leave.
        await feed.stop()

    app.on_shutdown.append(end_streams)
    return app


async def start_dashboard(client: ApiClient, host: str = "127.0.0.1", port: int = 0, *,
                          namespace: str | None = None, token: str | None = None) -> tuple[str, Stop]:
    """Watch the cluster behind ``client`` and serve the dashboard on ``host:port`` (0: a free port).

    Returns the page's URL and an async ``stop`` that closes the server, the streams and the
    informers (not the client, which stays the caller's). Caches have synced (or 30 s passed)
    when it returns, so the first page load shows the cluster as it is.

    Off loopback the page requires ``token`` (the client's bearer token when not given, else a
    random one), and the URL returned carries it as ``?token=``.
    """
    loopback = is_loopback(host)
    if not loopback:
        token = token or client.config.token or secrets.token_urlsafe(32)
    policy = LOOPBACK if loopback else Policy(loopback_only=False, token=token)
    feed = DashboardFeed(ClusterModel(namespace=namespace))
    stop_watching = await watch_cluster(client, feed, namespace=namespace)
    feed.start()
    runner = web.AppRunner(dashboard_app(feed, policy=policy), access_log=None, shutdown_timeout=1.0)
    try:
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
    except BaseException:
        await feed.stop()
        await stop_watching()
        raise
    bound_port = runner.addresses[0][1]
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{bound_port}/" + ("" if policy.token is None else f"?token={quote(policy.token)}")

    async def stop() -> None:
        await feed.stop()
        await runner.cleanup()
        await stop_watching()

    return url, stop
