"""The update side: which pods to update this round, in which order, and how.

:func:`pods_to_update` returns the indexes of the pods to update now: candidates are pods not
on the target revision (not PreparingDelete, not inside an in-place grace period), ordered by
:func:`sort_update_candidates` and cut by :func:`limit_update_candidates` so that the update
never makes more pods unavailable than the budget allows. :func:`decide_pod_update` then says,
for one pod, whether to recreate it, update it in place, or move it through the lifecycle
hooks first.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from kubeloop.api import kruise
from kubeloop.api.meta import deep_copy, name_of

from .diffs import ExpectationDiffs, calculate_diffs
from .inplace import UpdateSpec, calculate_in_place_update_spec, has_grace_annotation
from .lifecycle import is_pod_hooked, marks_pod_not_ready
from .options import CloneSetFeatureGates
from .ordering import active_pods_key, priority_sort, scatter_sort, update_order_key
from .podstate import equal_to_revision, is_cloneset_pod_available, lifecycle_state
from .spec import (
    grace_period_seconds_of,
    is_paused,
    lifecycle_hook,
    lifecycle_of,
    min_ready_seconds_of,
    priority_strategy_of,
    scatter_strategy_of,
    update_strategy_type,
)
from .tally import TallyView

Pod = Mapping[str, Any]


def update_candidates(pods: Sequence[Pod], update_num: int, update_revision: str,
                      among: Sequence[int] | None = None) -> list[int]:
    """Indexes of pods waiting to move towards the target revision.

    Forward (``update_num > 0``): pods not on the update revision; rollback: pods on it.
    PreparingDelete pods are skipped; ``Updated`` pods always qualify; others only when no
    in-place grace period is pending. ``among``: ascending indexes already known to be on the
    right side of the revision test (the controller's tally); only those are read.
    """
    result: list[int] = []
    for index in range(len(pods)) if among is None else among:
        pod = pods[index]
        if among is None:
            on_update = equal_to_revision(pod, update_revision)
            if on_update if update_num > 0 else not on_update:
                continue
        state = lifecycle_state(pod)
        if state == kruise.STATE_PREPARING_DELETE:
            continue
        if state == kruise.STATE_UPDATED or not has_grace_annotation(pod):
            result.append(index)
    return result


def sort_update_candidates(cs: Mapping[str, Any], pods: Sequence[Pod], indexes: Sequence[int]) -> list[int]:
    """Default (ActivePods) order, then priority, then scatter; PreparingUpdate pods first."""

    ordered = sorted(indexes, key=lambda i: active_pods_key(pods[i]))
    ordered = priority_sort(priority_strategy_of(cs), pods, ordered)
    ordered = scatter_sort(scatter_strategy_of(cs), pods, ordered)
    return sorted(ordered, key=lambda i: lifecycle_state(pods[i]) != kruise.STATE_PREPARING_UPDATE)


def limit_update_candidates(
    cs: Mapping[str, Any],
    diffs: ExpectationDiffs,
    indexes: Sequence[int],
    pods: Sequence[Pod],
    target_revision: str,
    now: datetime,
    unavailable_counts: tuple[int, int] | None = None,
) -> list[int]:
    """Keep at most ``|updateNum|`` candidates, stopping once the unavailability budget is used.

    Unavailable pods on the target revision plus pods started now stay below
    ``updateMaxUnavailable``; starting an available pod also needs the overall unavailable count
    below it (starting an already unavailable pod costs nothing there). ``unavailable_counts``:
    ``(unavailable pods, unavailable pods on the target revision)`` when already counted.
    """
    min_ready_seconds = min_ready_seconds_of(cs)
    candidates = list(indexes[: abs(diffs.update_num)])
    if unavailable_counts is None:
        unavailable_counts = count_unavailable(pods, min_ready_seconds, target_revision, now)
    unavailable, target_unavailable = unavailable_counts
    allowed = 0
    for index in candidates:
        if target_unavailable + allowed >= diffs.update_max_unavailable:
            break
        if is_cloneset_pod_available(pods[index], min_ready_seconds, now):
            if unavailable >= diffs.update_max_unavailable:
                break
            unavailable += 1
        allowed += 1
    return candidates[:allowed]


def count_unavailable(pods: Sequence[Pod], min_ready_seconds: int, target_revision: str,
                      now: datetime) -> tuple[int, int]:
    """``(unavailable pods, unavailable pods on target_revision)``."""
    unavailable = target_unavailable = 0
    for pod in pods:
        if not is_cloneset_pod_available(pod, min_ready_seconds, now):
            unavailable += 1
            if equal_to_revision(pod, target_revision):
                target_unavailable += 1
    return unavailable, target_unavailable


def first_update_candidates(pods: Sequence[Pod], indexes: Sequence[int], count: int,
                            key: Callable[[int], tuple[Any, ...]] | None = None) -> list[int]:
    """The first ``count`` of :func:`sort_update_candidates` without priority and scatter
    strategies (PreparingUpdate first, then the ActivePods order, ties in index order), by
    partial selection: O(candidates) comparisons, not a full sort. ``key``: the
    :func:`.ordering.update_order_key` of the pod at an index, when already known."""
    if count <= 0:
        return []

    # heapq.nsmallest is documented to equal sorted(...)[:count], stable ties included; the key
    # is computed once per candidate.
    return heapq.nsmallest(count, indexes, key=key or (lambda i: update_order_key(pods[i])))


@dataclass(frozen=True)
class UpdatePlan:
    """Pods to update this round: ``indexes`` into the pod list, and the revision to move them to."""

    indexes: list[int]
    target_revision: str
    diffs: ExpectationDiffs


def pods_to_update(
    cs: Mapping[str, Any],
    pods: Sequence[Pod],
    current_revision: str,
    update_revision: str,
    *,
    now: datetime,
    gates: CloneSetFeatureGates,
    tally: TallyView | None = None,
) -> UpdatePlan:
    """Select, order and limit the pods to update now (nothing while paused).

    ``tally``: the pods' counts (see :class:`.tally.TallyView`): the counts come from it, only
    the candidates are read, and without priority and scatter strategies only as many are
    ordered as the limit can let through.
    """
    counts = None if tally is None else tally.diff_counts(update_revision, for_scale=False,
                                                          preparing_update_as_update=False)
    diffs = calculate_diffs(cs, pods, current_revision, update_revision, now=now, gates=gates, for_scale=False,
                            counts=counts)
    target = update_revision if diffs.update_num >= 0 else current_revision
    if is_paused(cs) or diffs.update_num == 0:
        return UpdatePlan([], target, diffs)
    if tally is None:
        candidates = update_candidates(pods, diffs.update_num, update_revision)
        ordered = sort_update_candidates(cs, pods, candidates)
        return UpdatePlan(limit_update_candidates(cs, diffs, ordered, pods, target, now), target, diffs)
    among = tally.indexes_on(update_revision, equal=diffs.update_num < 0)
    candidates = update_candidates(pods, diffs.update_num, update_revision, among=among)
    unavailable = tally.unavailable(target)
    if priority_strategy_of(cs) or scatter_strategy_of(cs):
        ordered = sort_update_candidates(cs, pods, candidates)
    else:
        # limit_update_candidates lets at most this many through, in order.
        most = min(abs(diffs.update_num), max(diffs.update_max_unavailable - unavailable[1], 0))
        ordered = first_update_candidates(pods, candidates, most, key=tally.update_order_key)
    return UpdatePlan(limit_update_candidates(cs, diffs, ordered, pods, target, now, unavailable), target, diffs)


@dataclass(frozen=True)
class PodUpdateDecision:
    """How to update one pod.

    ``kind``:
    - ``"recreate"``: label the pod ``apps.kruise.io/specified-delete: "true"`` (the scale side
      deletes it later within the deletion budget);
    - ``"in_place"``: update in place with ``spec`` (state becomes Updating);
    - ``"prepare_update"``: move to PreparingUpdate and wait for the inPlaceUpdate hook;
    - ``"rehook"``: an ``Updated`` pod meets a newer revision: PreparingUpdate and the hook's
      labels/finalizers re-applied;
    - ``"wait"``: still held by the inPlaceUpdate hook;
    - ``"error"``: cannot proceed (``message`` says why).
    """

    kind: Literal["recreate", "in_place", "prepare_update", "rehook", "wait", "error"]
    spec: UpdateSpec | None = None
    message: str = ""
    mark_not_ready: bool = False
    """For ``prepare_update`` / ``rehook``: also add the ``preUpdateHook`` not-ready key."""


def decide_pod_update(
    cs: Mapping[str, Any],
    pod: Pod,
    revisions: Sequence[Mapping[str, Any]],
    target_revision: Mapping[str, Any],
    *,
    gates: CloneSetFeatureGates,
    specs: dict[str, UpdateSpec | None] | None = None,
) -> PodUpdateDecision:
    """Upstream's ``updatePod`` as a decision: in place when possible and allowed, else recreate.

    ``specs``: the in-place specs already calculated in this round (same ``cs``, ``revisions``
    and ``target_revision``), by the pod's old revision name: the spec depends on the two
    revisions and the CloneSet alone, so the pods of one revision share one calculation (a JSON
    diff of the two templates), each getting its own copy."""
    strategy = update_strategy_type(cs)
    if strategy not in (kruise.IN_PLACE_IF_POSSIBLE, kruise.IN_PLACE_ONLY):
        return PodUpdateDecision("recreate")
    old_revision = next((r for r in revisions if equal_to_revision(pod, name_of(r))), None)
    memo_key = name_of(old_revision) if old_revision is not None else ""
    if specs is not None and memo_key in specs:
        known = specs[memo_key]
        spec = deep_copy(dict(known)) if known is not None else None
    else:
        spec = calculate_in_place_update_spec(
            old_revision,
            target_revision,
            grace_period_seconds=grace_period_seconds_of(cs),
            gates=gates,
            ignore_volume_claim_template_hash=strategy == kruise.IN_PLACE_ONLY,
        )
        if specs is not None:
            specs[memo_key] = deep_copy(dict(spec)) if spec is not None else None
    if spec is None:
        if strategy == kruise.IN_PLACE_ONLY:
            return PodUpdateDecision(
                "error", message=f"find Pod {name_of(pod)} update strategy is InPlaceOnly but can not update in-place"
            )
        return PodUpdateDecision("recreate")
    hook = lifecycle_hook(cs, "inPlaceUpdate")
    state = lifecycle_state(pod)
    if state in ("", kruise.STATE_PREPARING_NORMAL, kruise.STATE_NORMAL):
        if lifecycle_of(cs) is not None and is_pod_hooked(hook, pod):
            return PodUpdateDecision("prepare_update", mark_not_ready=marks_pod_not_ready(hook))
    elif state == kruise.STATE_UPDATED:
        # Without an inPlaceUpdate hook upstream writes nothing and the pod waits.
        if hook is None:
            return PodUpdateDecision("wait")
        return PodUpdateDecision("rehook", mark_not_ready=marks_pod_not_ready(hook))
    elif state == kruise.STATE_PREPARING_UPDATE:
        if lifecycle_of(cs) is not None and is_pod_hooked(hook, pod):
            return PodUpdateDecision("wait")
    elif state != kruise.STATE_UPDATING:
        return PodUpdateDecision("error", message=f"not allowed to in-place update pod {name_of(pod)} in state {state}")
    return PodUpdateDecision("in_place", spec)


def specified_delete_patch() -> dict[str, Any]:
    """Merge patch marking a pod for deletion by the scale side."""
    return {"metadata": {"labels": {kruise.SPECIFIED_DELETE_LABEL: "true"}}}


def pod_template_hash_patch(pod: Pod) -> dict[str, Any] | None:
    """Merge patch adding a missing ``pod-template-hash`` label (the short form of the revision
    label), for pods created before the label existed; ``None`` when present."""
    labels = pod.get("metadata", {}).get("labels") or {}
    if kruise.POD_TEMPLATE_HASH_LABEL in labels:
        return None
    revision = str(labels.get(kruise.CONTROLLER_REVISION_HASH_LABEL) or "")
    return {"metadata": {"labels": {kruise.POD_TEMPLATE_HASH_LABEL: revision.rsplit("-", 1)[-1]}}}
