"""The change-log replay on plain rows: current objects, windows, floors, prunable rows."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.server.storage import ADDED, DELETED, MODIFIED
from kubeloop.server.storage._replay import ChangeRow, replay_change_log

PODS_ID, JOBS_ID = 1, 2


def row(rv: int, event: str, name: str, type_id: int = PODS_ID, **fields: Any) -> ChangeRow:
    obj = {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv)}, **fields}
    return ChangeRow(rv, type_id, event, obj)


# Each case: rows, window size, persisted floors -> live names, window revisions, floor, obsolete revisions
# (for the pods type).
CASES = [
    pytest.param([], 3, {}, [], [], 0, [], id="empty log"),
    pytest.param(
        [row(1, ADDED, "a"), row(2, MODIFIED, "a"), row(3, ADDED, "b")],
        3,
        {},
        ["a", "b"],
        [1, 2, 3],
        0,
        [],
        id="everything fits in the window",
    ),
    pytest.param(
        [row(1, ADDED, "a"), row(2, MODIFIED, "a"), row(3, MODIFIED, "a"), row(4, MODIFIED, "a")],
        2,
        {},
        ["a"],
        [3, 4],
        2,
        [1],
        id="the state before the window's first change is kept for prev",
    ),
    pytest.param(
        [row(1, ADDED, "a"), row(2, ADDED, "b"), row(3, DELETED, "b"), row(4, ADDED, "c")],
        1,
        {},
        ["a", "c"],
        [4],
        3,
        [2, 3],
        id="a deletion outside the window goes with the row before it",
    ),
    pytest.param(
        [row(1, ADDED, "a"), row(4, ADDED, "c"), row(5, MODIFIED, "c")],
        2,
        {PODS_ID: 3},
        ["a", "c"],
        [4, 5],
        3,
        [],
        id="a persisted floor above the surviving rows outside the window wins",
    ),
    pytest.param(
        [row(2, ADDED, "a"), row(3, MODIFIED, "a"), row(4, MODIFIED, "a")],
        5,
        {PODS_ID: 2},
        ["a"],
        [3, 4],
        2,
        [],
        id="rows at or below the floor never enter the window",
    ),
    pytest.param(
        [row(1, ADDED, "a"), row(2, DELETED, "a"), row(3, ADDED, "a"), row(4, DELETED, "a"), row(5, ADDED, "z")],
        1,
        {},
        ["z"],
        [5],
        4,
        [1, 2, 3, 4],
        id="a name deleted twice leaves nothing behind",
    ),
    pytest.param(
        [row(1, ADDED, "a"), row(2, ADDED, "j", JOBS_ID), row(3, ADDED, "j2", JOBS_ID), row(4, MODIFIED, "a")],
        1,
        {},
        ["a"],
        [4],
        1,
        [],
        id="windows are per type",
    ),
]


@pytest.mark.parametrize(("rows", "size", "floors", "live", "window", "floor", "obsolete"), CASES)
def test_replay(
    rows: list[ChangeRow],
    size: int,
    floors: dict[int, int],
    live: list[str],
    window: list[int],
    floor: int,
    obsolete: list[int],
) -> None:
    result = replay_change_log(rows, size, floors)
    pods = result.types.get(PODS_ID)
    assert sorted(name for _, name in (pods.objects if pods else {})) == live
    assert [event.rv for event in (pods.events if pods else [])] == window
    assert (pods.floor if pods else 0) == floor
    assert sorted(result.obsolete.get(PODS_ID, [])) == obsolete
    assert result.revision == max([0, *(r.rv for r in rows), *floors.values()])


def test_replayed_events_carry_prev_and_deletion_state() -> None:
    rows = [
        row(1, ADDED, "a", spec=1),
        row(2, MODIFIED, "a", spec=2),
        row(3, DELETED, "a", spec=2),
        row(4, ADDED, "a", spec=3),
    ]
    events = replay_change_log(rows, 3, {}).types[PODS_ID].events
    assert [(e.type, e.rv, e.object["spec"], e.prev and e.prev["spec"]) for e in events] == [
        (MODIFIED, 2, 2, 1),
        (DELETED, 3, 2, 2),
        (ADDED, 4, 3, None),
    ]


def test_a_modification_whose_previous_state_was_pruned_has_no_prev() -> None:
    # Happens when the window grew between runs: the row before the new window's first change
    # may already be gone.
    events = replay_change_log([row(5, MODIFIED, "a"), row(6, MODIFIED, "a")], 3, {}).types[PODS_ID].events
    assert (events[0].rv, events[0].prev) == (5, None)
    assert events[1].prev is not None
    assert events[1].prev["metadata"]["resourceVersion"] == "5"


def test_the_revision_continues_after_the_floors() -> None:
    assert replay_change_log([], 3, {PODS_ID: 9}).revision == 9
