"""The Scale step of a reconcile as one decision: what to create, delete or re-label now.

Upstream's Scale runs these steps and stops at the first that writes anything:

1. revive PreparingDelete pods the replicas need again (back to PreparingNormal);
2. create pods when the arithmetic asks for more (nothing else happens in that round, even
   if the scale-up budget allows 0 creations -- then the Update step still runs);
3. delete PreparingDelete pods whose preDelete hook is gone;
4. delete pods specified for deletion (not-ready ones always, ready ones within the budget);
5. scale in: choose victims (only when no pod is specified or preparing deletion).

A pod chosen for deletion that the preDelete hook holds goes to PreparingDelete instead.
:func:`plan_scale` returns the first step with work as a :class:`ScalePlan`; the caller
performs the writes (creating PVCs before their pod, deleting a pod's PVCs after it).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from kubeloop.api import kruise
from kubeloop.api.meta import name_of

from .diffs import ExpectationDiffs, calculate_diffs
from .lifecycle import is_pod_hooked, marks_pod_not_ready
from .options import CloneSetFeatureGates
from .podstate import lifecycle_state
from .scale import (
    PlannedDeletions,
    available_instance_ids,
    choose_pods_to_delete,
    new_pods,
    planned_deletions,
    pods_to_revive,
    pvcs_for_pod,
    pvcs_of_pod,
    within_ready_limit,
)
from .spec import lifecycle_hook, lifecycle_of
from .tally import TallyView

Pod = Mapping[str, Any]


@dataclass(frozen=True)
class PodCreation:
    """A pod to create, after the PVCs it needs that do not exist yet."""

    pod: dict[str, Any]
    pvcs: list[dict[str, Any]]


@dataclass(frozen=True)
class ScalePlan:
    """The writes of this round's Scale step.

    ``step`` names the step that produced them (``"none"`` when nothing is due);
    ``modifies`` says whether anything is written, in which case the Update step is skipped.
    """

    step: Literal["none", "revive", "create", "delete_preparing", "delete_specified", "scale_in"]
    diffs: ExpectationDiffs | None = None
    revive: list[Pod] = field(default_factory=list)
    creations: list[PodCreation] = field(default_factory=list)
    to_preparing_delete: list[Pod] = field(default_factory=list)
    """Pods to move to PreparingDelete (held by the preDelete hook) instead of deleting."""
    mark_not_ready: bool = False
    """Whether moving to PreparingDelete also marks the pod not ready (KruisePodReady)."""
    deletions: list[Pod] = field(default_factory=list)
    pvc_deletions: list[Mapping[str, Any]] = field(default_factory=list)
    scale_up_limited: bool = False
    """``scaleStrategy.maxUnavailable`` held creations back (event ``ScaleUpLimited``)."""

    @property
    def modifies(self) -> bool:
        return bool(self.revive or self.creations or self.deletions or self.to_preparing_delete)


def _deletion_plan(
    cs: Mapping[str, Any],
    step: Literal["delete_preparing", "delete_specified", "scale_in"],
    victims: Sequence[Pod],
    pvcs: Sequence[Mapping[str, Any]],
    diffs: ExpectationDiffs,
) -> ScalePlan:
    hook = lifecycle_hook(cs, "preDelete")
    hooked: list[Pod] = []
    deletions: list[Pod] = []
    pvc_deletions: list[Mapping[str, Any]] = []
    for pod in victims:
        if lifecycle_of(cs) is not None and is_pod_hooked(hook, pod):
            if lifecycle_state(pod) != kruise.STATE_PREPARING_DELETE:
                hooked.append(pod)
            continue
        deletions.append(pod)
        pvc_deletions.extend(pvcs_of_pod(pod, pvcs))
    return ScalePlan(
        step,
        diffs,
        to_preparing_delete=hooked,
        mark_not_ready=marks_pod_not_ready(hook),
        deletions=deletions,
        pvc_deletions=pvc_deletions,
    )


def plan_scale(
    current_cs: Mapping[str, Any],
    update_cs: Mapping[str, Any],
    pods: Sequence[Pod],
    pvcs: Sequence[Mapping[str, Any]],
    current_revision: str,
    update_revision: str,
    *,
    now: datetime,
    gates: CloneSetFeatureGates,
    rng: random.Random,
    nodes: Sequence[Mapping[str, Any]] = (),
    tally: TallyView | None = None,
) -> ScalePlan:
    """The Scale step for the active ``pods`` and CloneSet-owned ``pvcs``.

    ``current_cs`` / ``update_cs`` are the CloneSet with the current / update revision's
    template applied (see :func:`kubeloop.controllers.cloneset.revisions.apply_revision`);
    ``update_cs`` supplies everything else. ``rng`` draws new instance ids; ``nodes`` serve
    topology-spread ranking. ``tally``: the pods' counts (see :class:`.tally.TallyView`), which
    spare the per-pod passes when nothing is marked for deletion.
    """
    cs = update_cs
    if tally is not None and not tally.has_planned_deletions():
        planned = PlannedDeletions([], [], 0)
    else:
        planned = planned_deletions(cs, pods)
    revive = pods_to_revive(cs, pods, planned)
    if revive:
        return ScalePlan("revive", revive=revive)

    counts = None if tally is None else tally.diff_counts(
        update_revision, for_scale=True, preparing_update_as_update=gates.preparing_update_as_update)
    diffs = calculate_diffs(cs, pods, current_revision, update_revision, now=now, gates=gates, for_scale=True,
                            counts=counts)
    limited = diffs.scale_up_num > diffs.scale_up_limit
    if diffs.scale_up_num > 0:
        ids = available_instance_ids(diffs.scale_up_limit, pods, pvcs, rng)
        created = new_pods(
            current_cs,
            update_cs,
            current_revision,
            update_revision,
            diffs.scale_up_limit,
            diffs.scale_up_num_old_revision,
            ids,
            now=now,
            gates=gates,
        )
        existing = {name_of(p) for p in pvcs}
        creations = []
        for pod, instance_id in zip(created, ids):
            claims = [c for c in pvcs_for_pod(update_cs, instance_id).values() if name_of(c) not in existing]
            creations.append(PodCreation(pod, claims))
        return ScalePlan("create", diffs, creations=creations, scale_up_limited=limited)

    if planned.preparing_delete:
        plan = _deletion_plan(cs, "delete_preparing", planned.preparing_delete, pvcs, diffs)
        if plan.modifies:
            return plan

    preparing_names = {name_of(p) for p in planned.preparing_delete}
    specified = [p for p in planned.specified if name_of(p) not in preparing_names]
    if specified:
        victims = within_ready_limit(cs, specified, diffs.delete_ready_limit, now)
        plan = _deletion_plan(cs, "delete_specified", victims, pvcs, diffs)
        if plan.modifies:
            return plan

    if diffs.scale_down_num > 0 and planned.count == 0:
        chosen = choose_pods_to_delete(
            cs,
            diffs.scale_down_num,
            diffs.scale_down_num_old_revision,
            pods,
            update_revision,
            now=now,
            gates=gates,
            nodes=nodes,
        )
        # Scale-in only runs when no pod was specified, so the ready budget is still whole.
        victims = within_ready_limit(cs, chosen, diffs.delete_ready_limit, now)
        return _deletion_plan(cs, "scale_in", victims, pvcs, diffs)
    return ScalePlan("none", diffs, scale_up_limited=limited)
