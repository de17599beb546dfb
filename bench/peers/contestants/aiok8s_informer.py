"""Contestant: aiok8s 0.0.2 (client-go port over kubernetes_asyncio, typed objects).

Modes:

- ``annotate`` (B1 on Pods): aiok8s's controller builder only knows Pods; the reconciler
  reads the Pod from the manager's informer and PATCHes the annotation with
  kubernetes_asyncio. Concurrency stays at aiok8s's fixed ``max_concurrent_reconciles = 1``.
- ``informer`` (B4, B6): ``new_shared_index_informer`` over ``ListWatch`` built on
  kubernetes_asyncio list/watch functions (aiok8s's own pattern for B4); synced-ness is polled
  every 5 ms (the library itself polls every 100 ms).
- ``watch`` (B5): ``kubernetes_asyncio.watch.Watch().stream`` (typed objects, the default).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aiok8s.cache import index, list_watch, shared_informer
from aiok8s.cache.controller import ResourceEventHandlerFuncs
from aiok8s.controller import builder, manager, reconcile
from common import ANNOTATION, Contestant, rss_mib
from kubernetes_asyncio import client, config, watch

c = Contestant.from_argv()


def key_of(obj: Any) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


def lister(api: Any, apps: Any) -> tuple[Any, Any]:
    return {"configmaps": (api.list_config_map_for_all_namespaces, client.V1ConfigMap),
            "pods": (api.list_pod_for_all_namespaces, client.V1Pod),
            "deployments": (apps.list_deployment_for_all_namespaces, client.V1Deployment)}[c.args.resource]


async def run_controller(api: Any) -> None:
    mgr = manager.new()

    class Reconciler:
        async def reconcile(self, request: Any) -> Any:
            key = f"{request.namespaced_name.namespace}/{request.namespaced_name.name}"
            pod = informer.get_indexer().get_by_key(key)
            c.reconciled("0")
            if pod is None:
                return reconcile.Result()
            if c.args.sleep:
                await asyncio.sleep(c.args.sleep)
            if (pod.metadata.annotations or {}).get(ANNOTATION) != "0":
                await api.patch_namespaced_pod(pod.metadata.name, pod.metadata.namespace,
                                               {"metadata": {"annotations": {ANNOTATION: "0"}}})
                c.patched()
            return reconcile.Result()

    await builder.build_controller(mgr, Reconciler(), api_type=client.V1Pod)
    informer = await mgr.get_cache().get_informer(client.V1Pod)
    stopping = asyncio.Event()
    c.install_async_sigterm(stopping)
    running = asyncio.ensure_future(mgr.start())
    c.event("started")
    await stopping.wait()
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)


async def poll_until(condition: Any, period: float) -> None:
    """aiok8s has no synced event to wait on; polling it is how its own code waits too."""
    for _ in itertools.count():
        if condition():
            return
        await asyncio.sleep(period)


async def run_informer(api: Any, apps: Any) -> None:
    list_all, kind = lister(api, apps)

    async def list_fn(options: dict[str, Any]) -> Any:
        return await list_all(**options)

    async def watch_fn(options: dict[str, Any]) -> Any:
        return watch.Watch().stream(list_all, **options)

    informer = shared_informer.new_shared_index_informer(
        list_watch.ListWatch(list_fn, watch_fn), kind, 0,
        index.Indexers({index.NAMESPACE_INDEX: index.meta_namespace_index_func}))
    alive: set[str] = set()
    duplicates = 0
    sentinel_seen = False

    def note(obj: Any) -> None:
        nonlocal sentinel_seen
        if c.args.sentinel and not sentinel_seen and key_of(obj) == c.args.sentinel:
            sentinel_seen = True
            c.event("sentinel")

    async def on_add(obj: Any) -> None:
        # An ADD for an object the cache already holds is a duplicate delivery.
        nonlocal duplicates
        key = key_of(obj)
        duplicates += key in alive
        alive.add(key)
        note(obj)

    async def on_update(old: Any, new: Any) -> None:
        note(new)

    async def on_delete(obj: Any) -> None:
        alive.discard(key_of(obj) if hasattr(obj, "metadata") else str(getattr(obj, "key", "")))

    await informer.add_event_handler(ResourceEventHandlerFuncs(on_add, on_update, on_delete))
    stopping = asyncio.Event()
    c.install_async_sigterm(stopping)
    before = rss_mib()
    running = asyncio.ensure_future(informer.run())
    await poll_until(informer.has_synced, 0.005)
    c.event("synced", objects=len(informer.get_indexer().list()), rss_mib=rss_mib(), rss_before_mib=before)
    await stopping.wait()
    cache = {key_of(o): o.metadata.resource_version for o in informer.get_indexer().list()}
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    c.extra.update(cache=cache, duplicate_adds=duplicates)


async def run_watch(api: Any, apps: Any) -> None:
    list_all, _ = lister(api, apps)
    events = 0
    start = time.monotonic()
    for _ in range(c.args.repeat):
        async with watch.Watch().stream(list_all, resource_version=c.args.from_rv) as stream:
            async for event in stream:
                events += 1
                if int(event["object"].metadata.resource_version or 0) >= c.args.until_rv:
                    break
    c.extra.update(events=events, watch_seconds=time.monotonic() - start)
    c.event("done", events=events)


async def main() -> None:
    await config.load_kube_config(config_file=c.args.kubeconfig)
    async with client.ApiClient() as api_client:
        api, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
        if c.args.mode == "annotate":
            await run_controller(api)
        elif c.args.mode == "informer":
            await run_informer(api, apps)
        else:
            await run_watch(api, apps)
    c.finish()


if __name__ == "__main__":
    asyncio.run(main())
