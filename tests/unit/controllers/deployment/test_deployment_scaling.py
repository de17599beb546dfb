"""Scaling events and proportional scaling (upstream
``pkg/controller/deployment/sync.go`` ``isScalingEvent``, ``scale``, ``scaleReplicaSet``;
``util/deployment_util.go`` ``getReplicaSetFraction``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from deployment_builders import NEWER, OLD, OLDER, Obj, deployment, pod_template, replica_set

from kubeloop.controllers.deployment.annotations import DESIRED_REPLICAS, MAX_REPLICAS
from kubeloop.controllers.deployment.scaling import (
    find_active_or_latest,
    is_saturated,
    is_scaling_event,
    plan_scale,
    replica_set_fraction,
    round_half_away_from_zero,
    scale_replica_set,
    scale_replica_set_to,
)
from kubeloop.controllers.deployment.strategy import max_surge

# (name, size, created) with the new ReplicaSet first, or None when there is no new one.
Sizes = list[tuple[str, int, datetime]]


def _sized_for(rs: Obj, previous: Obj, desired: int | None = None) -> Obj:
    """Annotate ``rs`` as last sized by ``previous`` (upstream's TestScale set-up)."""
    wanted = previous["spec"]["replicas"] if desired is None else desired
    rs["metadata"]["annotations"] = {DESIRED_REPLICAS: str(wanted), MAX_REPLICAS: str(wanted + max_surge(previous))}
    return rs


SCALE_CASES: list[tuple[str, int, Any, int, Any, dict[str, int] | None, Sizes, dict[str, int]]] = [
    # name, R, surge, previous R, previous surge, desired-annotation overrides, RSs, expected sizes
    ("10 -> 12", 12, 0, 10, 0, None, [("v1", 10, NEWER)], {"v1": 12}),
    ("10 -> 5", 5, 0, 10, 0, None, [("v1", 10, NEWER)], {"v1": 5}),
    ("proportional 5 -> 10", 10, 0, 5, 0, None, [("v2", 2, NEWER), ("v1", 3, OLD)], {"v2": 4, "v1": 6}),
    ("proportional 5 -> 3", 3, 0, 5, 0, None, [("v2", 2, NEWER), ("v1", 3, OLD)], {"v2": 1, "v1": 2}),
    ("proportional 9 -> 4", 4, 0, 9, 0, None, [("v2", 8, NEWER), ("v1", 1, OLD)], {"v2": 4, "v1": 0}),
    (
        "proportional 7 -> 10",
        10,
        0,
        7,
        0,
        None,
        [("v3", 2, NEWER), ("v2", 3, OLD), ("v1", 2, OLDER)],
        {"v3": 3, "v2": 4, "v1": 3},
    ),
    (
        "proportional 13 -> 8",
        8,
        0,
        13,
        0,
        None,
        [("v3", 2, NEWER), ("v2", 8, OLD), ("v1", 3, OLDER)],
        {"v3": 1, "v2": 5, "v1": 2},
    ),
    # Every fraction rounds to 0; the +1 left over goes to the newest of the equal sizes.
    ("leftover 3 -> 4", 4, 0, 3, 0, None, [("v3", 1, NEWER), ("v2", 1, OLD), ("v1", 1, OLDER)], {"v3": 2}),
    # The -1 left over comes off the oldest of the equal sizes.
    ("leftover 3 -> 2", 2, 0, 3, 0, None, [("v3", 1, NEWER), ("v2", 1, OLD), ("v1", 1, OLDER)], {"v1": 0}),
    ("6 -> 0", 0, 0, 6, 0, None, [("v3", 3, NEWER), ("v2", 2, OLD), ("v1", 1, OLDER)], {"v3": 0, "v2": 0, "v1": 0}),
    ("0 -> 6", 6, 0, 6, 0, None, [("v3", 0, NEWER), ("v2", 0, OLD), ("v1", 0, OLDER)], {"v3": 6}),
    # v2 was sized for 3: its share is round(1 * 5 / 3) - 1 = 1; the others keep theirs.
    ("stale annotation", 5, 0, 5, 0, {"v2": 3}, [("v3", 2, NEWER), ("v2", 1, OLD), ("v1", 1, OLDER)], {"v2": 2}),
    ("with surge 10 -> 20", 20, 2, 10, 2, None, [("v2", 6, NEWER), ("v1", 6, OLD)], {"v2": 11, "v1": 11}),
    ("surge and size 10 -> 50", 50, 6, 10, 3, None, [("v2", 5, NEWER), ("v1", 8, OLD)], {"v2": 22, "v1": 34}),
]


@pytest.mark.parametrize(
    ("replicas", "surge", "previous_replicas", "previous_surge", "overrides", "sizes", "expected"),
    [case[1:] for case in SCALE_CASES],
    ids=[case[0] for case in SCALE_CASES],
)
def test_proportional_scaling(
    replicas: int,
    surge: Any,
    previous_replicas: int,
    previous_surge: Any,
    overrides: dict[str, int] | None,
    sizes: Sizes,
    expected: dict[str, int],
) -> None:
    d = deployment(replicas, max_surge=surge, max_unavailable=0)
    previous = deployment(previous_replicas, max_surge=previous_surge, max_unavailable=0)
    built = [
        _sized_for(replica_set(name, size, created=created), previous, (overrides or {}).get(name))
        for name, size, created in sizes
    ]
    operations = plan_scale(d, built[0], built[1:])
    resized = {op.name: op.new_replicas for op in operations if op.size_changed}
    assert resized == expected


def test_proportional_scaling_without_new_replica_set_rounds_half_away_from_zero() -> None:
    previous = deployment(4)
    old = [
        _sized_for(replica_set("v2", 2, created=OLD), previous),
        _sized_for(replica_set("v1", 2, created=OLDER), previous),
    ]
    operations = plan_scale(deployment(5), None, old)
    # v2's share is round(2 * 5 / 4 = 2.5) - 2 = 1; banker's rounding would give 0.
    assert {op.name: op.new_replicas for op in operations if op.size_changed} == {"v2": 3}


def test_scaling_while_the_template_changed() -> None:
    previous = deployment(10)
    changed = deployment(14, template=pod_template({"foo": "bar", "another": "label"}))
    old = [
        _sized_for(replica_set("v2", 7, created=NEWER), previous),
        _sized_for(replica_set("v1", 3, created=OLD), previous),
    ]
    operations = plan_scale(changed, None, old)
    assert {op.name: op.new_replicas for op in operations} == {"v2": 10, "v1": 4}


def test_saturated_but_broken_new_replica_set_leaves_old_pods_alone() -> None:
    d = deployment(2, max_surge=1, max_unavailable=1)
    new = _sized_for(replica_set("v2", 2, created=NEWER, available=0), d)
    old = _sized_for(replica_set("v1", 1, created=OLD), d)
    assert plan_scale(d, new, [old]) == []


def test_saturated_new_replica_set_scales_old_ones_to_zero() -> None:
    d = deployment(3, max_surge=1, max_unavailable=1)
    new = _sized_for(replica_set("v3", 3, created=NEWER, available=3), d)
    old = [_sized_for(replica_set("v2", 2, created=OLD), d), _sized_for(replica_set("v1", 0, created=OLDER), d)]
    operations = plan_scale(d, new, old)
    assert [(op.name, op.new_replicas, op.event_message) for op in operations] == [
        ("v2", 0, "Scaled down replica set v2 to 0 from 2")
    ]


def test_recreate_does_not_scale_proportionally() -> None:
    d = deployment(6, strategy="Recreate")
    new, old = replica_set("v2", 2, created=NEWER), replica_set("v1", 3, created=OLD)
    assert plan_scale(d, new, [old]) == []


def test_annotations_alone_are_refreshed_on_the_scaled_replica_sets() -> None:
    d = deployment(4)
    stale = _sized_for(replica_set("v2", 2, created=NEWER), deployment(4), desired=4)
    stale["metadata"]["annotations"][MAX_REPLICAS] = "9"
    operation = scale_replica_set(stale, 2, d, "")
    assert operation is not None
    assert not operation.size_changed and operation.event_message is None
    assert operation.updated["metadata"]["annotations"][MAX_REPLICAS] == "4"
    assert scale_replica_set(_sized_for(replica_set("v2", 2), d), 2, d, "") is None
    assert scale_replica_set_to(stale, 2, d) is None  # same size: not even the annotations


def test_scale_event_messages() -> None:
    rs = replica_set("web-abc", 3)
    up = scale_replica_set_to(rs, 5, deployment(5))
    down = scale_replica_set_to(rs, 1, deployment(5))
    assert up is not None and up.event_message == "Scaled up replica set web-abc to 5 from 3"
    assert down is not None and down.event_message == "Scaled down replica set web-abc to 1 from 3"


@pytest.mark.parametrize(
    ("replicas", "status_replicas", "surge", "size", "annotation", "expected"),
    [
        (0, 0, 0, 10, None, -10),
        (10, 0, 0, 5, None, 0),  # nothing to divide by
        (10, 0, 0, 5, "0", 0),
        (120, 100, 0, 50, None, 10),  # falls back to status.replicas
        (120, 100, 0, 50, "0", 10),
        (120, 0, 0, 50, "100", 10),
        (120, 0, 10, 50, "110", 9),  # round(50 * 130 / 110 = 59.09) - 50
        (10, 0, 0, 6, "12", -1),  # round(6 * 10 / 12 = 5) - 6
        (100, 0, 10, 50, "130", -8),  # round(50 * 110 / 130 = 42.3) - 50
    ],
)
def test_replica_set_fraction(
    replicas: int, status_replicas: int, surge: int, size: int, annotation: str | None, expected: int
) -> None:
    d = deployment(replicas, max_surge=surge, max_unavailable=1, status={"replicas": status_replicas})
    rs = replica_set("rs", size, annotations={MAX_REPLICAS: annotation} if annotation is not None else None)
    assert replica_set_fraction(rs, d) == expected


@pytest.mark.parametrize(
    ("value", "expected"), [(2.5, 3), (-2.5, -3), (2.4999, 2), (-0.5, -1), (0.5, 1), (0.0, 0), (59.09, 59)]
)
def test_round_half_away_from_zero(value: float, expected: int) -> None:
    assert round_half_away_from_zero(value) == expected


def test_find_active_or_latest() -> None:
    new = replica_set("v3", 0, created=NEWER)
    old_active = replica_set("v2", 2, created=OLD)
    old_idle = replica_set("v1", 0, created=OLDER)
    assert find_active_or_latest(None, []) is None
    assert find_active_or_latest(new, [old_idle]) is new
    assert find_active_or_latest(None, [old_idle, replica_set("v2", 0, created=OLD)])["metadata"]["name"] == "v2"
    assert find_active_or_latest(new, [old_active, old_idle]) is old_active
    assert find_active_or_latest(replica_set("v3", 1), [old_active]) is None


def test_is_saturated_and_scaling_event() -> None:
    d = deployment(1)
    rs = replica_set("rs", 1, available=1, annotations={DESIRED_REPLICAS: "1"})
    assert is_saturated(d, rs)
    assert not is_saturated(d, None)
    assert not is_saturated(d, replica_set("rs", 1, available=0, annotations={DESIRED_REPLICAS: "1"}))
    assert not is_saturated(d, replica_set("rs", 1, available=1, annotations={DESIRED_REPLICAS: "x"}))

    sized_for_three = replica_set("new", 3, annotations={DESIRED_REPLICAS: "3"})
    assert is_scaling_event(deployment(5), sized_for_three, [])
    assert not is_scaling_event(
        deployment(3), sized_for_three, [replica_set("old", 0, annotations={DESIRED_REPLICAS: "9"})]
    )
    assert not is_scaling_event(deployment(5), replica_set("new", 3), [])  # no annotation: ignored
