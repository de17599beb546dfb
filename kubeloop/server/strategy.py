"""Per-kind preparation of objects before they are stored (upstream's registry strategies).

Pure functions on plain dicts: what ``BeforeCreate`` / ``BeforeUpdate`` and each kind's
``PrepareForCreate`` / ``PrepareForUpdate`` do to system metadata, ``status`` and
``metadata.generation``. Each takes objects it may mutate (the caller's private copies) and
the old stored object, which it only reads.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping
from typing import Any

from kubeloop.api.meta import deep_copy
from kubeloop.api.status import FieldError, forbidden, go_value
from kubeloop.server.kinds.decode import initial_status
from kubeloop.server.registry import Generation, ResourceInfo

Obj = dict[str, Any]

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_NAMES = random.Random()
"""Generated names need to be unlikely to collide, not unpredictable: upstream draws them with
math/rand (``utilrand.String``); the system's CSPRNG cost 15 us a name in syscalls."""
_MAX_GENERATE_PREFIX = 58
_STATUS_KEY = "status"


def generate_name(prefix: str) -> str:
    """``generateName`` expansion: at most 58 characters of prefix and five random characters."""
    return prefix[:_MAX_GENERATE_PREFIX] + "".join(_NAMES.choices(_NAME_ALPHABET, k=5))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def pod_qos_class(pod: Mapping[str, Any]) -> str:
    """The pod's QoS class from its containers' requests and limits (cpu and memory only)."""
    spec = _mapping(pod.get("spec"))
    containers = [c for key in ("initContainers", "containers") for c in _list(spec.get(key))
                  if isinstance(c, Mapping)]
    any_set = False
    guaranteed = bool(containers)
    for container in containers:
        resources = _mapping(container.get("resources"))
        requests = _mapping(resources.get("requests"))
        limits = _mapping(resources.get("limits"))
        for name in ("cpu", "memory"):
            if name in requests or name in limits:
                any_set = True
            limit = limits.get(name)
            if limit is None or requests.get(name, limit) != limit:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def prepare_for_create(info: ResourceInfo, obj: Obj, now: str) -> None:
    """Set system metadata and wipe what clients may not set on create (``BeforeCreate``)."""
    meta = obj["metadata"]
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = now
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "resourceVersion"):
        meta.pop(key, None)
    if info.generation is Generation.NONE:
        meta.pop("generation", None)
    else:
        meta["generation"] = 1
    if info.status:
        obj.pop(_STATUS_KEY, None)
        if info.custom is None:
            status = initial_status(info.group, info.version, info.kind)
            if status is not None:
                obj[_STATUS_KEY] = status
    if info.kind == "Pod" and info.group == "":
        obj[_STATUS_KEY] = {"phase": "Pending", "qosClass": pod_qos_class(obj)}
    if info.kind == "Namespace" and info.group == "":
        obj[_STATUS_KEY] = {"phase": "Active"}
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = obj["spec"] = {}
        spec.setdefault("finalizers", ["kubernetes"])


def carry_system_metadata(new: Obj, old: Mapping[str, Any]) -> None:
    """Keep what only the server may change on update (``BeforeUpdate``)."""
    meta = new["metadata"]
    old_meta = old["metadata"]
    for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    meta.pop("selfLink", None)
    meta["resourceVersion"] = old_meta["resourceVersion"]


def _changed(new: Mapping[str, Any], old: Mapping[str, Any], key: str) -> bool:
    return new.get(key) != old.get(key)


def bump_generation(info: ResourceInfo, new: Obj, old: Mapping[str, Any]) -> None:
    """Raise ``metadata.generation`` by one when the kind's rule says the desired state changed."""
    policy = info.generation
    if policy is Generation.NONE:
        return
    changed = False
    if policy is Generation.SPEC:
        changed = _changed(new, old, "spec")
    elif policy is Generation.SPEC_AND_ANNOTATIONS:
        changed = _changed(new, old, "spec") or (
            new["metadata"].get("annotations") or {}) != (old["metadata"].get("annotations") or {})
    elif policy is Generation.NON_METADATA:
        keys = (set(new) | set(old)) - {"metadata", _STATUS_KEY}
        changed = any(_changed(new, old, key) for key in keys)
    if changed:
        new["metadata"]["generation"] = int(old["metadata"].get("generation") or 0) + 1


def reset_status_on_main(info: ResourceInfo, new: Obj, old: Mapping[str, Any]) -> None:
    """Writes to the main endpoint cannot change ``status`` when ``/status`` exists."""
    if not info.status:
        return
    if _STATUS_KEY in old:
        # A private copy: defaulting may change the new object in place, never the stored one.
        new[_STATUS_KEY] = deep_copy(old[_STATUS_KEY])
    else:
        new.pop(_STATUS_KEY, None)


def merge_status_write(info: ResourceInfo, requested: Mapping[str, Any], old: Mapping[str, Any]) -> Obj:
    """The object a ``/status`` write stores: the old object with the request's ``status``.

    Built-ins also take the request's metadata (Deployments keep their old labels, pods their
    old ownerReferences), as their status strategies do; custom resources take only ``status``.
    """
    new: Obj = dict(old)
    new["metadata"] = dict(old["metadata"])
    if _STATUS_KEY in requested:
        new[_STATUS_KEY] = requested[_STATUS_KEY]
    else:
        new.pop(_STATUS_KEY, None)
    if info.custom is None and isinstance(requested.get("metadata"), Mapping):
        meta = dict(requested["metadata"])
        if info.kind == "Deployment":
            _restore(meta, old["metadata"], "labels")
        if info.kind == "Pod":
            _restore(meta, old["metadata"], "ownerReferences")
        new["metadata"] = meta
    return new


def _restore(meta: Obj, old_meta: Mapping[str, Any], key: str) -> None:
    if key in old_meta:
        meta[key] = old_meta[key]
    else:
        meta.pop(key, None)


def finalizer_errors(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """No finalizer may be added once the object is being deleted."""
    if not old["metadata"].get("deletionTimestamp"):
        return []
    old_set = set(old["metadata"].get("finalizers") or [])
    added = [f for f in new["metadata"].get("finalizers") or [] if f not in old_set]
    if not added:
        return []
    return [forbidden("metadata.finalizers",
                      f"no new finalizers can be added if the object is being deleted, found new finalizers "
                      f"{go_value(added)}")]


def is_finalized_deletion(obj: Mapping[str, Any]) -> bool:
    """Being deleted, no finalizer left and no grace period running: the object must go now.

    As upstream's ``Store.shouldDeleteDuringUpdate``: a pod in its deletion grace period
    (``deletionGracePeriodSeconds`` above 0) stays through updates (its kubelet's status
    writes) until the kubelet deletes it with grace 0.
    """
    meta = obj["metadata"]
    grace = meta.get("deletionGracePeriodSeconds")
    return bool(meta.get("deletionTimestamp")) and not meta.get("finalizers") and not grace
