"""The SQLite store across restarts: objects, revisions, watch windows, pruning, exclusivity."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from storage_testkit import DEPLOYMENTS, NAMESPACES, PODS, make_object, names, revision_of

from kubeloop.server.storage import (
    ADDED,
    DELETED,
    MODIFIED,
    ResourceType,
    Storage,
    StorageError,
    TooOldResourceVersion,
    Watcher,
    WatchEvent,
)
from kubeloop.server.storage._sqlite import DATABASE_FILE, PRUNE_BATCH


def drain(watcher: Watcher) -> list[WatchEvent]:
    async def collect() -> list[WatchEvent]:
        events = []
        while (event := await watcher.next(timeout=0)) is not None:
            events.append(event)
        return events

    return asyncio.run(collect())


def change_rows(data_dir: Path) -> list[int]:
    """Revisions of the rows left in the change log (read with a separate connection)."""
    with closing(sqlite3.connect(data_dir / DATABASE_FILE, isolation_level=None)) as connection:
        return [rv for (rv,) in connection.execute("SELECT rv FROM changes ORDER BY rv")]


def test_objects_and_revision_survive_a_reopen(tmp_path: Path) -> None:
    store = Storage.open(tmp_path)
    store.create(NAMESPACES, make_object("default", ""))
    for name in ("b", "a", "c"):
        store.create(PODS, make_object(name, spec={"name": name}))
    store.update(PODS, make_object("a", spec={"v": 2}))
    store.delete(PODS, "default", "c")
    custom = ResourceType("apps.kruise.io", "clonesets")
    store.create(custom, make_object("set"))
    before = {rt: store.list(rt)[0] for rt in store.resource_types()}
    store.close()

    reopened = Storage.open(tmp_path)
    assert reopened.revision == 7
    assert set(reopened.resource_types()) == {NAMESPACES, PODS, custom}
    assert {rt: reopened.list(rt)[0] for rt in reopened.resource_types()} == before
    assert names(reopened.list(PODS)[0]) == [("default", "a"), ("default", "b")]
    assert revision_of(reopened.create(DEPLOYMENTS, make_object("d"))) == 8
    reopened.close()
    again = Storage.open(tmp_path)
    assert again.revision == 8
    again.close()


def test_revision_never_goes_back_even_when_the_newest_objects_are_deleted(tmp_path: Path) -> None:
    store = Storage.open(tmp_path, watch_cache_size=1)
    for index in range(5):
        store.create(PODS, make_object(f"p{index}"))
    for index in range(5):
        store.delete(PODS, "default", f"p{index}")
    store.close()
    reopened = Storage.open(tmp_path, watch_cache_size=1)
    assert reopened.revision == 10
    assert reopened.count(PODS) == 0
    assert revision_of(reopened.create(PODS, make_object("p0"))) == 11
    reopened.close()


def test_reopen_serves_watches_from_the_persisted_window(tmp_path: Path) -> None:
    store = Storage.open(tmp_path, watch_cache_size=4)
    store.create(PODS, make_object("a", spec={"v": 1}))  # 1
    store.create(PODS, make_object("b"))  # 2
    store.update(PODS, make_object("a", spec={"v": 2}))  # 3
    store.create(DEPLOYMENTS, make_object("d"))  # 4
    store.update(PODS, make_object("a", spec={"v": 3}))  # 5
    store.delete(PODS, "default", "b")  # 6
    store.create(PODS, make_object("c"))  # 7
    live = [(e.type, e.rv, e.object, e.prev) for e in drain(store.watch(PODS, None, 2))]
    store.close()

    reopened = Storage.open(tmp_path, watch_cache_size=4)
    assert reopened.oldest_watchable(PODS) == 2
    with pytest.raises(TooOldResourceVersion):
        reopened.watch(PODS, None, 1)
    replayed = drain(reopened.watch(PODS, None, 2))
    assert [(e.type, e.rv, e.object, e.prev) for e in replayed] == live
    assert [(e.type, e.rv) for e in replayed] == [(MODIFIED, 3), (MODIFIED, 5), (DELETED, 6), (ADDED, 7)]
    assert replayed[2].object["metadata"]["resourceVersion"] == "6"
    assert replayed[0].prev is not None
    assert replayed[0].prev["spec"] == {"v": 1}
    assert [e.rv for e in drain(reopened.watch(DEPLOYMENTS, None, 0))] == [4]
    reopened.close()


def test_reopened_watch_streams_live_changes_after_the_replay(tmp_path: Path) -> None:
    store = Storage.open(tmp_path)
    store.create(PODS, make_object("a"))
    store.close()
    reopened = Storage.open(tmp_path)
    watcher = reopened.watch(PODS, "default", 0)
    reopened.update(PODS, make_object("a"))
    assert [(e.type, e.rv) for e in drain(watcher)] == [(ADDED, 1), (MODIFIED, 2)]
    reopened.close()


def test_a_pruned_deletion_is_never_served_nor_resurrected(tmp_path: Path) -> None:
    # With a window of 2, the deletion at 3 leaves the window and its rows (2 and 3) are pruned,
    # while the older row 1 (the live object b) stays: after a restart the window must still
    # start after 3, not after the newest surviving row outside it.
    store = Storage.open(tmp_path, watch_cache_size=2)
    store.create(PODS, make_object("b"))  # 1
    store.create(PODS, make_object("a"))  # 2
    store.delete(PODS, "default", "a")  # 3
    store.create(PODS, make_object("c"))  # 4
    store.update(PODS, make_object("c"))  # 5
    store.close()
    assert change_rows(tmp_path) == [1, 4, 5]

    reopened = Storage.open(tmp_path, watch_cache_size=2)
    assert names(reopened.list(PODS)[0]) == [("default", "b"), ("default", "c")]
    assert reopened.oldest_watchable(PODS) == 3
    with pytest.raises(TooOldResourceVersion):
        reopened.watch(PODS, None, 2)
    assert [e.rv for e in drain(reopened.watch(PODS, None, 3))] == [4, 5]
    reopened.close()


def test_change_log_stays_bounded_under_many_updates(tmp_path: Path) -> None:
    store = Storage.open(tmp_path, watch_cache_size=10)
    writes = 4 * PRUNE_BATCH
    store.create(PODS, make_object("a"))
    for index in range(writes - 1):
        store.update(PODS, make_object("a", spec={"i": index}))
    # Pruning runs in batches while the store is open: never more than a batch behind.
    assert len(change_rows(tmp_path)) <= 10 + 1 + PRUNE_BATCH
    store.close()
    # The window (10 rows) plus the state before its first change.
    assert change_rows(tmp_path) == list(range(writes - 10, writes + 1))


def test_change_log_keeps_live_objects_outside_the_window(tmp_path: Path) -> None:
    store = Storage.open(tmp_path, watch_cache_size=3)
    for index in range(20):
        store.create(PODS, make_object(f"p{index:02d}"))
    for index in range(0, 20, 2):
        store.delete(PODS, "default", f"p{index:02d}")
    store.close()
    reopened = Storage.open(tmp_path, watch_cache_size=3)
    assert names(reopened.list(PODS)[0]) == [("default", f"p{index:02d}") for index in range(1, 20, 2)]
    reopened.close()
    # Ten live objects, plus the window: three deletions and the rows they deleted.
    assert len(change_rows(tmp_path)) == 10 + 3 + 3


@pytest.mark.parametrize("second_size", [2, 50])
def test_reopen_with_another_window_size(tmp_path: Path, second_size: int) -> None:
    store = Storage.open(tmp_path, watch_cache_size=5)
    for index in range(12):
        store.create(PODS, make_object(f"p{index}"))
    store.close()
    reopened = Storage.open(tmp_path, watch_cache_size=second_size)
    oldest = reopened.oldest_watchable(PODS)
    # All creates stay (live objects), so a larger window can serve further back.
    assert oldest == (10 if second_size == 2 else 0)
    assert [e.rv for e in drain(reopened.watch(PODS, None, oldest))] == list(range(oldest + 1, 13))
    assert reopened.count(PODS) == 12
    reopened.close()


def test_a_data_dir_is_used_by_one_store_at_a_time(tmp_path: Path) -> None:
    store = Storage.open(tmp_path)
    with pytest.raises(StorageError, match="in use"):
        Storage.open(tmp_path)
    store.close()
    Storage.open(tmp_path).close()


def test_data_dir_is_created(tmp_path: Path) -> None:
    data_dir = tmp_path / "nested" / "dir"
    Storage.open(str(data_dir)).close()
    assert (data_dir / DATABASE_FILE).is_file()


def test_a_database_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / DATABASE_FILE, isolation_level=None)) as connection:
        connection.execute("PRAGMA user_version=99")
    with pytest.raises(StorageError, match="schema version 99"):
        Storage.open(tmp_path)
    Storage.open(tmp_path / "other").close()


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    (tmp_path / DATABASE_FILE).write_bytes(b"not a database" * 100)
    with pytest.raises(StorageError):
        Storage.open(tmp_path)


def test_a_corrupt_change_row_is_reported_and_releases_the_directory(tmp_path: Path) -> None:
    store = Storage.open(tmp_path)
    store.create(PODS, make_object("a"))
    store.close()
    with closing(sqlite3.connect(tmp_path / DATABASE_FILE, isolation_level=None)) as connection:
        connection.execute("UPDATE changes SET body = x'00ff'")
    with pytest.raises(StorageError, match="row 1 is corrupt"):
        Storage.open(tmp_path)
    with closing(sqlite3.connect(tmp_path / DATABASE_FILE, isolation_level=None)) as connection:
        connection.execute("DELETE FROM changes")
    reopened = Storage.open(tmp_path)
    assert reopened.revision == 0
    reopened.close()
