"""Active pods per node matching a selector, kept current from the pod cache's change listener.

A rolling update scales the old ReplicaSet down a few pods at a time, and every step ranks the
candidates by the related active pods on their node (:mod:`.related`): recounting them each
time is O(related pods) per step, so O(pods squared) over a roll. :class:`NodeCounts` keeps,
per ``(namespace, selector)`` asked for, the node of each active matching pod and the count per
node, updated from each cache change: a step then costs O(nodes).

A tracked selector is registered under one of its equality terms (every value of it), so a
pod change looks up only the trackers registered under its own labels (two dict lookups per
label, nothing at all in a namespace without trackers). A selector without an equality term is
not tracked (:meth:`NodeCounts.per_node` returns ``None``; callers count the slow way). A tracker
starts from a scan of the namespace (once), and all trackers are dropped when the cache is
replaced wholesale (its ``epoch`` changes without listener calls).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubeloop.api.labels import DOUBLE_EQUALS, EQUALS, IN, Selector
from kubeloop.api.meta import labels_of, namespace_of
from kubeloop.api.pods import node_name
from kubeloop.controllers.replicaset.podfacts import PodFacts

Obj = dict[str, Any]


class _Tracker:
    __slots__ = ("members", "per_node", "selector")

    def __init__(self, selector: Selector) -> None:
        self.selector = selector
        self.members: dict[str, str] = {}
        """Key -> node of each active pod matching the selector."""
        self.per_node: dict[str, int] = {}

    def remove(self, key: str) -> None:
        node = self.members.pop(key, None)
        if node is not None:
            left = self.per_node[node] - 1
            if left:
                self.per_node[node] = left
            else:
                del self.per_node[node]

    def offer(self, key: str, pod: Obj, facts: PodFacts) -> None:
        if facts.active and self.selector.matches(facts.labels):
            node = node_name(pod)
            self.members[key] = node
            self.per_node[node] = self.per_node.get(node, 0) + 1


def _term(selector: Selector) -> tuple[str, tuple[str, ...]] | None:
    for r in selector.requirements:
        if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and r.values:
            return r.key, r.values
    return None


class NodeCounts:
    """Per ``(namespace, selector)``: active matching pods per node. Hook :meth:`on_stored` as
    the pod cache's change listener; ``facts`` reads a pod's facts (cached per version)."""

    def __init__(self, facts: Callable[[Obj], PodFacts]) -> None:
        self._facts = facts
        self._trackers: dict[tuple[str, Selector], _Tracker] = {}
        # namespace -> label key -> label value -> trackers registered under that pair.
        self._by_label: dict[str, dict[str, dict[str, list[_Tracker]]]] = {}
        self._epoch: int | None = None

    def __len__(self) -> int:
        return len(self._trackers)

    def on_stored(self, key: str, old: Obj | None, new: Obj | None) -> None:
        by_label = self._by_label
        if not by_label:
            return
        namespace = namespace_of(new if new is not None else old or {})
        by_key = by_label.get(namespace)
        if by_key is None:
            return
        seen: set[int] = set()
        affected: list[_Tracker] = []
        for pod in (old, new):
            if pod is None:
                continue
            for label, value in labels_of(pod).items():
                by_value = by_key.get(label)
                if by_value is None:
                    continue
                for tracker in by_value.get(value, ()):
                    if id(tracker) not in seen:
                        seen.add(id(tracker))
                        affected.append(tracker)
        for tracker in affected:
            tracker.remove(key)
            if new is not None:
                tracker.offer(key, new, self._facts(new))

    def per_node(
        self, namespace: str, selector: Selector, epoch: int, scan: Callable[[], Iterable[tuple[str, Obj]]]
    ) -> Mapping[str, int] | None:
        """The live per-node counts for ``selector`` in ``namespace`` (read-only; do not keep
        across an ``await``), starting a tracker from ``scan()`` (the namespace's ``(key, pod)``
        pairs) if needed; ``None`` when the selector cannot be tracked."""
        if epoch != self._epoch:
            self._trackers.clear()
            self._by_label.clear()
            self._epoch = epoch
        tracker = self._trackers.get((namespace, selector))
        if tracker is not None:
            return tracker.per_node
        term = _term(selector)
        if term is None:
            return None
        tracker = _Tracker(selector)
        for key, pod in scan():
            tracker.offer(key, pod, self._facts(pod))
        self._trackers[(namespace, selector)] = tracker
        label, values = term
        by_value = self._by_label.setdefault(namespace, {}).setdefault(label, {})
        for value in set(values):
            by_value.setdefault(value, []).append(tracker)
        return tracker.per_node

    def forget(self, namespace: str, selector: Selector) -> None:
        """Stop tracking (the ReplicaSet is gone or its selector changed)."""
        tracker = self._trackers.pop((namespace, selector), None)
        if tracker is None:
            return
        term = _term(selector)
        if term is None:
            return
        by_key = self._by_label.get(namespace, {})
        by_value = by_key.get(term[0], {})
        for value in set(term[1]):
            trackers = by_value.get(value, [])
            if tracker in trackers:
                trackers.remove(tracker)
            if not trackers:
                by_value.pop(value, None)
        if not by_value:
            by_key.pop(term[0], None)
        if not by_key:
            self._by_label.pop(namespace, None)


def disjoint(first: Selector, second: Selector) -> bool:
    """No label set can match both: some key demands a different single value in each."""
    for r in first.requirements:
        mine = first.requires_exact_match(r.key)
        theirs = second.requires_exact_match(r.key)
        if mine is not None and theirs is not None and mine != theirs:
            return True
    return False
