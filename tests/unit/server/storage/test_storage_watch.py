"""Watches: replay from a revision, live events, namespaces, deletions, the window's edge."""

from __future__ import annotations

import asyncio

import pytest
from storage_testkit import DEPLOYMENTS, PODS, OpenStore, make_object, revision_of

from kubeloop.server.storage import (
    ADDED,
    DELETED,
    MODIFIED,
    Storage,
    TooOldResourceVersion,
    Watcher,
    WatchEvent,
)


def drain(watcher: Watcher) -> list[WatchEvent]:
    """Every event queued right now (next() with a zero timeout never waits)."""

    async def collect() -> list[WatchEvent]:
        events = []
        while (event := await watcher.next(timeout=0)) is not None:
            events.append(event)
        return events

    return asyncio.run(collect())


def summary(events: list[WatchEvent]) -> list[tuple[str, int, str]]:
    return [(event.type, event.rv, event.object["metadata"]["name"]) for event in events]


def test_replay_from_a_revision_then_live(store: Storage) -> None:
    store.create(PODS, make_object("a"))  # 1
    store.create(DEPLOYMENTS, make_object("d"))  # 2: another type, not seen by pod watchers
    store.update(PODS, make_object("a", spec={"v": 2}))  # 3
    store.create(PODS, make_object("b"))  # 4
    watcher = store.watch(PODS, None, 1)
    assert summary(drain(watcher)) == [(MODIFIED, 3, "a"), (ADDED, 4, "b")]
    store.delete(PODS, "default", "b")  # 5
    store.update(DEPLOYMENTS, make_object("d"))  # 6
    store.create(PODS, make_object("c"))  # 7
    assert summary(drain(watcher)) == [(DELETED, 5, "b"), (ADDED, 7, "c")]
    watcher.close()


def test_events_carry_the_stored_state_and_the_previous_one(store: Storage) -> None:
    watcher = store.watch(PODS, None, 0)
    created = store.create(PODS, make_object("a", spec={"v": 1}))
    updated = store.update(PODS, make_object("a", spec={"v": 2}))
    last = store.delete(PODS, "default", "a")
    added, modified, deleted = drain(watcher)
    assert (added.object, added.prev) == (created, None)
    assert (modified.object, modified.prev) == (updated, created)
    assert (deleted.object, deleted.prev) == (last, updated)
    assert revision_of(deleted.object) == deleted.rv == 3
    assert deleted.object["spec"] == {"v": 2}
    assert [event.cache for event in (added, modified, deleted)] == [{}, {}, {}]


def test_events_are_shared_between_watchers(store: Storage) -> None:
    first, second = store.watch(PODS, None, 0), store.watch(PODS, "default", 0)
    store.create(PODS, make_object("a"))
    (one,), (other,) = drain(first), drain(second)
    assert one is other


def test_namespace_filter(store: Storage) -> None:
    store.create(PODS, make_object("a", "one"))
    store.create(PODS, make_object("a", "two"))
    one = store.watch(PODS, "one", 0)
    every = store.watch(PODS, None, 0)
    store.update(PODS, make_object("a", "two"))
    store.update(PODS, make_object("a", "one"))
    assert [(e.rv, e.object["metadata"]["namespace"]) for e in drain(one)] == [(1, "one"), (4, "one")]
    assert [e.rv for e in drain(every)] == [1, 2, 3, 4]


def test_watch_from_the_current_revision_sees_only_new_changes(store: Storage) -> None:
    store.create(PODS, make_object("a"))
    watcher = store.watch(PODS, None, store.revision)
    assert drain(watcher) == []
    store.create(PODS, make_object("b"))
    assert summary(drain(watcher)) == [(ADDED, 2, "b")]


def test_watch_from_a_future_revision_waits_for_it(store: Storage) -> None:
    watcher = store.watch(PODS, None, 2)
    for name in "abc":
        store.create(PODS, make_object(name))
    assert summary(drain(watcher)) == [(ADDED, 3, "c")]


