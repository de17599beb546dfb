"""Fixtures: an embedded API server on the test's loop, a client, the CloneSet controller in a
manager, and a stand-in kubelet driving pod status (see :mod:`cloneset_kit`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cloneset_kit import StartController, StatusDriver

from kubeloop.client import ApiClient, load_kubeconfig
from kubeloop.controllers.cloneset.controller import (
    CloneSetController,
    CloneSetControllerOptions,
    add_cloneset_controller,
)
from kubeloop.runtime.manager import Manager, ManagerOptions
from kubeloop.server.app import KubeServer, ServerConfig


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[KubeServer]:
    server = KubeServer(ServerConfig(data_dir=tmp_path / "data", port=0, memory=True))
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def client(server: KubeServer) -> AsyncIterator[ApiClient]:
    async with ApiClient(load_kubeconfig(str(server.kubeconfig_path))) as api:
        yield api


@pytest.fixture
async def start_controller(server: KubeServer, client: ApiClient) -> AsyncIterator[StartController]:
    """Start a manager running the CloneSet controller with the given options (own client)."""
    running: list[tuple[Manager, ApiClient]] = []

    async def start(options: CloneSetControllerOptions | None = None) -> CloneSetController:
        api = ApiClient(load_kubeconfig(str(server.kubeconfig_path)))
        manager = Manager(api, ManagerOptions(name="cloneset-test", detect_cache_mutations=True))
        built = await add_cloneset_controller(manager, options)
        await manager.start()
        running.append((manager, api))
        return built

    yield start
    for manager, api in running:
        await manager.stop()
        # Informers started by controllers are not the factory's to stop; stopping them runs
        # the cache-mutation detector, which fails the test if anything changed a cached object.
        for informer in manager.factory.informers():
            await informer.stop()
        await api.aclose()


@pytest.fixture
async def kubelet(client: ApiClient) -> AsyncIterator[StatusDriver]:
    driver = StatusDriver(client)
    driver.start()
    yield driver
    await driver.stop()
