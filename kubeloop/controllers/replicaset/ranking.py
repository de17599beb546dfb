"""Which pods a ReplicaSet deletes first when it has too many.

Pods are compared rule by rule until one tells them apart; the first in the order goes first:

1. not yet scheduled before scheduled;
2. Pending before Unknown before Running (other phases count as Pending);
3. not ready before ready;
4. lower ``controller.kubernetes.io/pod-deletion-cost`` first (missing or invalid = 0, see
   :mod:`kubeloop.api.deletioncost`);
5. more active sibling pods on the same node first (the *rank*, which spreads survivors);
6. both ready since different times: ready more recently first;
7. more container restarts first;
8. created more recently first.

Missing timestamps count as the most recent. With logarithmic scale-down (upstream's default)
the times in rules 6 and 8 are compared by ``floor(log2(age in ns))`` so pods of similar age are
interchangeable, and equal buckets fall back to the pod UID for a stable pseudo-random choice.
Pods the rules cannot separate keep their input order.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import cmp_to_key
from typing import Any

from kubeloop.api.deletioncost import deletion_cost
from kubeloop.api.meta import metadata, parse_time, uid_of
from kubeloop.api.pods import (
    POD_PENDING,
    POD_RUNNING,
    is_pod_active,
    is_pod_ready,
    max_container_restarts,
    node_name,
    pod_phase,
    ready_condition,
)

_PHASE_ORDER = {POD_PENDING: 0, "Unknown": 1, POD_RUNNING: 2}


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def ready_since(pod: Mapping[str, Any]) -> datetime | None:
    """When a ready pod became ready (``None``: not ready, or no transition time recorded)."""
    if not is_pod_ready(pod):
        return None
    condition = ready_condition(pod)
    return _time(condition.get("lastTransitionTime")) if condition is not None else None


def _later_or_missing(first: datetime | None, second: datetime | None) -> bool:
    """``first`` is after ``second``; a missing time counts as later than any other."""
    if first is None or second is None:
        return first is None
    return first > second


def _age_bucket(moment: datetime, now: datetime) -> int:
    age = now - moment
    nanoseconds = (age.days * 86_400 + age.seconds) * 1_000_000_000 + age.microseconds * 1_000
    return int(math.log2(nanoseconds)) if nanoseconds > 0 else -1


class PodRankingFacts:
    """What the deletion order reads from one pod version (everything but the time-dependent
    age buckets and the node rank), read once instead of per comparison."""

    __slots__ = ("active", "cost", "created", "node", "phase", "ready", "restarts", "since", "uid")

    def __init__(self, pod: Mapping[str, Any]) -> None:
        self.active = is_pod_active(pod)
        self.node = node_name(pod)
        self.phase = _PHASE_ORDER.get(pod_phase(pod), 0)
        self.ready = is_pod_ready(pod)
        self.cost = deletion_cost(pod)
        self.uid = uid_of(pod)
        self.since = ready_since(pod) if self.ready else None
        self.restarts = max_container_restarts(pod)
        self.created = _time(metadata(pod).get("creationTimestamp"))


class RankingFactsCache:
    """:class:`PodRankingFacts` per pod UID, kept until the pod's ``resourceVersion`` changes.

    A ReplicaSet scaled down step by step during a rolling update ranks the same pods again
    at every step; reading them once per version keeps each step's cost to the sort.
    """

    def __init__(self) -> None:
        self._entries: dict[Any, tuple[Any, PodRankingFacts]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def facts(self, pod: Mapping[str, Any]) -> PodRankingFacts:
        meta = pod.get("metadata")
        if type(meta) is not dict:  # cached objects are plain dicts; anything else is checked
            meta = metadata(pod)
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        if not uid or not version:
            return PodRankingFacts(pod)
        entry = self._entries.get(uid)
        if entry is None or entry[0] != version:
            entry = (version, PodRankingFacts(pod))
            self._entries[uid] = entry
        return entry[1]

    def forget(self, pod: Mapping[str, Any]) -> None:
        """Drop what is remembered about a pod (it was deleted)."""
        uid = metadata(pod).get("uid")
        if uid:
            self._entries.pop(uid, None)


class _RankingFacts:
    """One pod's place in one sort: its cached facts, its node rank and its age buckets."""

    __slots__ = ("cost", "created", "created_bucket", "node", "phase", "rank", "ready", "restarts", "since",
                 "since_bucket", "uid")

    def __init__(self, facts: PodRankingFacts, rank: int, now: datetime | None) -> None:
        self.node = facts.node
        self.phase = facts.phase
        self.ready = facts.ready
        self.cost = facts.cost
        self.rank = rank
        self.uid = facts.uid
        self.since = facts.since
        self.restarts = facts.restarts
        self.created = facts.created
        self.since_bucket = _age_bucket(self.since, now) if self.since is not None and now is not None else 0
        self.created_bucket = _age_bucket(self.created, now) if self.created is not None and now is not None else 0


def _more_recent(
    first: datetime | None,
    second: datetime | None,
    buckets: tuple[int, int],
    uids: tuple[str, str],
    now: datetime | None,
    logarithmic: bool,
) -> bool:
    if not logarithmic or now is None or first is None or second is None:
        return _later_or_missing(first, second)
    difference = buckets[0] - buckets[1]
    if difference == 0:
        return uids[0] < uids[1]
    return difference < 0


