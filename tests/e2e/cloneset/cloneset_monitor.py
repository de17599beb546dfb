"""A monitor that checks what a CloneSet's pods and status must satisfy at every watch event.

It watches the namespace's pods and CloneSets from one resourceVersion on, keeps the current
objects, and after each event checks what must hold at that point of the event stream:

- identity: a pod is named ``<cloneset>-<instance id>``, instance ids are unique;
- labels: revision hashes (short form consistent), instance id, lifecycle state, the
  ``InPlaceUpdateReady`` readiness gate, a controller reference blocking owner deletion;
- in-place safety: a pod in an unfinished in-place update is neither InPlaceUpdateReady nor
  Ready;
- hooks: a pod held by the preDelete hook is never deleted; a pod held by the inPlaceUpdate
  hook never has its images changed;
- status algebra: the counters' order, ``expectedUpdatedReplicas = replicas - partition``,
  ``observedGeneration <= generation``;
- surge bound: active pods never exceed the larger of the count at the last spec change and
  ``replicas + maxSurge``, PreparingDelete pods excluded when the CloneSet says so;
- optional floors set by the test for a phase: available pods and pods kept on the old
  revision by the partition.

Violations are collected (never raised inside the watch task) and asserted by :meth:`check`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.meta import controller_of, labels_of, name_of
from kubeloop.client import PODS, ApiClient
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.controllers.cloneset.diffs import expected_updated_replicas, scaled_float_percent
from kubeloop.controllers.cloneset.inplace import has_grace_annotation, pod_update_completed
from kubeloop.controllers.cloneset.lifecycle import is_pod_hooked
from kubeloop.controllers.cloneset.options import DEFAULT_GATES
from kubeloop.controllers.cloneset.podstate import equal_to_revision, is_cloneset_pod_available
from kubeloop.controllers.cloneset.spec import (
    excludes_preparing_delete,
    lifecycle_hook,
    max_surge_of,
    replicas_of,
)

Obj = dict[str, Any]
NAMESPACE = "default"


def _images(pod: Mapping[str, Any]) -> list[str]:
    return [str(c.get("image")) for c in (pod.get("spec") or {}).get("containers") or []]


def _condition_status(pod: Mapping[str, Any], type_: str) -> str | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return str(cond.get("status"))
    return None


def _surge(cs: Mapping[str, Any]) -> int:
    value = max_surge_of(cs)
    if value is None or (cs.get("spec") or {}).get("updateStrategy", {}).get("paused"):
        return 0
    try:
        return scaled_float_percent(value, replicas_of(cs), round_up=True)
    except ValueError:
        return 0


@dataclass
class CloneSetMonitor:
    """Watches one CloneSet's pods and the CloneSet itself; records invariant violations."""

    client: ApiClient
    name: str
    violations: list[str] = field(default_factory=list)
    events: int = 0
    min_available: int | None = None
    """While set: at least this many pods must be available (a phase's availability floor)."""
    min_old: tuple[str, int] | None = None
    """While set to ``(revision, n)``: at least ``n`` pods must stay on that (old) revision,
    the partition floor of a rollout that started from it."""
    pods: dict[str, Obj] = field(default_factory=dict)
    cloneset: Obj | None = None
    progress: list[tuple[str, str] | None] = field(default_factory=list)
    """The Progressing condition's (status, reason) each time it changed, in event order."""
    _surge_bound: int = 0
    _generation: int = 0
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    # -- running ----------------------------------------------------------------------------
    async def start(self) -> None:
        listed = await self.client.list(PODS, namespace=NAMESPACE)
        for pod in listed["items"]:
            if self._ours(pod):
                self.pods[name_of(pod)] = pod
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._watch(PODS, str(listed["metadata"]["resourceVersion"]))),
            loop.create_task(self._watch(CLONESETS, None)),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _watch(self, resource: Any, resource_version: str | None) -> None:
        while True:
            stream = self.client.watch(resource, namespace=NAMESPACE, resource_version=resource_version)
            async with stream:
                async for event in stream:
                    if event.type == "BOOKMARK" or event.type == "ERROR":
                        continue
                    obj = event.object
                    resource_version = str(obj.get("metadata", {}).get("resourceVersion") or resource_version)
                    try:
                        self._apply(resource is PODS, event.type, obj)
                    except Exception as exc:  # a bug in the monitor must show up, not kill the watch
                        self.violations.append(f"monitor error: {exc!r}")

    def check(self) -> None:
        """Fail with every violation seen so far."""
        assert self.events > 0, "the monitor saw no event"
        assert not self.violations, "\n".join(self.violations[:20])

    # -- bookkeeping ------------------------------------------------------------------------
    def _ours(self, pod: Mapping[str, Any]) -> bool:
        ref = controller_of(pod)
        return ref is not None and ref.get("kind") == kruise.CLONESET_KIND and ref.get("name") == self.name

    def _apply(self, is_pod: bool, kind: str, obj: Obj) -> None:
        self.events += 1
        if not is_pod:
            if name_of(obj) != self.name:
                return
            if kind == "DELETED":
                self.cloneset = None
                return
            generation = int(obj.get("metadata", {}).get("generation") or 0)
            if generation != self._generation:
                self._generation = generation
                self._surge_bound = max(len(self._active()), replicas_of(obj) + _surge(obj))
            self.cloneset = obj
            self._record_progress(obj)
            self._check_status(obj)
            return
        if not self._ours(obj):
            # A pod the controller released is no longer the CloneSet's: forget it.
            self.pods.pop(name_of(obj), None)
            return
        name = name_of(obj)
        old = self.pods.get(name)
        if kind == "DELETED" or obj["metadata"].get("deletionTimestamp"):
            self._check_deletion(old or obj)
            self.pods.pop(name, None)
            return
        if old is not None:
            self._check_transition(old, obj)
        self.pods[name] = obj
        self._check_pod(obj)
        self._check_counts()

    def _record_progress(self, cs: Obj) -> None:
        current = None
        for cond in (cs.get("status") or {}).get("conditions") or []:
            if cond.get("type") == kruise.CONDITION_PROGRESSING:
                current = (str(cond.get("status")), str(cond.get("reason")))
        if not self.progress or self.progress[-1] != current:
            self.progress.append(current)

    def _violation(self, text: str) -> None:
        self.violations.append(f"[{datetime.now(UTC).isoformat()}] {text}")

    def _active(self) -> list[Obj]:
        return [p for p in self.pods.values() if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]

    # -- the invariants ---------------------------------------------------------------------
    def _check_pod(self, pod: Obj) -> None:
        labels = labels_of(pod)
        instance_id = labels.get(kruise.INSTANCE_ID_LABEL, "")
        if name_of(pod) != f"{self.name}-{instance_id}":
            self._violation(f"pod {name_of(pod)} does not carry its instance id ({instance_id!r})")
        revision = labels.get(kruise.CONTROLLER_REVISION_HASH_LABEL, "")
        if not revision or labels.get(kruise.POD_TEMPLATE_HASH_LABEL) != revision.rsplit("-", 1)[-1]:
            self._violation(f"pod {name_of(pod)} revision labels {revision!r} / "
                            f"{labels.get(kruise.POD_TEMPLATE_HASH_LABEL)!r}")
        if not labels.get(kruise.LIFECYCLE_STATE_LABEL):
            self._violation(f"pod {name_of(pod)} has no lifecycle state")
        gates = [g.get("conditionType") for g in (pod.get("spec") or {}).get("readinessGates") or []]
        if kruise.INPLACE_UPDATE_READY not in gates:
            self._violation(f"pod {name_of(pod)} lacks the InPlaceUpdateReady readiness gate")
        ref = controller_of(pod) or {}
        if ref.get("blockOwnerDeletion") is not True:
            self._violation(f"pod {name_of(pod)} controller reference does not block owner deletion")
        updating = labels.get(kruise.LIFECYCLE_STATE_LABEL) == kruise.STATE_UPDATING
        unfinished = has_grace_annotation(pod) or (updating and not pod_update_completed(pod))
        if unfinished and (_condition_status(pod, kruise.INPLACE_UPDATE_READY) == "True"
                           or _condition_status(pod, "Ready") == "True"):
            self._violation(f"pod {name_of(pod)} is ready during an unfinished in-place update")

    def _check_transition(self, old: Obj, new: Obj) -> None:
        if self.cloneset is None or _images(old) == _images(new):
            return
        hook = lifecycle_hook(self.cloneset, "inPlaceUpdate")
        held = labels_of(old).get(kruise.LIFECYCLE_STATE_LABEL) == kruise.STATE_PREPARING_UPDATE
        if held and is_pod_hooked(hook, old) and is_pod_hooked(hook, new):
            self._violation(f"pod {name_of(new)} had its images changed while held by the inPlaceUpdate hook")

    def _check_deletion(self, pod: Obj) -> None:
        if self.cloneset is None:
            return
        hook = lifecycle_hook(self.cloneset, "preDelete")
        if hook is not None and (self.cloneset.get("spec") or {}).get("lifecycle") is not None \
                and is_pod_hooked(hook, pod):
            self._violation(f"pod {name_of(pod)} deleted while held by the preDelete hook")

    def _check_counts(self) -> None:
        active = self._active()
        ids = [labels_of(p).get(kruise.INSTANCE_ID_LABEL) for p in active]
        if len(ids) != len(set(ids)):
            self._violation(f"duplicate instance ids among {sorted(map(str, ids))}")
        cs = self.cloneset
        if cs is None:
            return
        counted = active
        if excludes_preparing_delete(cs, DEFAULT_GATES):
            counted = [p for p in active
                       if labels_of(p).get(kruise.LIFECYCLE_STATE_LABEL) != kruise.STATE_PREPARING_DELETE]
        if len(counted) > self._surge_bound:
            self._violation(f"{len(counted)} pods exceed the surge bound {self._surge_bound}")
        now = datetime.now(UTC)
        min_ready = int((cs.get("spec") or {}).get("minReadySeconds") or 0)
        if self.min_available is not None:
            available = sum(is_cloneset_pod_available(p, min_ready, now) for p in active)
            if available < self.min_available:
                self._violation(f"{available} available pods, below the floor {self.min_available}")
        if self.min_old is not None:
            revision, floor = self.min_old
            old = sum(equal_to_revision(p, revision) for p in active)
            if old < floor:
                self._violation(f"{old} pods on the old revision {revision}, below the partition floor {floor}")

    def _check_status(self, cs: Obj) -> None:
        status = cs.get("status") or {}
        if not status:
            return

        def get(key: str) -> int:
            return int(status.get(key) or 0)

        if not get("availableReplicas") <= get("readyReplicas") <= get("replicas"):
            self._violation(f"status counters out of order: {status}")
        if not get("updatedAvailableReplicas") <= get("updatedReadyReplicas") <= get("updatedReplicas") \
                <= get("replicas"):
            self._violation(f"updated counters out of order: {status}")
        if get("updatedAvailableReplicas") > get("availableReplicas"):
            self._violation(f"updatedAvailableReplicas above availableReplicas: {status}")
        generation = int(cs["metadata"].get("generation") or 0)
        if get("observedGeneration") > generation:
            self._violation(f"observedGeneration {get('observedGeneration')} above generation {generation}")
        if get("observedGeneration") == generation:
            expected = expected_updated_replicas(cs)
            if expected is not None and get("expectedUpdatedReplicas") != expected:
                self._violation(f"expectedUpdatedReplicas {get('expectedUpdatedReplicas')} != {expected}")
