"""Which Deployments a ReplicaSet or pod event concerns, the pod map, and the empty-selector guard.

A ReplicaSet with a controller reference concerns only the Deployment it names (same kind,
name and UID). An orphaned ReplicaSet is offered to every Deployment of its namespace whose
selector matches its labels, so that one of them can adopt it. A Deployment with an empty
selector (``{}``) would select every pod of the namespace: it is never offered anything and
is not synced beyond recording its generation; an invalid selector matches nothing.

The event handlers only decide which Deployments to enqueue; these functions make that
decision from the event's objects and the cached Deployments of the namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from kubeloop.api.labels import Selector, SelectorError, selector_from_label_selector
from kubeloop.api.meta import (
    controller_of,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    resource_version_of,
    uid_of,
)
from kubeloop.api.nested import section
from kubeloop.controllers.deployment.objects import RECREATE, strategy_type

D = TypeVar("D", bound=Mapping[str, Any])


def deployment_selector(deployment: Mapping[str, Any]) -> Selector | None:
    """The Deployment's selector, or ``None`` when it is malformed (it then matches nothing)."""
    raw = section(deployment, "spec").get("selector")
    try:
        return selector_from_label_selector(raw if isinstance(raw, Mapping) else None)
    except SelectorError:
        return None


def selects_all_pods(deployment: Mapping[str, Any]) -> bool:
    """The selector is present but empty: upstream refuses to act (Warning ``SelectingAll``)."""
    selector = deployment_selector(deployment)
    return selector is not None and selector.empty()


def deployments_for_replica_set(replica_set: Mapping[str, Any], deployments: Sequence[D]) -> list[D]:
    """Deployments in the ReplicaSet's namespace whose non-empty selector matches its labels.

    Only the one named by the ReplicaSet's controller reference actually manages it; the list
    is for enqueueing candidates to adopt an orphan. A ReplicaSet without labels matches none.
    """
    labels = labels_of(replica_set)
    if not labels:
        return []
    found = []
    for deployment in deployments:
        if namespace_of(deployment) != namespace_of(replica_set):
            continue
        selector = deployment_selector(deployment)
        if selector is None or selector.empty() or not selector.matches(labels):
            continue
        found.append(deployment)
    return found


def resolve_controller(namespace: str, reference: Mapping[str, Any] | None, deployments: Sequence[D]) -> D | None:
    """The cached Deployment a controller reference points to (kind, name and UID must agree)."""
    if reference is None or reference.get("kind") != "Deployment":
        return None
    for deployment in deployments:
        if (
            namespace_of(deployment) == namespace
            and name_of(deployment) == reference.get("name")
            and uid_of(deployment) == reference.get("uid")
        ):
            return deployment
    return None


def _owner_only(replica_set: Mapping[str, Any], deployments: Sequence[D]) -> list[D]:
    owner = resolve_controller(namespace_of(replica_set), controller_of(replica_set), deployments)
    return [owner] if owner is not None else []


def deployments_for_replica_set_added(replica_set: Mapping[str, Any], deployments: Sequence[D]) -> list[D]:
    """An added ReplicaSet: its owner, or every matching Deployment for an orphan."""
    if is_being_deleted(replica_set):
        return deployments_for_replica_set_deleted(replica_set, deployments)
    if controller_of(replica_set) is not None:
        return _owner_only(replica_set, deployments)
    return deployments_for_replica_set(replica_set, deployments)


def deployments_for_replica_set_updated(
    old: Mapping[str, Any], current: Mapping[str, Any], deployments: Sequence[D]
) -> list[D]:
    """An updated ReplicaSet: the previous owner if the controller changed, then the current owner,
    or for an orphan whose labels or controller changed every matching Deployment.

    An update with an unchanged resourceVersion (a periodic resync) concerns nobody.
    """
    if resource_version_of(old) == resource_version_of(current):
        return []
    old_ref, current_ref = controller_of(old), controller_of(current)
    ref_changed = old_ref != current_ref
    found: list[D] = []
    if ref_changed and old_ref is not None:
        found.extend(_owner_only(old, deployments))
    if current_ref is not None:
        return found + _owner_only(current, deployments)
    if labels_of(old) != labels_of(current) or ref_changed:
        found.extend(deployments_for_replica_set(current, deployments))
    return found


def deployments_for_replica_set_deleted(replica_set: Mapping[str, Any], deployments: Sequence[D]) -> list[D]:
    """A deleted ReplicaSet concerns only its owner (orphans are nobody's business)."""
    return _owner_only(replica_set, deployments)


def pods_by_replica_set_uid(
    deployment: Mapping[str, Any],
    replica_sets: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
) -> dict[str, list[Mapping[str, Any]]]:
    """The Deployment's pods grouped by the UID of the claimed ReplicaSet controlling them.

    Only pods matching the Deployment's selector count; every ReplicaSet has an entry (maybe
    empty); finished and terminating pods are kept, since Recreate must wait for them.
    """
    selector = deployment_selector(deployment)
    grouped: dict[str, list[Mapping[str, Any]]] = {uid_of(rs): [] for rs in replica_sets}
    if selector is None:
        return grouped
    for pod in pods:
        owner = controller_of(pod)
        uid = owner.get("uid") if owner is not None else None
        if isinstance(uid, str) and uid in grouped and selector.matches(labels_of(pod)):
            grouped[uid].append(pod)
    return grouped


def recreate_needs_sync_after_pod_deletion(
    deployment: Mapping[str, Any], pods_by_uid: Mapping[str, Sequence[Mapping[str, Any]]]
) -> bool:
    """A Recreate Deployment waiting for its old pods resumes once none is left."""
    return strategy_type(deployment) == RECREATE and not any(pods_by_uid.values())
