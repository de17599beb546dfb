"""ControllerRevisions of a CloneSet: content, name, selection and history.

Only the pod template is versioned. A revision's ``data`` is
``{"spec": {"template": {"$patch": "replace", ...template}}}`` serialised as canonical JSON
(sorted keys, compact), so equal templates give byte-equal data and the same name. The name is
``<cloneset>-<hash>`` where the hash is FNV-1 (32 bit) over the data bytes followed by the
decimal collision count, printed in decimal and mapped digit by digit onto the alphabet
``bcdfghjklmnpqrstvwxz2456789`` (as Kubernetes' ``HashControllerRevision``).

Exact byte parity with Go's serialisation of typed objects is not a goal; determinism is.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from kubeloop.api import kruise
from kubeloop.api.meta import (
    annotations_of,
    deep_copy,
    metadata,
    name_of,
    namespace_of,
    new_controller_ref,
    parse_time,
)

from .podstate import equal_to_revision, short_hash

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_NAME_PREFIX_LIMIT = 223


def canonical_json(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def safe_encode(text: str) -> str:
    """Map each character onto :data:`SAFE_ALPHABET` (no vowels, no confusable characters)."""
    return "".join(SAFE_ALPHABET[ord(ch) % len(SAFE_ALPHABET)] for ch in text)


def fnv1_32(data: bytes) -> int:
    """FNV-1 (multiply, then xor -- not FNV-1a), 32 bit."""
    value = 0x811C9DC5
    for byte in data:
        value = (value * 0x01000193) & 0xFFFFFFFF
        value ^= byte
    return value


def hash_revision_data(data: bytes, collision_count: int | None) -> str:
    """The revision hash of ``data`` (and the collision count, when given)."""
    payload = data + (str(collision_count).encode() if collision_count is not None else b"")
    return safe_encode(str(fnv1_32(payload)))


def revision_name(cloneset_name: str, revision_hash: str) -> str:
    return f"{cloneset_name[:_NAME_PREFIX_LIMIT]}-{revision_hash}"


def revision_data(cs: Mapping[str, Any]) -> dict[str, Any]:
    """The data of the revision for the CloneSet's current template."""
    spec = cs.get("spec") or {}
    template = deep_copy(spec.get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def template_from_revision(revision: Mapping[str, Any]) -> dict[str, Any]:
    """The pod template stored in a revision (without the ``$patch`` directive)."""
    data = revision.get("data")
    spec = data.get("spec") if isinstance(data, Mapping) else None
    template = spec.get("template") if isinstance(spec, Mapping) else None
    if not isinstance(template, Mapping):
        return {}
    return {k: v for k, v in template.items() if k != "$patch"}


def apply_revision(cs: Mapping[str, Any], revision: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the CloneSet with its template replaced by the revision's."""
    result: dict[str, Any] = deep_copy(cs)
    result.setdefault("spec", {})["template"] = deep_copy(template_from_revision(revision))
    return result


def volume_claim_templates_hash(cs: Mapping[str, Any]) -> str:
    """A hash of ``spec.volumeClaimTemplates`` ("" when there are none)."""
    templates = (cs.get("spec") or {}).get("volumeClaimTemplates") or []
    if not templates:
        return ""
    return safe_encode(str(fnv1_32(canonical_json(templates))))


def new_revision(cs: Mapping[str, Any], revision_number: int, collision_count: int | None) -> dict[str, Any]:
    """The ControllerRevision for the CloneSet's current template.

    Labels: the template labels plus ``controller.kubernetes.io/hash``; annotations: the
    CloneSet's annotations plus the volumeClaimTemplates hash; owned by the CloneSet.
    """
    data = revision_data(cs)
    revision_hash = hash_revision_data(canonical_json(data), collision_count)
    template_labels = (data["spec"]["template"].get("metadata") or {}).get("labels") or {}
    annotations = dict(annotations_of(cs))
    annotations[kruise.VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION] = volume_claim_templates_hash(cs)
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(name_of(cs), revision_hash),
            "namespace": namespace_of(cs),
            "labels": {**template_labels, kruise.REVISION_HASH_LABEL: revision_hash},
            "annotations": annotations,
            "ownerReferences": [new_controller_ref(cs, kruise.API_VERSION, kruise.CLONESET_KIND)],
        },
        "data": data,
        "revision": revision_number,
    }


