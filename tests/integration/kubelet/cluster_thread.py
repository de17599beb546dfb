"""An :class:`EmbeddedCluster` on its own event loop in a thread, for the official (blocking) client.

Tests drive the cluster through the ``kubernetes`` package exactly as users do, while the
server, the kubelet and the controllers run on a private loop in a daemon thread.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from concurrent.futures import Future
from typing import Any

from kubernetes import client, config

from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port



class ClusterThread:
    """An embedded cluster on a background loop, plus official clients for it."""

    def __init__(self, cluster_config: ClusterConfig) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="kubeloop-cluster", daemon=True)
        self.thread.start()
        self.cluster = EmbeddedCluster(cluster_config)
        self.call(self.cluster.start())
        self.call(self.cluster.wait_ready())
        self.api: client.ApiClient = config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(self.cluster.kubeconfig_path))
        self.core = client.CoreV1Api(self.api)
        self.apps = client.AppsV1Api(self.api)
        self.coordination = client.CoordinationV1Api(self.api)

    def call(self, coroutine: Any, timeout: float = 60.0) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(timeout)

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        try:
            self.api.close()  # type: ignore[no-untyped-call]
            self.call(self.cluster.stop())
            self.call(asyncio.sleep(0.1))  # let closed TLS transports finish
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()
