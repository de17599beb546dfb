"""Orders of pods: which to update first, which to delete first.

- :func:`active_pods_compare` is Kubernetes' ``ActivePods`` order (less = "worse" pod): the
  default order of update candidates; :func:`active_pods_key` is the same order as a sort key
  (each pod read once, not once per comparison: the start of a roll orders every candidate).
- :func:`priority_sort` applies ``updateStrategy.priorityStrategy`` (weights or ordered keys).
- :func:`scatter_sort` applies ``updateStrategy.scatterStrategy`` (spread pods carrying given
  labels across the update order).
- :func:`scale_in_compare` with :func:`same_node_ranks` / :func:`spread_constraint_ranks` is the
  scale-in victim order (less = deleted first).

All functions take pods as plain dicts and indexes into a pod list, and return new lists.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.deletioncost import deletion_cost
from kubeloop.api.labels import SelectorError, selector_from_label_selector
from kubeloop.api.meta import labels_of, metadata, parse_time, uid_of
from kubeloop.api.pods import is_pod_ready, max_container_restarts, node_name, pod_phase

from .podstate import lifecycle_state

Pod = Mapping[str, Any]
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
HOSTNAME_LABEL = "kubernetes.io/hostname"


def _ready_time(pod: Pod) -> datetime | None:
    if not is_pod_ready(pod):
        return None
    condition = find_condition(status_conditions(pod), "Ready")
    return parse_time(condition.get("lastTransitionTime")) if condition is not None else None


def _creation_time(pod: Pod) -> datetime | None:
    return parse_time(metadata(pod).get("creationTimestamp"))


def _after_or_zero(first: datetime | None, second: datetime | None) -> bool:
    """``first`` is after ``second``; a missing (zero) time counts as the latest."""
    if first is None or second is None:
        return first is None
    return first > second


def _compare_times_newer_first(first: datetime | None, second: datetime | None) -> int:
    if first == second:
        return 0
    return -1 if _after_or_zero(first, second) else 1


def _compare_head(a: Pod, b: Pod) -> int:
    """Unscheduled before scheduled, then Pending < Unknown < Running."""
    node_a, node_b = node_name(a), node_name(b)
    if node_a != node_b and (not node_a or not node_b):
        return -1 if not node_a else 1
    phase_a, phase_b = _PHASE_ORDINAL.get(pod_phase(a), 0), _PHASE_ORDINAL.get(pod_phase(b), 0)
    if phase_a != phase_b:
        return -1 if phase_a < phase_b else 1
    return 0


def _compare_tail(a: Pod, b: Pod) -> int:
    """Both Ready: more recently Ready first; then more restarts first; then newer first."""
    if is_pod_ready(a) and is_pod_ready(b):
        result = _compare_times_newer_first(_ready_time(a), _ready_time(b))
        if result:
            return result
    restarts_a, restarts_b = max_container_restarts(a), max_container_restarts(b)
    if restarts_a != restarts_b:
        return -1 if restarts_a > restarts_b else 1
    return _compare_times_newer_first(_creation_time(a), _creation_time(b))


def active_pods_compare(a: Pod, b: Pod) -> int:
    """Kubernetes' ``ActivePods`` order as a ``cmp`` function (negative: ``a`` sorts first)."""
    result = _compare_head(a, b)
    if result:
        return result
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return -1 if not ready_a else 1
    return _compare_tail(a, b)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _newer_first(moment: datetime | None) -> tuple[int, int]:
    """A key putting a missing time first (it counts as the latest), then later times before
    earlier ones, to the microsecond: :func:`_compare_times_newer_first` as a key."""
    if moment is None:
        return (0, 0)
    since = moment - _EPOCH
    return (1, -((since.days * 86_400 + since.seconds) * 1_000_000 + since.microseconds))


def active_pods_key(pod: Pod) -> tuple[Any, ...]:
    """:func:`active_pods_compare` as a sort key: ``sorted(pods, key=active_pods_key)`` equals
    ``sorted(pods, key=cmp_to_key(active_pods_compare))``, ties included (both sorts are stable)."""
    ready = is_pod_ready(pod)
    return (1 if node_name(pod) else 0, _PHASE_ORDINAL.get(pod_phase(pod), 0), 1 if ready else 0,
            # Ready times are compared only between ready pods (the previous element ties them).
            _newer_first(_ready_time(pod)) if ready else (0, 0),
            -max_container_restarts(pod), _newer_first(_creation_time(pod)))


def update_order_key(pod: Pod) -> tuple[Any, ...]:
    """The default order of update candidates as a sort key: PreparingUpdate pods first, then
    :func:`active_pods_key` (:func:`kubeloop.controllers.cloneset.update.sort_update_candidates`
    without priority and scatter strategies). A function of the pod alone."""
    return (lifecycle_state(pod) != kruise.STATE_PREPARING_UPDATE, active_pods_key(pod))


