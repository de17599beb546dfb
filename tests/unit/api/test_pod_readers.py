"""The shared pod readers: ``spec.nodeName`` and the highest container restart count, with
the rows of the former ReplicaSet, CloneSet, endpoints and kubelet copies."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.api.pods import max_container_restarts, node_name


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        ({"spec": {"nodeName": "a"}}, "a"),
        ({"spec": {"nodeName": ""}}, ""),
        ({"spec": {"nodeName": None}}, ""),
        ({"spec": {}}, ""),
        ({}, ""),
        ({"spec": None}, ""),
        ({"spec": "x"}, ""),
        ({"spec": {"nodeName": 7}}, ""),  # malformed: not a string counts as unplaced
    ],
)
def test_node_name(pod: dict[str, Any], expected: str) -> None:
    assert node_name(pod) == expected


def _statuses(*counts: Any) -> dict[str, Any]:
    return {"status": {"containerStatuses": [{"name": f"c{i}", "restartCount": c} for i, c in enumerate(counts)]}}


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        ({}, 0),
        ({"status": {}}, 0),
        ({"status": None}, 0),
        ({"status": {"containerStatuses": None}}, 0),
        ({"status": {"containerStatuses": "x"}}, 0),
        (_statuses(), 0),
        (_statuses(3), 3),
        (_statuses(1, 4, 2), 4),
        (_statuses(0, 0), 0),
        (_statuses(None, 2), 2),
        (_statuses(True, 0), 0),  # a bool is not a count
        (_statuses("5", 1), 1),  # malformed: not an integer is skipped
        ({"status": {"containerStatuses": [None, {"restartCount": 2}, "x"]}}, 2),
        ({"status": {"containerStatuses": [{"name": "c"}]}}, 0),
    ],
)
def test_max_container_restarts(pod: dict[str, Any], expected: int) -> None:
    assert max_container_restarts(pod) == expected
