"""Deployment status: counters from the ReplicaSets, the conditions, and progress deadlines.

``calculate_status`` sums the ReplicaSets' own status (``replicas`` counts non-terminating
pods; ``unavailableReplicas`` is measured against the ReplicaSets' *spec* sum, not
``spec.replicas``) and sets Available. ``rollout_status`` adds what a rollout sync reports:
Progressing (complete / progressing / timed out, only with a progress deadline) and the
ReplicaFailure condition copied from the ReplicaSets. Progress is judged against the status the
Deployment had before this sync, so it must be the stored one.

Time always comes in as ``now``; results are new dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from kubeloop.api.meta import name_of
from kubeloop.api.nested import section
from kubeloop.controllers.deployment import conditions as cond
from kubeloop.controllers.deployment import replicasets
from kubeloop.controllers.deployment.objects import (
    Obj,
    collision_count,
    generation_of,
    has_progress_deadline,
    int_field,
    is_paused,
    progress_deadline_seconds,
    safe_time,
    spec_replicas,
)
from kubeloop.controllers.deployment.strategy import max_unavailable

# Upstream requeues stuck deployments one second late to absorb clock skew between the
# progress check and the work queue's timer.
PROGRESS_CHECK_SLACK = timedelta(seconds=1)

_ZERO_TIME = datetime.min.replace(tzinfo=UTC)

# Status fields that are pointers upstream: absent and 0 differ for them.
_POINTER_FIELDS = frozenset({"collisionCount", "terminatingReplicas"})


def calculate_status(
    all_replica_sets: Sequence[Mapping[str, Any] | None],
    new_replica_set: Mapping[str, Any] | None,
    deployment: Mapping[str, Any],
    now: datetime,
) -> Obj:
    """The status a plain sync writes: counters, copied conditions, and Available."""
    available = replicasets.available_replica_count(all_replica_sets)
    status: Obj = {
        "observedGeneration": generation_of(deployment),
        "replicas": replicasets.actual_replica_count(all_replica_sets),
        "updatedReplicas": replicasets.actual_replica_count([new_replica_set]),
        "readyReplicas": replicasets.ready_replica_count(all_replica_sets),
        "availableReplicas": available,
        "unavailableReplicas": max(0, replicasets.spec_replica_count(all_replica_sets) - available),
        "conditions": cond.conditions_of(section(deployment, "status")),
    }
    terminating = replicasets.terminating_replica_count(all_replica_sets)
    if terminating is not None:
        status["terminatingReplicas"] = terminating
    collisions = collision_count(deployment)
    if collisions is not None:
        status["collisionCount"] = collisions
    if available >= spec_replicas(deployment) - max_unavailable(deployment):
        condition = cond.new_condition(
            cond.AVAILABLE, cond.TRUE, cond.MINIMUM_REPLICAS_AVAILABLE, "Deployment has minimum availability.", now
        )
    else:
        condition = cond.new_condition(
            cond.AVAILABLE,
            cond.FALSE,
            cond.MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    return omit_empty(cond.with_condition(status, condition))


OMITTED_WHEN_EMPTY = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                      "unavailableReplicas", "conditions")
"""DeploymentStatus fields with ``omitempty`` (k8s.io/api apps/v1) that are not pointers: left
out at zero, as kube-controller-manager's status writes leave them (``terminatingReplicas`` and
``collisionCount`` are pointers: 0 is kept)."""


def omit_empty(status: Obj) -> Obj:
    """``status`` without its zero or empty :data:`OMITTED_WHEN_EMPTY` fields."""
    for key in OMITTED_WHEN_EMPTY:
        if key in status and not status[key]:
            del status[key]
    return status


def _count(status: Mapping[str, Any], key: str) -> int:
    return int_field(status, key)


def deployment_complete(deployment: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """All desired replicas are updated and available, no old pods run, and the spec was observed."""
    replicas = spec_replicas(deployment)
    return (
        _count(status, "updatedReplicas") == replicas
        and _count(status, "replicas") == replicas
        and _count(status, "availableReplicas") == replicas
        and _count(status, "observedGeneration") >= generation_of(deployment)
    )


def deployment_progressing(deployment: Mapping[str, Any], new_status: Mapping[str, Any]) -> bool:
    """More updated, ready or available pods, or fewer old pods, than in the stored status."""
    stored = section(deployment, "status")
    old_pods_before = _count(stored, "replicas") - _count(stored, "updatedReplicas")
    old_pods_now = _count(new_status, "replicas") - _count(new_status, "updatedReplicas")
    return (
        _count(new_status, "updatedReplicas") > _count(stored, "updatedReplicas")
        or old_pods_now < old_pods_before
        or _count(new_status, "readyReplicas") > _count(stored, "readyReplicas")
        or _count(new_status, "availableReplicas") > _count(stored, "availableReplicas")
    )


def deployment_timed_out(deployment: Mapping[str, Any], new_status: Mapping[str, Any], now: datetime) -> bool:
    """The Progressing condition of ``new_status`` is older than the progress deadline.

    Never with no deadline or no Progressing condition, nor after a completed rollout; always
    once ProgressDeadlineExceeded was reported.
    """
    if not has_progress_deadline(deployment):
        return False
    progressing = cond.get_condition(new_status, cond.PROGRESSING)
    if progressing is None or progressing.get("reason") == cond.NEW_RS_AVAILABLE:
        return False
    if progressing.get("reason") == cond.TIMED_OUT:
        return True
    since = safe_time(progressing.get("lastUpdateTime")) or _ZERO_TIME
    return since + timedelta(seconds=progress_deadline_seconds(deployment) or 0) < now


def _progress_message(deployment: Mapping[str, Any], new_replica_set: Mapping[str, Any] | None, what: str) -> str:
    if new_replica_set is not None:
        return f'ReplicaSet "{name_of(new_replica_set)}" {what}.'
    return f'Deployment "{name_of(deployment)}" {what}.'


def rollout_status(
    all_replica_sets: Sequence[Mapping[str, Any] | None],
    new_replica_set: Mapping[str, Any] | None,
    deployment: Mapping[str, Any],
    now: datetime,
) -> Obj:
    """The status a rollout sync writes (upstream ``syncRolloutStatus``), progress included."""
    status = calculate_status(all_replica_sets, new_replica_set, deployment, now)
    deadline = has_progress_deadline(deployment)
    if not deadline:
        status = cond.without_condition(status, cond.PROGRESSING)
    current = cond.deployment_condition(deployment, cond.PROGRESSING)
    already_complete = (
        _count(status, "replicas") == _count(status, "updatedReplicas")
        and current is not None
        and current.get("reason") == cond.NEW_RS_AVAILABLE
    )
    if deadline and not already_complete:
        if deployment_complete(deployment, status):
            message = _progress_message(deployment, new_replica_set, "has successfully progressed")
            status = cond.with_condition(
                status, cond.new_condition(cond.PROGRESSING, cond.TRUE, cond.NEW_RS_AVAILABLE, message, now)
            )
        elif deployment_progressing(deployment, status):
            # Progress always refreshes lastUpdateTime (the deadline clock), which the generic
            # setter would not do for an unchanged reason; lastTransitionTime survives while True.
            message = _progress_message(deployment, new_replica_set, "is progressing")
            condition = cond.new_condition(cond.PROGRESSING, cond.TRUE, cond.REPLICA_SET_UPDATED, message, now)
            if current is not None:
                if current.get("status") == cond.TRUE:
                    condition["lastTransitionTime"] = current.get("lastTransitionTime")
                status = cond.without_condition(status, cond.PROGRESSING)
            status = cond.with_condition(status, condition)
        elif deployment_timed_out(deployment, status, now):
            message = _progress_message(deployment, new_replica_set, "has timed out progressing")
            status = cond.with_condition(
                status, cond.new_condition(cond.PROGRESSING, cond.FALSE, cond.TIMED_OUT, message, now)
            )
    failures = cond.replica_failure_conditions(all_replica_sets, new_replica_set)
    if failures:
        return cond.with_condition(status, failures[0])
    return cond.without_condition(status, cond.REPLICA_FAILURE)


def stuck_deployment_requeue(
    deployment: Mapping[str, Any], new_status: Mapping[str, Any], now: datetime
) -> timedelta | None:
    """When to check an unchanged, unfinished rollout against its deadline again.

    ``None``: no check needed (no deadline, no Progressing condition, complete, or already timed
    out). ``timedelta(0)``: less than a second is left, requeue now (rate limited). Otherwise the
    time left; the caller enqueues after that plus :data:`PROGRESS_CHECK_SLACK`.
    """
    current = cond.deployment_condition(deployment, cond.PROGRESSING)
    if not has_progress_deadline(deployment) or current is None:
        return None
    if deployment_complete(deployment, new_status) or current.get("reason") == cond.TIMED_OUT:
        return None
    since = safe_time(current.get("lastUpdateTime")) or _ZERO_TIME
    after = since + timedelta(seconds=progress_deadline_seconds(deployment) or 0) - now
    if after < timedelta(seconds=1):
        return timedelta(0)
    return after


def paused_condition_status(deployment: Mapping[str, Any], now: datetime) -> Obj | None:
    """The status to write when pausing or resuming changes Progressing, else ``None``.

    Paused deployments get ``Progressing=Unknown/DeploymentPaused``; on resume it becomes
    ``DeploymentResumed``, whose fresh lastUpdateTime restarts the deadline clock. A reported
    ProgressDeadlineExceeded is never overwritten. Only with a progress deadline.
    """
    if not has_progress_deadline(deployment):
        return None
    current = cond.deployment_condition(deployment, cond.PROGRESSING)
    if current is not None and current.get("reason") == cond.TIMED_OUT:
        return None
    paused_recorded = current is not None and current.get("reason") == cond.PAUSED
    status = section(deployment, "status")
    if is_paused(deployment) and not paused_recorded:
        condition = cond.new_condition(cond.PROGRESSING, cond.UNKNOWN, cond.PAUSED, "Deployment is paused", now)
        return cond.with_condition(status, condition)
    if not is_paused(deployment) and paused_recorded:
        condition = cond.new_condition(cond.PROGRESSING, cond.UNKNOWN, cond.RESUMED, "Deployment is resumed", now)
        return cond.with_condition(status, condition)
    return None


def _comparable(value: Any, key: str = "") -> Any:
    if isinstance(value, Mapping):
        items = {k: _comparable(v, k) for k, v in value.items()}
        return {k: v for k, v in items.items() if v is not None}
    if isinstance(value, list):
        return [_comparable(item) for item in value] or None
    if value in ("", 0) and not isinstance(value, bool) and key not in _POINTER_FIELDS:
        return None
    return value


def status_equal(stored: Mapping[str, Any], computed: Mapping[str, Any]) -> bool:
    """Whether writing ``computed`` would change ``stored``.

    Zero counters, empty strings and empty lists equal absent fields (the API server omits
    them); ``collisionCount`` and ``terminatingReplicas`` at 0 differ from absent.
    """
    return bool(_comparable(stored) == _comparable(computed))
