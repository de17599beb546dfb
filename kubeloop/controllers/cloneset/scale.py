"""The scale side: instance ids, new pods and their PVCs, and which pods to delete.

Pods are named ``<cloneset>-<instance id>``; an id is a 5-character string over
``bcdfghjklmnpqrstvwxz2456789``. PVCs from ``volumeClaimTemplates`` are named
``<template>-<cloneset>-<id>`` and owned by the CloneSet, so a pod that vanishes without the
controller deleting it leaves its PVCs behind and its replacement re-uses the id (and name and
PVCs). Random ids come from an injected :class:`random.Random` so tests are deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.meta import deep_copy, format_time, labels_of, name_of, namespace_of, new_controller_ref, uid_of

from .diffs import ExpectationDiffs
from .inplace import write_revision_labels
from .lifecycle import lifecycle_marks_pod_not_ready
from .options import CloneSetFeatureGates
from .ordering import same_node_ranks, sort_for_scale_in, spread_constraint_ranks
from .podstate import instance_id_of, is_cloneset_pod_available, is_new_for_scale, is_specified_delete, lifecycle_state
from .spec import (
    min_ready_seconds_of,
    pods_to_delete_of,
    replicas_of,
    selector_match_labels,
    template_of,
    volume_claim_templates_of,
)

Pod = Mapping[str, Any]
INSTANCE_ID_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
INSTANCE_ID_LENGTH = 5


def random_instance_id(rng: random.Random) -> str:
    return "".join(rng.choice(INSTANCE_ID_ALPHABET) for _ in range(INSTANCE_ID_LENGTH))


def available_instance_ids(
    count: int, pods: Sequence[Pod], pvcs: Sequence[Mapping[str, Any]], rng: random.Random
) -> list[str]:
    """``count`` ids for new pods, sorted: ids of PVCs without a pod first, then fresh random ids.

    ``pvcs`` are the CloneSet-owned, non-terminating PVCs; ``pods`` its active pods.
    """
    existing = {instance_id_of(p) for p in [*pvcs, *pods]} - {""}
    free = sorted({instance_id_of(p) for p in pvcs} - {instance_id_of(p) for p in pods} - {""})
    chosen = free[:count]
    while len(chosen) < count:
        candidate = random_instance_id(rng)
        if candidate not in existing:
            existing.add(candidate)
            chosen.append(candidate)
    return sorted(chosen)


def pod_name(cs: Mapping[str, Any], instance_id: str) -> str:
    return f"{name_of(cs)}-{instance_id}"


def pvc_name(template_name: str, cs: Mapping[str, Any], instance_id: str) -> str:
    return f"{template_name}-{name_of(cs)}-{instance_id}"


def pvcs_for_pod(cs: Mapping[str, Any], instance_id: str) -> dict[str, dict[str, Any]]:
    """The PVCs a pod with ``instance_id`` uses, by volumeClaimTemplate name."""
    claims: dict[str, dict[str, Any]] = {}
    for template in volume_claim_templates_of(cs):
        claim: dict[str, Any] = deep_copy(template)
        meta = claim.setdefault("metadata", {})
        template_name = str(meta.get("name") or "")
        meta["name"] = pvc_name(template_name, cs, instance_id)
        meta["namespace"] = namespace_of(cs)
        labels = meta.setdefault("labels", {})
        labels.update(selector_match_labels(cs))
        labels[kruise.INSTANCE_ID_LABEL] = instance_id
        meta["ownerReferences"] = [
            *meta.get("ownerReferences", []),
            new_controller_ref(cs, kruise.API_VERSION, kruise.CLONESET_KIND),
        ]
        claim.setdefault("apiVersion", "v1")
        claim.setdefault("kind", "PersistentVolumeClaim")
        claims[template_name] = claim
    return claims


def new_pod(
    cs: Mapping[str, Any],
    revision: str,
    instance_id: str,
    *,
    now: datetime,
    gates: CloneSetFeatureGates,
) -> dict[str, Any]:
    """A pod of ``cs`` (whose template is already the revision's) with the given id.

    Labels: the template's plus revision hashes, instance id and lifecycle PreparingNormal;
    readiness gate InPlaceUpdateReady (and KruisePodReady with that gate); a volume per volumeClaimTemplate (claim
    ``<vct>-<cs>-<id>``) replacing any template volume of the same name. The launch priority
    barrier env is not added here: the API server's pod admission adds it, as upstream's pod
    webhook does.
    """
    template: dict[str, Any] = deep_copy(template_of(cs))
    template_meta = template.get("metadata") or {}
    labels = dict(template_meta.get("labels") or {})
    write_revision_labels(labels, revision, gates)
    labels[kruise.INSTANCE_ID_LABEL] = instance_id
    labels[kruise.LIFECYCLE_STATE_LABEL] = kruise.STATE_PREPARING_NORMAL
    annotations = dict(template_meta.get("annotations") or {})
    annotations[kruise.LIFECYCLE_TIMESTAMP_ANNOTATION] = format_time(now)
    meta: dict[str, Any] = {
        "name": pod_name(cs, instance_id),
        "generateName": f"{name_of(cs)}-",
        "namespace": namespace_of(cs),
        "labels": labels,
        "annotations": annotations,
        "ownerReferences": [new_controller_ref(cs, kruise.API_VERSION, kruise.CLONESET_KIND)],
    }
    if template_meta.get("finalizers"):
        meta["finalizers"] = list(template_meta["finalizers"])
    spec: dict[str, Any] = template.get("spec") or {}
    gates_list = list(spec.get("readinessGates") or [])
    wanted = [kruise.INPLACE_UPDATE_READY]
    if gates.kruise_pod_readiness_gate:
        wanted.append(kruise.KRUISE_POD_READY)
    for condition_type in wanted:
        if not any(g.get("conditionType") == condition_type for g in gates_list):
            gates_list.append({"conditionType": condition_type})
    spec["readinessGates"] = gates_list
    claims = pvcs_for_pod(cs, instance_id)
    if claims:
        volumes = [
            {"name": vct, "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
            for vct, claim in claims.items()
        ]
        volumes += [v for v in spec.get("volumes") or [] if v.get("name") not in claims]
        spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def new_pods(
    current_cs: Mapping[str, Any],
    update_cs: Mapping[str, Any],
    current_revision: str,
    update_revision: str,
    expected_creations: int,
    expected_current_creations: int,
    instance_ids: Sequence[str],
    *,
    now: datetime,
    gates: CloneSetFeatureGates,
) -> list[dict[str, Any]]:
    """The pods to create: the first ``min(expected_creations, expected_current_creations)`` on
    the current revision (from ``current_cs``'s template), the rest on the update revision."""
    ids = list(instance_ids)
    on_current = min(expected_creations, expected_current_creations)
    pods: list[dict[str, Any]] = []
    for index in range(min(expected_creations, len(ids))):
        if index < on_current:
            pods.append(new_pod(current_cs, current_revision, ids[index], now=now, gates=gates))
        else:
            pods.append(new_pod(update_cs, update_revision, ids[index], now=now, gates=gates))
    return pods


def creation_batches(count: int, initial: int = 1) -> list[int]:
    """Slow-start batch sizes (1, 2, 4, ...) covering ``count`` creations."""
    sizes: list[int] = []
    size = min(count, initial)
    remaining = count
    while size > 0:
        sizes.append(size)
        remaining -= size
        size = min(2 * size, remaining)
    return sizes


@dataclass(frozen=True)
class PlannedDeletions:
    """Pods already on their way out: specified for deletion, or held in PreparingDelete."""

    specified: list[Pod]
    preparing_delete: list[Pod]
    count: int
    """Size of the union of both lists (by name)."""


def planned_deletions(cs: Mapping[str, Any], pods: Sequence[Pod]) -> PlannedDeletions:
    specified = [p for p in pods if is_specified_delete(cs, p)]
    preparing = [p for p in pods if lifecycle_state(p) == kruise.STATE_PREPARING_DELETE]
    names = {name_of(p) for p in [*specified, *preparing]}
    return PlannedDeletions(specified, preparing, len(names))


def pods_to_revive(cs: Mapping[str, Any], pods: Sequence[Pod], planned: PlannedDeletions) -> list[Pod]:
    """PreparingDelete pods to send back to PreparingNormal because replicas need them again.

    Never when a preDelete or inPlaceUpdate hook marks pods not ready; never for pods that are
    specified for deletion.
    """
    if lifecycle_marks_pod_not_ready(cs):
        return []
    needed = replicas_of(cs) - len(pods) + planned.count
    revived: list[Pod] = []
    for pod in planned.preparing_delete:
        if needed <= 0:
            break
        if is_specified_delete(cs, pod):
            continue
        revived.append(pod)
        needed -= 1
    return revived


def within_ready_limit(cs: Mapping[str, Any], pods: Sequence[Pod], ready_limit: int, now: datetime) -> list[Pod]:
    """Keep every not-ready pod and at most ``ready_limit`` ready ones (in the given order).

    "Ready" here is available with ``minReadySeconds`` 0 (so PreparingNormal pods are not ready).
    """
    kept: list[Pod] = []
    for pod in pods:
        if not is_cloneset_pod_available(pod, 0, now):
            kept.append(pod)
        elif ready_limit > 0:
            kept.append(pod)
            ready_limit -= 1
    return kept


def choose_pods_to_delete(
    cs: Mapping[str, Any],
    total: int,
    old_revision_count: int,
    pods: Sequence[Pod],
    update_revision: str,
    *,
    now: datetime,
    gates: CloneSetFeatureGates,
    nodes: Sequence[Mapping[str, Any]] = (),
) -> list[Pod]:
    """Scale-in victims: ``total`` pods, ``old_revision_count`` of them from the old revision
    when possible, each group in scale-in order (see :func:`kubeloop.controllers.cloneset.ordering.scale_in_compare`).

    With ``topologySpreadConstraints`` in the template, ranks come from the constraints and the
    given Node objects; otherwise from crowding on the same node.
    """
    updated = [p for p in pods if is_new_for_scale(p, update_revision, gates.preparing_update_as_update)]
    not_updated = [p for p in pods if not is_new_for_scale(p, update_revision, gates.preparing_update_as_update)]
    min_ready_seconds = min_ready_seconds_of(cs)
    constraints = [
        {"topologyKey": c.get("topologyKey")}
        for c in (template_of(cs).get("spec") or {}).get("topologySpreadConstraints") or []
    ]

    def available(pod: Pod) -> bool:
        return is_cloneset_pod_available(pod, min_ready_seconds, now)

    def choose(group: list[Pod], count: int) -> list[Pod]:
        if count >= len(group):
            return group
        ranks = spread_constraint_ranks(group, constraints, nodes) if constraints else same_node_ranks(group)
        return sort_for_scale_in(group, available=available, ranks=ranks)[:count]

    if old_revision_count >= total:
        return choose(not_updated, total)
    if old_revision_count > 0:
        return choose(not_updated, old_revision_count) + choose(updated, total - old_revision_count)
    return choose(updated, total)


def pvcs_of_pod(pod: Pod, pvcs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The PVCs sharing the pod's instance id (deleted with the pod by the controller)."""
    instance_id = instance_id_of(pod)
    return [p for p in pvcs if labels_of(p).get(kruise.INSTANCE_ID_LABEL, "") == instance_id]


def scale_up_is_limited(diffs: ExpectationDiffs) -> bool:
    """Whether ``scaleStrategy.maxUnavailable`` holds creations back (event ``ScaleUpLimited``)."""
    return diffs.scale_up_num > diffs.scale_up_limit


@dataclass(frozen=True)
class PVCCleanup:
    """What ``scaleStrategy.disablePVCReuse`` does with PVCs whose id has no active pod."""

    reown: list[tuple[Mapping[str, Any], Pod]]
    """PVCs to hand over to the inactive (finished or terminating) pod with their id: the
    CloneSet's owner reference is replaced by the pod's, so they go with it."""
    delete: list[Mapping[str, Any]]
    """PVCs with no pod at all: deleted."""
    keep: list[Mapping[str, Any]]
    """PVCs of active pods: the only ones the Scale step may still see (upstream's
    ``activePVCs``), so no id without an active pod is reused."""


def pvc_cleanup(
    active_pods: Sequence[Pod], inactive_pods: Sequence[Pod], pvcs: Sequence[Mapping[str, Any]]
) -> PVCCleanup:
    active_ids = {instance_id_of(p) for p in active_pods} - {""}
    inactive = {instance_id_of(p): p for p in inactive_pods if instance_id_of(p)}
    reown: list[tuple[Mapping[str, Any], Pod]] = []
    delete: list[Mapping[str, Any]] = []
    keep: list[Mapping[str, Any]] = []
    for pvc in pvcs:
        instance_id = instance_id_of(pvc)
        if instance_id in active_ids:
            keep.append(pvc)
            continue
        if instance_id in inactive:
            reown.append((pvc, inactive[instance_id]))
        else:
            delete.append(pvc)
    return PVCCleanup(reown, delete, keep)


def pvc_owned_by_pod(pvc: Mapping[str, Any], cs: Mapping[str, Any], pod: Pod) -> dict[str, Any]:
    """A copy of ``pvc`` whose CloneSet owner reference is replaced by one to ``pod``."""
    result: dict[str, Any] = deep_copy(pvc)
    meta = result.setdefault("metadata", {})
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid_of(cs)]
    refs.append({"apiVersion": "v1", "kind": "Pod", "name": name_of(pod), "uid": uid_of(pod)})
    meta["ownerReferences"] = refs
    return result


def truncated_pods_to_delete(cs: Mapping[str, Any], pods: Sequence[Pod]) -> list[str] | None:
    """``spec.scaleStrategy.podsToDelete`` without names of pods that no longer exist among the
    active ``pods``, or ``None`` when nothing needs removing (no CloneSet update then)."""
    names = pods_to_delete_of(cs)
    existing = {name_of(p) for p in pods}
    kept = [n for n in names if n in existing]
    return kept if len(kept) != len(names) else None
