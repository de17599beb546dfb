"""Contestant: kr8s 0.20 (httpx, python-box objects), a client without an informer.

- ``informer`` (B4, B6): ``api.async_get(..., raw=True)`` (plain dicts, kr8s's fast path) into
  a dict keyed ``namespace/name``, then ``api.async_watch(since=<newest resourceVersion>)``
  (kr8s returns no list resourceVersion). kr8s's own recovery: on a 410 it restarts the watch
  with the same stale resourceVersion, and it returns when the server closes the stream, so
  the loop here re-watches from the last resourceVersion seen.
- ``watch`` (B5): ``api.async_watch(since=...)`` (Box-wrapped objects, the only way it yields).

A one-line shim drops the trailing slash kr8s puts on its start-up ``/version/`` request,
which kubeloop's server does not route yet (kube-apiserver does).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kr8s
import kr8s.asyncio
from common import Contestant, object_key, rss_mib
from kr8s._api import Api

c = Contestant.from_argv()

_construct_url = Api._construct_url


def _without_trailing_slash(self: Any, version: str = "v1", base: str = "", namespace: str | None = None,
                            url: str = "") -> str:
    # kr8s asks for "/version/" at start-up; kube-apiserver answers it, kubeloop's server
    # (for now) only "/version". Dropping the empty last segment changes no other request.
    built: str = _construct_url(self, version, base, namespace, url)
    return built.rstrip("/") if not url else built


Api._construct_url = _without_trailing_slash  # type: ignore[method-assign]


async def run_informer(api: Any) -> None:
    cache: dict[str, str] = {}
    duplicates = 0
    sentinel_seen = False
    stopping = asyncio.Event()
    c.install_async_sigterm(stopping)
    before = rss_mib()
    objects: dict[str, dict[str, Any]] = {}
    async for item in api.async_get(c.args.resource, namespace=kr8s.ALL, raw=True):
        objects[object_key(item)] = item
    cache = {k: o["metadata"]["resourceVersion"] for k, o in objects.items()}
    since = str(max((int(rv) for rv in cache.values()), default=0))
    c.event("synced", objects=len(objects), rss_mib=rss_mib(), rss_before_mib=before)

    async def follow() -> None:
        nonlocal duplicates, sentinel_seen, since
        while True:
            try:
                async for kind, obj in api.async_watch(c.args.resource, namespace=kr8s.ALL, since=since):
                    raw = obj.raw
                    key = object_key(raw)
                    since = raw["metadata"]["resourceVersion"]
                    if kind == "DELETED":
                        objects.pop(key, None)
                        continue
                    if kind == "ADDED" and key in objects:
                        duplicates += 1
                    objects[key] = raw
                    if c.args.sentinel and not sentinel_seen and key == c.args.sentinel:
                        sentinel_seen = True
                        c.event("sentinel")
            except Exception as error:
                # Connection lost (server restart): try again a second later, as users do.
                c.extra["watch_errors"] = c.extra.get("watch_errors", 0) + 1
                c.extra["last_watch_error"] = repr(error)
                await asyncio.sleep(1.0)

    watching = asyncio.ensure_future(follow())
    await stopping.wait()
    watching.cancel()
    await asyncio.gather(watching, return_exceptions=True)
    c.extra.update(cache={k: o["metadata"]["resourceVersion"] for k, o in objects.items()},
                   duplicate_adds=duplicates)


async def run_watch(api: Any) -> None:
    events = 0
    start = time.monotonic()
    for _ in range(c.args.repeat):
        async for _, obj in api.async_watch(c.args.resource, namespace=kr8s.ALL, since=c.args.from_rv):
            events += 1
            if int(obj.metadata.resourceVersion or 0) >= c.args.until_rv:
                break
    c.extra.update(events=events, watch_seconds=time.monotonic() - start)
    c.event("done", events=events)


async def main() -> None:
    api = await kr8s.asyncio.api(kubeconfig=c.args.kubeconfig)
    await (run_informer(api) if c.args.mode == "informer" else run_watch(api))
    c.finish()


if __name__ == "__main__":
    asyncio.run(main())
