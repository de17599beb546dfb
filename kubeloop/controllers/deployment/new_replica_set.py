"""The new ReplicaSet: keeping an existing one in step, and building, naming and creating one.

Each sync gives the new ReplicaSet revision ``max(old revisions) + 1`` (never lowering it),
copies the Deployment's annotations and ``minReadySeconds`` to it, and mirrors its revision
onto the Deployment. A missing new ReplicaSet is built as ``<deployment>-<pod-template-hash>``
with the hash in its labels, selector and template labels, so re-creating it is idempotent.
Creation then has three outcomes the caller reports back: created; AlreadyExists with an
object that is ours and has our template (a slow cache: take it); AlreadyExists otherwise (a
hash collision: bump ``status.collisionCount`` so the next name differs, and fail the sync).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubeloop.api.meta import (
    annotations_of,
    controller_of,
    deep_copy,
    name_of,
    namespace_of,
    new_controller_ref,
    uid_of,
)
from kubeloop.api.nested import section
from kubeloop.controllers.deployment import conditions as cond
from kubeloop.controllers.deployment import events
from kubeloop.controllers.deployment.annotations import REVISION, max_revision, with_new_replica_set_annotations
from kubeloop.controllers.deployment.objects import (
    Obj,
    collision_count,
    has_progress_deadline,
    min_ready_seconds,
    pod_template,
    spec_replicas,
)
from kubeloop.controllers.deployment.strategy import new_replica_set_replicas
from kubeloop.controllers.deployment.templates import POD_TEMPLATE_HASH, compute_hash, equal_ignore_hash


def next_revision(old_replica_sets: Sequence[Mapping[str, Any] | None]) -> int:
    return max_revision(old_replica_sets) + 1


def _with_revision(deployment: Mapping[str, Any], revision: str) -> tuple[Obj, bool]:
    copy: Obj = deep_copy(deployment)
    if not isinstance(copy.get("metadata"), dict):
        copy["metadata"] = {}
    annotations = dict(annotations_of(copy))
    changed = annotations.get(REVISION) != revision
    annotations[REVISION] = revision
    copy["metadata"]["annotations"] = annotations
    return copy, changed


def _with_status(deployment: Obj, status: Obj) -> Obj:
    deployment["status"] = status
    return deployment


@dataclass(frozen=True)
class ExistingNewReplicaSetSync:
    """What keeping an existing new ReplicaSet in step requires (at most one write).

    * ``replica_set_update``: the ReplicaSet to Update (annotations / minReadySeconds); the
      updated object returned by the server is then the new ReplicaSet;
    * ``deployment_status_update``: otherwise, the Deployment to send to ``/status`` (revision
      annotation, FoundNewReplicaSet condition), if anything changed.
    ``replica_set`` is the new ReplicaSet as the rest of the sync should see it.
    """

    replica_set: Obj
    replica_set_update: Obj | None = None
    deployment_status_update: Obj | None = None


def sync_existing_new_replica_set(
    deployment: Mapping[str, Any],
    new_replica_set: Mapping[str, Any],
    old_replica_sets: Sequence[Mapping[str, Any] | None],
    now: datetime,
) -> ExistingNewReplicaSetSync:
    """Bring an existing new ReplicaSet's revision, annotations and minReadySeconds in line."""
    updated, changed = with_new_replica_set_annotations(
        deployment, new_replica_set, next_revision(old_replica_sets), exists=True
    )
    if changed or min_ready_seconds(updated) != min_ready_seconds(deployment):
        if not isinstance(updated.get("spec"), dict):
            updated["spec"] = {}
        updated["spec"]["minReadySeconds"] = min_ready_seconds(deployment)
        return ExistingNewReplicaSetSync(updated, replica_set_update=updated)
    copy, needs_update = _with_revision(deployment, str(annotations_of(updated).get(REVISION, "")))
    status: Obj = dict(section(copy, "status"))
    if has_progress_deadline(deployment) and cond.get_condition(status, cond.PROGRESSING) is None:
        message = f'Found new replica set "{name_of(updated)}"'
        condition = cond.new_condition(cond.PROGRESSING, cond.TRUE, cond.FOUND_NEW_REPLICA_SET, message, now)
        status = cond.with_condition(status, condition)
        needs_update = True
    if not needs_update:
        return ExistingNewReplicaSetSync(updated)
    return ExistingNewReplicaSetSync(updated, deployment_status_update=_with_status(copy, status))


