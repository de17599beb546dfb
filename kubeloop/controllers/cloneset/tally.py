"""Running per-CloneSet facts over its owned pods, updated from what changed.

Like upstream (kruise ``cloneset_controller.go`` ``doReconcile``, ``sync/cloneset_scale.go``,
``sync/cloneset_update.go``, ``cloneset_status.go``), every CloneSet sync used to evaluate
every pod's predicates: the claim, the expectations check, the status counters, the scale and
update arithmetic (``calculateDiffsWithExpectation``), the refresh pass and the update
candidates. At thousands of pods and syncs back to back that made a scale-up quadratic.

:class:`CloneSetPodTally` remembers, per pod key, the ``resourceVersion`` it last classified
and what that version contributed (the replicaset tally's scheme,
:mod:`kubeloop.controllers.replicaset.tally`): the controller marks the keys of pods that change
(a synchronous change listener on the pod cache) and :meth:`CloneSetPodTally.update` re-reads
only those. A full refresh walks every owned pod instead, when a tally starts and after the
cache was replaced wholesale (the store's ``epoch``).

Each owned pod is one of:

- *claimed*: active, controlled by this CloneSet, matching its selector -- the claim keeps it
  as it is (``ControllerRefManager`` decides CLAIMED), so the sync does not look at it again;
- *to claim*: active but not claimed as above: goes through the claim (adopt, release, ignore);
- *ignored*: finished or being deleted (the sync only lists those for PVC clean-up, which
  reads the cache directly).

Claimed pods are counted by :data:`GroupKey` -- revision label, lifecycle state, whether the
``specified-delete`` label is present, and whether the pod is update-ready with
``minReadySeconds`` 0 -- which is all the status counters and the scale/update arithmetic need
when ``minReadySeconds`` is 0 and ``podsToDelete`` is empty (the sync falls back to the
per-pod functions otherwise). Besides the counts the tally keeps the claimed keys by revision
label (update candidates), the claimed pods whose refresh pass may write something
(:func:`refresh_may_write`; the others are skipped), among those the ones whose last refresh
plan was idle (:mod:`.refreshplan`; skipped until the pod or the plan's context changes), the
UID -> key map (the sync checks the pending resource-version expectations instead of every
pod), and the claimed pods in key order (the sync's pod list), patched as keys join and leave.
Every fact is a function of the pod alone, so an unchanged ``resourceVersion`` means unchanged
facts. The unit tests check the tally against a full recount after every step of random
histories.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.labels import Selector
from kubeloop.api.meta import controller_of, labels_of, resource_version_of, uid_of
from kubeloop.api.pods import is_pod_active

from .diffs import PodCounts
from .inplace import has_grace_annotation, refresh
from .lifecycle import with_initial_kruise_pod_ready
from .ordering import update_order_key
from .podstate import is_pod_update_ready, lifecycle_state, revision_label, short_hash

Obj = dict[str, Any]

CLAIMED = 0
TO_CLAIM = 1
IGNORED = 2

_QUIET_STATES = frozenset({"", kruise.STATE_NORMAL, kruise.STATE_PREPARING_DELETE})
"""States :func:`kubeloop.controllers.cloneset.lifecycle.refreshed_state` never moves a pod out of."""

_ANY_TIME = datetime(1970, 1, 1, tzinfo=UTC)
"""The refresh decisions :func:`refresh_may_write` asks for do not depend on the time."""


@dataclass(frozen=True)
class GroupKey:
    """What the counters need of one claimed pod."""

    revision: str
    """The ``controller-revision-hash`` label (full form as written)."""
    state: str
    """The lifecycle state label (``""`` when absent)."""
    specified: bool
    """The ``specified-delete`` label is present (whatever its value)."""
    ready: bool
    """Update-ready with ``minReadySeconds`` 0 (Running, Ready, ``InPlaceUpdateReady`` not False)."""


def refresh_may_write(pod: Mapping[str, Any]) -> bool:
    """Whether the Update step's refresh pass could write anything for ``pod``, at any time and
    for any CloneSet: the initial ``KruisePodReady`` condition, in-place bookkeeping (a grace
    period to finish, a batch to start, ``InPlaceUpdateReady`` to set), a lifecycle transition
    (only from PreparingNormal, PreparingUpdate, Updating and Updated) or the missing
    ``pod-template-hash`` label. ``False`` means the pass is a no-op for this pod."""
    if lifecycle_state(pod) not in _QUIET_STATES or has_grace_annotation(pod):
        return True
    if kruise.POD_TEMPLATE_HASH_LABEL not in labels_of(pod):
        return True
    if with_initial_kruise_pod_ready(pod, _ANY_TIME) is not None:
        return True
    # Without a grace annotation the refresh's decision does not depend on the time.
    return refresh(pod, now=_ANY_TIME).kind != "none"


class _Member:
    __slots__ = ("group", "kind", "order_key", "pod", "quiet", "resource_version", "uid")

    def __init__(self, resource_version: Any, kind: int, uid: str, group: GroupKey | None, quiet: bool,
                 pod: Obj | None = None) -> None:
        self.resource_version = resource_version
        self.kind = kind
        self.uid = uid
        self.group = group
        self.quiet = quiet
        self.pod = pod
        """The cached pod, for claimed members (the cache's own object: never changed)."""
        self.order_key: tuple[Any, ...] | None = None
        """Its :func:`.ordering.update_order_key`, once asked for."""


RESORT_FRACTION = 8
"""The key order is sorted again, rather than patched key by key, once more than one key in
this many joined or left since it was last read (a scale-up's first rounds)."""


class CloneSetPodTally:
    """Facts over one CloneSet's owned pods; see the module docstring.

    ``uid`` and ``selector_spec`` (the CloneSet's ``spec.selector`` as written) fix the
    classification; :meth:`matches_identity` tells the controller when to start a new tally.
    ``selector`` is the parsed form of ``selector_spec``.
    """

    def __init__(self, uid: str, selector_spec: Mapping[str, Any], selector: Selector) -> None:
        self.uid = uid
        self.selector_spec = selector_spec
        self.selector = selector
        self._members: dict[str, _Member] = {}
        self._marked: set[str] = set()
        self._epoch: int | None = None
        self.groups: Counter[GroupKey] = Counter()
        """Claimed pods by :class:`GroupKey` (no zero entries)."""
        self.by_revision: dict[str, set[str]] = {}
        """Keys of the claimed pods by revision label."""
        self.to_claim: set[str] = set()
        self.unquiet: set[str] = set()
        """Keys of the claimed pods whose refresh may write (:func:`refresh_may_write`)."""
        self.claimed_uids: dict[str, str] = {}
        """UID -> key of the claimed pods."""
        self._pods: dict[str, Obj] = {}
        """Key -> cached pod, of the claimed pods."""
        self._order: list[str] = []
        """The claimed keys in key order, as of the last :meth:`claimed_keys`."""
        self._order_changes: dict[str, int] = {}
        """Claimed keys that joined (+1) or left (-1) since then."""
        self._index_of: dict[str, int] | None = {}
        """Key -> position in ``_order``; ``None`` until rebuilt after a change."""
        self._idle: set[str] = set()
        """Claimed unquiet keys whose refresh plan was idle for ``_idle_context`` at their
        current version (:mod:`.refreshplan`); a key leaves when its pod changes."""
        self._idle_context: Hashable = None

    def matches_identity(self, uid: str, selector_spec: Mapping[str, Any]) -> bool:
        return uid == self.uid and selector_spec == self.selector_spec

    def __len__(self) -> int:
        return len(self._members)

    @property
    def claimed(self) -> int:
        return len(self.claimed_uids)

    # -- updates --------------------------------------------------------------------------
    def mark(self, key: str) -> None:
        """Note that the pod under ``key`` changed (added, updated, deleted, or an owner
        reference to this CloneSet came or went): the next :meth:`update` reads it again."""
        self._marked.add(key)

    def update(self, epoch: int, owned: AbstractSet[str], get: Callable[[str], Obj | None]) -> None:
        """Bring the tally up to date: re-read only the marked pods, or every key of ``owned``
        (the pods with an owner reference to this CloneSet) the first time and whenever the
        store's ``epoch`` changed."""
        if self._epoch != epoch:
            self._marked.clear()
            self.refresh(owned, get)
            self._epoch = epoch
            return
        marked, self._marked = self._marked, set()
        for key in marked:
            pod = get(key) if key in owned else None
            if pod is None:
                member = self._members.pop(key, None)
                if member is not None:
                    self._apply(key, member, -1)
                continue
            self._read(key, pod)

    def refresh(self, owned: AbstractSet[str], get: Callable[[str], Obj | None]) -> None:
        """Visit every key of ``owned``; members no longer owned or readable leave."""
        live = 0
        for key in owned:
            pod = get(key)
            if pod is None:
                continue
            live += 1
            self._read(key, pod)
        if len(self._members) != live:
            for key in [key for key in self._members if key not in owned or get(key) is None]:
                self._apply(key, self._members.pop(key), -1)

    def _read(self, key: str, pod: Obj) -> None:
        member = self._members.get(key)
        version = resource_version_of(pod)
        if member is not None:
            if version and member.resource_version == version:
                return
            self._apply(key, member, -1)
        member = self._classify(pod, version)
        self._members[key] = member
        self._apply(key, member, 1)

    def _classify(self, pod: Obj, version: Any) -> _Member:
        uid = uid_of(pod)
        if not is_pod_active(pod):
            return _Member(version, IGNORED, uid, None, True)
        reference = controller_of(pod)
        if reference is None or reference.get("uid") != self.uid or not self.selector.matches(labels_of(pod)):
            return _Member(version, TO_CLAIM, uid, None, True)
        group = GroupKey(revision_label(pod), lifecycle_state(pod), kruise.SPECIFIED_DELETE_LABEL in labels_of(pod),
                         is_pod_update_ready(pod, 0, _ANY_TIME))
        return _Member(version, CLAIMED, uid, group, not refresh_may_write(pod), pod)

    def _apply(self, key: str, member: _Member, sign: int) -> None:
        if member.kind == TO_CLAIM:
            if sign > 0:
                self.to_claim.add(key)
            else:
                self.to_claim.discard(key)
            return
        if member.kind != CLAIMED or member.group is None:
            return
        group = member.group
        self.groups[group] += sign
        if self.groups[group] <= 0:
            del self.groups[group]
        keys = self.by_revision.setdefault(group.revision, set())
        if sign > 0:
            keys.add(key)
            self.claimed_uids[member.uid] = key
            if not member.quiet:
                self.unquiet.add(key)
            assert member.pod is not None
            self._pods[key] = member.pod
        else:
            keys.discard(key)
            if not keys:
                del self.by_revision[group.revision]
            if self.claimed_uids.get(member.uid) == key:
                del self.claimed_uids[member.uid]
            self.unquiet.discard(key)
            self._idle.discard(key)
            self._pods.pop(key, None)
        change = self._order_changes.get(key, 0) + sign
        if change:
            self._order_changes[key] = change
        else:
            # Left and joined again (a new version of the same pod): the order is unchanged.
            del self._order_changes[key]

    # -- reads ----------------------------------------------------------------------------
    def claimed_keys(self) -> list[str]:
        """Keys of the claimed pods, in key order (as the cache lists them). The list is the
        tally's own, patched in place by later calls: read it before the next :meth:`update`,
        never change it."""
        changes, self._order_changes = self._order_changes, {}
        if not changes:
            return self._order
        self._index_of = None
        order = self._order
        if len(changes) * RESORT_FRACTION > len(order):
            order[:] = sorted(self._pods)
            return order
        for key, change in changes.items():
            if change < 0:
                del order[bisect.bisect_left(order, key)]
            else:
                bisect.insort(order, key)
        return order

    def claimed_pods(self) -> list[Obj]:
        """The claimed pods as cached, in the order of :meth:`claimed_keys`."""
        return list(map(self._pods.__getitem__, self.claimed_keys()))

    def view(self, keys: list[str] | None = None) -> TallyView:
        """The counts for a sync whose pod list is the pods of ``keys`` (default:
        :meth:`claimed_keys`), in that order. The view shares the tally's sets: use it before
        the next :meth:`update`."""
        if keys is None:
            keys = self.claimed_keys()
            if self._index_of is None:
                self._index_of = dict(zip(keys, range(len(keys))))
            index_of = self._index_of
        else:
            index_of = dict(zip(keys, range(len(keys))))
        return TallyView(self.groups, self.by_revision, self.unquiet, index_of, self, keys)

    def update_order_key(self, key: str) -> tuple[Any, ...]:
        """:func:`.ordering.update_order_key` of the claimed pod at ``key``, computed once per
        version of the pod (the start of a roll orders every candidate, and the next rounds
        the same candidates again)."""
        member = self._members[key]
        if member.order_key is None:
            assert member.pod is not None
            member.order_key = update_order_key(member.pod)
        return member.order_key

    # -- idle refresh plans -------------------------------------------------------------------
    def refresh_due(self, context: Hashable) -> set[str]:
        """Unquiet claimed keys whose refresh plan must be made (again) under ``context``: all of
        them when the context changed, else those not noted idle at their current version."""
        if context != self._idle_context:
            self._idle.clear()
            self._idle_context = context
        return self.unquiet - self._idle

    def note_idle(self, context: Hashable, key: str, version: Any) -> None:
        """The refresh plan of the pod at ``key``, at ``version``, was idle under ``context``;
        ignored unless that is the pod's version in the tally and the context is current."""
        member = self._members.get(key)
        if (context == self._idle_context and member is not None and member.kind == CLAIMED and version
                and member.resource_version == version and key in self.unquiet):
            self._idle.add(key)


def label_equals_revision(label: str, revision_name: str) -> bool:
    """:func:`kubeloop.controllers.cloneset.podstate.equal_to_revision` on the label's value."""
    return label == revision_name or short_hash(label) == short_hash(revision_name)


def _available(group: GroupKey) -> bool:
    """Available with ``minReadySeconds`` 0: update-ready and in state ``""`` or ``Normal``."""
    return group.ready and group.state in ("", kruise.STATE_NORMAL)


@dataclass(frozen=True)
class TallyView:
    """What one sync reads from the tally, beside the pod list it was built with.

    Valid only while ``minReadySeconds`` is 0 and ``podsToDelete`` is empty: availability is
    then a function of the pod alone, and "specified for deletion" is the label alone.
    """

    groups: Mapping[GroupKey, int]
    by_revision: Mapping[str, AbstractSet[str]]
    """Keys of the claimed pods, by revision label."""
    unquiet_keys: AbstractSet[str]
    index_of: Mapping[str, int]
    """Key -> index into the sync's pod list."""
    tally: CloneSetPodTally
    """The tally the view was taken from (idle refresh plans, cached order keys)."""
    keys: Sequence[str]
    """The keys of the sync's pod list, in its order."""

    @property
    def unquiet(self) -> list[int]:
        """Indexes (ascending) of the pods whose refresh may write."""
        return sorted(self.index_of[key] for key in self.unquiet_keys)

    def refresh_due(self, context: Hashable) -> list[tuple[int, str]]:
        """``(index, key)``, by ascending index, of the pods whose refresh plan is due under
        ``context`` (:meth:`CloneSetPodTally.refresh_due`)."""
        index_of = self.index_of
        return sorted((index_of[key], key) for key in self.tally.refresh_due(context))

    def note_idle(self, context: Hashable, key: str, version: Any) -> None:
        """:meth:`CloneSetPodTally.note_idle`."""
        self.tally.note_idle(context, key, version)

    def update_order_key(self, index: int) -> tuple[Any, ...]:
        """:meth:`CloneSetPodTally.update_order_key` of the pod at ``index``."""
        return self.tally.update_order_key(self.keys[index])

    def diff_counts(self, update_revision: str, *, for_scale: bool, preparing_update_as_update: bool) -> PodCounts:
        """:func:`kubeloop.controllers.cloneset.diffs.count_pods` from the groups."""
        total = {True: 0, False: 0}
        active = {True: 0, False: 0}
        unavailable = {True: 0, False: 0}
        to_delete = {True: 0, False: 0}
        pre_deleting = {True: 0, False: 0}
        pods = 0
        for group, count in self.groups.items():
            pods += count
            new = label_equals_revision(group.revision, update_revision) or (
                for_scale and preparing_update_as_update and group.state == kruise.STATE_PREPARING_UPDATE)
            total[new] += count
            if group.state == kruise.STATE_PREPARING_DELETE:
                pre_deleting[new] += count
                continue
            active[new] += count
            if group.specified:
                to_delete[new] += count
            elif not _available(group):
                unavailable[new] += count
        return PodCounts(pods, total, active, unavailable, to_delete, pre_deleting)

    def status_counts(self, update_revision: str) -> dict[str, int]:
        """The pod counters of the status (``replicas`` ... ``updatedAvailableReplicas``)."""
        counts = dict.fromkeys(("replicas", "readyReplicas", "availableReplicas", "updatedReplicas",
                                "updatedReadyReplicas", "updatedAvailableReplicas"), 0)
        for group, count in self.groups.items():
            available = _available(group)
            updated = label_equals_revision(group.revision, update_revision)
            counts["replicas"] += count
            counts["readyReplicas"] += count if group.ready else 0
            counts["availableReplicas"] += count if available else 0
            if updated:
                counts["updatedReplicas"] += count
                counts["updatedReadyReplicas"] += count if group.ready else 0
                counts["updatedAvailableReplicas"] += count if available else 0
        return counts

    def unavailable(self, target_revision: str) -> tuple[int, int]:
        """``(unavailable pods, unavailable pods on target_revision)``."""
        unavailable = on_target = 0
        for group, count in self.groups.items():
            if not _available(group):
                unavailable += count
                if label_equals_revision(group.revision, target_revision):
                    on_target += count
        return unavailable, on_target

    def has_planned_deletions(self) -> bool:
        """Whether some pod is specified for deletion or PreparingDelete."""
        return any(g.specified or g.state == kruise.STATE_PREPARING_DELETE for g in self.groups)

    def indexes_on(self, revision_name: str, *, equal: bool) -> list[int]:
        """Ascending indexes of the pods whose revision label is (``equal``) or is not that revision."""
        found: list[int] = []
        index_of = self.index_of
        for label, keys in self.by_revision.items():
            if label_equals_revision(label, revision_name) == equal:
                found.extend(index_of[key] for key in keys)
        found.sort()
        return found

    def revision_labels(self) -> list[str]:
        return list(self.by_revision)
