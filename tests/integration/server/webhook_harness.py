"""An HTTPS admission webhook for tests, served on loopback on the API server's own loop.

Its certificate comes from a CA generated for the test (``kubeloop.server.certs``) and names
``localhost``, ``127.0.0.1`` and ``hooks.webhooks.svc`` (the service name a ``clientConfig.service``
of Service ``hooks`` in namespace ``webhooks`` is verified against). Each path is one behaviour;
every AdmissionReview received is recorded with its path.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
import threading
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from server_harness import ServerThread

from kubeloop.server.certs import ensure_credentials

Obj = dict[str, Any]

SERVICE_NAME = "hooks"
SERVICE_NAMESPACE = "webhooks"


def _patch(ops: list[Obj]) -> Obj:
    return {"patchType": "JSONPatch", "patch": base64.b64encode(orjson.dumps(ops)).decode()}


def _labels(obj: Obj | None) -> Obj:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def _add_label(obj: Obj, key: str, value: str) -> list[Obj]:
    escaped = key.replace("~", "~0").replace("/", "~1")
    if "labels" not in (obj.get("metadata") or {}):
        return [{"op": "add", "path": "/metadata/labels", "value": {key: value}}]
    return [{"op": "add", "path": f"/metadata/labels/{escaped}", "value": value}]


class WebhookServer:
    """The webhook; ``reviews`` holds (path, AdmissionReview) in arrival order."""

    def __init__(self, server: ServerThread, directory: Path) -> None:
        self.server = server
        credentials = ensure_credentials(directory, f"{SERVICE_NAME}.{SERVICE_NAMESPACE}.svc")
        self.ca_bundle = base64.b64encode(credentials.ca_cert.read_bytes()).decode()
        self.reviews: list[tuple[str, Obj]] = []
        self.held = threading.Event()
        self._release: asyncio.Event | None = None
        self._stopping: asyncio.Event | None = None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(credentials.server_cert, credentials.server_key)
        self.port: int = server.call(self._start(context))

    async def _start(self, context: ssl.SSLContext) -> int:
        self._release = asyncio.Event()
        self._stopping = asyncio.Event()
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        sockets = site._server.sockets if site._server is not None else []  # type: ignore[union-attr]
        port: int = sockets[0].getsockname()[1]
        return port

    def stop(self) -> None:
        async def stop() -> None:
            assert self._stopping is not None
            self._stopping.set()
            await self._runner.cleanup()

        self.server.call(stop())

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def client_config(self, path: str) -> Obj:
        return {"url": self.url(path), "caBundle": self.ca_bundle}

    def seen(self, path: str) -> list[Obj]:
        return [review for p, review in self.reviews if p == path]

    def arm(self) -> None:
        """Hold the next requests of ``/hold`` until :meth:`release`."""
        self.held.clear()

        async def fresh() -> None:
            self._release = asyncio.Event()

        self.server.call(fresh())

    def release(self) -> None:
        """Let the requests held by ``/hold`` go on (until :meth:`arm` again)."""
        assert self._release is not None
        self.server.loop.call_soon_threadsafe(self._release.set)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/garbage":
            return web.Response(text="garbage, not a review")
        if path == "/error":
            return web.Response(status=500, text="boom")
        review = orjson.loads(await request.read())
        self.reviews.append((path, review))
        req = review["request"]
        obj = req.get("object")
        response: Obj = {"uid": req["uid"], "allowed": True}
        if path == "/slow":
            assert self._stopping is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), 60)
        elif path == "/hold" and obj and (obj.get("data") or {}).get("hold") == "yes":
            self.held.set()
            assert self._release is not None
            await asyncio.wait_for(self._release.wait(), 25)
        elif path.startswith("/label/"):
            # /label/KEY: add the label KEY=yes, with a warning.
            key = path.removeprefix("/label/")
            if obj is not None and key not in _labels(obj):
                response.update(_patch(_add_label(obj, key, "yes")))
            response["warnings"] = [f"labelled {key}"]
        elif path == "/require-mutated":
            if _labels(obj).get("mutated") != "yes":
                response = {"uid": req["uid"], "allowed": False, "status": {"message": "not mutated", "code": 422}}
        elif path == "/deny":
            response = {"uid": req["uid"], "allowed": False,
                        "status": {"code": 403, "reason": "Forbidden", "message": "no thanks"}}
        elif path == "/replicas":
            response.update(_patch([{"op": "replace", "path": "/spec/replicas", "value": 7}]))
        elif path == "/bad-type":
            response.update(_patch([{"op": "add", "path": "/data", "value": "not a map"},
                                    {"op": "add", "path": "/unknownField", "value": 1}]))
        elif path == "/binding":
            response.update(_patch([{"op": "replace", "path": "/target/name", "value": "node-b"}]))
        elif path == "/hpa-v1":
            response.update(_patch([{"op": "replace", "path": "/spec/targetCPUUtilizationPercentage", "value": 77}]))
        elif path == "/widget":
            # Removing a defaulted field: the server defaults the patched object again.
            response.update(_patch([{"op": "remove", "path": "/spec/replicas"},
                                    {"op": "add", "path": "/spec/color", "value": "blue"}]))
        elif path == "/deny-failed-phase":
            if ((obj or {}).get("status") or {}).get("phase") == "Failed":
                response = {"uid": req["uid"], "allowed": False, "status": {"message": "phase Failed refused"}}
        elif path == "/v1beta1":
            return web.json_response({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
                                      "response": {"allowed": True, **_patch(_add_label(obj, "beta", "yes"))}})
        return web.json_response({"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
                                  "response": response})