def test_window_eviction_makes_old_revisions_too_old(open_store: OpenStore) -> None:
    store = open_store(watch_cache_size=3)
    for index in range(5):
        store.create(PODS, make_object(f"p{index}"))  # revisions 1..5; the window keeps 3..5
    store.create(DEPLOYMENTS, make_object("d"))  # 6, in another type's window
    with pytest.raises(TooOldResourceVersion) as raised:
        store.watch(PODS, None, 1)
    assert (raised.value.oldest, raised.value.requested) == (2, 1)
    assert "too old resource version: 1 (2)" in str(raised.value)
    assert store.oldest_watchable(PODS) == 2
    assert [e.rv for e in drain(store.watch(PODS, None, 2))] == [3, 4, 5]
    assert [e.rv for e in drain(store.watch(PODS, None, 6))] == []
    assert [e.rv for e in drain(store.watch(DEPLOYMENTS, None, 0))] == [6]


def test_window_is_per_resource_type(open_store: OpenStore) -> None:
    store = open_store(watch_cache_size=2)
    store.create(DEPLOYMENTS, make_object("d"))
    for index in range(10):
        store.create(PODS, make_object(f"p{index}"))
    assert [e.rv for e in drain(store.watch(DEPLOYMENTS, None, 0))] == [1]
    assert store.oldest_watchable(PODS) == 9


async def test_live_events_wake_a_waiting_reader(store: Storage) -> None:
    watcher = store.watch(PODS, None, 0)

    async def write_later() -> None:
        await asyncio.sleep(0)
        store.create(PODS, make_object("a"))

    writer = asyncio.create_task(write_later())
    event = await watcher.next(timeout=60)
    await writer
    assert event is not None
    assert event.object["metadata"]["name"] == "a"


async def test_next_times_out_with_none(store: Storage) -> None:
    watcher = store.watch(PODS, None, 0)
    assert await watcher.next(timeout=0) is None
    assert await watcher.next(timeout=0.001) is None
    assert not watcher.closed


async def test_async_iteration_ends_when_closed(store: Storage) -> None:
    watcher = store.watch(PODS, None, 0)
    store.create(PODS, make_object("a"))
    seen = []
    async for event in watcher:
        seen.append(event.rv)
        if event.rv < 3:
            store.create(PODS, make_object(f"after-{event.rv}"))
        else:
            watcher.close()
    assert seen == [1, 2, 3]
    assert watcher.closed
    assert await watcher.next() is None


async def test_close_wakes_a_waiting_reader_and_unregisters(store: Storage) -> None:
    watcher = store.watch(PODS, None, 0)
    reader = asyncio.create_task(watcher.next())
    await asyncio.sleep(0)
    watcher.close()
    assert await reader is None
    store.create(PODS, make_object("a"))
    assert watcher.backlog == 0


async def test_only_one_reader_at_a_time(store: Storage) -> None:
    watcher = store.watch(PODS, None, 0)
    reader = asyncio.create_task(watcher.next())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError):
        await watcher.next()
    watcher.close()
    await reader


async def test_a_cancelled_reader_leaves_the_watcher_usable(store: Storage) -> None:
    watcher = store.watch(PODS, None, 0)
    reader = asyncio.create_task(watcher.next())
    await asyncio.sleep(0)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    store.create(PODS, make_object("a"))
    event = await watcher.next(timeout=0)
    assert event is not None
    assert event.rv == 1


def test_closing_the_store_closes_its_watchers(store: Storage) -> None:
    watchers = [store.watch(PODS, None, 0), store.watch(PODS, "default", 0), store.watch(DEPLOYMENTS, None, 0)]
    store.close()
    assert all(watcher.closed for watcher in watchers)


def test_closed_watchers_stop_receiving(store: Storage) -> None:
    kept, closed = store.watch(PODS, "default", 0), store.watch(PODS, "default", 0)
    closed.close()
    closed.close()
    store.create(PODS, make_object("a"))
    assert len(drain(kept)) == 1
    assert drain(closed) == []


def test_take_queued_hands_over_what_is_queued_in_order_up_to_a_limit(store: Storage) -> None:
    watcher = store.watch(PODS, None, 0)
    assert watcher.take_queued(10) == []
    for name in "abcde":
        store.create(PODS, make_object(name))
    assert [e.object["metadata"]["name"] for e in watcher.take_queued(3)] == ["a", "b", "c"]
    assert watcher.backlog == 2
    assert [e.object["metadata"]["name"] for e in watcher.take_queued(10)] == ["d", "e"]
    assert watcher.take_queued(10) == []
    watcher.close()
