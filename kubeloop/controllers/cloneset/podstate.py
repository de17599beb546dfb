"""Pod predicates of the CloneSet controller.

Upstream distinguishes:

- *update-ready* (used for ``readyReplicas``): phase Running, Ready for ``minReadySeconds``,
  and the ``InPlaceUpdateReady`` condition absent or True;
- *available* (``availableReplicas`` and every budget): update-ready and the lifecycle state
  empty or ``Normal`` -- so a Ready pod still ``PreparingNormal`` is not available;
- *updated*: the ``controller-revision-hash`` label names the update revision, comparing
  either the full name or only the hash after the last ``-``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.meta import labels_of, name_of
from kubeloop.api.pods import POD_RUNNING, is_pod_available, pod_phase

from .spec import pods_to_delete_of


def lifecycle_state(pod: Mapping[str, Any]) -> str:
    return str(labels_of(pod).get(kruise.LIFECYCLE_STATE_LABEL) or "")


def revision_label(pod: Mapping[str, Any]) -> str:
    return str(labels_of(pod).get(kruise.CONTROLLER_REVISION_HASH_LABEL) or "")


def short_hash(revision_name: str) -> str:
    """The hash part of a revision name: the text after its last ``-``."""
    return revision_name.rsplit("-", 1)[-1]


def equal_to_revision(pod: Mapping[str, Any], revision_name: str) -> bool:
    """Whether the pod's revision label names ``revision_name`` (full or short form)."""
    label = revision_label(pod)
    return label == revision_name or short_hash(label) == short_hash(revision_name)


def is_new_for_scale(pod: Mapping[str, Any], update_revision: str, preparing_update_as_update: bool) -> bool:
    """The "already updated" predicate of the scale side (``PreparingUpdateAsUpdate`` aware)."""
    if preparing_update_as_update and lifecycle_state(pod) == kruise.STATE_PREPARING_UPDATE:
        return True
    return equal_to_revision(pod, update_revision)


def in_place_update_ready_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return find_condition(status_conditions(pod), kruise.INPLACE_UPDATE_READY)


def is_pod_update_ready(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    """Running, available for ``min_ready_seconds``, and not held by an in-place update."""
    if pod_phase(pod) != POD_RUNNING or not is_pod_available(pod, min_ready_seconds, now):
        return False
    condition = in_place_update_ready_condition(pod)
    return condition is None or condition.get("status") == "True"


def is_cloneset_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    """Available as the CloneSet counts it: update-ready and lifecycle state ``""``/``Normal``."""
    if lifecycle_state(pod) not in ("", kruise.STATE_NORMAL):
        return False
    return is_pod_update_ready(pod, min_ready_seconds, now)


def has_specified_delete_label(pod: Mapping[str, Any]) -> bool:
    """The label's presence counts, whatever its value (even ``"false"``)."""
    return kruise.SPECIFIED_DELETE_LABEL in labels_of(pod)


def is_specified_delete(cs: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Labelled for deletion, or named in ``spec.scaleStrategy.podsToDelete``."""
    return has_specified_delete_label(pod) or name_of(pod) in pods_to_delete_of(cs)


def instance_id_of(obj: Mapping[str, Any]) -> str:
    return str(labels_of(obj).get(kruise.INSTANCE_ID_LABEL) or "")
