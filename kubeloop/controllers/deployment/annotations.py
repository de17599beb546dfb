"""The annotations a Deployment and its ReplicaSets use to record revisions and sizes.

* ``revision`` numbers rollouts; the new ReplicaSet always carries ``max(old revisions) + 1`` and
  the Deployment mirrors its new ReplicaSet's number.
* ``revision-history`` keeps the earlier numbers of a ReplicaSet that became "new" again
  (rollback), bounded in characters.
* ``desired-replicas`` / ``max-replicas`` record ``spec.replicas`` and ``replicas + maxSurge`` as
  seen when a ReplicaSet was last sized; they reveal scaling events and give proportional
  scaling its denominator.
* Every other Deployment annotation is copied onto the new ReplicaSet (so ``change-cause``
  follows the template), except the skip list below; a rollback copies them back.

Functions here return new dicts and never modify their arguments.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from kubeloop.api.meta import annotations_of, deep_copy
from kubeloop.controllers.deployment.objects import Obj, spec_replicas
from kubeloop.controllers.deployment.strategy import max_replicas

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED_CONFIGURATION = "kubectl.kubernetes.io/last-applied-configuration"
CHANGE_CAUSE = "kubernetes.io/change-cause"

# Bookkeeping annotations that belong to one object and must never travel between a
# Deployment and its ReplicaSets.
SKIPPED_ANNOTATIONS = frozenset(
    {LAST_APPLIED_CONFIGURATION, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO}
)

# The controller keeps revision-history under this many characters (about 100 entries).
REVISION_HISTORY_LIMIT_CHARS = 2000

_DECIMAL = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class RevisionError(ValueError):
    """A revision annotation that is not a decimal int64."""


def parse_int64(text: str) -> int | None:
    """A decimal int64 as Go's ``strconv.ParseInt(s, 10, 64)`` accepts it, else ``None``.

    Python's ``int()`` is laxer (whitespace, ``_`` separators, unbounded), hence the checks.
    """
    if not _DECIMAL.match(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def revision_of(obj: Mapping[str, Any]) -> int:
    """The object's revision; 0 when the annotation is absent. Raises :class:`RevisionError`."""
    annotations = annotations_of(obj)
    if REVISION not in annotations:
        return 0
    text = annotations[REVISION]
    value = parse_int64(text) if isinstance(text, str) else None
    if value is None:
        raise RevisionError(f"invalid revision annotation {text!r}")
    return value


def _parsable_revisions(replica_sets: Iterable[Mapping[str, Any] | None]) -> list[int]:
    revisions = []
    for rs in replica_sets:
        if rs is None:
            continue
        try:
            revisions.append(revision_of(rs))
        except RevisionError:
            continue
    return revisions


def max_revision(replica_sets: Iterable[Mapping[str, Any] | None]) -> int:
    """The highest parsable revision (unparsable ones are skipped); 0 if none."""
    return max([0, *_parsable_revisions(replica_sets)])


def last_revision(replica_sets: Iterable[Mapping[str, Any] | None]) -> int:
    """The second-highest revision: the one "rollback to previous" returns to (0 if none).

    A repeated maximum counts twice, as upstream's single-pass scan does.
    """
    highest = second = 0
    for value in _parsable_revisions(replica_sets):
        if value >= highest:
            highest, second = value, highest
        elif value > second:
            second = value
    return second


