"""RollingUpdate planning: grow the new ReplicaSet, then shrink the old ones, within budgets.

One sync performs one phase. First the new ReplicaSet grows into the room left under
``replicas + maxSurge`` (never beyond ``replicas``; shrunk to ``replicas`` if larger). Only if it
did not change do old ReplicaSets shrink, by at most

    maxScaledDown = Σ spec(all) - (replicas - maxUnavailable) - (spec(new) - available(new))

first removing old replicas that are not available (oldest ReplicaSet first), then, as long as
the available pods exceed ``replicas - maxUnavailable``, available ones (oldest first). Counting
the new ReplicaSet's unavailable pods stops a crash-looping new template from eating into the
old, healthy pods.

The planners return :class:`~kubeloop.controllers.deployment.scaling.ReplicaSetScale` values to
execute in order; the caller stops at the first failed update and then treats the phase as
not having scaled, as upstream does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubeloop.controllers.deployment import replicasets
from kubeloop.controllers.deployment.objects import spec_replicas, status_int
from kubeloop.controllers.deployment.scaling import ReplicaSetScale, scale_replica_set_to
from kubeloop.controllers.deployment.strategy import max_unavailable, new_replica_set_replicas


def reconcile_new_replica_set(
    deployment: Mapping[str, Any],
    all_replica_sets: Sequence[Mapping[str, Any] | None],
    new_replica_set: Mapping[str, Any],
) -> ReplicaSetScale | None:
    """The resize of the new ReplicaSet this sync, or ``None`` when it keeps its size.

    Raises what :func:`~kubeloop.controllers.deployment.strategy.new_replica_set_replicas` raises.
    """
    replicas = spec_replicas(deployment)
    current = spec_replicas(new_replica_set)
    if current == replicas:
        return None
    if current > replicas:
        return scale_replica_set_to(new_replica_set, replicas, deployment)
    target = new_replica_set_replicas(deployment, all_replica_sets, new_replica_set)
    return scale_replica_set_to(new_replica_set, target, deployment)


@dataclass(frozen=True)
class ScaleDownPlan:
    """Old-ReplicaSet updates of one step, plus the ReplicaSets as they will be afterwards."""

    operations: list[ScaleDownStep] = field(default_factory=list)
    replica_sets: list[Mapping[str, Any]] = field(default_factory=list)
    scaled: int = 0
    invalid: bool = False
    """An old ReplicaSet reported more available than desired replicas; upstream aborts there."""


@dataclass(frozen=True)
class ScaleDownStep:
    """One old-ReplicaSet resize and the number of replicas it takes away."""

    operation: ReplicaSetScale
    count: int


def cleanup_unhealthy_replicas(
    deployment: Mapping[str, Any], old_replica_sets: Sequence[Mapping[str, Any]], max_cleanup: int
) -> ScaleDownPlan:
    """Shrink old ReplicaSets by their unavailable replicas, oldest first, ``max_cleanup`` in total.

    Relies on the ReplicaSet controller deleting not-ready pods first. The returned
    ``replica_sets`` are the old ReplicaSets sorted oldest first, resized ones replaced by their
    updated copies.
    """
    ordered: list[Mapping[str, Any]] = replicasets.by_creation(old_replica_sets)
    steps: list[ScaleDownStep] = []
    total = 0
    for index, rs in enumerate(ordered):
        if total >= max_cleanup:
            break
        size, available = spec_replicas(rs), status_int(rs, "availableReplicas")
        if size == 0 or size == available:
            continue
        count = min(max_cleanup - total, size - available)
        if count < 0:
            return ScaleDownPlan(steps, ordered, total, invalid=True)
        operation = scale_replica_set_to(rs, size - count, deployment)
        if operation is not None:
            steps.append(ScaleDownStep(operation, count))
            ordered[index] = operation.updated
        total += count
    return ScaleDownPlan(steps, ordered, total)


def scale_down_old_replica_sets_for_rolling_update(
    deployment: Mapping[str, Any],
    all_replica_sets: Sequence[Mapping[str, Any] | None],
    old_replica_sets: Sequence[Mapping[str, Any]],
) -> ScaleDownPlan:
    """Shrink old ReplicaSets, oldest first, by the availability above ``replicas - maxUnavailable``."""
    floor = spec_replicas(deployment) - max_unavailable(deployment)
    available = replicasets.available_replica_count(all_replica_sets)
    ordered: list[Mapping[str, Any]] = replicasets.by_creation(old_replica_sets)
    if available <= floor:
        return ScaleDownPlan([], ordered, 0)
    budget = available - floor
    steps: list[ScaleDownStep] = []
    total = 0
    for index, rs in enumerate(ordered):
        if total >= budget:
            break
        size = spec_replicas(rs)
        if size == 0:
            continue
        count = min(size, budget - total)
        operation = scale_replica_set_to(rs, size - count, deployment)
        if operation is not None:
            steps.append(ScaleDownStep(operation, count))
            ordered[index] = operation.updated
        total += count
    return ScaleDownPlan(steps, ordered, total)


@dataclass(frozen=True)
class OldReplicaSetsPlan:
    """What ``reconcileOldReplicaSets`` does in one sync."""

    operations: list[ReplicaSetScale]
    cleaned: int
    scaled_down: int
    max_scaled_down: int

    @property
    def scaled(self) -> bool:
        """Whether the sync ends after this phase (upstream's return value when no update fails)."""
        return self.cleaned + self.scaled_down > 0


def reconcile_old_replica_sets(
    deployment: Mapping[str, Any],
    all_replica_sets: Sequence[Mapping[str, Any] | None],
    active_old_replica_sets: Sequence[Mapping[str, Any]],
    new_replica_set: Mapping[str, Any],
) -> OldReplicaSetsPlan:
    """Plan the old-ReplicaSet scale-down: unhealthy clean-up, then availability-bounded shrink.

    ``all_replica_sets`` holds the old ones and the new one; ``active_old_replica_sets`` the old
    ones with ``spec.replicas > 0``.
    """
    if replicasets.spec_replica_count(active_old_replica_sets) == 0:
        return OldReplicaSetsPlan([], 0, 0, 0)
    floor = spec_replicas(deployment) - max_unavailable(deployment)
    new_unavailable = spec_replicas(new_replica_set) - status_int(new_replica_set, "availableReplicas")
    max_scaled_down = replicasets.spec_replica_count(all_replica_sets) - floor - new_unavailable
    if max_scaled_down <= 0:
        return OldReplicaSetsPlan([], 0, 0, max_scaled_down)

    cleanup = cleanup_unhealthy_replicas(deployment, active_old_replica_sets, max_scaled_down)
    cleanup_operations = [step.operation for step in cleanup.operations]
    if cleanup.invalid:
        # Upstream sends the updates it planned before the inconsistent ReplicaSet, then stops
        # and reports nothing scaled.
        return OldReplicaSetsPlan(cleanup_operations, 0, 0, max_scaled_down)
    scale_down = scale_down_old_replica_sets_for_rolling_update(
        deployment, [*cleanup.replica_sets, new_replica_set], cleanup.replica_sets
    )
    return OldReplicaSetsPlan(
        [*cleanup_operations, *(step.operation for step in scale_down.operations)],
        cleanup.scaled,
        scale_down.scaled,
        max_scaled_down,
    )
