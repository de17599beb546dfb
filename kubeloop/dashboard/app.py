"""The dashboard's web server: one page, its static files, a state endpoint and an event stream.

Routes (``GET`` unless said otherwise; the cluster client is used by the informers to list and
watch, and by the token-protected actions alone to write):

``/``
    ``static/index.html``, with the current snapshot embedded (:mod:`kubeloop.dashboard.page`):
    the page (its script and style are in ``static/``).
``/static/{file}``
    the page's own files, written for kubeloop: no build step, nothing vendored.
``/api/state``
    the current views as ``{"type": "snapshot", "workloads": [...]}``.
``/api/stream``
    server-sent events: one ``message`` event per feed message (snapshot first, then deltas,
    see :mod:`kubeloop.dashboard.feed`), and a comment line every ``heartbeat`` seconds so that
    proxies and browsers keep the connection open.
``/api/pods/{namespace}/{name}``
    one pod's details (:mod:`kubeloop.dashboard.poddetails`), from the dashboard's caches; 404
    for a pod it does not know.
``POST /api/workloads/{kind}/{namespace}/{name}/{pause|resume|undo}``
    the page's buttons, behind the cluster's bearer token (:mod:`kubeloop.dashboard.actionroutes`).
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

import orjson
from aiohttp import web

from kubeloop.client import ApiClient
from kubeloop.dashboard.access import Policy, access_middleware, is_loopback
from kubeloop.dashboard.actionroutes import add_action_routes
from kubeloop.dashboard.feed import DashboardFeed, watch_cluster
from kubeloop.dashboard.model import ClusterModel, Collection
from kubeloop.dashboard.page import embed_snapshot
from kubeloop.dashboard.poddetails import pod_details

STATIC_DIR = Path(__file__).with_name("static")
HEARTBEAT_SECONDS = 15.0

FEED_KEY = web.AppKey("dashboard_feed", DashboardFeed)
HEARTBEAT_KEY = web.AppKey("dashboard_heartbeat", float)

Stop = Callable[[], Awaitable[None]]
LOOPBACK = Policy(loopback_only=True, token=None)
"""A dashboard on loopback: loopback ``Host`` names only, no token."""


async def _index(request: web.Request) -> web.Response:
    # The first picture travels with the page (see kubeloop.dashboard.page): no "empty" flash.
    template = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    page = embed_snapshot(template, request.app[FEED_KEY].snapshot_message())
    return web.Response(text=page, content_type="text/html", headers={"Cache-Control": "no-cache"})


async def _state(request: web.Request) -> web.Response:
    feed = request.app[FEED_KEY]
    return web.Response(body=feed.snapshot_message(), content_type="application/json")


POD_EVENTS = 20
"""Events shown in a pod's details panel."""


async def _pod(request: web.Request) -> web.Response:
    # Read from the dashboard's own caches: a click costs the cluster nothing.
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    model = request.app[FEED_KEY].model
    pod = model.get(Collection.PODS, namespace, name)
    if pod is None:
        return web.json_response({"message": f'pod "{name}" not found in namespace "{namespace}"'}, status=404)
    return web.Response(body=orjson.dumps(pod_details(pod, model.events_about("Pod", pod, POD_EVENTS))),
                        content_type="application/json")


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


def dashboard_app(feed: DashboardFeed, *, heartbeat: float = HEARTBEAT_SECONDS, client: ApiClient | None = None,
                  action_token: str | None = None, policy: Policy = LOOPBACK) -> web.Application:
    """The aiohttp application serving ``feed`` (which the caller starts and stops) to the
    readers ``policy`` admits (:mod:`kubeloop.dashboard.access`); with a ``client``, also the
    pause/resume/undo actions, for requests bearing ``action_token``."""
    app = web.Application(middlewares=[access_middleware(policy)])
    if client is not None:
        add_action_routes(app, client, action_token)
    app[FEED_KEY] = feed
    app[HEARTBEAT_KEY] = heartbeat
    app.router.add_get("/", _index)
    app.router.add_get("/api/state", _state)
    app.router.add_get("/api/stream", _stream)
    app.router.add_get("/api/pods/{namespace}/{name}", _pod)
    app.router.add_get("/healthz", _healthz)
    app.router.add_static("/static/", STATIC_DIR, show_index=False)

    async def end_streams(_app: web.Application) -> None:
        # Open event streams would otherwise hold the shutdown until their clients leave.
        await feed.stop()

    app.on_shutdown.append(end_streams)
    return app


async def start_dashboard(client: ApiClient, host: str = "127.0.0.1", port: int = 0, *,
                          namespace: str | None = None, token: str | None = None,
                          action_token: str | None = None) -> tuple[str, Stop]:
    """Watch the cluster behind ``client`` and serve the dashboard on ``host:port`` (0: a free port).

    Returns the page's URL and an async ``stop`` that closes the server, the streams and the
    informers (not the client, which stays the caller's). Caches have synced (or 30 s passed)
    when it returns, so the first page load shows the cluster as it is.

    The page's pause/resume/undo buttons act with ``client`` for a request that presents
    ``action_token``, by default ``token`` or the client's own static bearer token (the
    cluster's token, for ``kubeloop up``); without one, the actions are disabled. Off loopback
    the page requires ``token`` (the action token when not given, else a random one), and the
    URL returned carries it as ``?token=``.
    """
    actions = action_token if action_token is not None else (token or client.config.token)
    loopback = is_loopback(host)
    if not loopback:
        token = token or actions or secrets.token_urlsafe(32)
    policy = LOOPBACK if loopback else Policy(loopback_only=False, token=token)
    feed = DashboardFeed(ClusterModel(namespace=namespace))
    stop_watching = await watch_cluster(client, feed, namespace=namespace)
    feed.start()
    runner = web.AppRunner(dashboard_app(feed, client=client, action_token=actions, policy=policy), access_log=None,
                           shutdown_timeout=1.0)
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
