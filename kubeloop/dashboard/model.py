"""The dashboard's picture of a cluster, folded from watch events.

:class:`ClusterModel` keeps the objects the views need (Deployments, ReplicaSets, CloneSets,
ControllerRevisions, pods, events), fed one watch event at a time through :meth:`apply`, and
builds the workloads' views with :meth:`views`. It is a plain class: no I/O, no clock of its
own, so tests drive it with hand-made objects and times. The objects handed to it are informer
cache entries; it never modifies them.

Ownership follows controller references (``ownerReferences`` with ``controller: true``) by
uid, as the controllers themselves do: a pod belongs to a Deployment through its ReplicaSet,
to a CloneSet directly.

Rebuilding every view on every change would cost time proportional to the whole cluster per
watch event; instead ``apply`` marks the uids it touched (the object, its old and new
controller, or the object an event is about), and :meth:`views` rebuilds only the workloads
reached from those uids by walking up controller references, reusing the others' last views.
A view can also change with time alone (a *ready* pod becomes *available* once
``minReadySeconds`` pass, with no event to say so); ``views(now, full=True)`` rebuilds them all.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from kubeloop.api.meta import controller_of, name_of, namespace_of, uid_of
from kubeloop.dashboard.podstates import PodState
from kubeloop.dashboard.timeline import Timeline
from kubeloop.dashboard.views import (
    EventIndex,
    View,
    cloneset_view,
    deployment_view,
    involved_key,
    workload_key,
)

log = logging.getLogger(__name__)

Obj = Mapping[str, Any]

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

OWNER_DEPTH = 3
"""Controller references followed from a changed object to its workload (pod -> ReplicaSet -> Deployment)."""


class Collection(StrEnum):
    """The collections the model folds; the value is the resource's plural."""

    DEPLOYMENTS = "deployments"
    REPLICA_SETS = "replicasets"
    CLONESETS = "clonesets"
    CONTROLLER_REVISIONS = "controllerrevisions"
    PODS = "pods"
    EVENTS = "events"


WORKLOADS = {Collection.DEPLOYMENTS: "Deployment", Collection.CLONESETS: "CloneSet"}
OWNED = {
    Collection.REPLICA_SETS: "ReplicaSet",
    Collection.CONTROLLER_REVISIONS: "ControllerRevision",
    Collection.PODS: "Pod",
}


def _key(obj: Obj) -> str:
    return f"{namespace_of(obj)}/{name_of(obj)}"


def _controller_uid(obj: Obj) -> str:
    reference = controller_of(obj)
    return str(reference.get("uid") or "") if reference is not None else ""


