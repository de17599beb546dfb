"""Fixtures: an in-process embedded API server and an official client configured for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from server_harness import Cluster, ServerThread, make_api_client

from kubeloop.server.app import ServerConfig


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., ServerThread]]:
    """Start servers on demand (same data dir unless told otherwise); all are stopped afterwards."""
    started: list[ServerThread] = []

    def start(data_dir: Path | None = None, memory: bool = True, watch_cache_size: int = 1000) -> ServerThread:
        server_config = ServerConfig(data_dir=data_dir or tmp_path / "data", port=0, memory=memory,
                                     watch_cache_size=watch_cache_size)
        thread = ServerThread(server_config)
        started.append(thread)
        return thread

    yield start
    for thread in started:
        thread.stop()


@pytest.fixture
def cluster(start_server: Callable[..., ServerThread]) -> Iterator[Cluster]:
    """A fresh in-memory server and an ApiClient built from its kubeconfig."""
    server = start_server()
    api = make_api_client(server.server.kubeconfig_path)
    try:
        yield Cluster(server, api, server.server.kubeconfig_path)
    finally:
        api.close()
