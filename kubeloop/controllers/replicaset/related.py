"""Active related pods per node, for scale-down ranking, counted over the namespace.

Upstream (``pkg/controller/replicaset/replica_set.go``: ``getPodsToDelete``,
``getIndirectlyRelatedPods``, ``getReplicaSetsWithSameController``; ``ActivePodsWithRanks`` in
``pkg/controller/controller_utils.go``) ranks each scale-down candidate by how many *related*
active pods share its node. The related pods are every pod of the namespace that matches the
selector of any ReplicaSet with the same controller (the Deployment's ReplicaSets), whoever
controls the pod: orphans and pods of other controllers count when their labels match.

The controller reads these counts from live per-selector tallies (:mod:`.nodecounts`) when the
siblings' selectors cannot match the same pod, as a Deployment's ReplicaSets cannot; this pass
over the namespace is the reference those tallies are tested against, and the fallback for
selectors that overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from kubeloop.api.labels import Selector
from kubeloop.api.pods import node_name
from kubeloop.controllers.replicaset.podfacts import PodFacts
from kubeloop.runtime.informers import NAMESPACE_INDEX

Obj = dict[str, Any]


class PodIndex(Protocol):
    """The read side of the pod cache this module needs (:class:`kubeloop.runtime.informers.Indexer`)."""

    def get(self, key: str) -> Obj | None: ...

    def index_key_view(self, index_name: str, value: str) -> AbstractSet[str]: ...


FactsOf = Callable[[Obj], PodFacts]


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


def related_pods_per_node(
    index: PodIndex, namespace: str, selectors: Sequence[Selector], facts: FactsOf
) -> dict[str, int]:
    """Active pods per node matching any of ``selectors``: a pass over the whole namespace."""
    if not selectors:
        return {}
    return _count(index.index_key_view(NAMESPACE_INDEX, namespace), index, selectors, facts)
