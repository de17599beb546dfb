"""Pod predicates and readers shared by the controllers and the simulated kubelet.

They follow upstream's definitions: *ready* is the ``Ready`` condition being ``True``;
*available* is ready for at least ``minReadySeconds`` by the condition's
``lastTransitionTime`` (strictly before now); *active* pods are neither finished nor being
deleted. The readers tolerate malformed pods: a ``nodeName`` that is not a string counts as
unplaced, a ``restartCount`` that is not an integer is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.meta import is_being_deleted, is_mapping, parse_time
from kubeloop.api.shapes import Condition

POD_SUCCEEDED = "Succeeded"
POD_FAILED = "Failed"
POD_RUNNING = "Running"
POD_PENDING = "Pending"


def pod_phase(pod: Mapping[str, Any]) -> str:
    status = pod.get("status")
    return str(status.get("phase") or "") if is_mapping(status) else ""


def ready_condition(pod: Mapping[str, Any]) -> Condition | None:
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


def node_name(pod: Mapping[str, Any]) -> str:
    """The pod's ``spec.nodeName`` (``""`` when not placed yet, or not a string)."""
    spec = pod.get("spec")
    node = spec.get("nodeName") if is_mapping(spec) else None
    return node if type(node) is str else ""


def max_container_restarts(pod: Mapping[str, Any]) -> int:
    """The highest ``restartCount`` among the pod's container statuses (0 when none), as
    ``maxContainerRestarts`` in upstream's pkg/controller/controller_utils.go."""
    status = pod.get("status")
    statuses = status.get("containerStatuses") if is_mapping(status) else None
    highest = 0
    for container in statuses if isinstance(statuses, list) else ():
        restarts = container.get("restartCount") if is_mapping(container) else None
        if type(restarts) is int and restarts > highest:
            highest = restarts
    return highest
