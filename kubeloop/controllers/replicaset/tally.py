"""Running counts over the pods one ReplicaSet controls, updated from what changed.

A ReplicaSet sync reads every pod it controls: which ones it may keep as they are, which
need the claim (adopt or release), which are being deleted, and the status counts. With one
ReplicaSet owning thousands of pods, and syncs running back to back while they start, doing
that from scratch made each sync O(pods) in Python and the whole scale-up quadratic.

:class:`OwnedPodTally` remembers, per pod key, the ``resourceVersion`` it last classified and
what that version contributed. The controller marks the keys of pods that change (a change
listener on the pod cache, called as each change is stored, so the marks never lag behind the
cache), and an update re-classifies only marked pods: O(changed pods) per sync. A full refresh
walks every owned pod instead (one lookup and one comparison for a pod that did not change);
it runs when a tally starts and after the cache was replaced wholesale. An informer replaces a
cached object on every change, never edits it, so an unchanged ``resourceVersion`` means an
unchanged pod. The counts equal a full recount after every update (the unit tests check
exactly that on random histories, for both paths).

The classification depends on the ReplicaSet's UID, its selector and its template labels;
when any of them changes the tally starts over. ``availableReplicas`` with
``minReadySeconds`` depends on the time too: the ready pods' transition times are kept sorted,
so the count at any moment is a binary search.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime, timedelta
from typing import Any

from sortedcontainers import SortedList

from kubeloop.api.labels import Selector
from kubeloop.api.meta import resource_version_of
from kubeloop.controllers.replicaset.podfacts import PodFactsCache
from kubeloop.controllers.replicaset.status import ReplicaCounts

Obj = dict[str, Any]

CLAIMED = 0
"""Active, controlled by this ReplicaSet and matching its selector: kept as it is."""
TO_CLAIM = 1
"""Active but not matching (or not controlled as the index says): goes through the claim."""
TERMINATING = 2
"""Controlled by this ReplicaSet, being deleted, not finished."""
IGNORED = 3
"""Finished, or being deleted under another controller: counts for nothing."""

_NO_TIME = float("-inf")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _microseconds(moment: datetime) -> int:
    """Exact microseconds since the epoch (floats would blur the strict ``<`` of availability)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MICROSECOND


class _Member:
    __slots__ = ("fully_labeled", "kind", "ready", "ready_since", "resource_version")

    def __init__(self, resource_version: Any, kind: int, fully_labeled: bool, ready: bool,
                 ready_since: int | None) -> None:
        self.resource_version = resource_version
        self.kind = kind
        self.fully_labeled = fully_labeled
        self.ready = ready
        self.ready_since = ready_since


