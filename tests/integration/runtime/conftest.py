"""Fixtures: an embedded API server on the test's own event loop, and a kubeloop client for it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from kubeloop.client import ApiClient, load_kubeconfig
from kubeloop.server.app import KubeServer, ServerConfig

StartServer = Callable[..., Awaitable[KubeServer]]


@pytest.fixture
async def start_server(tmp_path: Path) -> AsyncIterator[StartServer]:
    """Start (or restart on the same data dir and port) embedded servers; all stop at teardown."""
    servers: list[KubeServer] = []

    async def start(*, memory: bool = True, watch_cache_size: int = 1000, port: int = 0) -> KubeServer:
        server = KubeServer(
            ServerConfig(data_dir=tmp_path / "data", port=port, memory=memory, watch_cache_size=watch_cache_size)
        )
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture
async def server(start_server: StartServer) -> KubeServer:
    return await start_server()


@pytest.fixture
async def client(server: KubeServer) -> AsyncIterator[ApiClient]:
    async with ApiClient(load_kubeconfig(str(server.kubeconfig_path))) as api:
        yield api
