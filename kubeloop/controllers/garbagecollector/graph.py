"""The garbage collector's dependency graph and its decisions, without I/O.

Every object the collector watches is a :class:`Node` keyed by UID, holding what the
decisions need: where it lives, its owner references, its finalizers and whether it is being
deleted. ``dependents`` is the reverse of the owner references (an owner UID -> the UIDs
pointing at it), kept even for owners never observed, so that an owner appearing late, or
vanishing, reaches its dependents.

Decisions (upstream ``pkg/controller/garbagecollector/garbagecollector.go``
``attemptToDeleteItem``, ``classifyReferences``, ``processDeletingDependentsItem``):

- a dependent's owner references are *solid* (owner exists, not deleting its dependents
  first), *dangling* (owner absent) or *waiting* (owner being deleted in the foreground);
- with a solid owner, dangling and waiting references are removed and the object stays;
- with none solid, the object is deleted: in the foreground when it waits on a foreground
  owner and has dependents of its own, otherwise with the policy its own finalizers ask for;
- an owner being deleted in the foreground keeps its ``foregroundDeletion`` finalizer while
  a dependent still blocks it (``blockOwnerDeletion: true`` on the reference to it);
- a dependent deleted in the foreground while one of its own dependents is too stops blocking
  its owners first, so that an ownership cycle cannot wait for ever;
- an owner being deleted with ``orphan`` gets its reference removed from every dependent,
  then loses the finalizer.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeloop.api.meta import is_being_deleted, metadata, name_of, namespace_of, owner_references, uid_of

ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"

BACKGROUND = "Background"
FOREGROUND = "Foreground"
ORPHAN = "Orphan"


@dataclass(frozen=True)
class Identity:
    """Where an object lives: enough to GET, PUT or DELETE it."""

    api_version: str
    kind: str
    namespace: str
    name: str

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


@dataclass
class Node:
    """One observed object."""

    uid: str
    identity: Identity
    owners: list[Mapping[str, Any]]
    finalizers: list[str]
    being_deleted: bool

    @property
    def deleting_dependents(self) -> bool:
        """Foreground deletion in progress: dependents go first."""
        return self.being_deleted and FOREGROUND_FINALIZER in self.finalizers

    @property
    def orphaning(self) -> bool:
        """Orphan deletion in progress: dependents lose their reference to it first."""
        return self.being_deleted and ORPHAN_FINALIZER in self.finalizers


def node_from_object(obj: Mapping[str, Any], api_version: str, kind: str) -> Node:
    finalizers = metadata(obj).get("finalizers")
    return Node(
        uid=uid_of(obj),
        identity=Identity(api_version, kind, namespace_of(obj), name_of(obj)),
        owners=[dict(ref) for ref in owner_references(obj) if ref.get("uid")],
        finalizers=[str(f) for f in finalizers] if isinstance(finalizers, list) else [],
        being_deleted=is_being_deleted(obj),
    )


@dataclass
class DependencyGraph:
    """Observed objects by UID and, for every referenced owner UID, its dependents' UIDs."""

    nodes: dict[str, Node] = field(default_factory=dict)
    dependents: dict[str, set[str]] = field(default_factory=dict)

    def get(self, uid: str) -> Node | None:
        return self.nodes.get(uid)

    def dependents_of(self, uid: str) -> list[Node]:
        return [self.nodes[d] for d in sorted(self.dependents.get(uid, ())) if d in self.nodes]

    def upsert(self, node: Node) -> set[str]:
        """Record ``node``; returns the owner UIDs whose references from it were removed."""
        previous = self.nodes.get(node.uid)
        old_owners = {str(ref.get("uid")) for ref in previous.owners} if previous is not None else set()
        new_owners = {str(ref.get("uid")) for ref in node.owners}
        for owner in new_owners - old_owners:
            self.dependents.setdefault(owner, set()).add(node.uid)
        for owner in old_owners - new_owners:
            self._unlink(owner, node.uid)
        self.nodes[node.uid] = node
        return old_owners - new_owners

    def remove(self, uid: str) -> Node | None:
        node = self.nodes.pop(uid, None)
        if node is not None:
            for ref in node.owners:
                self._unlink(str(ref.get("uid")), uid)
        return node

    def _unlink(self, owner: str, dependent: str) -> None:
        linked = self.dependents.get(owner)
        if linked is not None:
            linked.discard(dependent)
            if not linked:
                del self.dependents[owner]


