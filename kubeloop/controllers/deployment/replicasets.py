"""ReplicaSet lists: upstream's orderings, the "active" filter and the replica counters.

The orderings decide which ReplicaSet is touched first, so their tie-breaks are part of the
behaviour: creation time then name; size descending with newer-first or older-first ties;
revision with a creation-order fallback. A missing or malformed creation timestamp is the
zero time and sorts first, as in Go. All sorts return new lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cmp_to_key
from typing import Any, TypeVar

from kubeloop.api.meta import name_of
from kubeloop.api.nested import section
from kubeloop.controllers.deployment.annotations import RevisionError, revision_of
from kubeloop.controllers.deployment.objects import (
    creation_time,
    generation_of,
    optional_int_field,
    spec_replicas,
    status_int,
)

RS = TypeVar("RS", bound=Mapping[str, Any])

_ZERO_TIME = datetime.min.replace(tzinfo=UTC)


def _created_before(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    """-1 / 0 / 1 comparing by creation time, then by name (upstream's creation ordering)."""
    time_a, time_b = creation_time(a) or _ZERO_TIME, creation_time(b) or _ZERO_TIME
    if time_a != time_b:
        return -1 if time_a < time_b else 1
    name_a, name_b = name_of(a), name_of(b)
    return (name_a > name_b) - (name_a < name_b)


def _sorted(items: Iterable[RS], compare: Callable[[RS, RS], int]) -> list[RS]:
    return sorted(items, key=cmp_to_key(compare))


def by_creation(replica_sets: Iterable[RS]) -> list[RS]:
    """Oldest first; equal times by name ascending."""
    return _sorted(replica_sets, _created_before)


def by_size_newer_first(replica_sets: Iterable[RS]) -> list[RS]:
    """Largest ``spec.replicas`` first; equal sizes newest first (used when scaling up)."""

    def compare(a: RS, b: RS) -> int:
        size_a, size_b = spec_replicas(a), spec_replicas(b)
        if size_a != size_b:
            return -1 if size_a > size_b else 1
        return _created_before(b, a)

    return _sorted(replica_sets, compare)


def by_size_older_first(replica_sets: Iterable[RS]) -> list[RS]:
    """Largest ``spec.replicas`` first; equal sizes oldest first (used when scaling down)."""

    def compare(a: RS, b: RS) -> int:
        size_a, size_b = spec_replicas(a), spec_replicas(b)
        if size_a != size_b:
            return -1 if size_a > size_b else 1
        return _created_before(a, b)

    return _sorted(replica_sets, compare)


def by_revision(replica_sets: Iterable[RS]) -> list[RS]:
    """Lowest revision first; equal or unparsable revisions fall back to creation order."""

    def compare(a: RS, b: RS) -> int:
        try:
            revision_a, revision_b = revision_of(a), revision_of(b)
        except RevisionError:
            return _created_before(a, b)
        if revision_a == revision_b:
            return _created_before(a, b)
        return -1 if revision_a < revision_b else 1

    return _sorted(replica_sets, compare)


def active(replica_sets: Iterable[RS | None]) -> list[RS]:
    """ReplicaSets that have (or ought to have) pods: present and ``spec.replicas > 0``."""
    return [rs for rs in replica_sets if rs is not None and spec_replicas(rs) > 0]


def present(replica_sets: Iterable[RS | None]) -> list[RS]:
    return [rs for rs in replica_sets if rs is not None]


def spec_replica_count(replica_sets: Sequence[Mapping[str, Any] | None]) -> int:
    """Σ ``spec.replicas``: the pods the ReplicaSets are asked to run."""
    return sum(spec_replicas(rs) for rs in present(replica_sets))


def actual_replica_count(replica_sets: Sequence[Mapping[str, Any] | None]) -> int:
    """Σ ``status.replicas``: the non-terminating pods they report."""
    return sum(status_int(rs, "replicas") for rs in present(replica_sets))


def ready_replica_count(replica_sets: Sequence[Mapping[str, Any] | None]) -> int:
    return sum(status_int(rs, "readyReplicas") for rs in present(replica_sets))


def available_replica_count(replica_sets: Sequence[Mapping[str, Any] | None]) -> int:
    return sum(status_int(rs, "availableReplicas") for rs in present(replica_sets))


def terminating_replica_count(replica_sets: Sequence[Mapping[str, Any] | None]) -> int | None:
    """Σ ``status.terminatingReplicas``, or ``None`` when unknown.

    A ReplicaSet that was never synced (``observedGeneration`` 0) and lacks the field is left out;
    any other ReplicaSet lacking it (a controller that does not report it) makes the total unknown.
    """
    total = 0
    for rs in present(replica_sets):
        terminating = optional_int_field(section(rs, "status"), "terminatingReplicas")
        if terminating is None:
            if status_int(rs, "observedGeneration") == 0:
                continue
            return None
        total += terminating
    return total


def is_synced(replica_set: Mapping[str, Any]) -> bool:
    """The ReplicaSet controller has observed the current generation."""
    return generation_of(replica_set) <= status_int(replica_set, "observedGeneration")
