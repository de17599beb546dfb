"""Cache events of the CloneSet controller: expectation bookkeeping and what to enqueue.

Upstream's CloneSet event handlers, as plain callbacks attached to shared informers:

- a pod that appears under a CloneSet's controller reference is an observed creation of that
  CloneSet's scale expectations, and enqueues it; a pod seen already deleting is a deletion;
- a pod update enqueues its controller (and its former controller when the reference
  changed); an update that sets ``deletionTimestamp`` is an observed deletion; every update
  also feeds the resource-version expectations (the cache caught up with a write);
- a pod deletion is an observed deletion, forgets the pod's resource-version expectation and
  enqueues the owner;
- an orphan pod created or relabelled enqueues every CloneSet of its namespace whose
  selector matches it (CloneSets never adopt pure orphans, but the reconcile decides that);
- PVCs owned by a CloneSet feed its scale expectations the same way and enqueue it, so a
  reconcile waiting for a PVC deletion wakes up when it happens;
- a CloneSet update feeds the resource-version expectations (our status writes); a CloneSet
  that disappears drops its expectations.

The handlers only read cached objects; they never change them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.labels import SelectorError, selector_from_label_selector
from kubeloop.api.meta import (
    controller_of,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    object_key,
    resource_version_of,
    uid_of,
)
from kubeloop.runtime.collaborators import CachedObjects
from kubeloop.runtime.expectations import CREATE, DELETE, ResourceVersionExpectations, ScaleExpectations
from kubeloop.runtime.handlers import Funcs, Queue, Request
from kubeloop.runtime.informers import DeletedFinalStateUnknown

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def is_cloneset_reference(reference: Mapping[str, Any] | None) -> bool:
    """Whether an owner reference names a CloneSet of ``apps.kruise.io`` (any version)."""
    if reference is None or reference.get("kind") != kruise.CLONESET_KIND:
        return False
    return str(reference.get("apiVersion") or "").rpartition("/")[0] == kruise.GROUP


def _unwrap(obj: Obj | DeletedFinalStateUnknown) -> Obj | None:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class CloneSetEventHandlers:
    """The pod, PVC and CloneSet callbacks of one CloneSet controller.

    ``clonesets`` is the shared CloneSet informer's cache (for resolving owner references and
    selectors); ``scale`` and ``versions`` are the controller's expectations. The builder
    registers :meth:`pod_handler`, :meth:`pvc_handler` and :meth:`cloneset_handler`, whose
    functions get the controller's queue with each event.
    """

    def __init__(
        self,
        clonesets: CachedObjects,
        scale: ScaleExpectations,
        versions: ResourceVersionExpectations,
    ) -> None:
        self.clonesets = clonesets
        self.scale = scale
        self.versions = versions

    def pod_handler(self) -> Funcs:
        return Funcs(create=self.on_pod_add, update=self.on_pod_update, delete=self.on_pod_delete)

    def pvc_handler(self) -> Funcs:
        return Funcs(create=self.on_pvc_add, update=self.on_pvc_update, delete=self.on_pvc_delete)

    def cloneset_handler(self) -> Funcs:
        """Expectation bookkeeping only: every CloneSet event also enqueues it through ``for_``."""
        return Funcs(update=self.on_cloneset_update, delete=self.on_cloneset_delete)

    # -- helpers --------------------------------------------------------------------------
    @staticmethod
    def _enqueue(queue: Queue, cloneset: Mapping[str, Any]) -> None:
        queue.add(Request(namespace_of(cloneset), name_of(cloneset)))

    def resolve(self, namespace: str, reference: Mapping[str, Any] | None) -> Obj | None:
        """The cached CloneSet a controller reference names (kind, group and UID must agree)."""
        if reference is None or not is_cloneset_reference(reference):
            return None
        cloneset = self.clonesets.indexer.get_by_name(namespace, str(reference.get("name") or ""))
        if cloneset is None or uid_of(cloneset) != reference.get("uid"):
            return None
        return cloneset

    def matching_clonesets(self, obj: Mapping[str, Any]) -> list[Obj]:
        """CloneSets of the object's namespace whose valid, non-empty selector matches it."""
        found: list[Obj] = []
        labels = labels_of(obj)
        for cloneset in self.clonesets.indexer.by_namespace(namespace_of(obj)):
            raw = (cloneset.get("spec") or {}).get("selector")
            try:
                selector = selector_from_label_selector(raw if isinstance(raw, Mapping) else None)
            except SelectorError:
                continue
            if not selector.empty() and selector.matches(labels):
                found.append(cloneset)
        return found

    # -- pods -----------------------------------------------------------------------------
    def on_pod_add(self, pod: Obj, is_in_initial_list: bool, queue: Queue) -> None:
        if is_being_deleted(pod):
            self.on_pod_delete(pod, queue)
            return
        reference = controller_of(pod)
        if reference is not None:
            owner = self.resolve(namespace_of(pod), reference)
            if owner is not None:
                self.scale.observe(object_key(owner), CREATE, name_of(pod))
                self._enqueue(queue, owner)
            return
        for cloneset in self.matching_clonesets(pod):
            self._enqueue(queue, cloneset)

    def on_pod_update(self, old: Obj, current: Obj, queue: Queue) -> None:
        if resource_version_of(old) == resource_version_of(current):
            return
        self.versions.observe(uid_of(current), resource_version_of(current))
        current_ref, old_ref = controller_of(current), controller_of(old)
        if is_being_deleted(current):
            owner = self.resolve(namespace_of(current), current_ref)
            if owner is not None:
                self.scale.observe(object_key(owner), DELETE, name_of(current))
        if current_ref != old_ref and old_ref is not None:
            previous = self.resolve(namespace_of(old), old_ref)
            if previous is not None:
                self._enqueue(queue, previous)
        if current_ref is not None:
            owner = self.resolve(namespace_of(current), current_ref)
            if owner is not None:
                self._enqueue(queue, owner)
            return
        if labels_of(old) != labels_of(current) or current_ref != old_ref:
            for cloneset in self.matching_clonesets(current):
                self._enqueue(queue, cloneset)

    def on_pod_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        pod = _unwrap(obj)
        if pod is None:
            return
        owner = self.resolve(namespace_of(pod), controller_of(pod))
        if owner is None:
            return
        self.scale.observe(object_key(owner), DELETE, name_of(pod))
        self.versions.delete(uid_of(pod))
        self._enqueue(queue, owner)

    # -- PVCs -----------------------------------------------------------------------------
    def on_pvc_add(self, pvc: Obj, is_in_initial_list: bool, queue: Queue) -> None:
        owner = self.resolve(namespace_of(pvc), controller_of(pvc))
        if owner is None:
            return
        if is_being_deleted(pvc):
            self.scale.observe(object_key(owner), DELETE, name_of(pvc))
        else:
            self.scale.observe(object_key(owner), CREATE, name_of(pvc))
        self._enqueue(queue, owner)

    def on_pvc_update(self, old: Obj, current: Obj, queue: Queue) -> None:
        if not is_being_deleted(current) or is_being_deleted(old):
            return
        owner = self.resolve(namespace_of(current), controller_of(current))
        if owner is not None:
            self.scale.observe(object_key(owner), DELETE, name_of(current))
            self._enqueue(queue, owner)

    def on_pvc_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        pvc = _unwrap(obj)
        if pvc is None:
            return
        owner = self.resolve(namespace_of(pvc), controller_of(pvc))
        if owner is not None:
            self.scale.observe(object_key(owner), DELETE, name_of(pvc))
            self._enqueue(queue, owner)

    # -- CloneSets ------------------------------------------------------------------------
    def on_cloneset_update(self, old: Obj, current: Obj, queue: Queue) -> None:
        self.versions.observe(uid_of(current), resource_version_of(current))

    def on_cloneset_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else object_key(obj)
        self.scale.delete(key)
        cloneset = _unwrap(obj)
        if cloneset is not None:
            self.versions.delete(uid_of(cloneset))
