"""The store: current objects in memory, changes persisted in SQLite, watches from a window.

Every object lives in memory (``Collection`` per resource type), so reads never touch SQLite;
SQLite only makes writes durable and lets ``open`` rebuild the memory state after a restart.
The methods are synchronous and the store is meant for one asyncio event loop: a caller can
read, check and write within one loop step, which is how the HTTP layer gets atomic
read-modify-write without locks. A write is persisted before memory changes, so a failed
write leaves the store as it was.
"""

from __future__ import annotations

import builtins
import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubeloop.server.nesting import MAX_STORED_DEPTH, encode_within, encodes_within
from kubeloop.server.storage._collection import Collection
from kubeloop.server.storage._model import (
    ADDED,
    DELETED,
    EVENT_CODES,
    MODIFIED,
    KeyExists,
    KeyNotFound,
    ObjectKey,
    Page,
    ResourceType,
    RevisionMismatch,
    StorageError,
    WatchEvent,
    object_key,
    object_revision,
)
from kubeloop.server.storage._replay import replay_change_log
from kubeloop.server.storage._sqlite import SqliteLog
from kubeloop.server.storage._watch import Watcher, WatchWindow

DEFAULT_WATCH_CACHE_SIZE = 1000


class Storage:
    """Objects of every resource type, one global revision, watches.

    Ownership: every dict the store returns (from get, list, create, update, delete, and in
    watch events) belongs to the store and is shared with other readers; callers must not
    mutate it, and copy it to change it. On create and update the store copies the top level
    and ``metadata`` of the object it is given (to set ``metadata.resourceVersion``) but keeps
    the nested values by reference: hand them over and do not mutate them afterwards. Objects
    must be JSON-compatible dicts (the persistent store rejects others with StorageError).

    Revisions: ``revision`` starts at 0 in a new store; each create, update and delete takes
    the next integer, across all resource types, and stamps it as a decimal string into the
    stored object's ``metadata.resourceVersion``. A persistent store continues after the
    newest revision it holds, so revisions never repeat or go backwards across restarts.
    """

    def __init__(self, log: SqliteLog | None, watch_cache_size: int) -> None:
        """Use ``Storage.open``."""
        self._log = log
        self._watch_cache_size = watch_cache_size
        self._revision = 0
        self._collections: dict[ResourceType, Collection] = {}
        self._windows: dict[ResourceType, WatchWindow] = {}
        self._closed = False

    @classmethod
    def open(
        cls,
        data_dir: str | Path | None,
        *,
        memory: bool = False,
        watch_cache_size: int = DEFAULT_WATCH_CACHE_SIZE,
    ) -> Storage:
        """Open the store persisted in ``data_dir`` (created if needed), loading all of it.

        With ``memory=True``, ``data_dir`` None or ``":memory:"``, the store is a throwaway one
        that never touches the disk. ``watch_cache_size`` is the number of recent changes kept
        per resource type for watches (at least 1). Raises StorageError if the directory is in
        use by another process or holds an unreadable database.
        """
        if watch_cache_size < 1:
            raise ValueError("watch_cache_size must be at least 1")
        if memory or data_dir is None or str(data_dir) == ":memory:":
            return cls(None, watch_cache_size)
        log = SqliteLog.open(Path(data_dir))
        # Loading builds millions of acyclic containers; cyclic GC passes over them meanwhile are
        # pure overhead (more than half of the load time at 50,000 pods), so they wait until the
        # end. A long-running server may then want gc.freeze(): see the package docstring.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return cls._load(log, watch_cache_size)
        except BaseException:
            log.close()
            raise
        finally:
            if collecting:
                gc.enable()

    @classmethod
    def _load(cls, log: SqliteLog, watch_cache_size: int) -> Storage:
        types, rows, floors = log.load()
        replayed = replay_change_log(rows, watch_cache_size, floors)
        log.prune(replayed.obsolete, {type_id: state.floor for type_id, state in replayed.types.items()})
        store = cls(log, watch_cache_size)
        store._revision = replayed.revision
        for type_id, state in replayed.types.items():
            resource_type = types[type_id]
            store._collections[resource_type] = Collection(state.objects.items())
            store._windows[resource_type] = WatchWindow(watch_cache_size, state.floor, state.events)
        return store

    @property
    def revision(self) -> int:
        """The revision of the latest write (0 for a new store)."""
        return self._revision

    @property
    def watch_cache_size(self) -> int:
        return self._watch_cache_size

    @property
    def persistent(self) -> bool:
        """False for a memory-only store."""
        return self._log is not None

    # Reads.

    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any] | None:
        """The stored object, or None. Namespace "" for cluster-scoped objects."""
        collection = self._collections.get(rt)
        return None if collection is None else collection.get(namespace, name)

    def list(
        self,
        rt: ResourceType,
        namespace: str | None = None,
        *,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
        start_after: ObjectKey | None = None,
        limit: int | None = None,
    ) -> Page:
        """A page of objects in (namespace, name) order.

        Selects the objects of ``namespace`` (all when None) for which ``predicate`` holds,
        after the key ``start_after`` (exclusive), at most ``limit`` of them (None or <= 0: no
        limit). Returns ``(items, continue_after, remaining)``: ``continue_after`` is the key
        of the last item returned when further matching objects exist (pass it back as
        ``start_after`` for the next page), else None; ``remaining`` is the number of objects
        after the page when there is no predicate, else -1 (counting would need a full scan).
        """
        collection = self._collections.get(rt)
        if collection is None:
            return [], None, 0 if predicate is None else -1
        return collection.list(namespace, predicate, start_after, limit)

    def count(self, rt: ResourceType, namespace: str | None = None) -> int:
        """Number of objects of ``rt`` (in ``namespace``, or in all namespaces when None)."""
        collection = self._collections.get(rt)
        return 0 if collection is None else collection.count(namespace)

    def resource_types(self) -> builtins.list[ResourceType]:
        """The resource types that currently have objects (e.g. to serve custom resources after a restart)."""
        return [rt for rt, collection in self._collections.items() if len(collection)]

    # Writes.

    def create(self, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """Store a new object under its metadata (namespace, name); KeyExists if taken.

        Returns the stored object: ``obj`` with ``metadata.resourceVersion`` set.
        """
        key = object_key(obj)
        collection = self._collection(rt)
        if collection.get(*key) is not None:
            raise KeyExists(rt, *key)
        rv = self._revision + 1
        stored = _at_revision(obj, rv)
        self._persist(rt, ADDED, stored)
        collection.put(*key, stored)
        self._publish(rt, WatchEvent(ADDED, rv, stored, None), key[0])
        return stored

    def update(self, rt: ResourceType, obj: dict[str, Any], *, expected_rv: int | None = None) -> dict[str, Any]:
        """Replace the object named by ``obj``'s metadata; returns the stored object.

        KeyNotFound if there is none; RevisionMismatch if ``expected_rv`` is given and differs
        from its current revision. ``obj``'s own resourceVersion is ignored (the HTTP layer
        turns it into ``expected_rv``). Every update takes a new revision, even an identical
        one: skipping no-op updates is the caller's decision.
        """
        key = object_key(obj)
        collection = self._collections.get(rt)
        current = None if collection is None else collection.get(*key)
        if collection is None or current is None:
            raise KeyNotFound(rt, *key)
        _check_revision(rt, key, current, expected_rv)
        rv = self._revision + 1
        stored = _at_revision(obj, rv)
        self._persist(rt, MODIFIED, stored)
        collection.put(*key, stored)
        self._publish(rt, WatchEvent(MODIFIED, rv, stored, current), key[0])
        return stored

    def delete(self, rt: ResourceType, namespace: str, name: str, *, expected_rv: int | None = None) -> dict[str, Any]:
        """Remove an object; returns its last state with resourceVersion = the delete's revision.

        KeyNotFound if there is none; RevisionMismatch as for ``update``.
        """
        key = (namespace, name)
        collection = self._collections.get(rt)
        current = None if collection is None else collection.get(namespace, name)
        if collection is None or current is None:
            raise KeyNotFound(rt, namespace, name)
        _check_revision(rt, key, current, expected_rv)
        rv = self._revision + 1
        last = _at_revision(current, rv)
        self._persist(rt, DELETED, last)
        collection.remove(namespace, name)
        self._publish(rt, WatchEvent(DELETED, rv, last, current), namespace)
        return last

    # Watches.

    def watch(self, rt: ResourceType, namespace: str | None, from_rv: int) -> Watcher:
        """A watcher of every change of ``rt`` (in ``namespace``, or all when None) after ``from_rv``.

        Changes still in the window are replayed first, then live ones follow. Raises
        TooOldResourceVersion if changes after ``from_rv`` may have left the window.
        """
        self._check_open()
        return self._window(rt).watch(namespace, from_rv)

    def last_change(self, rt: ResourceType) -> int:
        """A number that differs after every create, update or delete of ``rt``: the revision of
        its newest change in the watch window (the window's floor when it holds none yet, 0 for a
        type never written). Callers key what they derive from a type's objects on it."""
        window = self._windows.get(rt)
        if window is None:
            return 0
        events = window.events
        return events[-1].rv if events else window.floor

    def oldest_watchable(self, rt: ResourceType) -> int:
        """The smallest ``from_rv`` that ``watch(rt, ...)`` accepts now."""
        window = self._windows.get(rt)
        return 0 if window is None else window.floor

    def close(self) -> None:
        """End every watcher and release the data directory; idempotent."""
        if self._closed:
            return
        self._closed = True
        for window in self._windows.values():
            window.close_all()
        if self._log is not None:
            self._log.close()

    # Internals.

    def _collection(self, rt: ResourceType) -> Collection:
        collection = self._collections.get(rt)
        if collection is None:
            collection = self._collections[rt] = Collection()
        return collection

    def _window(self, rt: ResourceType) -> WatchWindow:
        window = self._windows.get(rt)
        if window is None:
            window = self._windows[rt] = WatchWindow(self._watch_cache_size)
        return window

    def _persist(self, rt: ResourceType, event_type: str, stored: dict[str, Any]) -> None:
        """Make the write durable, then advance the revision (the write's rv is revision + 1)."""
        self._check_open()
        # Never keep what cannot be served back (every LIST of the type would then fail): the
        # in-memory store checks this too, so both modes refuse the same writes.
        log = self._log
        if log is None:
            body: bytes | None = b"" if encodes_within(stored, MAX_STORED_DEPTH) else None
        else:
            body = encode_within(stored, MAX_STORED_DEPTH)
        if body is None:
            raise StorageError(f"object is not JSON-serialisable within {MAX_STORED_DEPTH} levels of nesting")
        if log is not None:
            log.append(rt, self._revision + 1, EVENT_CODES[event_type], body)
        self._revision += 1

    def _publish(self, rt: ResourceType, event: WatchEvent, namespace: str) -> None:
        window = self._window(rt)
        evicted = window.append(event, namespace)
        if evicted is not None and self._log is not None:
            # The change that left the window no longer needs the row before it (its prev), and
            # a deletion no longer needs its own row: see _replay for why this order is safe.
            prunable = [] if evicted.prev is None else [object_revision(evicted.prev)]
            if evicted.type == DELETED:
                prunable.append(evicted.rv)
            if prunable:
                self._log.mark_prunable(rt, prunable, window.floor)

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("storage is closed")


def _at_revision(obj: dict[str, Any], rv: int) -> dict[str, Any]:
    """A copy of ``obj`` (top level and metadata only) with metadata.resourceVersion = rv."""
    stored = dict(obj)
    metadata = dict(obj["metadata"])
    metadata["resourceVersion"] = str(rv)
    stored["metadata"] = metadata
    return stored


def _check_revision(rt: ResourceType, key: ObjectKey, current: dict[str, Any], expected_rv: int | None) -> None:
    if expected_rv is None:
        return
    current_rv = object_revision(current)
    if current_rv != expected_rv:
        raise RevisionMismatch(rt, key[0], key[1], expected_rv, current_rv)
