"""Fixtures: an embedded API server on the test's event loop and a manager running controllers.

There is no kubelet here: tests mark pods Running and Ready themselves through ``/status``
(:func:`controller_kit.mark_pods_ready`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from controller_kit import ControllerRunner

from kubeloop.client import ApiClient, load_kubeconfig
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
async def runner(server: KubeServer) -> AsyncIterator[ControllerRunner]:
    """Starts managers running named controllers (each with its own client); stops them all."""
    kit = ControllerRunner(server.kubeconfig_path)
    yield kit
    await kit.stop_all()
