"""How many pods may start updating: upstream's TestCalculateUpdateCount rows (v1.8.4 source).

Row: R | partition | maxUnavailable | maxSurge | indexes on the current revision | pods | allowed.
Pods: ``R`` Running+Ready, ``u`` no status. Candidates are taken in index order (no sort), as
upstream's test does; the partition-rollback gate is on.
"""

from __future__ import annotations

import pytest
from cloneset_pods import NOW, make_cloneset, make_pod

from kubeloop.controllers.cloneset.diffs import calculate_diffs
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.controllers.cloneset.update import limit_update_candidates, pods_to_update

ROWS = [
    ("U01", 3, None, None, None, [0, 1, 2], "RRR", 1),
    ("U02", 3, None, None, None, [0, 1, 2], "RuR", 0),
    ("U03", 3, None, None, None, [0, 1, 2], "uRR", 1),
    ("U04", 10, None, None, None, list(range(9)), "uRRRRRRRuR", 1),
    ("U05", 3, 2, 3, None, [0, 1], "uRR", 0),
    ("U06", 8, 2, "50%", None, list(range(7)), "uRuRRRRu", 3),
    ("U07", 5, 0, 2, None, list(range(5)), "uuuuu", 2),
    ("U08", 5, 0, 2, None, [0, 1, 2], "uuuuu", 0),
    ("U09", 5, 0, 2, None, [0, 1, 2], "uuuRu", 1),
    ("U10", 5, 0, 2, 1, list(range(5)), "uuuuuu", 2),
    ("U11", 5, 0, 2, 1, list(range(4)), "uuuuRu", 2),
    ("U12", 5, 0, 2, 1, [0, 1, 2], "uuuuRu", 1),
    ("U13", 5, 0, 2, 1, [0, 1, 2], "uuuuuu", 0),
    ("U14", 8, 7, 2, None, [0, 1, 2], "RRRuuuuu", 2),
    ("U15", 4, None, 0, 2, [0, 1], "RRRRR", 1),
    ("U16", 4, None, 0, 2, [0, 1, 2, 3], "RRRRRR", 2),
]
ROLLBACK = CloneSetFeatureGates(partition_rollback=True)


@pytest.mark.parametrize(
    ("row_id", "replicas", "partition", "max_unavailable", "max_surge", "old", "pods", "expected"),
    ROWS,
    ids=[row[0] for row in ROWS],
)
def test_update_count(
    row_id: str,
    replicas: int,
    partition: int | None,
    max_unavailable: int | str | None,
    max_surge: int | None,
    old: list[int],
    pods: str,
    expected: int,
) -> None:
    cs = make_cloneset(replicas, partition=partition, max_unavailable=max_unavailable, max_surge=max_surge)
    pod_objs = [
        make_pod(f"p{i}", "current" if i in old else "updated", state=None, ready=c == "R", has_status=c == "R")
        for i, c in enumerate(pods)
    ]
    diffs = calculate_diffs(cs, pod_objs, "current", "updated", now=NOW, gates=ROLLBACK, for_scale=False)
    if diffs.update_num > 0:
        candidates, target = old, "updated"
    else:
        candidates, target = [i for i in range(len(pods)) if i not in old], "current"
    allowed = limit_update_candidates(cs, diffs, candidates, pod_objs, target, NOW)
    assert len(allowed) == expected, row_id
    assert allowed == candidates[:expected]


def test_reference_variant_of_the_rollback_row() -> None:
    """The notes give the rollback row with maxUnavailable 3: three new pods go back."""
    cs = make_cloneset(8, partition=7, max_unavailable=3)
    pods = [make_pod(f"p{i}", "current" if i < 3 else "updated", ready=i < 3, has_status=i < 3) for i in range(8)]
    plan = pods_to_update(cs, pods, "current", "updated", now=NOW, gates=ROLLBACK)
    assert plan.target_revision == "current"
    assert plan.diffs.update_num == -4
    assert len(plan.indexes) == 3
    assert all(i >= 3 for i in plan.indexes)


def test_without_the_rollback_gate_nothing_moves_back() -> None:
    cs = make_cloneset(8, partition=7, max_unavailable=3)
    pods = [make_pod(f"p{i}", "current" if i < 3 else "updated") for i in range(8)]
    plan = pods_to_update(cs, pods, "current", "updated", now=NOW, gates=CloneSetFeatureGates())
    assert plan.indexes == []


def test_paused_updates_nothing() -> None:
    cs = make_cloneset(3, paused=True)
    pods = [make_pod(f"p{i}", "old") for i in range(3)]
    plan = pods_to_update(cs, pods, "old", "new", now=NOW, gates=CloneSetFeatureGates())
    assert plan.indexes == []
    assert plan.diffs.update_num == 3
