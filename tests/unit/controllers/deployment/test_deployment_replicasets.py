"""ReplicaSet orderings, the active filter and replica counters (upstream
``deployment/util/deployment_util.go`` ``GetReplicaCountForReplicaSets``,
``GetActualReplicaCountForReplicaSets``; ``pkg/controller/controller_utils.go``
``FilterActiveReplicaSets``, ``ReplicaSetsByCreationTimestamp``, ``ReplicaSetsBySizeNewer``)."""

from __future__ import annotations

from deployment_builders import NEWER, OLD, OLDER, Obj, replica_set

from kubeloop.controllers.deployment import replicasets
from kubeloop.controllers.deployment.annotations import REVISION


def _names(items: list[Obj]) -> list[str]:
    return [rs["metadata"]["name"] for rs in items]


def _counted(name: str, spec: int, actual: int, terminating: int | None, observed: int) -> Obj:
    rs = replica_set(name, spec, status_replicas=actual, observed_generation=observed)
    if terminating is not None:
        rs["status"]["terminatingReplicas"] = terminating
    return rs


def test_replica_counters() -> None:
    rs1 = _counted("rs1", 1, 2, 3, 1)
    rs2 = _counted("rs2", 2, 3, 1, 0)
    unsynced = _counted("rs3", 3, 0, None, 0)
    silent = _counted("rs4", 1, 1, None, 1)
    cases = [
        ([rs1], (1, 2, 3)),
        ([rs1, rs2], (3, 5, 4)),
        ([unsynced], (3, 0, 0)),
        ([rs1, rs2, unsynced], (6, 5, 4)),
        ([silent], (1, 1, None)),
        ([rs1, rs2, unsynced, silent], (7, 6, None)),
    ]
    for sets, expected in cases:
        counts = (
            replicasets.spec_replica_count(sets),
            replicasets.actual_replica_count(sets),
            replicasets.terminating_replica_count(sets),
        )
        assert counts == expected


def test_counters_skip_missing_replica_sets() -> None:
    rs = replica_set("a", 2, ready=1, available=1)
    assert replicasets.spec_replica_count([rs, None]) == 2
    assert replicasets.ready_replica_count([None, rs]) == 1
    assert replicasets.available_replica_count([rs, None]) == 1


def test_orderings() -> None:
    a_new = replica_set("a", 2, created=NEWER)
    b_new = replica_set("b", 2, created=NEWER)
    old = replica_set("old", 2, created=OLD)
    big = replica_set("big", 5, created=OLDER)
    no_time = replica_set("zero", 2)
    assert _names(replicasets.by_creation([b_new, old, a_new, no_time])) == ["zero", "old", "a", "b"]
    assert _names(replicasets.by_size_newer_first([old, a_new, big, b_new])) == ["big", "b", "a", "old"]
    assert _names(replicasets.by_size_older_first([b_new, a_new, big, old])) == ["big", "old", "a", "b"]


def test_revision_ordering_falls_back_to_creation() -> None:
    first = replica_set("f1", 0, created=OLDER, annotations={REVISION: "2"})
    second = replica_set("f2", 0, created=OLD, annotations={REVISION: "1"})
    unset = replica_set("f3", 0, created=NEWER)
    broken = replica_set("f4", 0, created=OLDER, annotations={REVISION: "x"})
    assert _names(replicasets.by_revision([first, second, unset])) == ["f3", "f2", "f1"]
    assert _names(replicasets.by_revision([unset, broken])) == ["f4", "f3"]


def test_active_filter() -> None:
    assert _names(replicasets.active([replica_set("a", 0), None, replica_set("b", 1)])) == ["b"]
