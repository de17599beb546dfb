"""Rebuilding the store from its persisted change log, and deciding which log rows may go.

The log is the only table with object bodies: row ``rv`` holds the state after change ``rv``
(for a DELETED row, the last state). So the current objects are the last row of every key that
was not a deletion, and the watch window of a type is its last rows. A row is kept while it is
needed for one of three things:

- it is in its type's watch window (the last ``window_size`` changes of that type);
- it is the current state of a live object;
- it is the state just before a change in the window, so that replayed events still carry
  ``prev`` (the HTTP layer needs it to turn selector transitions into ADDED / DELETED).

Hence the pruning rule used here and, incrementally, by the running store: when a change leaves
the window, the row before it (same key) may go, and so may the change itself if it is a
deletion. A key's rows are therefore always pruned oldest first, and a deletion's row goes in
the same transaction as the row before it, so no pruning can bring a deleted object back.

``floor`` per type is the newest revision of that type that is no longer in the window; it is
persisted with every pruning so that a restart never serves a watch across a hole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeloop.server.storage._model import ADDED, DELETED, ObjectKey, WatchEvent, object_key


@dataclass(frozen=True)
class ChangeRow:
    """One decoded row of the change log."""

    rv: int
    type_id: int
    type: str
    object: dict[str, Any]


@dataclass
class ReplayedType:
    """What one resource type looks like after the replay."""

    objects: dict[ObjectKey, dict[str, Any]] = field(default_factory=dict)
    events: list[WatchEvent] = field(default_factory=list)
    floor: int = 0


@dataclass
class ReplayResult:
    types: dict[int, ReplayedType]
    revision: int
    """The newest revision in the log (or in the floors): the store continues after it."""
    obsolete: dict[int, list[int]]
    """Per type id, the revisions of rows that no longer serve any purpose."""


def replay_change_log(rows: Iterable[ChangeRow], window_size: int, floors: Mapping[int, int]) -> ReplayResult:
    """Replay ``rows`` (in revision order) into current objects, watch windows and prunable rows.

    ``floors`` are the persisted floors per type id: rows at or below them are never put in a
    window, since changes of the type up to the floor may already have been pruned.
    """
    rows = list(rows)
    revisions_by_type: dict[int, list[int]] = {}
    for row in rows:
        revisions_by_type.setdefault(row.type_id, []).append(row.rv)

    types: dict[int, ReplayedType] = {}
    in_window: set[int] = set()
    for type_id in {*revisions_by_type, *floors}:
        revisions = revisions_by_type.get(type_id, [])
        floor = floors.get(type_id, 0)
        if len(revisions) > window_size:
            floor = max(floor, revisions[-window_size - 1])
        in_window.update(rv for rv in revisions[-window_size:] if rv > floor)
        types[type_id] = ReplayedType(floor=floor)

    last_row: dict[tuple[int, ObjectKey], ChangeRow] = {}
    obsolete: dict[int, list[int]] = {}
    for row in rows:
        replayed = types[row.type_id]
        key = object_key(row.object)
        previous_row = last_row.get((row.type_id, key))
        last_row[row.type_id, key] = row
        windowed = row.rv in in_window
        if (
            previous_row is not None
            and previous_row.type != DELETED
            and not windowed
            and previous_row.rv not in in_window
        ):
            obsolete.setdefault(row.type_id, []).append(previous_row.rv)
        if row.type == DELETED and not windowed:
            obsolete.setdefault(row.type_id, []).append(row.rv)
        if windowed:
            prev = None if row.type == ADDED else replayed.objects.get(key)
            replayed.events.append(WatchEvent(row.type, row.rv, row.object, prev))
        if row.type == DELETED:
            replayed.objects.pop(key, None)
        else:
            replayed.objects[key] = row.object

    revision = max([rows[-1].rv if rows else 0, *floors.values()])
    return ReplayResult(types, revision, obsolete)