class ClusterModel:
    """Objects by collection, and the views built from them (see the module docstring).

    ``namespace`` limits the views to one namespace (``None``: all); objects of other
    namespaces are ignored as they arrive.
    """

    def __init__(self, namespace: str | None = None, timeline: Timeline | None = None) -> None:
        self.namespace = namespace
        self.timeline = timeline if timeline is not None else Timeline()
        self._objects: dict[Collection, dict[str, Obj]] = {collection: {} for collection in Collection}
        self._owner: dict[str, str] = {}
        """uid -> controller uid, for the owned collections."""
        self._children: dict[str, dict[str, Obj]] = defaultdict(dict)
        """controller uid -> {uid: owned object with its ``kind``}."""
        self._workload_uids: dict[str, str] = {}
        """workload uid -> view key."""
        self._events = EventIndex()
        self._dirty: set[str] = set()
        """uids (or event keys) changed since the last :meth:`views`."""
        self._views: dict[str, View] = {}

    def apply(self, collection: Collection, event_type: str, obj: Obj) -> None:
        """Fold one watch event (``ADDED`` / ``MODIFIED`` / ``DELETED``) into the model."""
        if self.namespace is not None and namespace_of(obj) != self.namespace:
            return
        store = self._objects[collection]
        key = _key(obj)
        previous = store.pop(key, None)
        if event_type != DELETED:
            store[key] = obj
        if collection is Collection.EVENTS:
            if previous is not None:
                self._events.remove(previous)
                self._dirty.add(involved_key(previous))
            if event_type != DELETED:
                self._events.put(obj)
                self._dirty.add(involved_key(obj))
            return
        for old in (previous, obj):
            if old is None:
                continue
            uid = uid_of(old)
            self._dirty.add(uid)
            self._dirty.add(self._owner.get(uid, ""))
            if collection in OWNED:
                self._children[self._owner.pop(uid, "")].pop(uid, None)
            else:
                self._workload_uids.pop(uid, None)
        if event_type == DELETED:
            return
        uid = uid_of(obj)
        if collection in OWNED:
            owner = _controller_uid(obj)
            self._owner[uid] = owner
            self._children[owner][uid] = {"kind": OWNED[collection], **obj}
            self._dirty.add(owner)
        else:
            self._workload_uids[uid] = workload_key(WORKLOADS[collection], obj)

    def objects(self, collection: Collection) -> list[Obj]:
        return list(self._objects[collection].values())

    def get(self, collection: Collection, namespace: str, name: str) -> Obj | None:
        """One object of ``collection`` as last seen, or None."""
        return self._objects[collection].get(f"{namespace}/{name}")

    def events_about(self, kind: str, obj: Obj, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` events about ``obj`` (of ``kind``), in the views' event format."""
        return self._events.about([{"kind": kind, **obj}], limit)

    def _workload_of(self, uid: str) -> str | None:
        for _ in range(OWNER_DEPTH):
            if not uid:
                return None
            if uid in self._workload_uids:
                return self._workload_uids[uid]
            uid = self._owner.get(uid, "")
        return None

    def _stale_views(self, full: bool) -> set[str]:
        current = set(self._workload_uids.values())
        if full:
            return current
        stale = current - set(self._views)
        for mark in self._dirty:
            found = self._workload_of(mark)
            if found is not None:
                stale.add(found)
            elif "/" in mark:
                # An event about an object without uid (``kind/namespace/name``): find its owner by name.
                kind, namespace, name = mark.split("/", 2)
                stale.update(self._keys_named(kind, namespace, name))
        return stale

    def _keys_named(self, kind: str, namespace: str, name: str) -> list[str]:
        for collection, known in (*WORKLOADS.items(), *OWNED.items()):
            if known == kind:
                obj = self._objects[collection].get(f"{namespace}/{name}")
                found = self._workload_of(uid_of(obj)) if obj is not None else None
                return [found] if found is not None else []
        return []

    def _build(self, key: str, now: datetime) -> View | None:
        kind, namespace, name = key.split("/", 2)
        collection = Collection.DEPLOYMENTS if kind == "Deployment" else Collection.CLONESETS
        workload = self._objects[collection].get(f"{namespace}/{name}")
        if workload is None:
            return None
        children = list(self._children.get(uid_of(workload), {}).values())
        if collection is Collection.DEPLOYMENTS:
            replica_sets = [o for o in children if o["kind"] == "ReplicaSet"]
            pods = [pod for rs in replica_sets for pod in self._children.get(uid_of(rs), {}).values()
                    if pod["kind"] == "Pod"]
            return deployment_view(workload, replica_sets, pods, self._events, now)
        revisions = [o for o in children if o["kind"] == "ControllerRevision"]
        pods = [o for o in children if o["kind"] == "Pod"]
        return cloneset_view(workload, revisions, pods, self._events, now)

    def views(self, now: datetime, *, full: bool = False) -> list[View]:
        """Every workload's view, sorted by namespace, kind and name, each with its ``timeline``.

        Rebuilds the views touched since the last call (all of them if ``full``) and samples
        their timelines at ``now``; the others are returned as last built.
        """
        stale = self._stale_views(full)
        self._dirty.clear()
        t = now.timestamp()
        for key in stale:
            try:
                view = self._build(key, now)
            except (AttributeError, TypeError, ValueError, KeyError) as error:
                # A workload of a shape no API write should produce (annotations as a list, written
                # around validation) is left out of the page rather than taking the page down.
                log.warning("dashboard: cannot show %s: %s: %s", key, type(error).__name__, error)
                self._views.pop(key, None)
                continue
            if view is None:
                continue
            counts: dict[str, int] = defaultdict(int)
            for pod in view["pods"]:
                if pod["state"] != PodState.TERMINATING.value:
                    counts[pod["revision"]] += 1
            self.timeline.record(key, t, counts)
            view["timeline"] = self.timeline.samples(key)
            self._views[key] = view
        live = set(self._workload_uids.values())
        for key in [k for k in self._views if k not in live]:
            del self._views[key]
        self.timeline.forget(live)
        return sorted(self._views.values(), key=lambda view: (view["namespace"], view["kind"], view["name"]))

    def waiting_on_time(self) -> bool:
        """Whether some view shows a pod that may turn *available* by time alone (worth a full rebuild)."""
        return any(pod["state"] == PodState.READY.value for view in self._views.values() for pod in view["pods"])
