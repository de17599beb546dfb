"""ReplicaSet status from its claimed pods, and when it is worth writing.

``replicas`` counts active pods (not finished, not being deleted); ``fullyLabeledReplicas`` those
carrying every template label (the selector may ask for fewer); ``readyReplicas`` those with
Ready=True; ``availableReplicas`` those ready for longer than ``minReadySeconds``;
``terminatingReplicas`` the claimed pods being deleted that have not finished. A failed
create/delete round adds ``ReplicaFailure`` (FailedCreate / FailedDelete) and a clean round
removes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kubeloop.api.meta import format_time, labels_of, metadata
from kubeloop.api.nested import section
from kubeloop.api.pods import is_pod_available, is_pod_ready

Obj = dict[str, Any]

REPLICA_FAILURE = "ReplicaFailure"
FAILED_CREATE = "FailedCreate"
FAILED_DELETE = "FailedDelete"

_COUNTERS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")


def _int(values: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = values.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _conditions(status: Mapping[str, Any]) -> list[Obj]:
    raw = status.get("conditions")
    return [dict(c) for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []


def template_labels(replica_set: Mapping[str, Any]) -> Mapping[str, Any]:
    return section(replica_set, "spec", "template", "metadata", "labels")


def is_fully_labeled(pod: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    pod_labels = labels_of(pod)
    return all(pod_labels.get(key) == value for key, value in labels.items())


@dataclass(frozen=True, slots=True)
class ReplicaCounts:
    """The pod counts a ReplicaSet status reports; ``terminating`` ``None`` leaves the field out."""

    replicas: int
    fully_labeled: int
    ready: int
    available: int
    terminating: int | None = None


def count_replicas(
    replica_set: Mapping[str, Any],
    active_pods: Sequence[Mapping[str, Any]],
    now: datetime,
    terminating_pods: Sequence[Mapping[str, Any]] | None = None,
) -> ReplicaCounts:
    """Count ``active_pods`` (claimed, active) as the status reports them."""
    min_ready = _int(section(replica_set, "spec"), "minReadySeconds")
    labels = template_labels(replica_set)
    ready = [pod for pod in active_pods if is_pod_ready(pod)]
    return ReplicaCounts(
        replicas=len(active_pods),
        fully_labeled=sum(1 for pod in active_pods if is_fully_labeled(pod, labels)),
        ready=len(ready),
        available=sum(1 for pod in ready if is_pod_available(pod, min_ready, now)),
        terminating=None if terminating_pods is None else len(terminating_pods),
    )


def calculate_status(
    replica_set: Mapping[str, Any],
    active_pods: Sequence[Mapping[str, Any]],
    manage_error: str | None,
    now: datetime,
    terminating_pods: Sequence[Mapping[str, Any]] | None = None,
) -> Obj:
    """The new status for ``replica_set`` given its claimed active pods.

    ``manage_error`` is the message of the first error of this sync's create/delete round (if
    any). ``terminating_pods`` (claimed pods being deleted, not yet finished) fills
    ``terminatingReplicas``; ``None`` leaves the field out.
    """
    return status_from_counts(replica_set, count_replicas(replica_set, active_pods, now, terminating_pods),
                              manage_error, now)


def status_from_counts(
    replica_set: Mapping[str, Any], counts: ReplicaCounts, manage_error: str | None, now: datetime
) -> Obj:
    """The new status for ``replica_set`` given its pods' counts (see :func:`calculate_status`)."""
    status: Obj = dict(section(replica_set, "status"))
    spec = section(replica_set, "spec")
    conditions = _conditions(status)
    failure = next((c for c in conditions if c.get("type") == REPLICA_FAILURE), None)
    if manage_error is not None and failure is None:
        shortfall = counts.replicas - _int(spec, "replicas", 1)
        reason = FAILED_CREATE if shortfall < 0 else FAILED_DELETE if shortfall > 0 else ""
        conditions.append(
            {
                "type": REPLICA_FAILURE,
                "status": "True",
                "lastTransitionTime": format_time(now),
                "reason": reason,
                "message": manage_error,
            }
        )
    elif manage_error is None and failure is not None:
        conditions = [c for c in conditions if c.get("type") != REPLICA_FAILURE]
    status["conditions"] = conditions
    status["replicas"] = counts.replicas
    status["fullyLabeledReplicas"] = counts.fully_labeled
    status["readyReplicas"] = counts.ready
    status["availableReplicas"] = counts.available
    if counts.terminating is None:
        status.pop("terminatingReplicas", None)
    else:
        status["terminatingReplicas"] = counts.terminating
    # What upstream's ReplicaSetStatus (k8s.io/api apps/v1) leaves out when empty or zero
    # (``omitempty``): the status written is the one kube-controller-manager writes.
    for key in OMITTED_WHEN_EMPTY:
        if key in status and not status[key]:
            del status[key]
    return status


OMITTED_WHEN_EMPTY = ("conditions", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")
"""ReplicaSetStatus fields with ``omitempty`` that a status write carries only when set
(``replicas`` has none; ``terminatingReplicas`` is a pointer: 0 is written when tracked)."""


def status_needs_update(replica_set: Mapping[str, Any], new_status: Mapping[str, Any]) -> bool:
    """Whether ``new_status`` must be written: a counter or condition changed, or the generation is unobserved."""
    current = section(replica_set, "status")
    if any(_int(current, counter) != _int(new_status, counter) for counter in _COUNTERS):
        return True
    if current.get("terminatingReplicas") != new_status.get("terminatingReplicas"):
        return True
    if _int(metadata(replica_set), "generation") != _int(current, "observedGeneration"):
        return True
    return _conditions(current) != _conditions(new_status)


def status_to_write(replica_set: Mapping[str, Any], new_status: Mapping[str, Any]) -> Obj:
    """``new_status`` stamped with the generation it was computed for."""
    return {**new_status, "observedGeneration": _int(metadata(replica_set), "generation")}


def availability_recheck_after(replica_set: Mapping[str, Any], manage_failed: bool) -> timedelta | None:
    """When to sync again so that ready pods become available without another pod event.

    After a successful round on a ReplicaSet whose pods are all ready but not all available
    (``minReadySeconds`` pending), recheck after ``minReadySeconds``; upstream keeps this as a
    guard against clock skew next to the requeue on each pod turning ready.
    """
    spec, status = section(replica_set, "spec"), section(replica_set, "status")
    min_ready = _int(spec, "minReadySeconds")
    desired = _int(spec, "replicas", 1)
    if manage_failed or min_ready <= 0:
        return None
    if _int(status, "readyReplicas") == desired and _int(status, "availableReplicas") != desired:
        return timedelta(seconds=min_ready)
    return None


def became_ready_recheck_after(
    old_pod: Mapping[str, Any], new_pod: Mapping[str, Any], min_ready_seconds: int
) -> timedelta | None:
    """A pod that just turned ready becomes available ``minReadySeconds`` later: look again then (+1 s)."""
    if min_ready_seconds > 0 and not is_pod_ready(old_pod) and is_pod_ready(new_pod):
        return timedelta(seconds=min_ready_seconds + 1)
    return None
