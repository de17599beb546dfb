import asyncio
from typing import Any

import pytest

from kubeloop.runtime.informers.informer import EventHandlerFuncs, SharedIndexInformer, wait_for_cache_sync
from kubeloop.runtime.informers.mutation import CacheMutationError
from kubeloop.runtime.informers.store import DeletedFinalStateUnknown

from .fakes import ApiFailure, FakeCollection, InstantClock

Obj = dict[str, Any]


def _rv(obj: Obj) -> str:
    return str(obj["metadata"]["resourceVersion"])


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any, Any]] = []

    def handler(self) -> EventHandlerFuncs:
        return EventHandlerFuncs(
            add=lambda obj, initial: self.events.append(("add", obj["metadata"]["name"], initial)),
            update=lambda old, new: self.events.append(("update", new["metadata"]["name"], (_rv(old), _rv(new)))),
            delete=lambda obj: self.events.append(
                ("delete", obj.key if isinstance(obj, DeletedFinalStateUnknown) else obj["metadata"]["name"],
                 isinstance(obj, DeletedFinalStateUnknown))
            ),
        )


async def settle(informer: SharedIndexInformer, condition: Any = None) -> None:
    async with asyncio.timeout(5):
        while condition is not None and not condition():
            await asyncio.sleep(0.001)
        for _ in range(20):
            await asyncio.sleep(0)


def make(api: FakeCollection, **kwargs: Any) -> SharedIndexInformer:
    informer = SharedIndexInformer(api, name="test", clock=InstantClock(), detect_mutations=True, **kwargs)
    informer.reflector._page_size = 2
    return informer


async def test_initial_list_then_watch_events() -> None:
    api = FakeCollection()
    for name in ("a", "b", "c"):
        api.put(name)
    informer = make(api)
    recorder = Recorder()
    registration = informer.add_event_handler(recorder.handler())
    await informer.start()
    async with asyncio.timeout(5):
        await wait_for_cache_sync(informer.has_synced, registration.has_synced)
    assert sorted(informer.indexer.keys()) == ["ns/a", "ns/b", "ns/c"]
    assert [e for e in recorder.events if e[0] == "add"] == [("add", n, True) for n in "abc"]
    # The first list is "any version" in pages; continuation pages carry no version.
    assert api.list_calls[0] == {"rv": "0", "limit": 2, "continue": None}
    assert api.list_calls[1] == {"rv": None, "limit": 2, "continue": "2"}

    api.put("d")
    api.put("a", spec={"x": 1})
    api.remove("b")
    await settle(informer, lambda: len(recorder.events) == 6)
    assert recorder.events[3:] == [("add", "d", False), ("update", "a", ("101", "105")), ("delete", "b", False)]
    assert informer.last_sync_resource_version == str(api.rv)
    assert api.watch_calls[0]["rv"] == "103" and api.watch_calls[0]["bookmarks"] is True
    assert 300 <= api.watch_calls[0]["timeout"] <= 600
    await informer.stop()


async def test_expired_watch_relists_and_reports_differences() -> None:
    api = FakeCollection()
    for name in ("a", "b", "c"):
        api.put(name)
    informer = make(api)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    await informer.start()
    await settle(informer, informer.has_synced)
    streams_before = len(api.watch_calls)
    # Changes happen while the watch is cut off, then history is compacted (410).
    api._streams_backup = list(api._streams)  # type: ignore[attr-defined]
    api._streams.clear()
    api.put("a", spec={"changed": True})
    api.remove("b")
    api.put("e")
    api._streams.extend(api._streams_backup)  # type: ignore[attr-defined]
    recorder.events.clear()
    api.expire_streams()
    await settle(informer, lambda: len(recorder.events) == 3)
    assert ("update", "a", ("101", "104")) in recorder.events
    assert ("delete", "ns/b", True) in recorder.events
    assert ("add", "e", False) in recorder.events
    # c did not change: no update for it. The relist asks "not older than" the last version.
    assert not any(e[1] == "c" for e in recorder.events)
    assert api.list_calls[-1]["rv"] == "103" and api.list_calls[-1]["limit"] is None
    assert len(api.watch_calls) > streams_before
    await informer.stop()


async def test_normal_close_rewatches_without_relist() -> None:
    api = FakeCollection()
    api.put("a")
    informer = make(api)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    await informer.start()
    await settle(informer, informer.has_synced)
    api.put("b")
    await settle(informer, lambda: len(recorder.events) == 2)
    lists = len(api.list_calls)
    informer.reflector._clock = InstantClock()
    api.close_streams()
    await settle(informer, lambda: len(api.watch_calls) >= 2)
    api.put("c")
    await settle(informer, lambda: len(recorder.events) == 3)
    assert len(api.list_calls) == lists
    assert api.watch_calls[1]["rv"] == "102"
    await informer.stop()


