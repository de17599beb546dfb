"""Persistence of the change log in SQLite.

Layout. One table, ``changes``, holds everything: row ``rv`` (the rowid, so appends go to the
end of the B-tree) is change ``rv`` with its resource type, event type and the object's JSON
body. The current objects, the watch windows and the global revision are all derived from it
at open (see ``_replay``). A write is therefore a single INSERT: the object's new state, its
change-log entry and the bump of the revision are one row, written in one transaction, with
the body serialised once. ``resource_types`` maps types to small integer ids and keeps, per
type, the pruning floor. Rows that no longer serve a purpose are deleted in batches, inside the
transaction of a later write, so the table stays about (live objects + windows) rows long.

Durability. WAL mode with ``synchronous=NORMAL``: a commit appends the transaction to the WAL
file with write(2) before returning, without fsync. The bytes then live in the kernel's page
cache, which belongs to no process, so every acknowledged write survives the process being
killed (kill -9, OOM killer, a crash). What it does not survive is losing the machine (power
cut, kernel panic) in the seconds before the kernel writes the pages back; ``synchronous=FULL``
would cover that at the price of one fsync per write, an order of magnitude slower on most
disks, which a development API server does not need. The database stays consistent either way.

One process at a time: an advisory lock on ``storage.lock`` in the data directory (released
by the kernel when the process dies) stops a second server from opening the same directory.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from kubeloop.server.private_files import narrow_existing, private_directory, private_file
from kubeloop.server.storage._model import EVENT_TYPES, ResourceType, StorageError
from kubeloop.server.storage._replay import ChangeRow

DATABASE_FILE = "storage.sqlite3"
LOCK_FILE = "storage.lock"
SCHEMA_VERSION = 1
#: Obsolete rows are deleted once this many have accumulated (one DELETE batch per that many writes).
PRUNE_BATCH = 256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS resource_types (
    id INTEGER PRIMARY KEY,
    api_group TEXT NOT NULL,
    resource TEXT NOT NULL,
    floor INTEGER NOT NULL DEFAULT 0,
    UNIQUE (api_group, resource)
);
CREATE TABLE IF NOT EXISTS changes (
    rv INTEGER PRIMARY KEY,
    type_id INTEGER NOT NULL,
    event INTEGER NOT NULL,
    body BLOB NOT NULL
);
"""
INSERT_CHANGE = "INSERT INTO changes (rv, type_id, event, body) VALUES (?, ?, ?, ?)"


def connect(path: Path) -> sqlite3.Connection:
    """A connection to ``path`` in autocommit mode, WAL, synchronous=NORMAL, schema in place.

    Autocommit (``isolation_level=None``) makes a lone INSERT its own transaction, committed
    when the statement completes; multi-statement writes use explicit BEGIN / COMMIT.
    """
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            raise StorageError(f"{path}: cannot switch SQLite to WAL mode (got {mode!r})")
        connection.execute("PRAGMA synchronous=NORMAL")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):
            raise StorageError(f"{path}: storage schema version {version} is not supported")
        connection.executescript(_SCHEMA)
        connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    except BaseException:
        connection.close()
        raise
    return connection


def _decode_row(rv: int, type_id: int, event: int, body: bytes) -> ChangeRow:
    try:
        return ChangeRow(rv, type_id, EVENT_TYPES[event], orjson.loads(body))
    except (IndexError, orjson.JSONDecodeError) as error:
        raise StorageError(f"change log row {rv} is corrupt: {error}") from error


def _refuse_emptied(data_dir: Path) -> None:
    """A database file of 0 bytes with no write-ahead log to recover from lost every object
    (truncated, or replaced): SQLite would open it as a new, empty database. Refuse, so that a
    cluster never comes back empty without a word."""
    database = data_dir / DATABASE_FILE
    wal = data_dir / (DATABASE_FILE + "-wal")
    if database.exists() and database.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0):
        raise StorageError(f"the database {database} is empty (0 bytes): every object it held is lost")


