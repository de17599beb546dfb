"""Health probes and metrics over HTTP: ``/healthz``, ``/readyz``, ``/metrics``.

Checks are named callables returning None (healthy) or raising. The aggregate endpoints answer
as controller-runtime's do: ``200 ok``; with ``?verbose`` one ``[+]name ok`` line per check and a
closing ``healthz check passed``; on failure ``500`` with ``[-]name failed: reason withheld``
lines and ``healthz check failed``; ``?exclude=name`` skips a check; ``/healthz/<name>`` runs
one check (404 for an unknown name).

``aiohttp.web`` is imported when the server starts, not with this module: every manager builds
a :class:`HealthServer`, most never serve it (``health_port=None``), and the import is ~36 ms
(aiohttp's server half, ``http.server``, ``email``) a controller would pay at every start.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

if TYPE_CHECKING:
    from aiohttp import web

Check = Callable[[], Any | Awaitable[Any]]
TEXT = "text/plain"


async def _run(check: Check) -> str | None:
    try:
        result = check()
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        return str(exc) or type(exc).__name__
    return None


class HealthServer:
    """An aiohttp server for probes and metrics; bind with :meth:`start`."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else REGISTRY
        self.checks: dict[str, dict[str, Check]] = {"healthz": {}, "readyz": {}}
        self._runner: web.AppRunner | None = None
        self.port = 0

    def add_check(self, endpoint: str, name: str, check: Check) -> None:
        self.checks[endpoint][name] = check

    def app(self) -> web.Application:
        from aiohttp import web
        app = web.Application()
        for endpoint in ("healthz", "readyz"):
            app.router.add_get(f"/{endpoint}", self._aggregate(endpoint))
            app.router.add_get(f"/{endpoint}/{{name}}", self._single(endpoint))
        app.router.add_get("/metrics", self._metrics)
        return app

    def _aggregate(self, endpoint: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            from aiohttp import web
            checks = self.checks[endpoint]
            if not checks and endpoint == "healthz":
                checks = {"ping": lambda: None}
            excluded = set(request.query.getall("exclude", []))
            lines: list[str] = []
            failed = False
            for name, check in checks.items():
                if name in excluded:
                    lines.append(f"[+]{name} excluded: ok")
                    continue
                error = await _run(check)
                if error is None:
                    lines.append(f"[+]{name} ok")
                else:
                    failed = True
                    lines.append(f"[-]{name} failed: reason withheld")
            if failed:
                body = "\n".join([*lines, f"{endpoint} check failed"]) + "\n"
                return web.Response(status=500, text=body, content_type=TEXT)
            if "verbose" in request.query:
                return web.Response(text="\n".join([*lines, f"{endpoint} check passed"]) + "\n", content_type=TEXT)
            return web.Response(text="ok", content_type=TEXT)

        return handler

    def _single(self, endpoint: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            from aiohttp import web
            name = request.match_info["name"]
            check = self.checks[endpoint].get(name)
            if check is None:
                if endpoint == "healthz" and name == "ping" and not self.checks[endpoint]:
                    return web.Response(text="ok", content_type=TEXT)
                return web.Response(status=404, text="404 page not found\n", content_type=TEXT)
            error = await _run(check)
            if error is not None:
                return web.Response(status=500, text=f"internal server error: {error}\n", content_type=TEXT)
            return web.Response(text="ok", content_type=TEXT)

        return handler

    async def _metrics(self, request: web.Request) -> web.Response:
        body = generate_latest(self.registry)
        from aiohttp import web

        response = web.Response(body=body)
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Serve on ``host:port`` (0 picks a free port); returns the bound port."""
        from aiohttp import web
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else port
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