class OwnedPodTally:
    """Counts over one ReplicaSet's controlled pods; see the module docstring.

    ``uid``, ``selector`` (the one parsed object the controller keeps per selector value) and
    ``template_labels`` fix the classification; :meth:`matches_identity` tells the controller
    when to start a new tally.
    """

    def __init__(self, uid: str, selector: Selector, template_labels: Mapping[str, Any], facts: PodFactsCache) -> None:
        self.uid = uid
        self.selector = selector
        self.template_labels = dict(template_labels)
        self._facts = facts
        self._members: dict[str, _Member] = {}
        self._to_claim: set[str] = set()
        self._marked: set[str] = set()
        self._epoch: int | None = None
        self._ready_times: SortedList = SortedList()
        self.active = 0
        self.fully_labeled = 0
        self.ready = 0
        self.terminating = 0

    def matches_identity(self, uid: str, selector: Selector, template_labels: Mapping[str, Any]) -> bool:
        return uid == self.uid and selector is self.selector and template_labels == self.template_labels

    def __len__(self) -> int:
        return len(self._members)

    # -- updates --------------------------------------------------------------------------
    def mark(self, key: str) -> None:
        """Note that the pod under ``key`` changed (added, updated, deleted, or its controller
        changed to or from this ReplicaSet): the next :meth:`update` reads it again."""
        self._marked.add(key)

    def update(self, epoch: int, owned: AbstractSet[str], get: Callable[[str], Obj | None]) -> None:
        """Bring the tally up to date: re-read only the marked pods, or every pod of ``owned``
        (the keys of the pods now controlled) the first time and whenever the store's ``epoch``
        changed (the store was replaced wholesale, without marks)."""
        if self._epoch != epoch:
            self._marked.clear()
            self.refresh(owned, get)
            self._epoch = epoch
            return
        marked, self._marked = self._marked, set()
        members = self._members
        for key in marked:
            pod = get(key)
            if pod is None or self._facts.facts(pod).controller_uid != self.uid:
                member = members.pop(key, None)
                if member is not None:
                    self._remove(key, member)
                continue
            self._read(key, pod)

    def refresh(self, owned: AbstractSet[str], get: Callable[[str], Obj | None]) -> None:
        """Bring the tally up to date with ``owned``, the keys of the pods now controlled
        (``get`` reads a pod by key; a key it cannot read counts as gone), visiting them all."""
        members = self._members
        live = 0
        for key in owned:
            pod = get(key)
            if pod is None:
                continue
            live += 1
            self._read(key, pod)
        if len(members) != live:
            # Every readable owned pod is a member now, so the surplus members are pods that left.
            for key in [key for key in members if key not in owned or get(key) is None]:
                self._remove(key, members.pop(key))

    def _read(self, key: str, pod: Obj) -> None:
        """Count ``pod`` (a member under ``key``) as it is now, unless this version is counted."""
        member = self._members.get(key)
        meta = pod.get("metadata")
        # Cached objects are plain dicts: skip the slower Mapping check in the usual case.
        version = meta.get("resourceVersion") if type(meta) is dict else resource_version_of(pod)
        if member is not None:
            if version and member.resource_version == version:
                return
            self._remove(key, member)
        member = self._classify(pod, version)
        self._members[key] = member
        self._add(key, member)

    def _classify(self, pod: Obj, version: Any) -> _Member:
        facts = self._facts.facts(pod)
        if facts.active:
            claimed = facts.controller_uid == self.uid and self._facts.matches(self.selector, pod)
            if not claimed:
                return _Member(version, TO_CLAIM, False, False, None)
            since = _microseconds(facts.ready_since) if facts.ready and facts.ready_since is not None else None
            return _Member(version, CLAIMED, facts.fully_labeled(self.template_labels), facts.ready, since)
        if facts.terminating and facts.controller_uid == self.uid:
            return _Member(version, TERMINATING, False, False, None)
        return _Member(version, IGNORED, False, False, None)

    def _add(self, key: str, member: _Member) -> None:
        self._apply(key, member, 1)

    def _remove(self, key: str, member: _Member) -> None:
        self._apply(key, member, -1)

    def _apply(self, key: str, member: _Member, sign: int) -> None:
        kind = member.kind
        if kind == CLAIMED:
            self.active += sign
            if member.fully_labeled:
                self.fully_labeled += sign
            if member.ready:
                self.ready += sign
                since: float = _NO_TIME if member.ready_since is None else member.ready_since
                if sign > 0:
                    self._ready_times.add(since)
                else:
                    self._ready_times.remove(since)
        elif kind == TO_CLAIM:
            if sign > 0:
                self._to_claim.add(key)
            else:
                self._to_claim.discard(key)
        elif kind == TERMINATING:
            self.terminating += sign

    # -- reads ----------------------------------------------------------------------------
    def to_claim_keys(self) -> list[str]:
        """Keys of the active pods that must go through the claim, in key order."""
        return sorted(self._to_claim)

    def claimed_keys(self) -> list[str]:
        """Keys of the pods kept as they are, in key order (O(pods): only for deletions)."""
        return sorted(key for key, member in self._members.items() if member.kind == CLAIMED)

    def available(self, min_ready_seconds: int, now: datetime) -> int:
        """Ready pods that have been ready for longer than ``min_ready_seconds`` at ``now``."""
        if min_ready_seconds <= 0:
            return self.ready
        # A ready pod without a (valid) transition time is never available; it sorts first.
        without_time: int = self._ready_times.bisect_right(_NO_TIME)
        limit = _microseconds(now - timedelta(seconds=min_ready_seconds))
        before_limit: int = self._ready_times.bisect_left(limit)
        return before_limit - without_time

    def counts(self, min_ready_seconds: int, now: datetime, extra: Iterable[ReplicaCounts] = ()) -> ReplicaCounts:
        """The status counts of the claimed pods (plus ``extra``, e.g. pods claimed just now)."""
        replicas, fully_labeled, ready = self.active, self.fully_labeled, self.ready
        available, terminating = self.available(min_ready_seconds, now), self.terminating
        for more in extra:
            replicas += more.replicas
            fully_labeled += more.fully_labeled
            ready += more.ready
            available += more.available
            terminating += more.terminating or 0
        return ReplicaCounts(replicas, fully_labeled, ready, available, terminating)
