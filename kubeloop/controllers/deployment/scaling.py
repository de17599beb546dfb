"""ReplicaSet resizes: the update operation, scaling events and proportional scaling.

When ``spec.replicas`` changes in the middle of a rollout (or while paused), the controller
does not hand the difference to one ReplicaSet: it spreads it over the active ReplicaSets in
proportion to their size, measured against the ``max-replicas`` annotation each carries from
the last time it was sized. Scaling up favours larger then newer ReplicaSets, scaling down
larger then older ones; rounding is half away from zero and whatever rounding leaves over
goes to the first ReplicaSet in that order. Spreading the change keeps the ratio of old to new
pods, so a scaling event neither hastens nor undoes a rollout.

Every function here plans; :class:`ReplicaSetScale` values are executed by the caller in the
order given (stopping at the first failed update).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubeloop.api.meta import annotations_of, deep_copy, name_of
from kubeloop.controllers.deployment import replicasets
from kubeloop.controllers.deployment.annotations import (
    desired_replicas_annotation,
    max_replicas_annotation,
    replicas_annotations_need_update,
    set_replicas_annotations,
)
from kubeloop.controllers.deployment.objects import Obj, is_rolling_update, spec_replicas, status_int
from kubeloop.controllers.deployment.strategy import max_replicas, max_surge

SCALING_REPLICA_SET = "ScalingReplicaSet"


@dataclass(frozen=True)
class ReplicaSetScale:
    """An update of one ReplicaSet: new ``spec.replicas`` and desired/max-replicas annotations.

    ``updated`` is the complete object to send (a copy; the original is untouched). When the
    update succeeds and the size changed, the controller emits a Normal ``ScalingReplicaSet``
    event with :attr:`event_message`.
    """

    replica_set: Mapping[str, Any]
    updated: Obj
    old_replicas: int
    new_replicas: int
    operation: str

    @property
    def name(self) -> str:
        return name_of(self.replica_set)

    @property
    def size_changed(self) -> bool:
        return self.old_replicas != self.new_replicas

    @property
    def event_message(self) -> str | None:
        if not self.size_changed:
            return None
        return f"Scaled {self.operation} replica set {self.name} to {self.new_replicas} from {self.old_replicas}"


def scale_replica_set(
    replica_set: Mapping[str, Any], new_size: int, deployment: Mapping[str, Any], operation: str
) -> ReplicaSetScale | None:
    """The update that sets the size and the replicas annotations; ``None`` if both are current."""
    desired, maximum = spec_replicas(deployment), max_replicas(deployment)
    old_size = spec_replicas(replica_set)
    if old_size == new_size and not replicas_annotations_need_update(replica_set, desired, maximum):
        return None
    updated: Obj = deep_copy(replica_set)
    spec = updated.get("spec")
    if not isinstance(spec, dict):
        spec = updated["spec"] = {}
    spec["replicas"] = new_size
    meta = updated.get("metadata")
    if not isinstance(meta, dict):
        meta = updated["metadata"] = {}
    annotations = dict(annotations_of(updated))
    set_replicas_annotations(annotations, desired, maximum)
    meta["annotations"] = annotations
    return ReplicaSetScale(replica_set, updated, old_size, new_size, operation)


def scale_replica_set_to(
    replica_set: Mapping[str, Any], new_size: int, deployment: Mapping[str, Any]
) -> ReplicaSetScale | None:
    """Resize to ``new_size``; ``None`` when already that size (annotations are then left alone)."""
    old_size = spec_replicas(replica_set)
    if old_size == new_size:
        return None
    return scale_replica_set(replica_set, new_size, deployment, "up" if old_size < new_size else "down")


def round_half_away_from_zero(value: float) -> int:
    """2.5 -> 3, -2.5 -> -3 (Python's ``round`` would give 2 and -2)."""
    return int(value + 0.5) if value >= 0 else int(value - 0.5)


def replica_set_fraction(replica_set: Mapping[str, Any], deployment: Mapping[str, Any]) -> int:
    """How many replicas ``replica_set`` gains (or loses) to keep its share of the new size.

    Its share is ``spec.replicas / max-replicas`` (the annotation, or the Deployment's
    ``status.replicas`` when it is missing or 0). With nothing to divide by the fraction is 0;
    upstream 1.28 divided by zero there, later versions added this guard.
    """
    size = spec_replicas(replica_set)
    if spec_replicas(deployment) == 0:
        return -size
    target = max_replicas(deployment)
    annotated = max_replicas_annotation(replica_set)
    if not annotated:
        annotated = status_int(deployment, "replicas")
        if annotated == 0:
            return 0
    return round_half_away_from_zero(float(size * target) / float(annotated)) - size


def proportion(replica_set: Mapping[str, Any] | None, deployment: Mapping[str, Any], to_add: int, added: int) -> int:
    """The change for one ReplicaSet, bounded so the running total never passes ``to_add``."""
    if replica_set is None or spec_replicas(replica_set) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = replica_set_fraction(replica_set, deployment)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def find_active_or_latest(
    new_replica_set: Mapping[str, Any] | None, old_replica_sets: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The only active ReplicaSet; with none active, the new one or else the newest old one.

    ``None`` when two or more are active (they need proportional scaling) or there are none.
    """
    if new_replica_set is None and not old_replica_sets:
        return None
    newest_first = list(reversed(replicasets.by_creation(old_replica_sets)))
    candidates: list[Mapping[str, Any]] = replicasets.active([*newest_first, new_replica_set])
    if len(candidates) == 0:
        return new_replica_set if new_replica_set is not None else newest_first[0]
    if len(candidates) == 1:
        return candidates[0]
    return None


def is_saturated(deployment: Mapping[str, Any], replica_set: Mapping[str, Any] | None) -> bool:
    """The ReplicaSet runs all desired replicas, available, and was sized for this replica count."""
    if replica_set is None:
        return False
    desired = desired_replicas_annotation(replica_set)
    replicas = spec_replicas(deployment)
    return (
        desired is not None
        and spec_replicas(replica_set) == replicas
        and desired == replicas
        and status_int(replica_set, "availableReplicas") == replicas
    )


def is_scaling_event(
    deployment: Mapping[str, Any],
    new_replica_set: Mapping[str, Any] | None,
    old_replica_sets: Sequence[Mapping[str, Any]],
) -> bool:
    """Some active ReplicaSet was sized for a different ``spec.replicas`` than the current one.

    ReplicaSets without a readable ``desired-replicas`` annotation do not count.
    """
    replicas = spec_replicas(deployment)
    for rs in replicasets.active([*old_replica_sets, new_replica_set]):
        desired = desired_replicas_annotation(rs)
        if desired is not None and desired != replicas:
            return True
    return False


def plan_scale(
    deployment: Mapping[str, Any],
    new_replica_set: Mapping[str, Any] | None,
    old_replica_sets: Sequence[Mapping[str, Any]],
) -> list[ReplicaSetScale]:
    """The updates of a scaling event (or a paused Deployment's sync), in execution order.

    1. A single active (or, with none active, the latest) ReplicaSet simply takes ``replicas``.
    2. A saturated new ReplicaSet means every active old one goes to 0.
    3. RollingUpdate: spread ``replicas + maxSurge - Σ active sizes`` proportionally.
    Recreate deployments with several active ReplicaSets are left alone.
    """
    replicas = spec_replicas(deployment)
    only = find_active_or_latest(new_replica_set, old_replica_sets)
    if only is not None:
        operation = scale_replica_set_to(only, replicas, deployment)
        return [operation] if operation is not None else []
    # Upstream sorts the old ReplicaSets newest first while looking for the active one and
    # keeps that order for the steps below.
    old_newest_first = list(reversed(replicasets.by_creation(old_replica_sets)))
    if is_saturated(deployment, new_replica_set):
        scale_downs = (scale_replica_set_to(rs, 0, deployment) for rs in replicasets.active(old_newest_first))
        return [operation for operation in scale_downs if operation is not None]
    if not is_rolling_update(deployment):
        return []

    candidates = replicasets.active([*old_newest_first, new_replica_set])
    allowed_size = replicas + max_surge(deployment) if replicas > 0 else 0
    to_add = allowed_size - replicasets.spec_replica_count(candidates)
    if to_add > 0:
        ordered, operation_name = replicasets.by_size_newer_first(candidates), "up"
    elif to_add < 0:
        ordered, operation_name = replicasets.by_size_older_first(candidates), "down"
    else:
        ordered, operation_name = candidates, ""

    sizes: list[int] = []
    added = 0
    for rs in ordered:
        change = proportion(rs, deployment, to_add, added) if to_add != 0 else 0
        sizes.append(spec_replicas(rs) + change)
        added += change
    if ordered and to_add != 0:
        sizes[0] = max(0, sizes[0] + to_add - added)

    planned = (scale_replica_set(rs, size, deployment, operation_name) for rs, size in zip(ordered, sizes))
    return [operation for operation in planned if operation is not None]
