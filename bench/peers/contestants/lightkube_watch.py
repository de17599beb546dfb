"""Contestant: lightkube 1.0 (httpx2 + msgspec typed models), a client without an informer.

- ``informer`` (B4, B6): what a lightkube user writes for a cache: ``AsyncClient.list`` into a
  dict keyed ``namespace/name``, then ``AsyncClient.watch`` from the list's resourceVersion
  with ``on_error_retry`` (lightkube's own recovery: on a 410 it restarts the watch without a
  resourceVersion, i.e. replays current objects as ADDED, but never learns about deletions
  that happened meanwhile). A dropped connection is not covered by ``on_error``, so an outer
  loop reconnects after a second (the same loop the kr8s contestant has).
- ``watch`` (B5): ``AsyncClient.watch`` from a resourceVersion.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Contestant, rss_mib
from lightkube import AsyncClient, KubeConfig
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap, Pod
from lightkube.types import on_error_retry

c = Contestant.from_argv()
KIND = {"configmaps": ConfigMap, "pods": Pod, "deployments": Deployment}[c.args.resource]


def key_of(obj: Any) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


async def run_informer(client: AsyncClient) -> None:
    cache: dict[str, Any] = {}
    duplicates = 0
    sentinel_seen = False
    stopping = asyncio.Event()
    c.install_async_sigterm(stopping)
    before = rss_mib()
    listing = client.list(KIND, namespace="*")
    async for obj in listing:
        cache[key_of(obj)] = obj
    rv = getattr(listing, "resourceVersion", None)
    c.event("synced", objects=len(cache), rss_mib=rss_mib(), rss_before_mib=before)

    async def follow() -> None:
        nonlocal duplicates, sentinel_seen, rv
        while True:
            try:
                async for kind, obj in client.watch(KIND, namespace="*", resource_version=rv,
                                                    on_error=on_error_retry):
                    key = key_of(obj)
                    rv = obj.metadata.resourceVersion
                    if kind == "DELETED":
                        cache.pop(key, None)
                        continue
                    if kind == "ADDED" and key in cache:
                        duplicates += 1
                    cache[key] = obj
                    if c.args.sentinel and not sentinel_seen and key == c.args.sentinel:
                        sentinel_seen = True
                        c.event("sentinel")
            except Exception as error:
                # on_error_retry covers API errors, not a dropped connection: the user's loop
                # reconnects a second later from the last resourceVersion seen.
                c.extra["watch_errors"] = c.extra.get("watch_errors", 0) + 1
                c.extra["last_watch_error"] = repr(error)
                await asyncio.sleep(1.0)

    watching = asyncio.ensure_future(follow())
    await stopping.wait()
    watching.cancel()
    await asyncio.gather(watching, return_exceptions=True)
    c.extra.update(cache={k: o.metadata.resourceVersion for k, o in cache.items()}, duplicate_adds=duplicates)


async def run_watch(client: AsyncClient) -> None:
    events = 0
    start = time.monotonic()
    for _ in range(c.args.repeat):
        async for _, obj in client.watch(KIND, namespace="*", resource_version=c.args.from_rv):
            events += 1
            if int(obj.metadata.resourceVersion or 0) >= c.args.until_rv:
                break
    c.extra.update(events=events, watch_seconds=time.monotonic() - start)
    c.event("done", events=events)


async def main() -> None:
    client = AsyncClient(KubeConfig.from_file(c.args.kubeconfig))
    try:
        await (run_informer(client) if c.args.mode == "informer" else run_watch(client))
    finally:
        await client.close()
    c.finish()


if __name__ == "__main__":
    asyncio.run(main())
