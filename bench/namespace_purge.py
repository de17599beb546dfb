"""Namespace purge: time until an 8,000-ConfigMap namespace is gone, and the longest event-loop block meanwhile.

Run: PYTHONPATH=$PWD .venv/bin/python bench/namespace_purge.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.server.objects import create_object, delete_object
from kubeloop.server.requests import DeleteOptions

COUNT = 8000


async def main() -> None:
    server = KubeServer(ServerConfig(data_dir=Path(tempfile.mkdtemp()), port=0))
    await server.start()
    state = server.state
    assert state is not None
    namespaces = state.namespace_info()
    create_object(state, namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "big"}},
                  dry_run=False)
    info = state.registry.lookup("", "v1", "configmaps")
    assert info is not None
    for i in range(COUNT):
        create_object(state, info, {"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": f"c{i:05}", "namespace": "big"}}, dry_run=False)
    worst = 0.0
    gone = asyncio.Event()

    async def ticker() -> None:
        nonlocal worst
        last = time.perf_counter()
        while state.storage.get(namespaces.resource_type, "", "big") is not None:
            await asyncio.sleep(0)
            now = time.perf_counter()
            worst = max(worst, now - last)
            last = now
        gone.set()

    start = time.perf_counter()
    namespace = state.storage.get(namespaces.resource_type, "", "big")
    assert namespace is not None
    delete_object(state, namespaces, namespace, DeleteOptions())
    task = asyncio.create_task(ticker())
    await gone.wait()
    await task
    total = time.perf_counter() - start
    print(f"{COUNT} configmaps: namespace gone after {total:.2f} s; longest event-loop block {worst * 1000:.1f} ms")
    await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
