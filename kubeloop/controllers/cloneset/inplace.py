"""In-place updates: can a pod move to a revision without being recreated, and how.

A pod can be updated in place when its own revision and the target revision differ only in
container images (``replace`` of ``spec.containers[i].image``) and in template metadata. The
:data:`UpdateSpec` (a JSON dict) lists the new images, the metadata patch and the labels or
annotations that containers read through env ``fieldRef`` (those containers must restart).

The update itself is two writes, both computed here as new pod objects:

1. :func:`start_update_status` -- the ``InPlaceUpdateReady`` condition False (and ``Ready``
   False when the containers are ready), so traffic leaves the pod first;
2. :func:`updated_pod` -- revision labels, state ``Updating``, the state annotation
   ``apps.kruise.io/inplace-update-state`` and either the new images or, with a grace period,
   the pending spec in ``apps.kruise.io/inplace-update-grace``.

:func:`refresh` decides, on every reconcile, whether a grace period ended, a next container
batch is due, or the update completed and ``InPlaceUpdateReady`` may turn True again.
The pod's containers are restarted by the kubelet; completion is detected from the container
statuses (a changed ``imageID`` or the new ``image``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import orjson

from kubeloop.api import kruise
from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.meta import annotations_of, deep_copy, format_time, is_mapping, parse_time

from .jsondiff import apply_metadata_patch, json_diff, metadata_merge_patch
from .options import DEFAULT_GATES, CloneSetFeatureGates
from .podconditions import has_readiness_gate, refresh_ready_condition, set_pod_condition
from .podstate import equal_to_revision, short_hash
from .revisions import template_from_revision
from .runtimemeta import env_from_metadata_applied

UpdateSpec = dict[str, Any]
InPlaceUpdateState = dict[str, Any]

_IMAGE_PATH = re.compile(r"^/spec/containers/([0-9]+)/image$")
_BARRIER_KEY = re.compile(r"^p_(-?[0-9]+)$")
_EXCLUDED_ENVS = {kruise.CONTAINER_PRIORITY_ENV, kruise.CONTAINER_BARRIER_ENV}


# --- can the update be in place -----------------------------------------------------------


def _fieldref_subscript(field_path: str) -> tuple[str, str] | None:
    if not field_path.endswith("']"):
        return None
    head, sep, rest = field_path.partition("['")
    subscript = rest[: -len("']")] if sep else ""
    return (head, subscript) if subscript else None


def container_references_metadata(container: Mapping[str, Any], path: str, key: str) -> bool:
    """Whether an env var of the container reads ``metadata.labels['key']`` (or annotations)."""
    for env in container.get("env") or ():
        if not is_mapping(env) or env.get("value") or env.get("name") in _EXCLUDED_ENVS:
            continue
        value_from = env.get("valueFrom")
        field_ref = value_from.get("fieldRef") if is_mapping(value_from) else None
        if not is_mapping(field_ref):
            continue
        if _fieldref_subscript(str(field_ref.get("fieldPath") or "")) == (path, key):
            return True
    return False


def _containers(template: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    spec = template.get("spec")
    containers = spec.get("containers") if is_mapping(spec) else None
    return [c for c in containers or () if is_mapping(c)]


def calculate_in_place_update_spec(
    old_revision: Mapping[str, Any] | None,
    new_revision: Mapping[str, Any] | None,
    *,
    grace_period_seconds: int = 0,
    gates: CloneSetFeatureGates = DEFAULT_GATES,
    ignore_volume_claim_template_hash: bool = False,
) -> UpdateSpec | None:
    """The in-place update from ``old_revision`` to ``new_revision``, or ``None`` if impossible.

    ``None`` when either revision is missing, their Data differ in anything but container
    images and template metadata, or (with the VCT-recreate gate, unless
    ``ignore_volume_claim_template_hash``) their volumeClaimTemplates hashes differ.
    """
    if old_revision is None or new_revision is None:
        return None
    if gates.recreate_pod_when_change_vct and not ignore_volume_claim_template_hash:
        old_hash = annotations_of(old_revision).get(kruise.VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION)
        new_hash = annotations_of(new_revision).get(kruise.VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION)
        # Revisions without the annotation never block an in-place update.
        if old_hash is not None and new_hash is not None and old_hash != new_hash:
            return None
    old_template = deep_copy(template_from_revision(old_revision))
    new_template = deep_copy(template_from_revision(new_revision))
    images: dict[str, str] = {}
    metadata_ops: list[tuple[str, str, Any]] = []
    old_containers = _containers(old_template)
    for op, path, value in json_diff(old_revision.get("data"), new_revision.get("data")):
        path = path.replace("/spec/template", "", 1)
        if not path.startswith("/spec/"):
            if path.startswith("/metadata/"):
                metadata_ops.append((op, path, value))
                continue
            return None
        match = _IMAGE_PATH.match(path)
        if op != "replace" or match is None or not isinstance(value, str):
            return None
        index = int(match.group(1))
        if index >= len(old_containers):
            return None
        images[str(old_containers[index].get("name"))] = value

    spec: UpdateSpec = {"revision": str(new_revision.get("metadata", {}).get("name") or "")}
    ref_metadata: dict[str, dict[str, dict[str, str]]] = {}
    if metadata_ops:
        if gates.in_place_update_env_from_metadata:
            _move_env_referenced_metadata(metadata_ops, old_template, new_template, ref_metadata)
        meta_patch = metadata_merge_patch(old_template.get("metadata") or {}, new_template.get("metadata") or {})
        if meta_patch:
            spec["metaDataPatch"] = meta_patch
    if images:
        spec["containerImages"] = images
    if ref_metadata:
        spec["containerRefMetadata"] = ref_metadata
        spec["updateEnvFromMetadata"] = True
    if grace_period_seconds:
        spec["graceSeconds"] = grace_period_seconds
    return spec


def _move_env_referenced_metadata(
    ops: Sequence[tuple[str, str, Any]],
    old_template: dict[str, Any],
    new_template: dict[str, Any],
    ref_metadata: dict[str, dict[str, dict[str, str]]],
) -> None:
    """Labels/annotations read by container env leave the metadata patch for ``containerRefMetadata``."""
    for op, path, value in ops:
        if op not in ("replace", "add"):
            continue
        words = path.split("/", 3)
        if len(words) != 4 or words[2] not in ("labels", "annotations"):
            continue
        kind = words[2]
        key = words[3].replace("~1", "/").replace("~0", "~")
        for container in _containers(new_template):
            if not container_references_metadata(container, f"metadata.{kind}", key):
                continue
            entry = ref_metadata.setdefault(str(container.get("name")), {})
            entry.setdefault(kind, {})[key] = str(value)
            for template in (old_template, new_template):
                meta = template.get("metadata")
                if isinstance(meta, dict) and isinstance(meta.get(kind), dict):
                    meta[kind].pop(key, None)


# --- state annotation and applying a spec -------------------------------------------------


def _load_json(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def in_place_update_state(pod: Mapping[str, Any]) -> InPlaceUpdateState | None:
    """The decoded state annotation (the legacy key is read as a fallback)."""
    annotations = annotations_of(pod)
    text = annotations.get(kruise.INPLACE_UPDATE_STATE_ANNOTATION) or annotations.get(
        kruise.INPLACE_UPDATE_STATE_ANNOTATION_OLD
    )
    return _load_json(text)


def in_place_update_grace(pod: Mapping[str, Any]) -> UpdateSpec | None:
    """The pending UpdateSpec stored during a grace period (legacy key read as a fallback)."""
    annotations = annotations_of(pod)
    text = annotations.get(kruise.INPLACE_UPDATE_GRACE_ANNOTATION) or annotations.get(
        kruise.INPLACE_UPDATE_GRACE_ANNOTATION_OLD
    )
    return _load_json(text)


def has_grace_annotation(pod: Mapping[str, Any]) -> bool:
    annotations = annotations_of(pod)
    return bool(
        annotations.get(kruise.INPLACE_UPDATE_GRACE_ANNOTATION)
        or annotations.get(kruise.INPLACE_UPDATE_GRACE_ANNOTATION_OLD)
    )


def _dump(value: Any) -> str:
    return orjson.dumps(value).decode()


def container_priority(container: Mapping[str, Any]) -> int | None:
    """Launch priority from the ``KRUISE_CONTAINER_BARRIER`` env (``configMapKeyRef.key: p_<n>``)."""
    for env in container.get("env") or ():
        if not is_mapping(env) or env.get("name") != kruise.CONTAINER_BARRIER_ENV:
            continue
        value_from = env.get("valueFrom")
        ref = value_from.get("configMapKeyRef") if is_mapping(value_from) else None
        match = _BARRIER_KEY.match(str(ref.get("key") or "")) if is_mapping(ref) else None
        if match is not None:
            return int(match.group(1))
    return None


def _containers_in_this_batch(pod: Mapping[str, Any], spec: Mapping[str, Any]) -> set[str]:
    """Containers without a launch priority plus those of the highest priority, and every
    container sharing a changed env-referenced key with one of them."""
    images = spec.get("containerImages") or {}
    ref_metadata: Mapping[str, Any] = spec.get("containerRefMetadata") or {}
    chosen: set[str] = set()
    highest: int | None = None
    highest_names: list[str] = []
    for container in _containers(pod):
        name = str(container.get("name"))
        if name not in images and name not in ref_metadata:
            continue
        priority = container_priority(container)
        if priority is None:
            chosen.add(name)
        elif highest is None or highest < priority:
            highest, highest_names = priority, [name]
        elif highest == priority:
            highest_names.append(name)
    chosen.update(highest_names)
    # Containers reading the same changed keys must restart together.
    grew = True
    while grew:
        grew = False
        keys = {
            (kind, key) for name in chosen for kind, values in (ref_metadata.get(name) or {}).items() for key in values
        }
        for name, kinds in ref_metadata.items():
            if name in chosen:
                continue
            if any((kind, key) in keys for kind, values in kinds.items() for key in values):
                chosen.add(name)
                grew = True
    return chosen


def apply_update_spec(
    pod: Mapping[str, Any], spec: Mapping[str, Any], state: Mapping[str, Any], now: datetime
) -> tuple[dict[str, Any], InPlaceUpdateState]:
    """The pod with this batch of the update applied, and the new state (neither input mutated).

    Applies the metadata patch; sets the images of this batch's containers and records their
    current ``imageID``; leaves lower-priority containers for a next batch (``next*`` fields and
    ``preCheckBeforeNext``); appends the batch record; writes the state annotation.
    """
    result: dict[str, Any] = deep_copy(pod)
    new_state: InPlaceUpdateState = deep_copy(dict(state))
    for key in ("nextContainerImages", "nextContainerRefMetadata", "nextContainerResources"):
        new_state.pop(key, None)
    meta_patch = spec.get("metaDataPatch")
    if is_mapping(meta_patch):
        apply_metadata_patch(result, meta_patch)
    meta = result.setdefault("metadata", {})
    meta.setdefault("labels", {})
    annotations = meta.setdefault("annotations", {})

    batch = _containers_in_this_batch(result, spec)
    images: Mapping[str, str] = spec.get("containerImages") or {}
    next_images: dict[str, str] = {}
    changed: set[str] = set()
    for container in result.get("spec", {}).get("containers") or []:
        name = container.get("name")
        if name not in images:
            continue
        if name in batch:
            container["image"] = images[name]
            changed.add(name)
        else:
            next_images[name] = images[name]
    last_statuses: dict[str, Any] = dict(new_state.get("lastContainerStatuses") or {})
    for status in result.get("status", {}).get("containerStatuses") or []:
        if status.get("name") in changed and status.get("name") not in last_statuses:
            last_statuses[status["name"]] = {"imageID": status.get("imageID", "")}
    if last_statuses:
        new_state["lastContainerStatuses"] = last_statuses

    next_ref: dict[str, Any] = {}
    for name, values in (spec.get("containerRefMetadata") or {}).items():
        if name in batch:
            for kind in ("labels", "annotations"):
                meta.setdefault(kind, {}).update(values.get(kind) or {})
        else:
            next_ref[name] = values
    if next_images:
        new_state["nextContainerImages"] = next_images
    if next_ref:
        new_state["nextContainerRefMetadata"] = next_ref
    if next_images or next_ref:
        new_state["preCheckBeforeNext"] = {"containersRequiredReady": sorted(batch)}
    else:
        new_state.pop("preCheckBeforeNext", None)
    records = list(new_state.get("containerBatchesRecord") or [])
    records.append({"timestamp": format_time(now), "containers": sorted(batch)})
    new_state["containerBatchesRecord"] = records
    annotations[kruise.INPLACE_UPDATE_STATE_ANNOTATION] = _dump(new_state)
    return result, new_state


def start_update_status(pod: Mapping[str, Any], now: datetime) -> dict[str, Any] | None:
    """The pod with ``InPlaceUpdateReady`` False (reason ``StartInPlaceUpdate``) for a status
    write, or ``None`` when the pod has no such readiness gate or already carries that condition."""
    if not has_readiness_gate(pod, kruise.INPLACE_UPDATE_READY):
        return None
    condition = {
        "type": kruise.INPLACE_UPDATE_READY,
        "status": "False",
        "reason": "StartInPlaceUpdate",
        "lastTransitionTime": format_time(now),
    }
    if _has_equal_condition(pod, condition):
        return None
    result: dict[str, Any] = deep_copy(pod)
    set_pod_condition(result, condition)
    refresh_ready_condition(result, now)
    return result


def _has_equal_condition(pod: Mapping[str, Any], condition: Mapping[str, Any]) -> bool:
    existing = find_condition(status_conditions(pod), str(condition["type"]))
    return existing is not None and all(
        (existing.get(k) or "") == (condition.get(k) or "") for k in ("status", "reason", "message")
    )


def write_revision_labels(labels: dict[str, Any], revision: str, gates: CloneSetFeatureGates) -> None:
    """Set ``controller-revision-hash`` (full or short per the gate) and ``pod-template-hash``."""
    labels[kruise.CONTROLLER_REVISION_HASH_LABEL] = short_hash(revision) if gates.short_hash else revision
    labels[kruise.POD_TEMPLATE_HASH_LABEL] = short_hash(revision)


def updated_pod(
    pod: Mapping[str, Any],
    spec: Mapping[str, Any],
    *,
    now: datetime,
    gates: CloneSetFeatureGates = DEFAULT_GATES,
    lifecycle_state: str | None = kruise.STATE_UPDATING,
) -> dict[str, Any]:
    """The pod as the in-place update writes it (a new object; ``pod`` is not mutated).

    Revision labels, the lifecycle state (``Updating``, with its timestamp), a fresh state
    annotation; then either the spec applied at once, or -- with ``graceSeconds`` -- the spec
    stored in the grace annotation to be applied by :func:`refresh` once the grace period ends.
    """
    result: dict[str, Any] = deep_copy(pod)
    meta = result.setdefault("metadata", {})
    labels = meta.setdefault("labels", {})
    annotations = meta.setdefault("annotations", {})
    write_revision_labels(labels, str(spec["revision"]), gates)
    if lifecycle_state is not None:
        labels[kruise.LIFECYCLE_STATE_LABEL] = lifecycle_state
        annotations[kruise.LIFECYCLE_TIMESTAMP_ANNOTATION] = format_time(now)
    state: InPlaceUpdateState = {"revision": spec["revision"], "updateTimestamp": format_time(now)}
    if spec.get("updateEnvFromMetadata"):
        state["updateEnvFromMetadata"] = True
    if spec.get("containerImages"):
        state["updateImages"] = True
    annotations[kruise.INPLACE_UPDATE_STATE_ANNOTATION] = _dump(state)
    annotations.pop(kruise.INPLACE_UPDATE_STATE_ANNOTATION_OLD, None)
    if int(spec.get("graceSeconds") or 0) <= 0:
        result, _ = apply_update_spec(result, spec, state, now)
        _remove_grace(result)
    else:
        annotations[kruise.INPLACE_UPDATE_GRACE_ANNOTATION] = _dump(dict(spec))
    return result


def _remove_grace(pod: dict[str, Any]) -> None:
    annotations = pod.get("metadata", {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(kruise.INPLACE_UPDATE_GRACE_ANNOTATION, None)
        annotations.pop(kruise.INPLACE_UPDATE_GRACE_ANNOTATION_OLD, None)


# --- completion ---------------------------------------------------------------------------


def _spec_images(pod: Mapping[str, Any]) -> dict[str, str]:
    images: dict[str, str] = {}
    for container in _containers(pod):
        image = str(container.get("image") or "")
        # A tag-less image is reported by the runtime with ":latest".
        images[str(container.get("name"))] = image if ":" in image else f"{image}:latest"
    return images


def _container_statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status")
    statuses = status.get("containerStatuses") if is_mapping(status) else None
    return [s for s in statuses or () if is_mapping(s)]


def containers_update_completed(pod: Mapping[str, Any], state: Mapping[str, Any]) -> bool:
    """Whether the kubelet restarted every container of the last batch with its new image.

    A container counts as restarted when its status ``imageID`` changed since the update, or its
    status ``image`` equals the spec image. Env-from-metadata updates also need the node
    agent's runtime report to match the pod's current metadata (:mod:`.runtimemeta`).
    """
    if state.get("updateEnvFromMetadata") and not env_from_metadata_applied(pod):
        return False
    pending = dict(state.get("lastContainerStatuses") or {})
    images = _spec_images(pod)
    for status in _container_statuses(pod):
        name = str(status.get("name"))
        if name not in pending:
            continue
        recorded = pending.pop(name)
        recorded_id = recorded.get("imageID", "") if is_mapping(recorded) else ""
        if recorded_id == (status.get("imageID") or "") and images.get(name) != status.get("image"):
            return False
    return not pending


def _has_next_batches(state: Mapping[str, Any]) -> bool:
    return bool(
        state.get("nextContainerImages") or state.get("nextContainerRefMetadata") or state.get("nextContainerResources")
    )


def pod_update_completed(pod: Mapping[str, Any]) -> bool:
    """Whole-pod completion: no grace period, no next batch, containers restarted.

    A pod without a state annotation has nothing in progress and counts as completed.
    """
    if has_grace_annotation(pod):
        return False
    annotations = annotations_of(pod)
    text = annotations.get(kruise.INPLACE_UPDATE_STATE_ANNOTATION) or annotations.get(
        kruise.INPLACE_UPDATE_STATE_ANNOTATION_OLD
    )
    if not text:
        return True
    state = _load_json(text)
    if state is None or _has_next_batches(state):
        return False
    return containers_update_completed(pod, state)


# --- refresh ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RefreshAction:
    """What :func:`refresh` wants written.

    ``kind``: ``"none"``; ``"requeue"`` (check again after ``delay_seconds``); ``"update"``
    (write ``pod`` with a plain update: grace period over or next batch); ``"update_status"``
    (write ``pod`` through the status subresource: InPlaceUpdateReady True).
    """

    kind: Literal["none", "requeue", "update", "update_status"]
    pod: dict[str, Any] | None = None
    delay_seconds: int = 0


def _containers_ready(pod: Mapping[str, Any], names: Sequence[str]) -> bool:
    statuses = {str(s.get("name")): s for s in _container_statuses(pod)}
    return all(name in statuses and statuses[name].get("ready") is True for name in names)


def refresh(pod: Mapping[str, Any], *, now: datetime) -> RefreshAction:
    """The in-place bookkeeping due for ``pod`` at ``now`` (upstream's ``Refresh``)."""
    grace = in_place_update_grace(pod)
    if has_grace_annotation(pod):
        return _finish_grace_period(pod, grace, now)
    state = in_place_update_state(pod)
    if state is not None:
        if not containers_update_completed(pod, state):
            return RefreshAction("none")
        if _has_next_batches(state):
            pre_check = state.get("preCheckBeforeNext") or {}
            if not _containers_ready(pod, list(pre_check.get("containersRequiredReady") or [])):
                return RefreshAction("none")
            next_spec = {
                "containerImages": state.get("nextContainerImages") or {},
                "containerRefMetadata": state.get("nextContainerRefMetadata") or {},
            }
            updated, _ = apply_update_spec(pod, next_spec, state, now)
            return RefreshAction("update", updated)
    if not has_readiness_gate(pod, kruise.INPLACE_UPDATE_READY):
        return RefreshAction("none")
    condition = {"type": kruise.INPLACE_UPDATE_READY, "status": "True", "lastTransitionTime": format_time(now)}
    if _has_equal_condition(pod, condition):
        return RefreshAction("none")
    result: dict[str, Any] = deep_copy(pod)
    set_pod_condition(result, condition)
    return RefreshAction("update_status", result)


def _finish_grace_period(pod: Mapping[str, Any], spec: UpdateSpec | None, now: datetime) -> RefreshAction:
    result: dict[str, Any] = deep_copy(pod)
    if spec is None:
        _remove_grace(result)
        return RefreshAction("update", result)
    state = in_place_update_state(pod)
    if state is None:
        return RefreshAction("none")
    if not equal_to_revision(pod, str(spec.get("revision") or "")):
        # The pod moved on to another revision: the pending spec is stale.
        _remove_grace(result)
        return RefreshAction("update", result)
    started = parse_time(state.get("updateTimestamp"))
    elapsed = (now - started).total_seconds() if started is not None else math.inf
    grace = int(spec.get("graceSeconds") or 0)
    if elapsed < grace:
        return RefreshAction("requeue", delay_seconds=math.ceil(grace - elapsed))
    result, _ = apply_update_spec(result, spec, state, now)
    _remove_grace(result)
    return RefreshAction("update", result)
