"""Rollout progress of one workload: counts, the surge and unavailability bounds, and a verdict.

The numbers come from the workload's own status (what its controller last wrote), so the views
show the controller's accounting rather than a second opinion; the bounds come from the spec,
resolved by the controllers' own arithmetic (``controllers.deployment.strategy`` for
Deployments, the CloneSet controller's int-or-percent and partition rules for CloneSets).

The verdict follows ``kubectl rollout status``:

- a workload whose controller has not observed the latest generation is *waiting*;
- a ``Progressing`` condition with reason ``ProgressDeadlineExceeded`` is *failed*;
- fewer updated replicas than expected, old replicas still around, or updated replicas not
  yet available is *progressing* (with kubectl's wording of which of the three);
- otherwise the rollout is *complete*.

For a CloneSet "expected updated" is ``replicas - partition`` (``status.expectedUpdatedReplicas``)
and old pods kept by the partition are not "pending termination": a partitioned rollout is
complete once the pods it may update are updated and available. That rule is ours (kubectl
knows no CloneSets); it matches what the CloneSet controller reports as ``CloneSetAvailable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.controllers.cloneset.diffs import PartitionError, partition_replicas, scaled_float_percent
from kubeloop.controllers.cloneset.spec import is_paused as cloneset_paused
from kubeloop.controllers.cloneset.spec import max_surge_of, max_unavailable_of, partition_of, replicas_of
from kubeloop.controllers.deployment.objects import generation_of, is_paused, spec_replicas, status_int
from kubeloop.controllers.deployment.strategy import max_surge, max_unavailable

DEPLOYMENT = "Deployment"
CLONESET = kruise.CLONESET_KIND
DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"


class RolloutPhase(StrEnum):
    """Where a rollout stands; ``complete`` and ``failed`` end ``kubeloop watch``."""

    WAITING = "waiting"
    PROGRESSING = "progressing"
    COMPLETE = "complete"
    FAILED = "failed"


@dataclass(frozen=True)
class Progress:
    """The numbers one progress bar draws.

    ``max_pods`` (``desired + maxSurge``) is the surge bound: the rollout never runs more pods
    than that. ``min_available`` (``desired - maxUnavailable``) is the unavailability bound:
    it never lets fewer pods than that be available.
    """

    desired: int
    current: int
    """Pods the controller counts (``status.replicas``), old and new."""
    updated: int
    ready: int
    available: int
    expected_updated: int
    """Pods that should end on the update revision (``desired`` unless a partition holds some back)."""
    max_surge: int
    max_unavailable: int
    paused: bool

    @property
    def max_pods(self) -> int:
        return self.desired + self.max_surge

    @property
    def min_available(self) -> int:
        return max(self.desired - self.max_unavailable, 0)

    def as_json(self) -> dict[str, Any]:
        return {
            "desired": self.desired,
            "current": self.current,
            "updated": self.updated,
            "ready": self.ready,
            "available": self.available,
            "expectedUpdated": self.expected_updated,
            "maxSurge": self.max_surge,
            "maxUnavailable": self.max_unavailable,
            "maxPods": self.max_pods,
            "minAvailable": self.min_available,
            "paused": self.paused,
        }


@dataclass(frozen=True)
class RolloutVerdict:
    phase: RolloutPhase
    message: str

    def as_json(self) -> dict[str, str]:
        return {"phase": self.phase.value, "message": self.message}


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, Mapping) else {}


def _observed_generation(obj: Mapping[str, Any]) -> int:
    return status_int(obj, "observedGeneration")


def deployment_progress(deployment: Mapping[str, Any]) -> Progress:
    desired = spec_replicas(deployment)
    return Progress(
        desired=desired,
        current=status_int(deployment, "replicas"),
        updated=status_int(deployment, "updatedReplicas"),
        ready=status_int(deployment, "readyReplicas"),
        available=status_int(deployment, "availableReplicas"),
        expected_updated=desired,
        max_surge=max_surge(deployment),
        max_unavailable=max_unavailable(deployment),
        paused=is_paused(deployment),
    )


def _kruise_budget(value: Any, replicas: int, round_up: bool) -> int:
    # The CloneSet controller ignores values it cannot resolve (they count as 0); so do we.
    try:
        return scaled_float_percent(value, replicas, round_up=round_up)
    except PartitionError:
        return 0


def cloneset_progress(cloneset: Mapping[str, Any]) -> Progress:
    """A CloneSet's progress; maxUnavailable rounds down when a surge is in use, up otherwise."""
    desired = replicas_of(cloneset)
    paused = cloneset_paused(cloneset)
    surge_value = max_surge_of(cloneset)
    surge = 0 if surge_value is None or paused else _kruise_budget(surge_value, desired, round_up=True)
    unavailable = _kruise_budget(max_unavailable_of(cloneset), desired, round_up=surge == 0)
    try:
        partition = partition_replicas(partition_of(cloneset), desired)
    except PartitionError:
        partition = 0
    status = _status(cloneset)
    expected = status.get("expectedUpdatedReplicas")
    if not isinstance(expected, int) or isinstance(expected, bool):
        expected = desired - partition
    return Progress(
        desired=desired,
        current=status_int(cloneset, "replicas"),
        updated=status_int(cloneset, "updatedReplicas"),
        ready=status_int(cloneset, "readyReplicas"),
        available=status_int(cloneset, "availableReplicas"),
        expected_updated=expected,
        max_surge=surge,
        max_unavailable=min(unavailable, desired),
        paused=paused,
    )


def workload_progress(kind: str, workload: Mapping[str, Any]) -> Progress:
    return cloneset_progress(workload) if kind == CLONESET else deployment_progress(workload)


def _deadline_exceeded(workload: Mapping[str, Any]) -> bool:
    condition = find_condition(status_conditions(workload), "Progressing")
    return condition is not None and condition.get("reason") == DEADLINE_EXCEEDED


def rollout_verdict(kind: str, workload: Mapping[str, Any]) -> RolloutVerdict:
    """Where the rollout stands, worded like ``kubectl rollout status`` (see the module docstring)."""
    name = str((workload.get("metadata") or {}).get("name") or "")
    what = f'{kind.lower()} "{name}"'
    if generation_of(workload) > _observed_generation(workload):
        return RolloutVerdict(RolloutPhase.WAITING, f"Waiting for {kind.lower()} spec update to be observed...")
    if _deadline_exceeded(workload):
        return RolloutVerdict(RolloutPhase.FAILED, f"{what} exceeded its progress deadline")
    progress = workload_progress(kind, workload)
    if progress.updated < progress.expected_updated:
        return RolloutVerdict(
            RolloutPhase.PROGRESSING,
            f"Waiting for {what} rollout to finish: {progress.updated} out of {progress.expected_updated} "
            "new replicas have been updated...",
        )
    old_pending = progress.current - (progress.updated if kind != CLONESET else progress.desired)
    if old_pending > 0:
        return RolloutVerdict(
            RolloutPhase.PROGRESSING,
            f"Waiting for {what} rollout to finish: {old_pending} old replicas are pending termination...",
        )
    updated_available = progress.available
    if kind == CLONESET:
        updated_available = status_int(workload, "updatedAvailableReplicas")
    if updated_available < progress.updated:
        return RolloutVerdict(
            RolloutPhase.PROGRESSING,
            f"Waiting for {what} rollout to finish: {updated_available} of {progress.updated} "
            "updated replicas are available...",
        )
    return RolloutVerdict(RolloutPhase.COMPLETE, f"{what} successfully rolled out")
