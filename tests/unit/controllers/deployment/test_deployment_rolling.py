"""RollingUpdate planning (upstream ``pkg/controller/deployment/rolling.go``
``rolloutRolling``, ``reconcileNewReplicaSet``, ``reconcileOldReplicaSets``, ``cleanupUnhealthyReplicas``,
``scaleDownOldReplicaSetsForRollingUpdate``)."""

from __future__ import annotations

import pytest
from deployment_builders import NEWER, OLD, OLDER, deployment, replica_set

from kubeloop.controllers.deployment.annotations import DESIRED_REPLICAS, MAX_REPLICAS
from kubeloop.controllers.deployment.rolling import (
    cleanup_unhealthy_replicas,
    reconcile_new_replica_set,
    reconcile_old_replica_sets,
    scale_down_old_replica_sets_for_rolling_update,
)


@pytest.mark.parametrize(
    ("surge", "old_size", "new_size", "expected"),
    [
        (0, 10, 0, None),  # no surge and 10 pods already: nothing to do
        (2, 10, 0, 2),
        (2, 5, 0, 7),
        (2, 10, 2, None),  # at the ceiling of 12
        (2, 2, 11, 10),  # larger than replicas: shrink to replicas
    ],
)
def test_reconcile_new_replica_set(surge: int, old_size: int, new_size: int, expected: int | None) -> None:
    d = deployment(10, max_surge=surge, max_unavailable=0)
    new, old = replica_set("new", new_size, created=NEWER), replica_set("old", old_size, created=OLD)
    operation = reconcile_new_replica_set(d, [new, old], new)
    if expected is None:
        assert operation is None
        return
    assert operation is not None
    assert operation.new_replicas == expected
    assert operation.updated["spec"]["replicas"] == expected
    assert operation.updated["metadata"]["annotations"] == {DESIRED_REPLICAS: "10", MAX_REPLICAS: str(10 + surge)}
    assert new["spec"]["replicas"] == new_size  # the input is untouched


@pytest.mark.parametrize(
    ("unavailable", "old_size", "new_size", "old_available", "new_available", "scaled", "old_after"),
    [
        (0, 10, 0, 10, 0, True, 9),  # fencepost: one unavailable pod allowed
        (2, 10, 0, 10, 0, True, 8),
        (2, 10, 0, 8, 0, True, 8),  # the 2 unavailable old pods go first
        (2, 10, 0, 9, 0, True, 8),  # 1 unavailable cleaned, then 1 available scaled down
        (2, 8, 2, 8, 0, False, 8),  # 10 - 8 - 2 unavailable new pods: no room
    ],
)
def test_reconcile_old_replica_sets(
    unavailable: int,
    old_size: int,
    new_size: int,
    old_available: int,
    new_available: int,
    scaled: bool,
    old_after: int,
) -> None:
    d = deployment(10, max_surge=0, max_unavailable=unavailable)
    old = replica_set("old", old_size, available=old_available, created=OLD)
    new = replica_set("new", new_size, available=new_available, created=NEWER)
    plan = reconcile_old_replica_sets(d, [old, new], [old], new)
    assert plan.scaled is scaled
    final = old_size
    for operation in plan.operations:
        assert operation.name == "old"
        final = operation.new_replicas
    assert final == old_after


@pytest.mark.parametrize(
    ("old_available", "max_cleanup", "cleaned"),
    [(8, 1, 1), (8, 3, 2), (8, 0, 0), (10, 3, 0)],
)
def test_cleanup_unhealthy_replicas(old_available: int, max_cleanup: int, cleaned: int) -> None:
    d = deployment(10, max_surge=2, max_unavailable=2)
    old = replica_set("old", 10, available=old_available, created=OLD)
    plan = cleanup_unhealthy_replicas(d, [old], max_cleanup)
    assert plan.scaled == cleaned
    assert plan.replica_sets[0]["spec"]["replicas"] == 10 - cleaned
    assert len(plan.operations) == (1 if cleaned else 0)


@pytest.mark.parametrize(
    ("unavailable", "available", "old_size", "old_after"),
    [(0, 10, 10, 9), (2, 10, 10, 8), (2, 8, 10, None), (2, 10, 0, None), (2, 1, 10, None)],
)
def test_scale_down_old_replica_sets_for_rolling_update(
    unavailable: int, available: int, old_size: int, old_after: int | None
) -> None:
    d = deployment(10, max_surge=0, max_unavailable=unavailable)
    old = replica_set("old", old_size, available=available, created=OLD)
    plan = scale_down_old_replica_sets_for_rolling_update(d, [old], [old])
    if old_after is None:
        assert plan.operations == []
        return
    assert [(step.operation.name, step.operation.new_replicas) for step in plan.operations] == [("old", old_after)]


def test_cleanup_goes_oldest_first_and_feeds_the_scale_down() -> None:
    d = deployment(10, max_surge=3, max_unavailable=2)
    older = replica_set("v1", 4, available=2, created=OLDER)
    old = replica_set("v2", 6, available=6, created=OLD)
    new = replica_set("v3", 3, available=3, created=NEWER)
    # 13 pods, floor 8, new fully available: 5 may go; 2 unhealthy from v1 first, then
    # availability 11 > 8 allows 3 more, again oldest first (v1's remaining 2, then 1 of v2).
    plan = reconcile_old_replica_sets(d, [old, older, new], [old, older], new)
    assert [(op.name, op.old_replicas, op.new_replicas) for op in plan.operations] == [
        ("v1", 4, 2),
        ("v1", 2, 0),
        ("v2", 6, 5),
    ]
    assert (plan.cleaned, plan.scaled_down, plan.scaled) == (2, 3, True)


def test_upstream_crash_loop_example() -> None:
    """R=10, maxSurge 3, maxUnavailable 2, and a new template whose pods never become available."""
    d = deployment(10, max_surge=3, max_unavailable=2)
    old = replica_set("old", 8, available=7, created=OLD)  # one old pod lost to a node failure
    new = replica_set("new", 5, available=0, created=NEWER)
    plan = reconcile_old_replica_sets(d, [old, new], [old], new)
    assert (plan.max_scaled_down, plan.operations, plan.scaled) == (0, [], False)

    # After a rollback the healthy old template is new again: 13 - 8 - 1 = 4 crash-looping go.
    good = replica_set("good", 8, available=7, created=OLD)
    bad = replica_set("bad", 5, available=0, created=NEWER)
    plan = reconcile_old_replica_sets(d, [bad, good], [bad], good)
    assert plan.max_scaled_down == 4
    assert [(op.name, op.new_replicas) for op in plan.operations] == [("bad", 1)]


def test_inconsistent_old_replica_set_aborts_the_phase() -> None:
    d = deployment(10, max_surge=0, max_unavailable=2)
    older = replica_set("v1", 3, available=2, created=OLDER)
    broken = replica_set("v2", 5, available=7, created=OLD)  # more available than desired
    new = replica_set("v3", 2, available=2, created=NEWER)
    plan = reconcile_old_replica_sets(d, [older, broken, new], [older, broken], new)
    assert [(op.name, op.new_replicas) for op in plan.operations] == [("v1", 2)]
    assert plan.scaled is False
