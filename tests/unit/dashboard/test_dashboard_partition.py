"""The partition shown on a CloneSet's card (kubeloop.dashboard.views.partition_view)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.dashboard.views import EventIndex, cloneset_view, deployment_view, partition_view
from tests.unit.dashboard.builders import NOW, cloneset, deployment


@pytest.mark.parametrize(("partition", "replicas", "expected"), [
    (None, 4, None),
    (2, 4, {"value": 2, "kept": 2}),
    (9, 4, {"value": 9, "kept": 4}),              # clamped to the replicas
    ("50%", 5, {"value": "50%", "kept": 3}),      # a percentage rounds up
    ("99%", 4, {"value": "99%", "kept": 3}),      # ... but never keeps every pod below 100%
    ("bogus", 4, {"value": "bogus", "kept": None}),
])
def test_partition_view(partition: Any, replicas: int, expected: dict[str, Any] | None) -> None:
    assert partition_view(cloneset(partition=partition, replicas=replicas)) == expected


def test_only_clonesets_carry_a_partition() -> None:
    view = cloneset_view(cloneset(partition=1), [], [], EventIndex(), NOW)
    assert view["partition"] == {"value": 1, "kept": 1}
    assert "partition" not in deployment_view(deployment("web"), [], [], EventIndex(), NOW)