def scale_in_compare(
    a: Pod,
    b: Pod,
    *,
    available: Callable[[Pod], bool] | None = None,
    ranks: Mapping[str, float] | None = None,
) -> int:
    """Scale-in order (negative: ``a`` is deleted before ``b``).

    Unscheduled, Pending/Unknown, unavailable (``available`` predicate), not Ready, lower
    deletion cost, higher rank (pod UID -> rank), more recently Ready, more restarts, newer.
    """
    result = _compare_head(a, b)
    if result:
        return result
    if available is not None:
        avail_a, avail_b = available(a), available(b)
        if avail_a != avail_b:
            return -1 if not avail_a else 1
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return -1 if not ready_a else 1
    cost_a, cost_b = deletion_cost(a), deletion_cost(b)
    if cost_a != cost_b:
        return -1 if cost_a < cost_b else 1
    rank_a = ranks.get(uid_of(a), 0.0) if ranks else 0.0
    rank_b = ranks.get(uid_of(b), 0.0) if ranks else 0.0
    if rank_a != rank_b:
        return -1 if rank_a > rank_b else 1
    return _compare_tail(a, b)


def sort_for_scale_in(
    pods: Sequence[Pod], *, available: Callable[[Pod], bool] | None = None, ranks: Mapping[str, float] | None = None
) -> list[Pod]:
    def compare(a: Pod, b: Pod) -> int:
        return scale_in_compare(a, b, available=available, ranks=ranks)

    return sorted(pods, key=functools.cmp_to_key(compare))


def same_node_ranks(pods: Sequence[Pod]) -> dict[str, float]:
    """Rank pods sharing a node: on a node with n pods, all but the best get n-1 ... 1.

    Spreading scale-in over nodes: the pods that crowd a node are deleted first.
    """
    by_node: dict[str, list[Pod]] = {}
    for pod in pods:
        node = node_name(pod)
        if node:
            by_node.setdefault(node, []).append(pod)
    ranks: dict[str, float] = {}
    for on_node in by_node.values():
        if len(on_node) <= 1:
            continue
        ordered = sort_for_scale_in(on_node)[:-1]
        for index, pod in enumerate(ordered):
            ranks[uid_of(pod)] = float(len(ordered) - index)
    return ranks


def spread_constraint_ranks(
    pods: Sequence[Pod], constraints: Sequence[Mapping[str, Any]], nodes: Sequence[Mapping[str, Any]]
) -> dict[str, float]:
    """Rank pods by crowding per topology of each ``{topologyKey, limitedValues?}`` constraint.

    ``nodes`` are the Node objects the pods run on (those not found are skipped, as upstream
    skips nodes it cannot read). Within a topology value the pods are ordered by the scale-in
    order (using same-node ranks unless the key is the hostname) and get ranks n ... 1, weighted
    by ``log(number of topology values + 2)`` and summed over constraints.
    """
    node_by_name = {str(metadata(n).get("name") or ""): n for n in nodes}
    seen_nodes: list[Mapping[str, Any]] = []
    pods_on_node: dict[str, list[Pod]] = {}
    for pod in pods:
        placed = node_name(pod)
        if not placed or placed not in node_by_name:
            continue
        if placed not in pods_on_node:
            seen_nodes.append(node_by_name[placed])
        pods_on_node.setdefault(placed, []).append(pod)

    node_ranks = same_node_ranks(pods)
    ranks: dict[str, float] = {}
    for constraint in constraints:
        key = str(constraint.get("topologyKey") or "")
        limited = constraint.get("limitedValues") or None
        pods_in_topology: dict[str, list[Pod]] = {}
        for node in seen_nodes:
            value = labels_of(node).get(key)
            if value is None or (limited is not None and value not in limited):
                continue
            pods_in_topology.setdefault(value, []).extend(pods_on_node[str(metadata(node).get("name"))])
        use_ranks = None if key == HOSTNAME_LABEL else node_ranks
        weight = math.log(len(pods_in_topology) + 2)
        for members in pods_in_topology.values():
            ordered = sort_for_scale_in(members, ranks=use_ranks)
            for index, pod in enumerate(ordered):
                uid = uid_of(pod)
                ranks[uid] = ranks.get(uid, 0.0) + float(len(ordered) - index) * weight
    return ranks


# --- update order: priority ---------------------------------------------------------------


def trailing_integer(value: str) -> int:
    """The integer at the end of a label value (``"sts-10"`` -> 10); 0 when there is none."""
    digits = len(value) - len(value.rstrip("0123456789"))
    if digits == 0:
        return 0
    number = int(value[-digits:])
    return number if number < 2**63 else 0


def _weight(strategy: Mapping[str, Any], labels: Mapping[str, str]) -> int:
    total = 0
    for term in strategy.get("weightPriority") or ():
        selector = term.get("matchSelector") if isinstance(term, Mapping) else None
        try:
            matched = selector_from_label_selector(selector).matches(labels)
        except SelectorError:
            # An invalid term is skipped, as upstream does.
            continue
        if matched:
            total += int(term.get("weight") or 0)
    return total