class OwnerState(enum.Enum):
    EXISTS = "exists"
    ABSENT = "absent"
    DELETING_DEPENDENTS = "deleting-dependents"


@dataclass(frozen=True)
class ClassifiedOwners:
    solid: list[Mapping[str, Any]]
    dangling: list[Mapping[str, Any]]
    waiting: list[Mapping[str, Any]]


def classify_owners(owners: Iterable[Mapping[str, Any]], states: Mapping[str, OwnerState]) -> ClassifiedOwners:
    """Split owner references by the state of the owner each names (``states`` by owner UID)."""
    solid, dangling, waiting = [], [], []
    for ref in owners:
        state = states.get(str(ref.get("uid")), OwnerState.ABSENT)
        if state is OwnerState.EXISTS:
            solid.append(ref)
        elif state is OwnerState.DELETING_DEPENDENTS:
            waiting.append(ref)
        else:
            dangling.append(ref)
    return ClassifiedOwners(solid, dangling, waiting)


@dataclass(frozen=True)
class DependentAction:
    """What to do with a dependent: strip some references, delete it, or nothing.

    ``unblock_owners``: before deleting, make its owner references non-blocking, because a
    dependent of it is itself deleting dependents and the three may form a cycle that would
    otherwise wait for ever.
    """

    remove_owner_uids: frozenset[str] = frozenset()
    delete_policy: str | None = None
    unblock_owners: bool = False


def decide_dependent(
    node: Node, owners: ClassifiedOwners, has_dependents: bool, dependent_deleting_dependents: bool = False
) -> DependentAction:
    """The action for a dependent whose owners were classified (none -> do nothing).

    ``dependent_deleting_dependents``: one of the node's own dependents is being deleted in
    the foreground (possible cycle).
    """
    if owners.solid:
        stale = {str(ref.get("uid")) for ref in [*owners.dangling, *owners.waiting]}
        return DependentAction(remove_owner_uids=frozenset(stale))
    if owners.waiting and has_dependents:
        return DependentAction(delete_policy=FOREGROUND, unblock_owners=dependent_deleting_dependents)
    return DependentAction(delete_policy=own_deletion_policy(node))


def own_deletion_policy(node: Node) -> str:
    """The propagation policy an object's own finalizers ask for (Background otherwise)."""
    if ORPHAN_FINALIZER in node.finalizers:
        return ORPHAN
    if FOREGROUND_FINALIZER in node.finalizers:
        return FOREGROUND
    return BACKGROUND


def blocks_owner(dependent: Node, owner_uid: str) -> bool:
    """The dependent's reference to ``owner_uid`` asks the owner's foreground deletion to wait."""
    return any(ref.get("uid") == owner_uid and ref.get("blockOwnerDeletion") is True for ref in dependent.owners)


def blocking_dependents(graph: DependencyGraph, owner_uid: str) -> list[Node]:
    return [d for d in graph.dependents_of(owner_uid) if blocks_owner(d, owner_uid)]


def without_owner_references(obj: Mapping[str, Any], uids: Iterable[str]) -> dict[str, Any] | None:
    """A copy of ``obj`` without references to ``uids``; ``None`` if it has none of them."""
    doomed = set(uids)
    refs = owner_references(obj)
    kept = [dict(ref) for ref in refs if ref.get("uid") not in doomed]
    if len(kept) == len(refs):
        return None
    meta = dict(metadata(obj))
    if kept:
        meta["ownerReferences"] = kept
    else:
        meta.pop("ownerReferences", None)
    return {**obj, "metadata": meta}


def with_unblocked_owner_references(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of ``obj`` whose owner references no longer block; ``None`` if none did."""
    refs = owner_references(obj)
    if not any(ref.get("blockOwnerDeletion") is True for ref in refs):
        return None
    meta = dict(metadata(obj))
    meta["ownerReferences"] = [{**ref, "blockOwnerDeletion": False} if ref.get("blockOwnerDeletion") else dict(ref)
                               for ref in refs]
    return {**obj, "metadata": meta}


def without_finalizer(obj: Mapping[str, Any], finalizer: str) -> dict[str, Any] | None:
    """A copy of ``obj`` without ``finalizer``; ``None`` if it does not have it."""
    current = metadata(obj).get("finalizers")
    finalizers = [str(f) for f in current] if isinstance(current, list) else []
    if finalizer not in finalizers:
        return None
    meta = dict(metadata(obj))
    meta["finalizers"] = [f for f in finalizers if f != finalizer]
    return {**obj, "metadata": meta}
