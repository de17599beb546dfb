"""Active related pods per node, for scale-down ranking, in O(related pods) not O(namespace).

Upstream (``pkg/controller/replicaset/replica_set.go``: ``getPodsToDelete``,
``getIndirectlyRelatedPods``, ``getReplicaSetsWithSameController``; ``ActivePodsWithRanks`` in
``pkg/controller/controller_utils.go``) ranks each scale-down candidate by how many *related*
active pods share its node. The related pods are every pod of the namespace that matches the
selector of any ReplicaSet with the same controller (the Deployment's ReplicaSets), whoever
controls the pod: orphans and pods of other controllers count when their labels match.

Scanning the namespace for them cost O(pods of the namespace) per scale-down, which with many
workloads in one namespace dominated a roll. :data:`POD_LABEL_INDEX` indexes the pod cache by
``<namespace>/<key>=<value>`` for every label. A pod matches a selector only if it carries each
of the selector's equality requirements (``key=value``, ``key==value``, ``key in (...)``), so
the pods under the smallest such bucket (or union of buckets for ``in``) are a superset of the
selector's matches; the full selector then filters them. For a Deployment's ReplicaSets the
``pod-template-hash`` bucket holds just that ReplicaSet's pods, so the pass costs O(pods of the
owner). A selector without any equality requirement (only ``notin``/``exists``/...) gives no
bucket: then, and when the index is missing, the namespace is scanned as before
(:func:`related_pods_per_node_by_scan`). Both paths give the same counts (property-tested).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from kubeloop.api.labels import DOUBLE_EQUALS, EQUALS, IN, Selector
from kubeloop.api.meta import labels_of, namespace_of
from kubeloop.api.pods import node_name
from kubeloop.controllers.replicaset.podfacts import PodFacts
from kubeloop.runtime.informers import NAMESPACE_INDEX

Obj = dict[str, Any]

POD_LABEL_INDEX = "replicaset-controller/pod-label"
"""Pods by ``<namespace>/<label key>=<label value>``, one value per label."""


def pod_label_index(pod: Mapping[str, Any]) -> list[str]:
    """Index values for :data:`POD_LABEL_INDEX` (label keys cannot contain ``=``, so a value is
    unambiguous)."""
    namespace = namespace_of(pod)
    return [f"{namespace}/{key}={value}" for key, value in labels_of(pod).items()]


class PodIndex(Protocol):
    """The read side of the pod cache this module needs (:class:`kubeloop.runtime.informers.Indexer`)."""

    def get(self, key: str) -> Obj | None: ...

    def indexer_names(self) -> list[str]: ...

    def index_key_view(self, index_name: str, value: str) -> AbstractSet[str]: ...


FactsOf = Callable[[Obj], PodFacts]


def _equality_values(selector: Selector) -> list[tuple[str, tuple[str, ...]]]:
    """The selector's ``key`` -> allowed values terms that every match must carry."""
    return [(r.key, r.values) for r in selector.requirements
            if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and r.values]


def candidate_keys(index: PodIndex, namespace: str, selectors: Sequence[Selector]) -> set[str] | None:
    """Keys of a superset of the namespace's pods matching any of ``selectors``, from the label
    index; ``None`` when some selector has no equality term to look up (scan instead)."""
    keys: set[str] = set()
    for selector in selectors:
        best: list[AbstractSet[str]] | None = None
        best_size = 0
        for key, values in _equality_values(selector):
            buckets = [index.index_key_view(POD_LABEL_INDEX, f"{namespace}/{key}={value}") for value in values]
            size = sum(len(bucket) for bucket in buckets)
            if best is None or size < best_size:
                best, best_size = buckets, size
        if best is None:
            return None
        for bucket in best:
            keys.update(bucket)
    return keys


def _count(keys: Iterable[str], index: PodIndex, selectors: Sequence[Selector], facts: FactsOf) -> dict[str, int]:
    per_node: dict[str, int] = {}
    single = selectors[0] if len(selectors) == 1 else None
    get = index.get
    for key in keys:
        pod = get(key)
        if pod is None:
            continue
        pod_facts = facts(pod)
        if not pod_facts.active:
            continue
        labels = pod_facts.labels
        if single.matches(labels) if single is not None else any(s.matches(labels) for s in selectors):
            node = node_name(pod)
            per_node[node] = per_node.get(node, 0) + 1
    return per_node


def related_pods_per_node_by_scan(
    index: PodIndex, namespace: str, selectors: Sequence[Selector], facts: FactsOf
) -> dict[str, int]:
    """Active pods per node matching any of ``selectors``: a pass over the whole namespace."""
    if not selectors:
        return {}
    return _count(index.index_key_view(NAMESPACE_INDEX, namespace), index, selectors, facts)


def related_pods_per_node(
    index: PodIndex, namespace: str, selectors: Sequence[Selector], facts: FactsOf
) -> dict[str, int]:
    """Same counts as :func:`related_pods_per_node_by_scan`, looking at the label index's
    candidates only when it can (each pod once, however many selectors it matches)."""
    if not selectors:
        return {}
    if POD_LABEL_INDEX in index.indexer_names():
        keys = candidate_keys(index, namespace, selectors)
        if keys is not None:
            return _count(keys, index, selectors, facts)
    return related_pods_per_node_by_scan(index, namespace, selectors, facts)
