"""Deployment status conditions (Progressing, Available, ReplicaFailure) and their reasons.

Setting a condition that already has the same status and reason changes nothing, not even
``lastUpdateTime``; a new reason with the same status keeps ``lastTransitionTime``. The
condition is moved to the end of the list, as upstream does. Conditions of types the controller
does not know are kept untouched (other clients may add them through ``/status``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kubeloop.api.meta import format_time
from kubeloop.api.nested import section
from kubeloop.controllers.deployment.objects import Obj

PROGRESSING = "Progressing"
AVAILABLE = "Available"
REPLICA_FAILURE = "ReplicaFailure"

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"

# Progressing reasons.
REPLICA_SET_UPDATED = "ReplicaSetUpdated"
FAILED_RS_CREATE = "ReplicaSetCreateError"
NEW_REPLICA_SET_CREATED = "NewReplicaSetCreated"
FOUND_NEW_REPLICA_SET = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"

# Available reasons.
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"


def new_condition(type_: str, status: str, reason: str, message: str, now: datetime) -> Obj:
    """A condition first seen ``now`` (both timestamps set to it)."""
    stamp = format_time(now)
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def conditions_of(status: Mapping[str, Any]) -> list[Obj]:
    """Copies of the well-formed conditions of a status dict."""
    raw = status.get("conditions")
    return [dict(c) for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []


def get_condition(status: Mapping[str, Any], type_: str) -> Obj | None:
    for condition in conditions_of(status):
        if condition.get("type") == type_:
            return condition
    return None


def deployment_condition(deployment: Mapping[str, Any], type_: str) -> Obj | None:
    return get_condition(section(deployment, "status"), type_)


def with_condition(status: Mapping[str, Any], condition: Mapping[str, Any]) -> Obj:
    """A copy of ``status`` with ``condition`` set by upstream's rules (see module docstring)."""
    result = dict(status)
    current = get_condition(status, str(condition.get("type")))
    if current is not None and current.get("status") == condition.get("status"):
        if current.get("reason") == condition.get("reason"):
            result["conditions"] = conditions_of(status)
            return result
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    kept = [c for c in conditions_of(status) if c.get("type") != condition.get("type")]
    result["conditions"] = [*kept, dict(condition)]
    return result


def without_condition(status: Mapping[str, Any], type_: str) -> Obj:
    """A copy of ``status`` without conditions of ``type_``."""
    result = dict(status)
    result["conditions"] = [c for c in conditions_of(status) if c.get("type") != type_]
    return result


def replica_set_condition_to_deployment(condition: Mapping[str, Any]) -> Obj:
    """Promote a ReplicaSet condition (which has no lastUpdateTime) to a Deployment condition."""
    transition = condition.get("lastTransitionTime")
    return {
        "type": condition.get("type"),
        "status": condition.get("status"),
        "lastUpdateTime": transition,
        "lastTransitionTime": transition,
        "reason": condition.get("reason", ""),
        "message": condition.get("message", ""),
    }


def replica_failure_conditions(
    all_replica_sets: Sequence[Mapping[str, Any] | None], new_replica_set: Mapping[str, Any] | None
) -> list[Obj]:
    """ReplicaFailure conditions to surface: the new ReplicaSet's, else those of any ReplicaSet."""
    if new_replica_set is not None:
        found = [
            replica_set_condition_to_deployment(c)
            for c in conditions_of(section(new_replica_set, "status"))
            if c.get("type") == REPLICA_FAILURE
        ]
        if found:
            return found
    return [
        replica_set_condition_to_deployment(c)
        for rs in all_replica_sets
        if rs is not None
        for c in conditions_of(section(rs, "status"))
        if c.get("type") == REPLICA_FAILURE
    ]