def _facts_deleted_before(
    a: _RankingFacts, b: _RankingFacts, now: datetime | None, use_deletion_cost: bool, logarithmic: bool
) -> bool:
    if a.node != b.node and (a.node == "" or b.node == ""):
        return a.node == ""
    if a.phase != b.phase:
        return a.phase < b.phase
    if a.ready != b.ready:
        return not a.ready
    if use_deletion_cost and a.cost != b.cost:
        return a.cost < b.cost
    if a.rank != b.rank:
        return a.rank > b.rank
    uids = (a.uid, b.uid)
    if a.ready and b.ready and a.since != b.since:
        return _more_recent(a.since, b.since, (a.since_bucket, b.since_bucket), uids, now, logarithmic)
    if a.restarts != b.restarts:
        return a.restarts > b.restarts
    if a.created != b.created:
        return _more_recent(a.created, b.created, (a.created_bucket, b.created_bucket), uids, now, logarithmic)
    return False


def deleted_before(
    first: Mapping[str, Any],
    first_rank: int,
    second: Mapping[str, Any],
    second_rank: int,
    now: datetime | None,
    *,
    use_deletion_cost: bool = True,
    logarithmic: bool = True,
) -> bool:
    """Whether ``first`` should be deleted before ``second`` (upstream's ``Less``)."""
    return _facts_deleted_before(_RankingFacts(PodRankingFacts(first), first_rank, now),
                                 _RankingFacts(PodRankingFacts(second), second_rank, now),
                                 now, use_deletion_cost, logarithmic)


def ranks_by_related_pods_on_same_node(
    pods: Sequence[Mapping[str, Any]], related_pods: Sequence[Mapping[str, Any]],
    cache: RankingFactsCache | None = None,
) -> list[int]:
    """For each pod, how many active related pods (itself included if related) share its node."""
    read = cache.facts if cache is not None else PodRankingFacts
    per_node: dict[str, int] = {}
    for pod in related_pods:
        facts = read(pod)
        if facts.active:
            per_node[facts.node] = per_node.get(facts.node, 0) + 1
    return [per_node.get(read(pod).node, 0) for pod in pods]


def _ranking_key(
    now: datetime | None, use_deletion_cost: bool, logarithmic: bool
) -> Callable[[tuple[Mapping[str, Any], _RankingFacts]], Any]:
    def compare(a: tuple[Mapping[str, Any], _RankingFacts], b: tuple[Mapping[str, Any], _RankingFacts]) -> int:
        if _facts_deleted_before(a[1], b[1], now, use_deletion_cost, logarithmic):
            return -1
        if _facts_deleted_before(b[1], a[1], now, use_deletion_cost, logarithmic):
            return 1
        return 0

    return cmp_to_key(compare)


def _paired(
    pods: Sequence[Mapping[str, Any]], ranks: Sequence[int], now: datetime | None, cache: RankingFactsCache | None
) -> list[tuple[Mapping[str, Any], _RankingFacts]]:
    read = cache.facts if cache is not None else PodRankingFacts
    return [(pod, _RankingFacts(read(pod), rank, now)) for pod, rank in zip(pods, ranks, strict=True)]


def sorted_for_deletion(
    pods: Sequence[Mapping[str, Any]],
    ranks: Sequence[int],
    now: datetime | None,
    *,
    use_deletion_cost: bool = True,
    logarithmic: bool = True,
    cache: RankingFactsCache | None = None,
) -> list[Mapping[str, Any]]:
    """``pods`` ordered first-to-delete first; ``ranks[i]`` belongs to ``pods[i]``.

    Pods that compare equal keep their order in ``pods`` (the sort is stable).
    """
    paired = _paired(pods, ranks, now, cache)
    return [pod for pod, _ in sorted(paired, key=_ranking_key(now, use_deletion_cost, logarithmic))]


def pods_to_delete(
    pods: Sequence[Mapping[str, Any]],
    related_pods: Sequence[Mapping[str, Any]],
    count: int,
    now: datetime | None,
    *,
    cache: RankingFactsCache | None = None,
) -> list[Mapping[str, Any]]:
    """The ``count`` pods to delete from ``pods`` (active, claimed); no ordering when all go.

    ``related_pods`` are the pods of every ReplicaSet with the same controller as this one
    (siblings under one Deployment), used to prefer nodes that are crowded with them.
    """
    if count >= len(pods):
        return list(pods)
    ranks = ranks_by_related_pods_on_same_node(pods, related_pods, cache)
    return select_for_deletion(pods, ranks, count, now, cache=cache)


def select_for_deletion(
    pods: Sequence[Mapping[str, Any]],
    ranks: Sequence[int],
    count: int,
    now: datetime | None,
    *,
    cache: RankingFactsCache | None = None,
) -> list[Mapping[str, Any]]:
    """The first ``count`` of :func:`sorted_for_deletion`, found without sorting the rest (a
    rolling update takes a few pods at a time out of thousands)."""
    if count >= len(pods):
        return list(pods)
    if count <= 0:
        return []
    paired = _paired(pods, ranks, now, cache)
    return [pod for pod, _ in heapq.nsmallest(count, paired, key=_ranking_key(now, True, True))]
