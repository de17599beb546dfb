"""Pod deletion order (upstream ``replica_set.go`` ``getPodsToDelete``,
``controller_utils.go`` ``ActivePodsWithRanks``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest

from kubeloop.api.deletioncost import POD_DELETION_COST_ANNOTATION as POD_DELETION_COST
from kubeloop.api.meta import format_micro_time
from kubeloop.controllers.replicaset.ranking import (
    RankingFactsCache,
    deleted_before,
    pods_to_delete,
    ranks_by_related_pods_on_same_node,
    sorted_for_deletion,
)

Obj = dict[str, Any]
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def _pod(
    name: str,
    node: str = "",
    phase: str = "Running",
    ready: bool | None = None,
    restarts: int = 0,
    ready_since: datetime | None = None,
    created: datetime | None = None,
    annotations: dict[str, str] | None = None,
    uid: str = "",
) -> Obj:
    conditions = []
    if ready is not None:
        condition: Obj = {"type": "Ready", "status": "True" if ready else "False"}
        if ready_since is not None:
            condition["lastTransitionTime"] = format_micro_time(ready_since)
        conditions.append(condition)
    metadata: Obj = {"name": name, "uid": uid, "annotations": dict(annotations or {})}
    if created is not None:
        metadata["creationTimestamp"] = format_micro_time(created)
    return {
        "metadata": metadata,
        "spec": {"nodeName": node},
        "status": {"phase": phase, "conditions": conditions, "containerStatuses": [{"restartCount": restarts}]},
    }


MONTH_AGO = NOW - timedelta(days=30)
UNSCHEDULED = _pod("unscheduled", phase="Pending")
PENDING = _pod("pending", "node", "Pending")
UNKNOWN = _pod("unknown-phase", "node", "Unknown")
NOT_READY = _pod("not-ready", "node", "Running")
READY_NO_TIME = _pod("ready-no-time", "node", ready=True)
READY_NOW = _pod("ready-now", "node", ready=True, ready_since=NOW, created=NOW)
READY_THEN = _pod("ready-then", "node", ready=True, ready_since=MONTH_AGO, created=MONTH_AGO)
READY_HIGH_RESTARTS = _pod("ready-restarts", "node", ready=True, restarts=9001, ready_since=NOW, created=NOW)
READY_NOW_CREATED_THEN = _pod("ready-now-created-then", "node", ready=True, ready_since=NOW, created=MONTH_AGO)
LOW_COST = _pod(
    "low-cost", "node", ready=True, ready_since=NOW, created=MONTH_AGO, annotations={POD_DELETION_COST: "10"}
)
HIGH_COST = _pod(
    "high-cost", "node", ready=True, ready_since=NOW, created=MONTH_AGO, annotations={POD_DELETION_COST: "100"}
)
# "+10" and "008" are invalid upstream, so they cost 0 (not 10 and 8).
PLUS_TEN_COST = _pod(
    "plus-ten-cost", "node", ready=True, ready_since=NOW, created=MONTH_AGO, annotations={POD_DELETION_COST: "+10"}
)
LEADING_ZERO_COST = _pod(
    "leading-zero-cost", "node", ready=True, ready_since=NOW, created=MONTH_AGO, annotations={POD_DELETION_COST: "008"}
)
FIVE_COST = _pod(
    "five-cost", "node", ready=True, ready_since=NOW, created=MONTH_AGO, annotations={POD_DELETION_COST: "5"}
)
UNSCHEDULED_5H = _pod("unscheduled-5h", phase="Pending", created=NOW - timedelta(hours=5))
UNSCHEDULED_8H = _pod("unscheduled-8h", phase="Pending", created=NOW - timedelta(hours=8))
READY_2H = _pod("ready-2h", ready=True, ready_since=NOW - timedelta(hours=2), created=MONTH_AGO)
READY_5H = _pod("ready-5h", ready=True, ready_since=NOW - timedelta(hours=5), created=MONTH_AGO)
READY_8H = _pod("ready-8h", ready=True, ready_since=NOW - timedelta(hours=8), created=MONTH_AGO)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (UNSCHEDULED, UNSCHEDULED),
        (PENDING, PENDING),
        (UNKNOWN, UNKNOWN),
        (NOT_READY, NOT_READY),
        (READY_NOW_CREATED_THEN, READY_NOW_CREATED_THEN),
        (READY_NOW, READY_NOW),
        (READY_THEN, READY_THEN),
        (READY_HIGH_RESTARTS, READY_HIGH_RESTARTS),
        (UNSCHEDULED_5H, UNSCHEDULED_8H),  # same power-of-two age bucket, equal (empty) UIDs
        (READY_5H, READY_8H),
    ],
)
def test_equivalent_pods(first: Obj, second: Obj) -> None:
    assert not deleted_before(first, 1, second, 1, NOW)
    assert not deleted_before(second, 1, first, 1, NOW)


@pytest.mark.parametrize(
    ("first", "first_rank", "second", "second_rank", "use_cost"),
    [
        (UNSCHEDULED, 1, PENDING, 2, True),
        (UNSCHEDULED, 2, PENDING, 1, True),
        (PENDING, 1, UNKNOWN, 2, True),
        (UNKNOWN, 1, NOT_READY, 2, True),
        (NOT_READY, 1, READY_NO_TIME, 1, True),
        (READY_NO_TIME, 1, READY_NOW, 1, True),  # a missing ready time counts as the most recent
        (READY_NOW, 2, READY_NO_TIME, 1, True),  # rank beats ready time
        (READY_NOW, 1, READY_THEN, 1, True),
        (READY_NOW, 2, READY_THEN, 1, True),
        (READY_HIGH_RESTARTS, 1, READY_NOW, 1, True),
        (READY_NOW, 2, READY_HIGH_RESTARTS, 1, True),
        (READY_NOW, 1, READY_NOW_CREATED_THEN, 1, True),
        (READY_NOW_CREATED_THEN, 2, READY_NOW, 1, True),
        (LOW_COST, 2, HIGH_COST, 1, True),  # cost beats rank
        (HIGH_COST, 2, LOW_COST, 1, False),  # without deletion cost, rank decides
        (PLUS_TEN_COST, 1, FIVE_COST, 1, True),  # invalid costs count as 0
        (LEADING_ZERO_COST, 1, FIVE_COST, 1, True),
        (READY_2H, 1, READY_5H, 1, True),  # different age buckets
    ],
)
def test_deletion_order(first: Obj, first_rank: int, second: Obj, second_rank: int, use_cost: bool) -> None:
    assert deleted_before(first, first_rank, second, second_rank, NOW, use_deletion_cost=use_cost)
    assert not deleted_before(second, second_rank, first, first_rank, NOW, use_deletion_cost=use_cost)


def test_equal_age_buckets_fall_back_to_uid() -> None:
    a = _pod("a", ready=True, ready_since=NOW - timedelta(hours=5), uid="aaa")
    b = _pod("b", ready=True, ready_since=NOW - timedelta(hours=8), uid="bbb")
    assert deleted_before(a, 1, b, 1, NOW) and not deleted_before(b, 1, a, 1, NOW)
    # Linear comparison (no logarithmic buckets): the more recently ready goes first.
    assert deleted_before(a, 1, b, 1, NOW, logarithmic=False)
    assert deleted_before(b, 1, a, 1, None) is False


UNSCHEDULED_PENDING = _pod("unscheduled-pending", phase="Pending")
SCHEDULED_PENDING = _pod("scheduled-pending", "fake-node", "Pending")
RUNNING_NOT_READY = _pod("running-not-ready", "fake-node", ready=False)
READY_NODE_1 = _pod("ready-node-1", "fake-node-1", ready=True)
READY_NODE_2 = _pod("ready-node-2", "fake-node-2", ready=True)


def _names(pods: list[Any]) -> list[str]:
    return [pod["metadata"]["name"] for pod in pods]


@pytest.mark.parametrize(
    ("pods", "related", "count", "expected"),
    [
        ([], None, 0, []),
        ([RUNNING_NOT_READY, READY_NODE_1], None, 2, [RUNNING_NOT_READY, READY_NODE_1]),  # all go: no sort
        ([READY_NODE_1, RUNNING_NOT_READY], None, 1, [RUNNING_NOT_READY]),
        (
            [READY_NODE_1, READY_NODE_1, READY_NODE_2, RUNNING_NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            None,
            6,
            [READY_NODE_1, READY_NODE_1, READY_NODE_2, RUNNING_NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
        ),
        (
            [READY_NODE_1, READY_NODE_1, READY_NODE_2, RUNNING_NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            [],
            6,
            [READY_NODE_1, READY_NODE_1, READY_NODE_2, RUNNING_NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
        ),
        ([SCHEDULED_PENDING, UNSCHEDULED_PENDING], None, 1, [UNSCHEDULED_PENDING]),
        ([READY_NODE_1, RUNNING_NOT_READY, RUNNING_NOT_READY], None, 2, [RUNNING_NOT_READY, RUNNING_NOT_READY]),
        ([READY_NODE_1, READY_NODE_2], [READY_NODE_1, READY_NODE_2, READY_NODE_2], 1, [READY_NODE_2]),
        ([SCHEDULED_PENDING, RUNNING_NOT_READY], None, 1, [SCHEDULED_PENDING]),
        (
            [READY_NODE_1, READY_NODE_2, RUNNING_NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            None,
            3,
            [UNSCHEDULED_PENDING, SCHEDULED_PENDING, RUNNING_NOT_READY],
        ),
    ],
)
def test_pods_to_delete(pods: list[Obj], related: list[Obj] | None, count: int, expected: list[Obj]) -> None:
    chosen = pods_to_delete(pods, pods if related is None else related, count, NOW)
    assert _names(chosen) == _names(expected)


def test_ranks_count_active_related_pods_per_node() -> None:
    finished = _pod("done", "n1", phase="Succeeded")
    related = [_pod("a", "n1"), _pod("b", "n1"), _pod("c", "n2"), finished]
    assert ranks_by_related_pods_on_same_node([_pod("x", "n1"), _pod("y", "n2"), _pod("z", "n3")], related) == [2, 1, 0]


def test_sorted_for_deletion_agrees_with_the_pairwise_rule() -> None:
    pods = [
        _pod(f"p{i}", node=("" if i % 7 == 0 else f"n{i % 3}"), phase=("Pending" if i % 5 == 0 else "Running"),
             ready=(i % 2 == 0), restarts=i % 4, ready_since=NOW - timedelta(seconds=17 * i),
             created=NOW - timedelta(minutes=i), uid=f"u{(i * 37) % 23:02d}",
             annotations={POD_DELETION_COST: str(i % 3)})
        for i in range(23)
    ]
    ranks = [i % 4 for i in range(23)]
    rank_of = {p["metadata"]["name"]: r for p, r in zip(pods, ranks, strict=True)}
    ordered = sorted_for_deletion(pods, ranks, NOW)
    assert sorted(p["metadata"]["name"] for p in ordered) == sorted(p["metadata"]["name"] for p in pods)
    for earlier, later in pairwise(ordered):
        assert not deleted_before(later, rank_of[later["metadata"]["name"]],
                                  earlier, rank_of[earlier["metadata"]["name"]], NOW)


def _mixed_pods(count: int) -> list[Obj]:
    return [
        _pod(f"p{i}", node=("" if i % 7 == 0 else f"n{i % 3}"), phase=("Pending" if i % 5 == 0 else "Running"),
             ready=(i % 2 == 0), restarts=i % 4, ready_since=NOW - timedelta(seconds=17 * (i % 6)),
             created=NOW - timedelta(minutes=i % 5), uid=f"u{(i * 37) % 23:02d}-{i}",
             annotations={POD_DELETION_COST: str(i % 3)})
        for i in range(count)
    ]


@pytest.mark.parametrize("count", [1, 2, 5, 17, 39])
def test_pods_to_delete_is_the_head_of_the_full_order(count: int) -> None:
    pods = _mixed_pods(40)
    related = pods[::2]
    ranks = ranks_by_related_pods_on_same_node(pods, related)
    assert pods_to_delete(pods, related, count, NOW) == sorted_for_deletion(pods, ranks, NOW)[:count]


def test_ranking_facts_are_read_once_per_pod_version() -> None:
    pods = _mixed_pods(12)
    for index, pod in enumerate(pods):
        pod["metadata"]["resourceVersion"] = str(index + 1)
    cache = RankingFactsCache()
    first = pods_to_delete(pods, pods, 4, NOW, cache=cache)
    assert len(cache) == 12
    assert pods_to_delete(pods, pods, 4, NOW, cache=cache) == first == pods_to_delete(pods, pods, 4, NOW)
    # A new version of a victim is read again (here it turns Pending).
    changed = {**first[-1], "status": {**first[-1]["status"], "phase": "Pending"},
               "metadata": {**first[-1]["metadata"], "resourceVersion": "99"}}
    rest = [changed if pod is first[-1] else pod for pod in pods]
    assert pods_to_delete(rest, rest, 4, NOW, cache=cache) == pods_to_delete(rest, rest, 4, NOW)
    cache.forget(changed)
    assert len(cache) == 11
