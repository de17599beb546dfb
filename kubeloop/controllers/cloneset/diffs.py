"""How many pods to create, delete and update: upstream's ``calculateDiffsWithExpectation``.

Every reconcile counts the CloneSet's active pods by revision (new = on the update revision,
old = anything else) and by condition (PreparingDelete, specified for deletion, unavailable),
then derives, from ``replicas``, ``partition``, ``maxSurge``, ``maxUnavailable`` and
``scaleStrategy.maxUnavailable``:

- how many pods to create (and how many of them on the current revision), limited by the
  scale-up unavailability budget;
- how many to delete beyond those already marked (and how many of them old);
- how many Ready pods may be deleted now;
- how far the update must go (positive: towards the update revision; negative: back to the
  current one, only with the partition-rollback gate) and its unavailability budget;
- the surge in use, so that scale and update agree on the expected total.

The Scale step consumes the scale fields, the Update step the update fields; they never act
in the same reconcile. All numbers are plain ints; the function is pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.intstr import IntOrString

from .options import CloneSetFeatureGates
from .podstate import (
    equal_to_revision,
    is_cloneset_pod_available,
    is_new_for_scale,
    is_specified_delete,
    lifecycle_state,
)
from .spec import (
    excludes_preparing_delete,
    is_paused,
    max_surge_of,
    max_unavailable_of,
    min_ready_seconds_of,
    partition_of,
    replicas_of,
    scale_max_unavailable_of,
)

# Go's strconv.ParseFloat on decimal text (the forms a percentage is written in).
_GO_ATOI = re.compile(r"^[+-]?[0-9]+$")
_DECIMAL = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


class PartitionError(ValueError):
    """A partition (or other float-percent value) that cannot be resolved."""


def scaled_float_percent(value: IntOrString | None, total: int, round_up: bool) -> int:
    """Kruise's int-or-percent resolution, where a percentage may be fractional (``"12.5%"``).

    Ints are returned as they are; ``"<p>%"`` becomes ``ceil``/``floor`` of ``p * total / 100``.
    Raises :class:`PartitionError` for ``None``, a string without ``%`` or a bad number.
    """
    if value is None:
        raise PartitionError("nil value for IntOrString")
    if isinstance(value, bool):
        raise PartitionError("invalid type: neither int nor percentage")
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise PartitionError("invalid type: string is not a percentage")
    text = value[:-1]
    if _DECIMAL.match(text) is None:
        raise PartitionError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    scaled = float(text) * float(total) / 100.0
    return math.ceil(scaled) if round_up else math.floor(scaled)


def partition_replicas(partition: IntOrString | None, replicas: int) -> int:
    """How many pods the partition keeps on old revisions, clamped to ``[0, replicas]``.

    A percentage rounds up (a partition above ``"0%"`` keeps at least one old pod), but a
    percentage below ``"100%"`` of more than one replica never keeps them all: at least one pod
    gets updated. Raises :class:`PartitionError` for an unparsable value.
    """
    if partition is None:
        return 0
    value = scaled_float_percent(partition, replicas, round_up=True)
    if replicas > 1 and value == replicas and isinstance(partition, str) and partition != "100%":
        value = replicas - 1
    return max(min(value, replicas), 0)


def int_or_percent_or_zero(value: IntOrString | None, total: int, round_up: bool) -> int:
    """The controller's reading of maxSurge / maxUnavailable (Kubernetes' deprecated
    ``GetValueFromIntOrPercent``): every string is a percentage, with or without ``%``
    (``"5"`` is 5%); a string that is not an integer once ``%`` is removed counts as 0, as
    upstream ignores the parse error."""
    if value is None or isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    text = value.replace("%", "")
    if _GO_ATOI.match(text) is None:
        return 0
    scaled = float(int(text)) * float(total) / 100.0
    return math.ceil(scaled) if round_up else math.floor(scaled)


@dataclass(frozen=True)
class ExpectationDiffs:
    """The result of :func:`calculate_diffs`; every field 0 means "nothing to do"."""

    scale_up_num: int = 0
    """Pods to create (>= 0)."""
    scale_up_num_old_revision: int = 0
    """How many of the created pods should be on the current revision (may exceed the above)."""
    scale_down_num: int = 0
    """Pods to delete besides those already specified for deletion (>= 0)."""
    scale_down_num_old_revision: int = 0
    """How many of the deleted pods should be old (may exceed the above)."""
    scale_up_limit: int = 0
    """Pods that may be created now (``scaleStrategy.maxUnavailable`` budget)."""
    delete_ready_limit: int = 0
    """Ready pods that may be deleted now (``updateStrategy.maxUnavailable`` budget)."""
    use_surge: int = 0
    """Pods expected above ``replicas`` for now."""
    use_surge_old_revision: int = 0
    """The part of the surge expected on the current revision."""
    update_num: int = 0
    """Pods to move to the update revision (>0) or back to the current revision (<0)."""
    update_max_unavailable: int = 0
    """Unavailable pods the update may cause or keep."""


@dataclass(frozen=True)
class PodCounts:
    """The pod counts :func:`calculate_diffs` needs; each dict is keyed by "new" (on the update
    revision, in the scale or update side's sense) and counts the active pods."""

    pods: int
    total: dict[bool, int]
    active: dict[bool, int]
    """Not PreparingDelete."""
    unavailable: dict[bool, int]
    """Not PreparingDelete, not specified for deletion, not available."""
    to_delete: dict[bool, int]
    """Not PreparingDelete, specified for deletion."""
    pre_deleting: dict[bool, int]


def count_pods(
    cs: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    update_revision: str,
    *,
    now: datetime,
    gates: CloneSetFeatureGates,
    for_scale: bool,
) -> PodCounts:
    """The counts of :class:`PodCounts`, pod by pod."""
    min_ready_seconds = min_ready_seconds_of(cs)
    total = {True: 0, False: 0}
    active = {True: 0, False: 0}
    unavailable = {True: 0, False: 0}
    to_delete = {True: 0, False: 0}
    pre_deleting = {True: 0, False: 0}
    for pod in pods:
        if for_scale:
            new = is_new_for_scale(pod, update_revision, gates.preparing_update_as_update)
        else:
            new = equal_to_revision(pod, update_revision)
        total[new] += 1
        if lifecycle_state(pod) == kruise.STATE_PREPARING_DELETE:
            pre_deleting[new] += 1
            continue
        active[new] += 1
        if is_specified_delete(cs, pod):
            to_delete[new] += 1
        elif not is_cloneset_pod_available(pod, min_ready_seconds, now):
            unavailable[new] += 1
    return PodCounts(len(pods), total, active, unavailable, to_delete, pre_deleting)


def calculate_diffs(
    cs: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    current_revision: str,
    update_revision: str,
    *,
    now: datetime,
    gates: CloneSetFeatureGates,
    for_scale: bool,
    counts: PodCounts | None = None,
) -> ExpectationDiffs:
    """Upstream's ``calculateDiffsWithExpectation`` over the CloneSet's active pods.

    ``counts``: the pods already counted (:func:`count_pods`, or the controller's running
    tally); ``pods`` is then not read.

    ``for_scale`` selects the scale side's notion of "new" (which, with the
    ``PreparingUpdateAsUpdate`` gate, counts PreparingUpdate pods as new); the update side
    uses plain revision equality. Invalid partition or int-or-percent values count as 0.
    """
    replicas = replicas_of(cs)
    try:
        partition = partition_replicas(partition_of(cs), replicas)
    except PartitionError:
        partition = 0
    max_surge = 0
    surge_value = max_surge_of(cs)
    if surge_value is not None:
        max_surge = 0 if is_paused(cs) else int_or_percent_or_zero(surge_value, replicas, round_up=True)
    # maxUnavailable rounds down when a surge is in use, up otherwise.
    max_unavailable = int_or_percent_or_zero(max_unavailable_of(cs), replicas, round_up=max_surge == 0)
    scale_limit_value = scale_max_unavailable_of(cs)
    scale_max_unavailable = (
        kruise.MAX_INT32
        if scale_limit_value is None
        else int_or_percent_or_zero(scale_limit_value, replicas, round_up=True)
    )
    if counts is None:
        counts = count_pods(cs, pods, update_revision, now=now, gates=gates, for_scale=for_scale)
    total, active, unavailable = counts.total, counts.active, counts.unavailable
    to_delete, pre_deleting = counts.to_delete, counts.pre_deleting
    pod_count = counts.pods

    update_old_diff = active[False] - partition
    update_new_diff = active[True] - (replicas - partition)
    total_unavailable = pre_deleting[True] + pre_deleting[False] + unavailable[True] + unavailable[False]
    if update_revision == current_revision or not gates.partition_rollback:
        update_old_diff = max(update_old_diff, 0)
        update_new_diff = min(update_new_diff, 0)

    use_surge = use_surge_old = 0
    if max_surge > 0:
        use_surge, use_surge_old = _surge_in_use(
            max_surge,
            max_unavailable,
            total_unavailable,
            to_delete[True],
            to_delete[False],
            update_old_diff,
            update_new_diff,
        )

    current_total = pod_count
    current_old = total[False]
    if excludes_preparing_delete(cs, gates):
        current_total -= pre_deleting[True] + pre_deleting[False]
        current_old -= pre_deleting[False]
    expected_total = replicas + use_surge
    expected_old = partition + use_surge_old

    scale_up_num = scale_up_old = scale_up_limit = 0
    if expected_total - current_total > 0:
        scale_up_num = expected_total - current_total
        scale_up_old = max(expected_old - current_old, 0)
        scale_up_limit = min(scale_up_num, max(scale_max_unavailable - total_unavailable, 0))

    scale_down_num = scale_down_old = 0
    all_to_delete = to_delete[True] + to_delete[False]
    if current_total - all_to_delete - expected_total > 0:
        scale_down_num = current_total - all_to_delete - expected_total
        scale_down_old = max(current_old - to_delete[False] - expected_old, 0)

    delete_ready_limit = 0
    if all_to_delete > 0 or scale_down_num > 0:
        # The pod count here is the raw one even when PreparingDelete pods are excluded above.
        delete_ready_limit = max(max_unavailable + (pod_count - replicas) - total_unavailable, 0)

    update_num = update_old_diff if abs(update_old_diff) <= abs(update_new_diff) else -update_new_diff
    update_max_unavailable = max_unavailable + pod_count - replicas if update_num != 0 else 0

    return ExpectationDiffs(
        scale_up_num=scale_up_num,
        scale_up_num_old_revision=scale_up_old,
        scale_down_num=scale_down_num,
        scale_down_num_old_revision=scale_down_old,
        scale_up_limit=scale_up_limit,
        delete_ready_limit=delete_ready_limit,
        use_surge=use_surge,
        use_surge_old_revision=use_surge_old,
        update_num=update_num,
        update_max_unavailable=update_max_unavailable,
    )


def _surge_in_use(
    max_surge: int,
    max_unavailable: int,
    total_unavailable: int,
    to_delete_new: int,
    to_delete_old: int,
    update_old_diff: int,
    update_new_diff: int,
) -> tuple[int, int]:
    """``(useSurge, useSurgeOldRevision)``: surge for deletions or for the update, whichever is larger.

    Specified deletions use surge when deleting them would exceed maxUnavailable; an update
    uses surge when old and new counts must move in opposite directions. Scale and update never
    run in the same reconcile, so only the larger need is served.
    """
    scale_surge = scale_old_surge = 0
    to_delete = to_delete_new + to_delete_old
    if to_delete > 0:
        scale_surge = min(max(total_unavailable + to_delete - max_unavailable, 0), to_delete)
        if scale_surge > to_delete_new:
            scale_old_surge = scale_surge - to_delete_new

    update_surge = update_old_surge = 0
    if (update_old_diff > 0 > update_new_diff) or (update_old_diff < 0 < update_new_diff):
        if abs(update_old_diff) <= abs(update_new_diff):
            update_surge = abs(update_old_diff)
            if update_old_diff < 0:
                update_old_surge = update_surge
        else:
            update_surge = abs(update_new_diff)
            if update_new_diff > 0:
                update_old_surge = update_surge

    if scale_surge >= update_surge:
        use_surge = min(max_surge, scale_surge)
        return use_surge, min(use_surge, scale_old_surge)
    use_surge = min(max_surge, update_surge)
    return use_surge, min(use_surge, update_old_surge)


def expected_updated_replicas(cs: Mapping[str, Any]) -> int | None:
    """``replicas - partition`` (status.expectedUpdatedReplicas); ``None`` if the partition is invalid."""
    replicas = replicas_of(cs)
    try:
        return replicas - partition_replicas(partition_of(cs), replicas)
    except PartitionError:
        return None