class SqliteLog:
    """The persisted change log of one data directory (see the module docstring)."""

    def __init__(self, connection: sqlite3.Connection, lock_fd: int) -> None:
        self._connection = connection
        self._lock_fd = lock_fd
        self._type_ids: dict[ResourceType, int] = {}
        self._prunable: list[int] = []
        self._floors_to_save: dict[int, int] = {}

    @classmethod
    def open(cls, data_dir: Path) -> SqliteLog:
        private_directory(data_dir)
        lock_fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise StorageError(f"data directory {data_dir} is in use by another process") from None
        try:
            _refuse_emptied(data_dir)
            # Created 0600 before SQLite opens it: its -wal and -shm files take the same mode.
            private_file(data_dir / DATABASE_FILE)
            for suffix in ("-wal", "-shm"):
                narrow_existing(data_dir / (DATABASE_FILE + suffix))
            connection = connect(data_dir / DATABASE_FILE)
        except (sqlite3.Error, StorageError) as error:
            os.close(lock_fd)
            if isinstance(error, StorageError):
                raise
            raise StorageError(f"cannot open {data_dir / DATABASE_FILE}: {error}") from error
        return cls(connection, lock_fd)

    def load(self) -> tuple[dict[int, ResourceType], Iterator[ChangeRow], dict[int, int]]:
        """Resource types by id, every change row in revision order (lazily), floors by type id."""
        types: dict[int, ResourceType] = {}
        floors: dict[int, int] = {}
        try:
            for type_id, group, resource, floor in self._connection.execute(
                "SELECT id, api_group, resource, floor FROM resource_types"
            ):
                types[type_id] = ResourceType(group, resource)
                floors[type_id] = floor
        except sqlite3.Error as error:
            raise StorageError(f"cannot read the resource types: {error}") from error
        self._type_ids = {resource_type: type_id for type_id, resource_type in types.items()}
        return types, self._changes(), floors

    def _changes(self) -> Iterator[ChangeRow]:
        try:
            for row in self._connection.execute("SELECT rv, type_id, event, body FROM changes ORDER BY rv"):
                yield _decode_row(*row)
        except sqlite3.Error as error:
            raise StorageError(f"cannot read the change log: {error}") from error

    def append(self, resource_type: ResourceType, rv: int, event_code: int, body: bytes) -> None:
        """Persist change ``rv``; when it returns, the change is committed."""
        type_id = self._type_ids.get(resource_type)
        try:
            if type_id is None:
                type_id = self._add_type(resource_type)
            row = (rv, type_id, event_code, body)
            if len(self._prunable) < PRUNE_BATCH:
                self._connection.execute(INSERT_CHANGE, row)
            else:
                self._commit_pruning(row)
        except sqlite3.Error as error:
            raise StorageError(f"cannot persist revision {rv}: {error}") from error

    def mark_prunable(self, resource_type: ResourceType, revisions: list[int], floor: int) -> None:
        """Rows ``revisions`` of ``resource_type`` may go; its window now starts after ``floor``."""
        type_id = self._type_ids[resource_type]
        self._prunable.extend(revisions)
        self._floors_to_save[type_id] = floor

    def prune(self, obsolete: Mapping[int, list[int]], floors: Mapping[int, int]) -> None:
        """Delete ``obsolete`` rows (by type id) now and save ``floors``, in one transaction."""
        for revisions in obsolete.values():
            self._prunable.extend(revisions)
        self._floors_to_save.update(floors)
        try:
            self._commit_pruning(None)
        except sqlite3.Error as error:
            raise StorageError(f"cannot prune the change log: {error}") from error

    def close(self) -> None:
        """Delete pending obsolete rows, release the database and the data directory."""
        try:
            if self._prunable:
                self._commit_pruning(None)
        except sqlite3.Error:
            pass  # Pruning is an optimisation: the next open finds and prunes the same rows.
        finally:
            self._connection.close()
            os.close(self._lock_fd)

    def _add_type(self, resource_type: ResourceType) -> int:
        cursor = self._connection.execute(
            "INSERT INTO resource_types (api_group, resource) VALUES (?, ?)",
            (resource_type.group, resource_type.resource),
        )
        type_id = cursor.lastrowid
        if type_id is None:
            raise StorageError(f"cannot register resource type {resource_type}")
        self._type_ids[resource_type] = type_id
        return type_id

    def _commit_pruning(self, row: tuple[int, int, int, bytes] | None) -> None:
        """One transaction: insert ``row`` if given, delete the pending rows, save their floors.

        The backlog is cleared only once the transaction committed, so a failed attempt is
        simply retried with the next batch.
        """
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            if row is not None:
                connection.execute(INSERT_CHANGE, row)
            connection.executemany("DELETE FROM changes WHERE rv = ?", ((rv,) for rv in self._prunable))
            connection.executemany(
                "UPDATE resource_types SET floor = ? WHERE id = ?",
                ((floor, type_id) for type_id, floor in self._floors_to_save.items()),
            )
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        self._prunable.clear()
        self._floors_to_save.clear()
