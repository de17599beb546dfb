"""Recreate planning: every old pod is gone before the first new pod is asked for.

A sync first scales every active old ReplicaSet to 0 and stops there if it changed anything.
It then waits while any old ReplicaSet still reports replicas or any pod of an old ReplicaSet
is not finished (Pending, Running, Unknown, terminating ones included); the controller is
re-triggered by the deletion of the last pod. Only then is the new ReplicaSet created (at full
size) or scaled to ``spec.replicas``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubeloop.api.meta import uid_of
from kubeloop.api.pods import POD_FAILED, POD_SUCCEEDED, pod_phase
from kubeloop.controllers.deployment import replicasets
from kubeloop.controllers.deployment.objects import spec_replicas
from kubeloop.controllers.deployment.scaling import ReplicaSetScale, scale_replica_set_to


def scale_down_old_replica_sets_for_recreate(
    deployment: Mapping[str, Any], active_old_replica_sets: Sequence[Mapping[str, Any]]
) -> list[ReplicaSetScale]:
    """Updates taking each given old ReplicaSet to 0, in the given order."""
    planned = (scale_replica_set_to(rs, 0, deployment) for rs in active_old_replica_sets if spec_replicas(rs) != 0)
    return [operation for operation in planned if operation is not None]


def old_pods_running(
    new_replica_set: Mapping[str, Any] | None,
    old_replica_sets: Sequence[Mapping[str, Any]],
    pods_by_replica_set_uid: Mapping[str, Sequence[Mapping[str, Any]]],
) -> bool:
    """Whether an old pod may still run: old ReplicaSets report replicas, or an old pod is unfinished.

    ``pods_by_replica_set_uid`` maps each claimed ReplicaSet's UID to the pods it controls
    (terminal and terminating pods included); the new ReplicaSet's pods are ignored.
    """
    if replicasets.actual_replica_count(old_replica_sets) > 0:
        return True
    new_uid = uid_of(new_replica_set) if new_replica_set is not None else None
    for uid, pods in pods_by_replica_set_uid.items():
        if uid == new_uid:
            continue
        if any(pod_phase(pod) not in (POD_FAILED, POD_SUCCEEDED) for pod in pods):
            return True
    return False


@dataclass(frozen=True)
class RecreateStep:
    """What one Recreate sync does; exactly one of the fields describes the action.

    * ``scale_down``: old ReplicaSets to shrink (then write rollout status and stop);
    * ``wait_for_old_pods``: nothing to do but write rollout status;
    * ``create_new``: create the new ReplicaSet (at ``spec.replicas``), then re-plan the scale-up;
    * ``scale_up``: the new ReplicaSet's resize, if any (then clean up and write status).
    """

    scale_down: list[ReplicaSetScale]
    wait_for_old_pods: bool = False
    create_new: bool = False
    scale_up: ReplicaSetScale | None = None


def plan_recreate(
    deployment: Mapping[str, Any],
    new_replica_set: Mapping[str, Any] | None,
    old_replica_sets: Sequence[Mapping[str, Any]],
    pods_by_replica_set_uid: Mapping[str, Sequence[Mapping[str, Any]]],
) -> RecreateStep:
    """The next Recreate action for the current ReplicaSets and pods."""
    scale_down = scale_down_old_replica_sets_for_recreate(deployment, replicasets.active(old_replica_sets))
    if scale_down:
        return RecreateStep(scale_down)
    if old_pods_running(new_replica_set, old_replica_sets, pods_by_replica_set_uid):
        return RecreateStep([], wait_for_old_pods=True)
    if new_replica_set is None:
        return RecreateStep([], create_new=True)
    return RecreateStep([], scale_up=scale_replica_set_to(new_replica_set, spec_replicas(deployment), deployment))