def revisions_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Equal revisions have byte-equal canonical data."""
    return canonical_json(a.get("data")) == canonical_json(b.get("data"))


def _revision_number(revision: Mapping[str, Any]) -> int:
    value = revision.get("revision")
    return value if isinstance(value, int) else 0


def sort_revisions(revisions: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Ascending by ``.revision``, then creation time, then name."""

    def compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
        if _revision_number(a) != _revision_number(b):
            return -1 if _revision_number(a) < _revision_number(b) else 1
        created_a = parse_time(metadata(a).get("creationTimestamp"))
        created_b = parse_time(metadata(b).get("creationTimestamp"))
        if created_a != created_b and created_a is not None and created_b is not None:
            return -1 if created_a < created_b else 1
        return -1 if name_of(a) < name_of(b) else (1 if name_of(a) > name_of(b) else 0)

    return sorted(revisions, key=functools.cmp_to_key(compare))


def next_revision_number(sorted_revisions: Sequence[Mapping[str, Any]]) -> int:
    return _revision_number(sorted_revisions[-1]) + 1 if sorted_revisions else 1


@dataclass(frozen=True)
class ActiveRevisions:
    """The outcome of :func:`active_revisions`.

    ``action`` says what to write first: ``"none"``; ``"create"`` (create ``update_revision``;
    on AlreadyExists with different data, call again with ``collision_count + 1``);
    ``"bump"`` (update the existing, older equal revision to ``update_revision``, which carries
    the highest ``.revision``).
    """

    current_revision: Mapping[str, Any]
    update_revision: Mapping[str, Any]
    collision_count: int
    action: Literal["none", "create", "bump"]


def active_revisions(
    cs: Mapping[str, Any], sorted_revisions: Sequence[Mapping[str, Any]], collision_count: int | None = None
) -> ActiveRevisions:
    """Choose (or plan) the current and update revisions.

    The update revision is the newest revision equal to the current template; if only an
    older one is equal it is re-used (rolling a template back re-uses the old name, so pods
    still on it count as updated) and bumped to the highest number; otherwise a new revision is
    planned. The current revision is the one named by ``status.currentRevision``, else the
    update revision.
    """
    status = cs.get("status") or {}
    count = collision_count if collision_count is not None else int(status.get("collisionCount") or 0)
    candidate = new_revision(cs, next_revision_number(sorted_revisions), count)
    equal = [r for r in sorted_revisions if revisions_equal(r, candidate)]
    action: Literal["none", "create", "bump"]
    if equal and name_of(equal[-1]) == name_of(sorted_revisions[-1]):
        update: Mapping[str, Any] = sorted_revisions[-1]
        action = "none"
    elif equal:
        bumped: dict[str, Any] = deep_copy(equal[-1])
        bumped["revision"] = candidate["revision"]
        bumped_annotations = bumped.setdefault("metadata", {}).setdefault("annotations", {})
        bumped_annotations[kruise.VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION] = volume_claim_templates_hash(cs)
        update, action = bumped, "bump"
    else:
        update, action = candidate, "create"
    current_name = str(status.get("currentRevision") or "")
    current = next((r for r in sorted_revisions if name_of(r) == current_name), update)
    return ActiveRevisions(current, update, count, action)


def revisions_to_delete(
    sorted_revisions: Sequence[Mapping[str, Any]], live_names: set[str], history_limit: int
) -> list[Mapping[str, Any]]:
    """Non-live revisions beyond ``history_limit``, oldest first.

    Live = the current and update revisions and any revision a pod still carries.
    """
    history = [r for r in sorted_revisions if name_of(r) not in live_names]
    excess = len(history) - max(history_limit, 0)
    return history[:excess] if excess > 0 else []


def live_revision_names(
    current: str, update: str, pods: Sequence[Mapping[str, Any]], revisions: Sequence[Mapping[str, Any]],
    labels: Sequence[str] | None = None,
) -> set[str]:
    """Names of the revisions :func:`revisions_to_delete` must keep. ``labels``: the distinct
    revision labels of ``pods`` when known (then the pods are not read)."""
    live = {current, update}
    for revision in revisions:
        name = name_of(revision)
        if labels is None:
            if any(equal_to_revision(pod, name) for pod in pods):
                live.add(name)
        elif any(label == name or short_hash(label) == short_hash(name) for label in labels):
            live.add(name)
    return live