def replica_set_to_create(deployment: Mapping[str, Any], old_replica_sets: Sequence[Mapping[str, Any] | None]) -> Obj:
    """The new ReplicaSet object to create for the Deployment's current template.

    Raises what :func:`~kubeloop.controllers.deployment.strategy.new_replica_set_replicas` raises.
    """
    template: Obj = deep_copy(pod_template(deployment))
    template_hash = compute_hash(template, collision_count(deployment))
    if not isinstance(template.get("metadata"), dict):
        template["metadata"] = {}
    labels = dict(section(template, "metadata", "labels"))
    labels[POD_TEMPLATE_HASH] = template_hash
    template["metadata"]["labels"] = labels
    selector: Obj = deep_copy(section(deployment, "spec", "selector"))
    selector["matchLabels"] = {**section(selector, "matchLabels"), POD_TEMPLATE_HASH: template_hash}
    replica_set: Obj = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{name_of(deployment)}-{template_hash}",
            "namespace": namespace_of(deployment),
            "ownerReferences": [new_controller_ref(deployment, "apps/v1", "Deployment")],
            "labels": dict(labels),
        },
        "spec": {
            "replicas": 0,
            "minReadySeconds": min_ready_seconds(deployment),
            "selector": selector,
            "template": template,
        },
    }
    replica_set["spec"]["replicas"] = new_replica_set_replicas(
        deployment, [*old_replica_sets, replica_set], replica_set
    )
    annotated, _ = with_new_replica_set_annotations(
        deployment, replica_set, next_revision(old_replica_sets), exists=False
    )
    return annotated


def is_own_replica_set(deployment: Mapping[str, Any], existing: Mapping[str, Any]) -> bool:
    """An AlreadyExists conflict is benign: the object is controlled by us and has our template."""
    owner = controller_of(existing)
    return (
        owner is not None
        and owner.get("uid") == uid_of(deployment)
        and equal_ignore_hash(pod_template(deployment), pod_template(existing))
    )


def after_hash_collision(deployment: Mapping[str, Any]) -> Obj:
    """The Deployment to send to ``/status`` after a name collision (collisionCount + 1)."""
    copy: Obj = deep_copy(deployment)
    status = dict(section(copy, "status"))
    status["collisionCount"] = (collision_count(deployment) or 0) + 1
    copy["status"] = status
    return copy


@dataclass(frozen=True)
class CreatedOutcome:
    """Writes and events after the new ReplicaSet was created (or found to be ours already)."""

    deployment_status_update: Obj | None
    events: list[events.Event] = field(default_factory=list)


def after_replica_set_created(
    deployment: Mapping[str, Any],
    created: Mapping[str, Any],
    revision: int,
    already_existed: bool,
    now: datetime,
) -> CreatedOutcome:
    """Record the revision (and, for a fresh creation, the event and NewReplicaSetCreated)."""
    recorded: list[events.Event] = []
    if not already_existed and spec_replicas(created) > 0:
        message = f"Scaled up replica set {name_of(created)} to {spec_replicas(created)}"
        recorded.append(events.Event(events.NORMAL, events.SCALING_REPLICA_SET, message))
    copy, needs_update = _with_revision(deployment, str(revision))
    status: Obj = dict(section(copy, "status"))
    if not already_existed and has_progress_deadline(deployment):
        message = f'Created new replica set "{name_of(created)}"'
        condition = cond.new_condition(cond.PROGRESSING, cond.TRUE, cond.NEW_REPLICA_SET_CREATED, message, now)
        status = cond.with_condition(status, condition)
        needs_update = True
    return CreatedOutcome(_with_status(copy, status) if needs_update else None, recorded)


@dataclass(frozen=True)
class CreateFailedOutcome:
    """After a failed creation: the Deployment to send to ``/status`` (errors there are ignored),
    if a progress deadline is set, and the Warning event; the sync then fails with the error."""

    deployment_status_update: Obj | None
    event: events.Event


def after_replica_set_create_failed(
    deployment: Mapping[str, Any], replica_set_name: str, error: str, now: datetime
) -> CreateFailedOutcome:
    message = f'Failed to create new replica set "{replica_set_name}": {error}'
    update = None
    if has_progress_deadline(deployment):
        copy: Obj = deep_copy(deployment)
        condition = cond.new_condition(cond.PROGRESSING, cond.FALSE, cond.FAILED_RS_CREATE, message, now)
        update = _with_status(copy, cond.with_condition(section(copy, "status"), condition))
    return CreateFailedOutcome(update, events.Event(events.WARNING, events.REPLICA_SET_CREATE_ERROR, message))
