"""CloneSet status: counters, current revision, and the Progressing condition.

:func:`calculate_status` computes the new status from the active pods; :func:`status_changed`
says whether it is worth a write (only counters, revisions, selector, generation or the
Progressing condition's status/reason count -- FailedScale/FailedUpdate alone do not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.conditions import find_condition
from kubeloop.api.meta import deep_copy, format_time, is_mapping, metadata, parse_time
from kubeloop.api.shapes import Condition

from .diffs import expected_updated_replicas
from .podstate import equal_to_revision, is_cloneset_pod_available, is_pod_update_ready
from .spec import is_paused, min_ready_seconds_of, progress_deadline_seconds_of, replicas_of

_COUNTERS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "updatedReadyReplicas",
    "updatedAvailableReplicas",
    "expectedUpdatedReplicas",
)


def calculate_status(
    cs: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    *,
    update_revision: str,
    current_revision: str,
    collision_count: int,
    label_selector: str,
    now: datetime,
    pod_counts: Mapping[str, int] | None = None,
) -> tuple[dict[str, Any], float | None]:
    """The new status and, when the Progressing condition needs a timed re-check, its delay.

    ``current_revision`` is the revision chosen by :func:`revisions.active_revisions`; it
    becomes ``update_revision`` once every pod is on it and the count equals ``replicas``.
    Conditions other than Progressing are carried over from the old status. ``pod_counts``:
    the pod counters already counted (the controller's tally, ``replicas`` ...
    ``updatedAvailableReplicas``); ``pods`` is then not read.
    """
    old_status = cs.get("status") or {}
    replicas = replicas_of(cs)
    min_ready_seconds = min_ready_seconds_of(cs)
    status: dict[str, Any] = {
        "observedGeneration": metadata(cs).get("generation", 0),
        "updateRevision": update_revision,
        "currentRevision": current_revision,
        "collisionCount": collision_count,
        "labelSelector": label_selector,
        **{counter: 0 for counter in _COUNTERS},
    }
    if pod_counts is not None:
        status.update(pod_counts)
        pods = ()
    for pod in pods:
        ready = is_pod_update_ready(pod, 0, now)
        available = is_cloneset_pod_available(pod, min_ready_seconds, now)
        updated = equal_to_revision(pod, update_revision)
        status["replicas"] += 1
        status["readyReplicas"] += ready
        status["availableReplicas"] += available
        status["updatedReplicas"] += updated
        status["updatedReadyReplicas"] += updated and ready
        status["updatedAvailableReplicas"] += updated and available
    if status["updatedReplicas"] == status["replicas"] == replicas:
        status["currentRevision"] = update_revision
    expected = expected_updated_replicas(cs)
    status["expectedUpdatedReplicas"] = (
        expected if expected is not None else old_status.get("expectedUpdatedReplicas", 0)
    )
    status["conditions"] = [c for c in old_status.get("conditions") or [] if is_mapping(c)]
    return with_progressing_condition(cs, status, now)


def with_progressing_condition(
    cs: Mapping[str, Any], status: Mapping[str, Any], now: datetime
) -> tuple[dict[str, Any], float | None]:
    """A copy of ``status`` with the Progressing condition set (or removed when the CloneSet has no
    progress deadline), and the delay after which to check the deadline again (``None``: no need).

    First match wins: Available (every pod updated and available, revisions equal), Paused,
    PartitionAvailable (the partition's share is updated and available), DeadlineExceeded
    (sticky once reached, or when the condition was last updated more than the deadline ago),
    else Updated. An existing condition with the same status and reason is kept as it is, so the
    deadline counts from the moment the reason last changed.
    """
    result: dict[str, Any] = deep_copy(dict(status))
    result["conditions"] = list(result.get("conditions") or [])
    delay = _progressing(cs, result, now)
    if not result["conditions"]:
        del result["conditions"]
    return result, delay


def has_progress_deadline(cs: Mapping[str, Any]) -> bool:
    deadline = progress_deadline_seconds_of(cs)
    return deadline is not None and deadline != kruise.MAX_INT32


def _set_condition(status: dict[str, Any], condition: dict[str, Any]) -> None:
    """Keep an existing condition with the same status and reason; keep the transition time
    when only the reason changes."""
    conditions: list[dict[str, Any]] = status["conditions"]
    current = find_condition(conditions, condition["type"])
    if (
        current is not None
        and current.get("status") == condition["status"]
        and current.get("reason") == condition["reason"]
    ):
        return
    if current is not None and current.get("status") == condition["status"]:
        condition["lastTransitionTime"] = current.get("lastTransitionTime")
    status["conditions"] = [c for c in conditions if c.get("type") != condition["type"]] + [condition]


def _progressing(cs: Mapping[str, Any], status: dict[str, Any], now: datetime) -> float | None:
    if not has_progress_deadline(cs):
        status["conditions"] = [c for c in status["conditions"] if c.get("type") != kruise.CONDITION_PROGRESSING]
        return None
    replicas = replicas_of(cs)
    deadline = progress_deadline_seconds_of(cs) or 0

    def condition(state: str, reason: str, message: str) -> dict[str, Any]:
        stamp = format_time(now)
        return {
            "type": kruise.CONDITION_PROGRESSING,
            "status": state,
            "lastUpdateTime": stamp,
            "lastTransitionTime": stamp,
            "reason": reason,
            "message": message,
        }

    existing = find_condition(status["conditions"], kruise.CONDITION_PROGRESSING)
    if (
        status["currentRevision"] == status["updateRevision"]
        and status["replicas"] == replicas
        and status["updatedReplicas"] == replicas
        and status["updatedAvailableReplicas"] == replicas
    ):
        _set_condition(status, condition("True", kruise.REASON_AVAILABLE, "CloneSet is available"))
        return None
    if is_paused(cs):
        _set_condition(status, condition("True", kruise.REASON_PAUSED, "CloneSet is paused"))
        return None
    expected = status["expectedUpdatedReplicas"]
    if expected < replicas and expected <= status["updatedAvailableReplicas"]:
        _set_condition(
            status,
            condition("True", kruise.REASON_PARTITION_AVAILABLE, "CloneSet has been paused due to partition ready"),
        )
        return None
    if existing is not None:
        last_update = parse_time(existing.get("lastUpdateTime"))
        timed_out = last_update is not None and last_update + timedelta(seconds=deadline) < now
        if existing.get("reason") == kruise.REASON_DEADLINE_EXCEEDED or timed_out:
            message = f"CloneSet revision {status['updateRevision']} has timed out progressing"
            _set_condition(status, condition("False", kruise.REASON_DEADLINE_EXCEEDED, message))
            return None
    _set_condition(status, condition("True", kruise.REASON_UPDATED, "CloneSet is progressing"))
    current = find_condition(status["conditions"], kruise.CONDITION_PROGRESSING)
    last_update = parse_time(current.get("lastUpdateTime")) if current is not None else None
    if last_update is None:
        return None
    after = (last_update + timedelta(seconds=deadline) - now).total_seconds()
    # A second of slack avoids waking up just before the deadline.
    return after if after < 1 else after + 1


def status_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether ``new`` differs from ``old`` in anything that warrants a status write."""
    if int(new.get("observedGeneration") or 0) > int(old.get("observedGeneration") or 0):
        return True
    for key in (*_COUNTERS, "updateRevision", "currentRevision", "labelSelector"):
        if (old.get(key) or 0) != (new.get(key) or 0):
            return True
    before: Condition | None = find_condition(old.get("conditions") or [], kruise.CONDITION_PROGRESSING)
    after: Condition | None = find_condition(new.get("conditions") or [], kruise.CONDITION_PROGRESSING)
    if before is None or after is None:
        return (before is None) != (after is None)
    return before.get("status") != after.get("status") or before.get("reason") != after.get("reason")


def with_failure_condition(
    status: Mapping[str, Any], condition_type: str, message: str, now: datetime
) -> dict[str, Any]:
    """A copy of ``status`` with a ``FailedScale`` / ``FailedUpdate`` condition (status True)."""
    result: dict[str, Any] = deep_copy(dict(status))
    stamp = format_time(now)
    conditions = [c for c in result.get("conditions") or [] if c.get("type") != condition_type]
    conditions.append(
        {
            "type": condition_type,
            "status": "True",
            "lastTransitionTime": stamp,
            "lastUpdateTime": stamp,
            "message": message,
        }
    )
    result["conditions"] = conditions
    return result