def _order(strategy: Mapping[str, Any], labels: Mapping[str, str]) -> tuple[int, int]:
    for level, term in enumerate(strategy.get("orderPriority") or ()):
        key = term.get("orderedKey") if isinstance(term, Mapping) else None
        if isinstance(key, str) and key in labels:
            return level, trailing_integer(labels[key])
    # Pods carrying none of the keys get level -1 and so sort before all others (as upstream).
    return -1, 0


def priority_before(
    strategy: Mapping[str, Any], labels_i: Mapping[str, str], labels_j: Mapping[str, str], default: bool
) -> bool:
    """Whether a pod with ``labels_i`` goes before one with ``labels_j``; ``default`` on a tie."""
    if strategy.get("weightPriority"):
        weight_i, weight_j = _weight(strategy, labels_i), _weight(strategy, labels_j)
        if weight_i != weight_j:
            return weight_i > weight_j
    elif strategy.get("orderPriority"):
        level_i, order_i = _order(strategy, labels_i)
        level_j, order_j = _order(strategy, labels_j)
        if level_i != level_j:
            return level_i < level_j
        if order_i != order_j:
            return order_i > order_j
    return default


def priority_sort(strategy: Mapping[str, Any] | None, pods: Sequence[Pod | None], indexes: Sequence[int]) -> list[int]:
    """Stable sort of ``indexes`` by the priority strategy (higher weight / lower level first)."""
    if not strategy or not (strategy.get("weightPriority") or strategy.get("orderPriority")):
        return list(indexes)

    def compare(i: int, j: int) -> int:
        labels_i = labels_of(pods[i] or {})
        labels_j = labels_of(pods[j] or {})
        if priority_before(strategy, labels_i, labels_j, False):
            return -1
        if priority_before(strategy, labels_j, labels_i, False):
            return 1
        return 0

    return sorted(indexes, key=functools.cmp_to_key(compare))


# --- update order: scatter ----------------------------------------------------------------


def scatter_terms(
    strategy: Sequence[Mapping[str, Any]], pods: Sequence[Pod | None], indexes: Sequence[int]
) -> list[tuple[str, str]]:
    """The terms to scatter by: a single term as is; else the terms matching any candidate,
    most-matched first (stable)."""
    terms = [(str(t.get("key") or ""), str(t.get("value") or "")) for t in strategy]
    if len(terms) == 1:
        return terms
    counts: dict[tuple[str, str], int] = {}
    for key, value in terms:
        for index in indexes:
            labels = labels_of(pods[index] or {})
            if key in labels and labels[key] == value:
                counts[(key, value)] = counts.get((key, value), 0) + 1
    return sorted(counts, key=lambda term: -counts[term])


def _round_half_away(value: float) -> int:
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


def _group(matched: int, unmatched: int) -> tuple[int, int, int]:
    """``(groups, matched per group, unmatched per group)`` for an even interleave."""
    groups = min(matched, unmatched)
    return groups, _round_half_away(matched / groups), _round_half_away(unmatched / groups)


def _float32(value: float) -> float:
    # Upstream compares the two densities as float32; round through single precision.
    packed: float = struct.unpack("f", struct.pack("f", value))[0]
    return packed


def _scatter_by_term(term: tuple[str, str], pods: Sequence[Pod | None], indexes: list[int]) -> list[int]:
    key, value = term
    matched = [i for i in indexes if labels_of(pods[i] or {}).get(key, "") == value]
    unmatched = [i for i in indexes if labels_of(pods[i] or {}).get(key, "") != value]
    if len(matched) <= 1 or len(unmatched) <= 1:
        return indexes
    total_matched = sum(1 for p in pods if p is not None and labels_of(p).get(key, "") == value)
    total_unmatched = sum(1 for p in pods if p is not None and labels_of(p).get(key, "") != value)

    # The last matched candidate is held back and goes at the very end.
    held_back = matched.pop()
    total_matched -= 1

    groups, matched_size, unmatched_size = _group(len(matched), len(unmatched))
    remainder = 0
    if _float32(total_unmatched / total_matched) < _float32(len(unmatched) / len(matched)):
        _, matched_size, unmatched_size = _group(total_matched, total_unmatched)
        groups = min(len(matched) // matched_size, len(unmatched) // unmatched_size)
        remainder = len(unmatched) - groups * unmatched_size

    result = unmatched[:remainder]
    unmatched = unmatched[remainder:]
    for _ in range(groups):
        result += matched[:matched_size]
        matched = matched[matched_size:]
        result += unmatched[:unmatched_size]
        unmatched = unmatched[unmatched_size:]
    return [*result, *matched, *unmatched, held_back]


def scatter_sort(
    strategy: Sequence[Mapping[str, Any]], pods: Sequence[Pod | None], indexes: Sequence[int]
) -> list[int]:
    """Interleave pods matching each scatter term evenly with the others.

    ``pods`` is the CloneSet's whole pod list (``None`` entries are skipped in the totals);
    ``indexes`` the candidates in their current order.
    """
    result = list(indexes)
    if not strategy or len(result) <= 1:
        return result
    for term in scatter_terms(strategy, pods, result):
        result = _scatter_by_term(term, pods, result)
    return result
