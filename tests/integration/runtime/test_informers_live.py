"""Informers against the embedded API server over HTTPS."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from kubeloop.client import CONFIG_MAPS, ApiClient
from kubeloop.runtime.informers import EventHandlerFuncs, SharedIndexInformer, wait_for_cache_sync
from kubeloop.runtime.informers.factory import ClientListerWatcher, SharedInformerFactory
from kubeloop.server.app import KubeServer
from kubeloop.testing.polling import eventually

StartServer = Callable[..., Awaitable[KubeServer]]



def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": data}



async def test_informer_syncs_and_follows_changes(client: ApiClient) -> None:
    for i in range(7):
        await client.create(CONFIG_MAPS, cm(f"c{i}", v="1"), namespace="default")
    factory = SharedInformerFactory(client, detect_mutations=True)
    informer = await factory.informer_for(CONFIG_MAPS, namespace="default")
    assert await factory.informer_for("configmaps", namespace="default") is informer  # shared
    informer.reflector._page_size = 3
    events: list[tuple[str, str]] = []
    informer.add_event_handler(EventHandlerFuncs(
        add=lambda o, initial: events.append(("add", o["metadata"]["name"])),
        update=lambda old, new: events.append(("update", new["metadata"]["name"])),
        delete=lambda o: events.append(("delete", o["metadata"]["name"])),
    ))
    await factory.start()
    assert await factory.wait_for_cache_sync(10)
    assert len(informer.indexer) == 8  # and the namespace's kube-root-ca.crt
    await client.patch(CONFIG_MAPS, "c1", {"data": {"v": "2"}}, namespace="default")
    await client.delete(CONFIG_MAPS, "c2", namespace="default")
    await eventually(lambda: ("delete", "c2") in events, timeout=10, interval=0.01)
    assert ("update", "c1") in events
    cached = informer.indexer.get("default/c1")
    assert cached is not None and cached["data"] == {"v": "2"}
    await factory.shutdown()


async def test_relist_after_410_with_a_small_watch_window(start_server: StartServer) -> None:
    server = await start_server(watch_cache_size=5)
    from kubeloop.client import load_kubeconfig

    async with ApiClient(load_kubeconfig(str(server.kubeconfig_path))) as api:
        await api.create(CONFIG_MAPS, cm("keep"), namespace="default")
        paused = _Paused(ClientListerWatcher(api, CONFIG_MAPS, namespace="default"))
        informer = SharedIndexInformer(paused, name="cms")
        deleted: list[Any] = []
        informer.add_event_handler(EventHandlerFuncs(delete=deleted.append))
        await informer.start()
        async with asyncio.timeout(10):
            await wait_for_cache_sync(informer.has_synced)
        # The watch waits while more changes happen than the server's window holds; when it
        # opens from the list's version the server answers 410 and the informer relists.
        lists_before = informer.reflector.lists
        for i in range(12):
            await api.create(CONFIG_MAPS, cm(f"n{i}"), namespace="default")
        await api.delete(CONFIG_MAPS, "keep", namespace="default")
        paused._resume()
        # The 12 new ones and the namespace's kube-root-ca.crt.
        await eventually(lambda: len(informer.indexer) == 13 and informer.indexer.get("default/keep") is None,
                         timeout=10, interval=0.01)
        assert informer.reflector.lists > lists_before
        # Handlers run from their own queue, after the cache changed: wait for the delivery.
        await eventually(lambda: len(deleted) >= 1, timeout=10, interval=0.01)
        assert len(deleted) == 1
        await informer.stop()


class _Paused:
    """Wraps a lister-watcher: watches wait until resumed."""

    def __init__(self, inner: ClientListerWatcher) -> None:
        self._inner = inner
        self._resumed = asyncio.Event()

    def _resume(self) -> None:
        self._resumed.set()

    async def list(self, **kwargs: Any) -> Any:
        return await self._inner.list(**kwargs)

    async def watch(self, **kwargs: Any) -> Any:
        if not self._resumed.is_set():
            await self._resumed.wait()
        async for event in self._inner.watch(**kwargs):
            yield event


async def test_watch_resumes_after_server_restart(start_server: StartServer) -> None:
    from kubeloop.client import load_kubeconfig

    first = await start_server(memory=False)
    port = int(first.url.rsplit(":", 1)[1])
    async with ApiClient(load_kubeconfig(str(first.kubeconfig_path))) as api:
        await api.create(CONFIG_MAPS, cm("before"), namespace="default")
        informer = SharedIndexInformer(ClientListerWatcher(api, CONFIG_MAPS, namespace="default"), name="cms")
        await informer.start()
        async with asyncio.timeout(10):
            await wait_for_cache_sync(informer.has_synced)
        await first.stop()
        second: KubeServer = await start_server(memory=False, port=port)
        async with ApiClient(load_kubeconfig(str(second.kubeconfig_path))) as api2:
            await api2.create(CONFIG_MAPS, cm("after"), namespace="default")
        await eventually(lambda: informer.indexer.get("default/after") is not None, timeout=30, interval=0.01)
        await informer.stop()


async def test_lists_from_the_server_are_decoded_item_by_item(client: ApiClient, monkeypatch: Any) -> None:
    """The server's list bodies take the item-by-item path (no whole-body fallback), and the
    informer caches exactly what a plain list returns."""
    from kubeloop.runtime.informers import listdecode

    for i in range(5):
        await client.create(CONFIG_MAPS, cm(f"split{i}", v=str(i), tricky='},{"apiVersion":'), namespace="default")

    def no_fallback(body: bytes) -> Any:
        raise AssertionError("the list body fell back to whole decoding")

    monkeypatch.setattr(listdecode, "_whole", no_fallback)
    lister = ClientListerWatcher(client, CONFIG_MAPS, namespace="default")
    for rv, limit in (("0", None), ("", 2)):
        page = await lister.list(resource_version=rv, limit=limit, continue_token=None)
        assert page.resource_version
        assert not isinstance(page.items, list)  # lazy
    factory = SharedInformerFactory(client, detect_mutations=True)
    informer = await factory.informer_for(CONFIG_MAPS, namespace="default")
    await factory.start()
    assert await factory.wait_for_cache_sync(10)
    plain = await client.request_json("GET", "/api/v1/namespaces/default/configmaps")
    assert {f"default/{o['metadata']['name']}": o for o in plain["items"]} == dict(informer.indexer.items())
    await factory.shutdown()
