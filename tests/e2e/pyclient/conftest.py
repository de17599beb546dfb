"""Fixtures for the restated Python-client e2e cases: one embedded cluster per module, run on
an event loop in a thread of its own.

The official client's synchronous API blocks the calling thread; with the cluster on a separate
loop the test bodies can call it directly (as upstream's unittest cases do), and the asyncio
client (``kubernetes.aio``) can run on pytest's loop. Nodes, controllers and the kubelet are
those of ``kubeloop up`` (a quick kubelet so pods leave Pending at once).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from kubernetes import client, config

from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config

STARTUP_SECONDS = 60


class ClusterThread:
    """An :class:`EmbeddedCluster` serving from a background thread until :meth:`stop`."""

    def __init__(self, data_dir: Path) -> None:
        self._config = ClusterConfig(data_dir=data_dir, kubelet=quick_kubelet_config(nodes=2))
        self._loop = asyncio.new_event_loop()
        self._started: Future[EmbeddedCluster] = Future()
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self._run, name="kubeloop-cluster", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        try:
            cluster = EmbeddedCluster(self._config)
            await cluster.start()
        except BaseException as error:
            self._started.set_exception(error)
            return
        try:
            await cluster.wait_ready()
            self._started.set_result(cluster)
            await self._stop.wait()
        except BaseException as error:
            if not self._started.done():
                self._started.set_exception(error)
        finally:
            await cluster.stop()

    def start(self) -> EmbeddedCluster:
        self._thread.start()
        return self._started.result(timeout=STARTUP_SECONDS)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=STARTUP_SECONDS)


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The kubeconfig of a running embedded cluster, shared by a module's tests."""
    running = ClusterThread(tmp_path_factory.mktemp("pyclient-cluster"))
    cluster = running.start()
    try:
        yield cluster.kubeconfig_path
    finally:
        running.stop()


@pytest.fixture
def configuration(kubeconfig: Path) -> client.Configuration:
    """A client configuration loaded from the cluster's kubeconfig, as upstream's e2e base does."""
    loaded = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=loaded)
    return loaded


@pytest.fixture
def api_client(configuration: client.Configuration) -> Iterator[client.ApiClient]:
    with client.ApiClient(configuration=configuration) as opened:
        yield opened
