"""What a pod is doing right now, in the six states the rollout views draw.

A rollout is read from its pods: which ones exist, which revision each runs, and how far each
has come. The views sort every pod into exactly one state, checked in this order because a pod
can match several (a deleted pod may still be Ready, a crash-looping pod is Running):

``terminating``
    ``metadata.deletionTimestamp`` is set: the pod is on its way out, whatever else it shows.
``failing``
    phase ``Failed`` or ``Succeeded`` (a workload pod that stopped will not serve again), or a
    container stuck waiting for a reason that will not fix itself (crash loop, image pull
    errors, bad configuration).
``pending``
    not running yet: not scheduled, or its containers have not started.
``running``
    phase ``Running`` but not ``Ready``.
``ready``
    ``Ready`` but not yet *available* (ready for fewer than ``minReadySeconds``, or, for a
    CloneSet, still held by an in-place update or a lifecycle hook).
``available``
    counts towards the workload's ``availableReplicas``.

Availability is decided by the caller's predicate because Deployments and CloneSets count it
differently (see :mod:`kubeloop.api.pods` and the CloneSet controller's ``podstate``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.meta import is_being_deleted
from kubeloop.api.pods import POD_FAILED, POD_RUNNING, POD_SUCCEEDED, is_pod_ready, pod_phase


class PodState(StrEnum):
    """The state of one pod tile; the value is what the views and the wire format use."""

    PENDING = "pending"
    RUNNING = "running"
    READY = "ready"
    AVAILABLE = "available"
    TERMINATING = "terminating"
    FAILING = "failing"


STATE_ORDER: tuple[PodState, ...] = (
    PodState.AVAILABLE,
    PodState.READY,
    PodState.RUNNING,
    PodState.PENDING,
    PodState.FAILING,
    PodState.TERMINATING,
)
"""Tile order within a revision: the healthiest first, so a row reads like a progress bar."""

FAILING_WAITING_REASONS = frozenset({
    "CrashLoopBackOff",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
})
"""Container ``waiting`` reasons that mean the pod will not start without someone's help."""

AvailablePredicate = Callable[[Mapping[str, Any], datetime], bool]
"""``(pod, now) -> available``: the workload kind's own notion of an available pod."""


@dataclass(frozen=True)
class PodCondition:
    """A pod's state with the short reason shown next to it (empty when there is nothing to say)."""

    state: PodState
    reason: str = ""


def _container_statuses(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status")
    if not isinstance(status, Mapping):
        return []
    found: list[Mapping[str, Any]] = []
    for field in ("initContainerStatuses", "containerStatuses"):
        values = status.get(field)
        if isinstance(values, list):
            found.extend(value for value in values if isinstance(value, Mapping))
    return found


def _waiting_reason(container: Mapping[str, Any]) -> str:
    state = container.get("state")
    waiting = state.get("waiting") if isinstance(state, Mapping) else None
    return str(waiting.get("reason") or "") if isinstance(waiting, Mapping) else ""


def restart_count(pod: Mapping[str, Any]) -> int:
    """Restarts summed over the pod's containers (what ``kubectl get pods`` shows)."""
    total = 0
    for container in _container_statuses(pod):
        count = container.get("restartCount")
        if isinstance(count, int) and not isinstance(count, bool):
            total += count
    return total


def _pending_reason(pod: Mapping[str, Any]) -> str:
    scheduled = find_condition(status_conditions(pod), "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        return str(scheduled.get("reason") or "Unschedulable")
    spec = pod.get("spec")
    if not (isinstance(spec, Mapping) and spec.get("nodeName")):
        return "Unscheduled"
    for container in _container_statuses(pod):
        reason = _waiting_reason(container)
        if reason:
            return reason
    return "ContainerCreating"


def classify_pod(pod: Mapping[str, Any], is_available: AvailablePredicate, now: datetime) -> PodCondition:
    """The pod's :class:`PodState` and reason (see the module docstring for the rules)."""
    if is_being_deleted(pod):
        return PodCondition(PodState.TERMINATING, "Terminating")
    phase = pod_phase(pod)
    if phase in (POD_FAILED, POD_SUCCEEDED):
        status = pod.get("status")
        reason = str(status.get("reason") or "") if isinstance(status, Mapping) else ""
        return PodCondition(PodState.FAILING, reason or phase)
    for container in _container_statuses(pod):
        reason = _waiting_reason(container)
        if reason in FAILING_WAITING_REASONS:
            return PodCondition(PodState.FAILING, reason)
    if phase != POD_RUNNING:
        return PodCondition(PodState.PENDING, _pending_reason(pod))
    if not is_pod_ready(pod):
        return PodCondition(PodState.RUNNING, "NotReady")
    if not is_available(pod, now):
        return PodCondition(PodState.READY, "NotAvailableYet")
    return PodCondition(PodState.AVAILABLE)
