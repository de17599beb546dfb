"""Pod predicates shared by the controllers and the simulated kubelet.

They follow upstream's definitions: *ready* is the ``Ready`` condition being ``True``;
*available* is ready for at least ``minReadySeconds`` by the condition's
``lastTransitionTime`` (strictly before now); *active* pods are neither finished nor being
deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.meta import is_being_deleted, is_mapping, parse_time

POD_SUCCEEDED = "Succeeded"
POD_FAILED = "Failed"
POD_RUNNING = "Running"
POD_PENDING = "Pending"


def pod_phase(pod: Mapping[str, Any]) -> str:
    status = pod.get("status")
    return str(status.get("phase") or "") if is_mapping(status) else ""


def ready_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return find_condition(status_conditions(pod), "Ready")


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    condition = ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    """Ready, and ready since more than ``min_ready_seconds`` before ``now``."""
    condition = ready_condition(pod)
    if condition is None or condition.get("status") != "True":
        return False
    if min_ready_seconds <= 0:
        return True
    since = parse_time(condition.get("lastTransitionTime"))
    return since is not None and since + timedelta(seconds=min_ready_seconds) < now


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    return pod_phase(pod) not in (POD_SUCCEEDED, POD_FAILED) and not is_being_deleted(pod)


def is_pod_terminating(pod: Mapping[str, Any]) -> bool:
    return is_being_deleted(pod)
