"""Running the embedded API server in-process, for the official (synchronous) client.

The server runs on its own event loop in a background thread, on a free loopback port, so the
blocking ``kubernetes`` client can call it from the test thread.
"""

from __future__ import annotations

import asyncio
import io
import ssl
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes import client, config

from kubeloop.server.app import KubeServer, ServerConfig


async def _cancel_leftover_tasks() -> None:
    current = asyncio.current_task()
    leftovers = [task for task in asyncio.all_tasks() if task is not current]
    for task in leftovers:
        task.cancel()
    await asyncio.gather(*leftovers, return_exceptions=True)


class ServerThread:
    """A :class:`KubeServer` on a private event loop in a daemon thread."""

    def __init__(self, server_config: ServerConfig,
                 loop_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop) -> None:
        self.config = server_config
        self.loop = loop_factory()
        self.thread = threading.Thread(target=self.loop.run_forever, name="kubeloop-server", daemon=True)
        self.thread.start()
        self.server = KubeServer(server_config)
        self.call(self.server.start())

    def call(self, coroutine: Any, timeout: float = 30.0) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(timeout)

    def run(self, function: Callable[[], Any]) -> Any:
        """Run a plain function on the server's loop (to inspect its state safely)."""

        async def wrapper() -> Any:
            return function()

        return self.call(wrapper())

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token(self) -> str:
        assert self.server.credentials is not None
        return self.server.credentials.token

    @property
    def ca_file(self) -> str:
        assert self.server.credentials is not None
        return str(self.server.credentials.ca_cert)

    def stop(self) -> None:
        """Stop the server and its loop; idempotent."""
        if self.loop.is_closed():
            return
        try:
            self.call(self.server.stop())
            # Let TLS transports of closed connections finish closing before the loop goes.
            self.call(asyncio.sleep(0.1))
            self.call(_cancel_leftover_tasks())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@dataclass
class Cluster:
    """A running server and an official client configured from the kubeconfig it wrote."""

    server: ServerThread
    api: client.ApiClient
    kubeconfig: Path

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    @property
    def apps(self) -> client.AppsV1Api:
        return client.AppsV1Api(self.api)

    @property
    def custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    @property
    def extensions(self) -> client.ApiextensionsV1Api:
        return client.ApiextensionsV1Api(self.api)

    def raw(self, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes | None = None,
            auth: bool = True) -> tuple[int, dict[str, str], bytes]:
        """One plain HTTP request (for protocol corners the typed client cannot express)."""
        return raw_request(self.server, method, path, headers=headers, body=body, auth=auth)


def raw_request(server: ServerThread, method: str, path: str, *, headers: dict[str, str] | None = None,
                body: bytes | None = None, auth: bool = True) -> tuple[int, dict[str, str], bytes]:
    async def go() -> tuple[int, dict[str, str], bytes]:
        context = ssl.create_default_context(cafile=server.ca_file)
        sent = dict(headers or {})
        if auth:
            sent.setdefault("Authorization", f"Bearer {server.token}")
        async with aiohttp.ClientSession() as session, session.request(
            method, server.url + path, headers=sent, ssl=context, skip_auto_headers=["Content-Type"],
            data=io.BytesIO(body) if body is not None and len(body) > 1 << 20 else body,
        ) as response:
            return response.status, dict(response.headers), await response.read()

    # On the server's loop, which outlives the request: TLS transports get to close cleanly.
    result: tuple[int, dict[str, str], bytes] = server.call(go())
    return result


def make_api_client(kubeconfig: Path) -> client.ApiClient:
    api: client.ApiClient = config.new_client_from_config(config_file=str(kubeconfig))
    return api
