"""Revision history: which old ReplicaSets to delete, and the controller-side rollback.

``revisionHistoryLimit`` keeps that many old ReplicaSets. The surplus is taken from the lowest
revisions; a candidate that still has replicas, has not been synced by the ReplicaSet
controller, or is already being deleted is skipped *without* being replaced by a later one,
so a busy old ReplicaSet can delay clean-up by a sync or two but never makes the controller
delete something newer.

A rollback request (annotation ``deprecated.deployment.rollback.to``, 0 meaning "the previous
revision") copies the chosen ReplicaSet's template back into the Deployment together with its
user annotations; the ReplicaSet then becomes the new one again on the next sync. The
request annotation is always removed, with a Warning event when nothing could be done.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubeloop.api.meta import deep_copy, is_being_deleted, name_of
from kubeloop.controllers.deployment import events, replicasets
from kubeloop.controllers.deployment.annotations import (
    ROLLBACK_TO,
    RevisionError,
    annotations_for_rollback,
    last_revision,
    revision_of,
    rollback_revision_requested,
)
from kubeloop.controllers.deployment.objects import (
    Obj,
    has_revision_history_limit,
    pod_template,
    revision_history_limit,
    spec_replicas,
    status_int,
)
from kubeloop.controllers.deployment.templates import equal_ignore_hash, template_for_rollback


def replica_sets_to_delete(
    deployment: Mapping[str, Any], old_replica_sets: Sequence[Mapping[str, Any] | None]
) -> list[Mapping[str, Any]]:
    """Old ReplicaSets beyond ``revisionHistoryLimit`` that may be deleted now, in deletion order.

    Nothing when the limit is unset or MaxInt32. Deletion is a plain DELETE; NotFound is fine,
    and the first other error should stop the clean-up.
    """
    if not has_revision_history_limit(deployment):
        return []
    cleanable = [rs for rs in replicasets.present(old_replica_sets) if not is_being_deleted(rs)]
    surplus = len(cleanable) - (revision_history_limit(deployment) or 0)
    if surplus <= 0:
        return []
    doomed = []
    for rs in replicasets.by_revision(cleanable)[:surplus]:
        if (
            status_int(rs, "replicas") != 0
            or spec_replicas(rs) != 0
            or not replicasets.is_synced(rs)
            or is_being_deleted(rs)
        ):
            continue
        doomed.append(rs)
    return doomed


@dataclass(frozen=True)
class RollbackPlan:
    """The outcome of a rollback request.

    ``deployment`` is the object to send with a full (spec) Update: the request annotation
    removed, and when ``rolled_back`` the template and annotations replaced. Warning events are
    recorded before the update; the Normal ``DeploymentRollback`` event only after it succeeded.
    """

    deployment: Obj
    event: events.Event
    rolled_back: bool


def _without_rollback_request(deployment: Mapping[str, Any]) -> Obj:
    copy: Obj = deep_copy(deployment)
    meta = copy.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict):
        annotations.pop(ROLLBACK_TO, None)
    return copy


def plan_rollback(
    deployment: Mapping[str, Any], all_replica_sets: Sequence[Mapping[str, Any] | None]
) -> RollbackPlan | None:
    """Carry out the rollback the Deployment asks for; ``None`` when it asks for none.

    ``all_replica_sets`` are the old ReplicaSets followed by the new one; the first with the
    requested revision is used.
    """
    requested = rollback_revision_requested(deployment)
    if requested is None:
        return None
    target = requested or last_revision(all_replica_sets)
    if target == 0:
        warning = events.Event(events.WARNING, events.ROLLBACK_REVISION_NOT_FOUND, "Unable to find last revision.")
        return RollbackPlan(_without_rollback_request(deployment), warning, False)
    for rs in replicasets.present(all_replica_sets):
        try:
            if revision_of(rs) != target:
                continue
        except RevisionError:
            continue
        updated = _without_rollback_request(deployment)
        if equal_ignore_hash(pod_template(deployment), pod_template(rs)):
            message = f'The rollback revision contains the same template as current deployment "{name_of(deployment)}"'
            return RollbackPlan(
                updated, events.Event(events.WARNING, events.ROLLBACK_TEMPLATE_UNCHANGED, message), False
            )
        if not isinstance(updated.get("spec"), dict):
            updated["spec"] = {}
        if not isinstance(updated.get("metadata"), dict):
            updated["metadata"] = {}
        updated["spec"]["template"] = template_for_rollback(rs)
        updated["metadata"]["annotations"] = annotations_for_rollback(updated, rs)
        message = f'Rolled back deployment "{name_of(deployment)}" to revision {target}'
        return RollbackPlan(updated, events.Event(events.NORMAL, events.ROLLBACK_DONE, message), True)
    warning = events.Event(
        events.WARNING, events.ROLLBACK_REVISION_NOT_FOUND, "Unable to find the revision to rollback to."
    )
    return RollbackPlan(_without_rollback_request(deployment), warning, False)