async def test_watch_connection_errors_retry_the_watch_only() -> None:
    api = FakeCollection()
    api.put("a")
    api.watch_failures = [ConnectionRefusedError("down"), ApiFailure(429, "TooManyRequests")]
    informer = make(api)
    informer.add_event_handler(Recorder().handler())
    await informer.start()
    await settle(informer, lambda: len(api.watch_calls) >= 3)
    assert len(api.list_calls) == 1
    assert [c["rv"] for c in api.watch_calls[:3]] == ["101", "101", "101"]
    await informer.stop()


async def test_expired_list_retries_at_latest() -> None:
    api = FakeCollection()
    api.put("a")
    informer = make(api)
    informer.add_event_handler(Recorder().handler())
    calls = 0
    original = api.list

    async def flaky_list(**kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ApiFailure(410, "Expired")
        return await original(**kwargs)

    api.list = flaky_list  # type: ignore[method-assign]
    await informer.start()
    await settle(informer, informer.has_synced)
    assert api.list_calls[0]["rv"] == ""
    await informer.stop()


async def test_late_handler_gets_cache_replayed_as_initial_adds() -> None:
    api = FakeCollection()
    api.put("a")
    api.put("b")
    informer = make(api)
    await informer.start()
    await settle(informer, informer.has_synced)
    recorder = Recorder()
    registration = informer.add_event_handler(recorder.handler())
    await settle(informer, registration.has_synced)
    assert recorder.events == [("add", "a", True), ("add", "b", True)]
    await informer.stop()


async def test_resync_redelivers_cached_objects_to_due_handlers() -> None:
    api = FakeCollection()
    api.put("a")
    informer = make(api, resync_period=30)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    quiet = Recorder()
    informer.add_event_handler(quiet.handler(), resync_period=0)
    await informer.start()
    await settle(informer, informer.has_synced)
    informer._registrations[0].next_resync = 0
    informer.resync_due()
    await settle(informer, lambda: len(recorder.events) == 2)
    assert recorder.events[1] == ("update", "a", ("101", "101"))
    assert len(quiet.events) == 1
    await informer.stop()


async def test_custom_indexers() -> None:
    api = FakeCollection()
    api.put("a", namespace="x", spec={"node": "n1"})
    api.put("b", namespace="y", spec={"node": "n1"})
    api.put("c", namespace="y", spec={"node": "n2"})
    informer = make(api, indexers={"node": lambda o: [o["spec"]["node"]]})
    await informer.start()
    await settle(informer, informer.has_synced)
    assert [o["metadata"]["name"] for o in informer.indexer.by_index("node", "n1")] == ["a", "b"]
    assert [o["metadata"]["name"] for o in informer.indexer.by_namespace("y")] == ["b", "c"]
    assert informer.indexer.list_index_values("node") == ["n1", "n2"]
    api.put("b", namespace="y", spec={"node": "n2"})
    await settle(informer, lambda: informer.indexer.index_keys("node", "n2") == ["y/b", "y/c"])
    assert informer.indexer.index_keys("node", "n1") == ["x/a"]
    await informer.stop()


async def test_mutation_detector_fails_loudly() -> None:
    api = FakeCollection()
    api.put("a", spec={"replicas": 1})
    informer = make(api)
    await informer.start()
    await settle(informer, informer.has_synced)
    cached = informer.indexer.get("ns/a")
    assert cached is not None
    cached["spec"]["replicas"] = 2
    with pytest.raises(CacheMutationError, match="ns/a"):
        await informer.stop()


async def test_handler_errors_do_not_stop_delivery() -> None:
    api = FakeCollection()
    api.put("a")
    api.put("b")
    informer = make(api)
    seen: list[str] = []

    def add(obj: Obj, initial: bool) -> None:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "a":
            raise RuntimeError("boom")

    registration = informer.add_event_handler(EventHandlerFuncs(add=add))
    await informer.start()
    await settle(informer, registration.has_synced)
    assert seen == ["a", "b"] and registration.errors == 1
    await informer.stop()


async def test_bookmarks_move_the_resource_version_only() -> None:
    api = FakeCollection()
    api.put("a")
    informer = make(api)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    await informer.start()
    await settle(informer, informer.has_synced)
    await settle(informer, lambda: len(api._streams) == 1)
    api.bookmark()
    await settle(informer, lambda: informer.last_sync_resource_version == "111")
    assert len(recorder.events) == 1 and len(informer.indexer) == 1
    api.close_streams()
    await settle(informer, lambda: len(api.watch_calls) == 2)
    assert api.watch_calls[1]["rv"] == "111"  # the next watch resumes from the bookmark
    await informer.stop()
