"""Recreate planning and the old-pod gate (upstream
``pkg/controller/deployment/recreate.go`` ``rolloutRecreate``, ``oldPodsRunning``)."""

from __future__ import annotations

import pytest
from deployment_builders import Obj, deployment, replica_set

from kubeloop.controllers.deployment.recreate import (
    old_pods_running,
    plan_recreate,
    scale_down_old_replica_sets_for_recreate,
)


def _pod(phase: str = "", deleting: bool = False) -> Obj:
    pod: Obj = {"metadata": {"name": "p"}, "status": {"phase": phase}}
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    return pod


@pytest.mark.parametrize(
    ("old", "pods", "expected"),
    [
        ([], {}, False),
        ([replica_set("rs-1", 1, uid="uid-1")], {"uid-1": [_pod()]}, True),
        ([replica_set("rs-1", 0, status_replicas=1, uid="uid-1")], {}, True),
        ([replica_set("rs-1", 0, status_replicas=0, uid="uid-1")], {}, False),
        ([replica_set("rs-1", 0, uid="uid-1")], {"uid-1": [_pod("Failed"), _pod("Succeeded")]}, False),
        ([replica_set("rs-1", 0, uid="uid-1")], {"uid-1": [_pod("Unknown")]}, True),
        ([replica_set("rs-1", 0, uid="uid-1")], {"uid-1": [_pod("Pending")]}, True),
        ([replica_set("rs-1", 0, uid="uid-1")], {"uid-1": [_pod("Running")]}, True),
        ([replica_set("rs-1", 0, uid="uid-1")], {"uid-1": [_pod("Running", deleting=True)]}, True),
        (
            [
                replica_set("rs-1", 0, uid="uid-1"),
                replica_set("rs-2", 0, uid="uid-2"),
                replica_set("rs-3", 0, uid="uid-3"),
            ],
            {"uid-1": [_pod("Failed"), _pod("Succeeded")], "uid-2": [], "uid-3": [_pod("Pending")]},
            True,
        ),
    ],
)
def test_old_pods_running(old: list[Obj], pods: dict[str, list[Obj]], expected: bool) -> None:
    assert old_pods_running(None, old, pods) is expected


def test_pods_of_the_new_replica_set_do_not_count() -> None:
    new = replica_set("new", 1, uid="uid-new")
    assert not old_pods_running(new, [], {"uid-new": [_pod("Running")]})


def test_scale_down_old_replica_sets() -> None:
    old = replica_set("old", 3)
    operations = scale_down_old_replica_sets_for_recreate(deployment(1, strategy="Recreate"), [old])
    assert [(op.name, op.new_replicas) for op in operations] == [("old", 0)]
    assert operations[0].updated["spec"]["replicas"] == 0


def test_recreate_steps_in_order() -> None:
    d = deployment(3, strategy="Recreate")
    old = replica_set("old", 2, uid="uid-old")
    step = plan_recreate(d, None, [old], {"uid-old": [_pod("Running")]})
    assert [op.name for op in step.scale_down] == ["old"]

    drained = replica_set("old", 0, status_replicas=0, uid="uid-old")
    waiting = plan_recreate(d, None, [drained], {"uid-old": [_pod("Running", deleting=True)]})
    assert waiting.wait_for_old_pods and not waiting.create_new

    create = plan_recreate(d, None, [drained], {"uid-old": []})
    assert create.create_new and not create.wait_for_old_pods

    new = replica_set("new", 1, uid="uid-new")
    grow = plan_recreate(d, new, [drained], {"uid-new": [_pod("Running")]})
    assert grow.scale_up is not None and grow.scale_up.new_replicas == 3
    done = plan_recreate(d, replica_set("new", 3), [drained], {})
    assert (done.scale_down, done.wait_for_old_pods, done.create_new, done.scale_up) == ([], False, False, None)
