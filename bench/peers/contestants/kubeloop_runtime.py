"""Contestant: kubeloop's own runtime (manager + workqueue controller, informer, watch).

Modes:

- ``annotate``: a controller over the resource; the reconcile reads the object from the
  shared informer's cache and PATCHes ``bench/seen`` when it differs from ``data.v``
  (optionally after ``--sleep`` seconds). ``--workers`` sets ``max_concurrent_reconciles``.
- ``finalize``: the same, plus our finalizer on every live object and its removal once the
  object is being deleted.
- ``informer``: sync an informer over the collection, report ``synced``; stay up (B6:
  recovers from restarts and 410s by itself) until SIGTERM, then dump the cache.
- ``watch``: a raw watch from ``--from-rv`` until ``--until-rv`` was seen, ``--repeat`` times.

``--loop uvloop`` runs it all on uvloop's event loop (asyncio's otherwise).

Client-side throttling is off (``qps=0``): the peers have none, and the benchmark compares
runtimes, not request budgets.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import ANNOTATION, FINALIZER, Contestant, desired_value, event_loop, object_key, rss_mib, seen_value

from kubeloop.client import ApiClient, load_kubeconfig
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers.factory import SharedInformerFactory
from kubeloop.runtime.informers.informer import EventHandlerFuncs
from kubeloop.runtime.manager import Manager, ManagerOptions


async def run_controller(c: Contestant, client: ApiClient) -> None:
    args = c.args
    mgr = Manager(client, ManagerOptions(name="bench"))
    informer = await mgr.factory.informer_for(args.resource)
    finalizing = args.mode == "finalize"

    async def reconcile(request: Request) -> None:
        obj = informer.indexer.get(request.key)
        value = desired_value(obj) if obj is not None else "gone"
        c.reconciled(value)
        if obj is None:
            return
        if args.sleep:
            await asyncio.sleep(args.sleep)
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if finalizing and meta.get("deletionTimestamp"):
            if FINALIZER in finalizers:
                finalizers.remove(FINALIZER)
                patch: dict[str, Any] = {"metadata": {"finalizers": finalizers,
                                                      "resourceVersion": meta["resourceVersion"]}}
                await client.patch(args.resource, request.name, patch, namespace=request.namespace)
                c.patched()
            return
        body: dict[str, Any] = {}
        if seen_value(obj) != value:
            body["annotations"] = {ANNOTATION: value}
        if finalizing and FINALIZER not in finalizers:
            body["finalizers"] = [*finalizers, FINALIZER]
            body["resourceVersion"] = meta["resourceVersion"]
        if body:
            await client.patch(args.resource, request.name, {"metadata": body}, namespace=request.namespace)
            c.patched()

    builder = mgr.controller("bench").for_(args.resource)
    if args.workers:
        builder = builder.with_options(max_concurrent_reconciles=args.workers)
    await builder.complete(reconcile)
    stopping = asyncio.Event()
    c.install_async_sigterm(stopping)
    sampler = asyncio.create_task(c.sample_tasks())
    await mgr.start()
    c.event("started")
    await stopping.wait()
    sampler.cancel()
    await mgr.stop()


async def run_informer(c: Contestant, client: ApiClient) -> None:
    args = c.args
    factory = SharedInformerFactory(client)
    informer = await factory.informer_for(args.resource)
    alive: set[str] = set()
    duplicates = 0
    sentinel_seen = False

    def note(key: str) -> None:
        nonlocal sentinel_seen
        if args.sentinel and not sentinel_seen and key == args.sentinel:
            sentinel_seen = True
            c.event("sentinel")

    def on_add(obj: dict[str, Any], is_in_initial_list: bool) -> None:
        # An ADD for an object the cache already holds is a duplicate delivery.
        nonlocal duplicates
        key = object_key(obj)
        duplicates += key in alive
        alive.add(key)
        note(key)

    def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
        note(object_key(new))

    def on_delete(obj: Any) -> None:
        alive.discard(object_key(obj) if isinstance(obj, dict) else str(getattr(obj, "key", "")))

    informer.add_event_handler(EventHandlerFuncs(add=on_add, update=on_update, delete=on_delete))
    stopping = asyncio.Event()
    c.install_async_sigterm(stopping)
    rss_before = rss_mib()
    await factory.start()
    await factory.wait_for_cache_sync()
    c.event("synced", objects=len(informer.indexer), rss_mib=rss_mib(), rss_before_mib=rss_before)
    await stopping.wait()
    cache = {object_key(o): o["metadata"]["resourceVersion"] for o in informer.indexer.list()}
    await factory.shutdown()
    c.extra.update(cache=cache, duplicate_adds=duplicates)


async def run_watch(c: Contestant, client: ApiClient) -> None:
    args = c.args
    events = 0
    start = time.monotonic()
    for _ in range(args.repeat):
        async with client.watch(args.resource, resource_version=args.from_rv) as stream:
            async for event in stream:
                events += 1
                rv = int(event.object.get("metadata", {}).get("resourceVersion") or 0)
                if rv >= args.until_rv:
                    break
    c.extra.update(events=events, watch_seconds=time.monotonic() - start)
    c.event("done", events=events)


async def main(c: Contestant) -> None:
    config = dataclasses.replace(load_kubeconfig(c.args.kubeconfig), qps=0)
    async with ApiClient(config) as client:
        if c.args.mode in ("annotate", "finalize"):
            await run_controller(c, client)
        elif c.args.mode == "informer":
            await run_informer(c, client)
        else:
            await run_watch(c, client)
    c.finish()


if __name__ == "__main__":
    contestant = Contestant.from_argv()
    with asyncio.Runner(loop_factory=lambda: event_loop(contestant.args.loop)) as runner:
        runner.run(main(contestant))