def _copy_annotations(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict(annotations_of(obj))


def _with_annotations(obj: Mapping[str, Any], annotations: dict[str, str]) -> Obj:
    copy: Obj = deep_copy(obj)
    meta = copy.get("metadata")
    if not isinstance(meta, dict):
        meta = copy["metadata"] = {}
    meta["annotations"] = annotations
    return copy


def copy_deployment_annotations(deployment: Mapping[str, Any], rs_annotations: dict[str, str]) -> bool:
    """Copy the Deployment's non-skipped annotations into ``rs_annotations`` (a fresh dict).

    Returns whether anything changed. Annotations missing from the Deployment stay on the
    ReplicaSet.
    """
    changed = False
    for key, value in annotations_of(deployment).items():
        if key in SKIPPED_ANNOTATIONS or rs_annotations.get(key) == value:
            continue
        rs_annotations[key] = value
        changed = True
    return changed


def _append_revision_history(history: str, previous: str, limit_chars: int) -> str:
    entries = history.split(",")
    if not entries[0]:
        return previous
    total = len(history) + len(previous) + 1
    start = 0
    while total > limit_chars and start < len(entries):
        total -= len(entries[start]) + 1
        start += 1
    if total > limit_chars:
        return history
    return ",".join([*entries[start:], previous])


def with_new_replica_set_annotations(
    deployment: Mapping[str, Any],
    replica_set: Mapping[str, Any],
    new_revision: int,
    exists: bool,
    limit_chars: int = REVISION_HISTORY_LIMIT_CHARS,
) -> tuple[Obj, bool]:
    """A copy of ``replica_set`` with the annotations it must carry as the new ReplicaSet.

    Copies the Deployment's annotations, raises the revision to ``new_revision`` if lower
    (recording the previous number in revision-history when the ReplicaSet already had one),
    and, for a ReplicaSet about to be created (``exists`` false), sets desired/max replicas.
    Returns ``(copy, changed)``. A ReplicaSet whose current revision is not a number keeps it,
    and ``changed`` is then false even if other annotations were copied, as upstream.
    """
    annotations = _copy_annotations(replica_set)
    changed = copy_deployment_annotations(deployment, annotations)
    had_revision = REVISION in annotations
    previous_text = annotations.get(REVISION, "")
    previous = parse_int64(previous_text) if isinstance(previous_text, str) else None
    if previous is None:
        if previous_text != "":
            return _with_annotations(replica_set, annotations), False
        previous = 0
    if previous < new_revision:
        annotations[REVISION] = str(new_revision)
        changed = True
        if had_revision:
            history = annotations.get(REVISION_HISTORY, "")
            annotations[REVISION_HISTORY] = _append_revision_history(
                history if isinstance(history, str) else "", str(previous_text), limit_chars
            )
    if not exists and set_replicas_annotations(annotations, spec_replicas(deployment), max_replicas(deployment)):
        changed = True
    return _with_annotations(replica_set, annotations), changed


def replicas_annotation(obj: Mapping[str, Any], key: str) -> int | None:
    """An integer annotation such as ``desired-replicas``; ``None`` when absent or malformed."""
    text = annotations_of(obj).get(key)
    return parse_int64(text) if isinstance(text, str) else None


def desired_replicas_annotation(obj: Mapping[str, Any]) -> int | None:
    return replicas_annotation(obj, DESIRED_REPLICAS)


def max_replicas_annotation(obj: Mapping[str, Any]) -> int | None:
    return replicas_annotation(obj, MAX_REPLICAS)


def set_replicas_annotations(annotations: dict[str, str], desired: int, maximum: int) -> bool:
    """Write desired/max replicas into ``annotations`` (a dict owned by the caller); True if changed."""
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(maximum))):
        if annotations.get(key) != value:
            annotations[key] = value
            changed = True
    return changed


def replicas_annotations_need_update(obj: Mapping[str, Any], desired: int, maximum: int) -> bool:
    """Whether the object's desired/max replicas annotations differ from the given numbers."""
    annotations = annotations_of(obj)
    return annotations.get(DESIRED_REPLICAS) != str(desired) or annotations.get(MAX_REPLICAS) != str(maximum)


def skipped_annotations(annotations: Mapping[str, str]) -> dict[str, str]:
    return {key: value for key, value in annotations.items() if key in SKIPPED_ANNOTATIONS}


def annotations_for_rollback(deployment: Mapping[str, Any], replica_set: Mapping[str, Any]) -> dict[str, str]:
    """The Deployment's annotations after rolling back to ``replica_set``.

    Its own bookkeeping (skip-list) annotations stay; every other annotation is replaced by
    the ReplicaSet's, so user annotations such as ``change-cause`` follow the template.
    """
    result = skipped_annotations(annotations_of(deployment))
    for key, value in annotations_of(replica_set).items():
        if key not in SKIPPED_ANNOTATIONS:
            result[key] = value
    return result


def rollback_revision_requested(deployment: Mapping[str, Any]) -> int | None:
    """The revision asked for by the rollback annotation (0 = previous); ``None`` if absent/invalid."""
    text = annotations_of(deployment).get(ROLLBACK_TO)
    if not isinstance(text, str) or text == "":
        return None
    return parse_int64(text)
