"""Serving the webhook: HTTPS on the paths of :data:`ROUTES`, plus ``/healthz``, ``/readyz`` and
``/metrics``; and the loop that keeps its certificate and ``caBundle`` current.

Each admission call is decoded, the pods its answer needs are read through the API (the
``podsToDelete`` rule), and :func:`kubeloop.webhook.review.admit` answers; the I/O is here, the
decisions are not. The serving certificate and key are written to ``cert_dir`` as ``tls.crt``
and ``tls.key`` (kruise's file writer does the same for controller-runtime's server) and loaded
into the TLS context again whenever they change, so a renewal needs no restart.

``/metrics`` counts answers by path and outcome
(``kubeloop_webhook_admission_requests_total{path,allowed,code}``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from kubeloop.client import PODS, ApiClient, ApiException, NotFound
from kubeloop.webhook import certificates, provision
from kubeloop.webhook.certificates import Artifacts
from kubeloop.webhook.configuration import ROUTES, Route
from kubeloop.webhook.review import BadReview, admit, errored, parse_request, pods_to_read, review

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def write_serving_files(cert_dir: Path, artifacts: Artifacts) -> tuple[Path, Path]:
    """Write ``tls.crt`` and ``tls.key`` (owner-only) into ``cert_dir``; their paths."""
    cert_dir.mkdir(parents=True, exist_ok=True)
    cert_path = cert_dir / certificates.SERVER_CERT_TLS
    key_path = cert_dir / certificates.SERVER_KEY_TLS
    for path, data in ((cert_path, artifacts.cert), (key_path, artifacts.key)):
        temporary = path.with_suffix(path.suffix + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    return cert_path, key_path


class WebhookServer:
    """The HTTPS server answering AdmissionReviews; reads pods through ``client``."""

    def __init__(self, client: ApiClient, namespace: str, cert_dir: Path, port: int, host: str | None = None) -> None:
        self.client = client
        self.namespace = namespace
        self.cert_dir = cert_dir
        self.port = port
        self.host = host
        self.answers: Counter[tuple[str, bool, int]] = Counter()
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._serving: Artifacts | None = None
        self._runner: web.AppRunner | None = None

    def use(self, artifacts: Artifacts) -> None:
        """Serve with ``artifacts``' certificate from now on (new connections)."""
        if artifacts == self._serving:
            return
        cert_path, key_path = write_serving_files(self.cert_dir, artifacts)
        self.tls.load_cert_chain(cert_path, key_path)
        self._serving = artifacts

    async def _read_pods(self, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], Mapping[str, Any] | None]:
        pods: dict[tuple[str, str], Mapping[str, Any] | None] = {}
        for namespace, name in wanted:
            try:
                pods[(namespace, name)] = await self.client.get(PODS, name, namespace=namespace)
            except NotFound:
                pods[(namespace, name)] = None
        return pods

    async def answer(self, route: Route, body: bytes) -> Obj:
        """The AdmissionReview answering ``body`` on ``route``."""
        try:
            request = parse_request(body)
        except BadReview as error:
            return review(errored(400, str(error)), "")
        uid = str(request.get("uid") or "")
        try:
            pods = await self._read_pods(pods_to_read(route, request))
        except ApiException as error:
            # Not a verdict on the object: the webhook could not look (kruise answers Errored(500)).
            log.warning("reading the pods named by %s failed: %s", route.path, error)
            return review(errored(500, str(error)), uid)
        return review(admit(route, request, lambda namespace, name: pods.get((namespace, name))), uid)

    def _handler(self, route: Route) -> Any:
        async def handle(request: web.Request) -> web.Response:
            answered = await self.answer(route, await request.read())
            response = answered["response"]
            code = int((response.get("status") or {}).get("code") or 200)
            self.answers[(route.path, bool(response.get("allowed")), code)] += 1
            return web.Response(body=orjson.dumps(answered), content_type="application/json")

        return handle

    async def _metrics(self, _: web.Request) -> web.Response:
        lines = ["# HELP kubeloop_webhook_admission_requests_total AdmissionReviews answered, by path and outcome.",
                 "# TYPE kubeloop_webhook_admission_requests_total counter"]
        for (path, allowed, code), count in sorted(self.answers.items()):
            lines.append(f'kubeloop_webhook_admission_requests_total{{path="{path}",'
                         f'allowed="{str(allowed).lower()}",code="{code}"}} {count}')
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")

    @staticmethod
    async def _ok(_: web.Request) -> web.Response:
        return web.Response(text="ok", content_type="text/plain")

    async def start(self) -> None:
        """Listen (call :meth:`use` first)."""
        app = web.Application()
        for route in ROUTES:
            app.router.add_post(route.path, self._handler(route))
        app.router.add_get("/healthz", self._ok)
        app.router.add_get("/readyz", self._ok)
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, ssl_context=self.tls)
        await site.start()
        self._runner = runner

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


async def keep_current(server: WebhookServer, stop: asyncio.Event, period: float) -> None:
    """Until ``stop``: every ``period`` seconds, renew the certificate if needed and set the
    configurations' ``caBundle`` again (a re-applied manifest may have cleared it)."""
    while True:
        try:
            await asyncio.wait_for(stop.wait(), period)
            return
        except TimeoutError:
            pass
        try:
            artifacts = await provision.ensure_certificate(server.client, server.namespace)
            server.use(artifacts)
            await provision.ensure_ca_bundles(server.client, artifacts.ca_cert)
        except (ApiException, RuntimeError) as error:
            log.warning("keeping the webhook certificate current failed (retrying in %ss): %s", period, error)
