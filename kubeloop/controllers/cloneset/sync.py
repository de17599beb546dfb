"""One reconcile of a CloneSet, in upstream's order (kruise
``pkg/controller/cloneset/cloneset_controller.go`` ``doReconcile``).

1. read the CloneSet from the cache (gone: forget its expectations);
2. parse its selector (invalid: Warning event, retried with back-off);
3. wait while scale expectations are pending (they expire after five minutes, after which the
   cache is trusted again rather than stalling);
4. list its pods (any owner reference with its UID) and split active from finished ones;
5. list its PVCs, and with ``disablePVCReuse`` hand over or delete those without an active pod;
6. claim the pods: release owned pods that stopped matching, adopt matching pods that carry a
   non-controller reference to it; pure orphans are never listed, so never adopted;
7. list its ControllerRevisions and choose (create, re-use or bump) the current and update
   revisions, with the collision count;
8. wait while the cache lags behind our own writes of the CloneSet, revisions or pods;
9. Scale (:mod:`.scaleplan`); when it wrote anything, skip Update this round; else Update
   (refresh, lifecycle transitions, then :mod:`.update`); failures become the FailedScale /
   FailedUpdate conditions;
10. write the status when it changed; drop names of vanished pods from ``podsToDelete``;
    delete revisions beyond ``revisionHistoryLimit``;
11. requeue at the earliest moment something time-based is due: an in-place grace period, a
    pod becoming available after ``minReadySeconds``, the progress deadline.

Unlike upstream, steps 4, 6, 8, 9 and 10 read the CloneSet's pod tally (:mod:`.tally`, kept
from the pod cache's change listener) instead of evaluating every pod: when no pod needs the
claim, every owned active pod is kept as it is, and with ``minReadySeconds`` 0 and no
``podsToDelete`` the counts, the update candidates and the pods to refresh come from the tally
(a pod whose refresh plan was idle is not planned again until it, the update revision or the
CloneSet's ``spec.lifecycle`` changes: :mod:`.refreshplan`), and the pod list from the tally's
key order, kept up to date as pods join and leave rather than sorted on each sync. Otherwise
the per-pod path runs, as upstream's.
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kubeloop.api import kruise
from kubeloop.api.conditions import find_condition
from kubeloop.api.labels import Selector, SelectorError, selector_from_label_selector
from kubeloop.api.meta import (
    controller_of,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    object_key,
    parse_time,
    resource_version_of,
    uid_of,
)
from kubeloop.api.pods import is_pod_active
from kubeloop.client import PODS, ApiClient, ApiException, TransportError, is_not_found
from kubeloop.runtime.controller import Result
from kubeloop.runtime.controllerref import ControllerRefManager
from kubeloop.runtime.events import WARNING, EventRecorder
from kubeloop.runtime.expectations import EXPECTATIONS_TIMEOUT, ResourceVersionExpectations, ScaleExpectations
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers import SharedIndexInformer

from .control import CLONESETS, CloneSetControl, PodTemplateError
from .imagepulljobs import ImagePullJobs
from .options import CloneSetBehaviour, CloneSetFeatureGates
from .podstate import is_cloneset_pod_available, is_pod_update_ready, lifecycle_state
from .revisions import (
    active_revisions,
    apply_revision,
    live_revision_names,
    revisions_equal,
    revisions_to_delete,
    sort_revisions,
)
from .scale import pvc_cleanup, pvc_owned_by_pod, truncated_pods_to_delete
from .spec import (
    disable_pvc_reuse,
    min_ready_seconds_of,
    pods_to_delete_of,
    revision_history_limit_of,
)
from .status import calculate_status, status_changed, with_failure_condition
from .steps import DEFAULT_WRITE_CONCURRENCY, CloneSetSteps, Requeue, UpdateError
from .tally import CloneSetPodTally, TallyView

log = logging.getLogger(__name__)

Obj = dict[str, Any]

OWNER_UID_INDEX = "cloneset.kubeloop.io/owner-uids"
"""Pod and PVC index: the UIDs of every owner reference (upstream's field index)."""

CACHE_LAG_RECHECK = 5.0
"""Safety net when the cache lags behind our writes (the watch event normally comes first)."""

AVAILABILITY_SLACK = 0.5
"""Seconds added to "ready since + minReadySeconds": availability needs that moment passed."""

MAX_COLLISIONS = 100


def owner_uids(obj: Mapping[str, Any]) -> list[str]:
    """Index function: every owner reference's UID."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return [str(r.get("uid")) for r in refs if isinstance(r, Mapping) and r.get("uid")]


class InvalidCloneSetError(Exception):
    """A CloneSet the controller cannot act on; reported as a Warning event."""


def parse_selector(cs: Mapping[str, Any]) -> Selector:
    """The CloneSet's selector; :class:`InvalidCloneSetError` when missing, empty or invalid."""
    raw = (cs.get("spec") or {}).get("selector") if isinstance(cs.get("spec"), Mapping) else None
    if not isinstance(raw, Mapping):
        raise InvalidCloneSetError("spec.selector is missing")
    try:
        selector = selector_from_label_selector(raw)
    except SelectorError as exc:
        raise InvalidCloneSetError(f"invalid selector: {exc}") from exc
    if selector.empty():
        raise InvalidCloneSetError("empty selector is invalid for cloneset")
    return selector


def availability_recheck(pods: Sequence[Mapping[str, Any]], min_ready_seconds: int, now: datetime) -> float | None:
    """Seconds until the first Ready-but-not-yet-available pod passes ``minReadySeconds``."""
    if min_ready_seconds <= 0:
        return None
    earliest: float | None = None
    for pod in pods:
        if lifecycle_state(pod) not in ("", kruise.STATE_NORMAL) or not is_pod_update_ready(pod, 0, now):
            continue
        if is_cloneset_pod_available(pod, min_ready_seconds, now):
            continue
        ready = find_condition((pod.get("status") or {}).get("conditions") or [], "Ready")
        since = parse_time(ready.get("lastTransitionTime")) if ready is not None else None
        if since is None:
            continue
        due = (since + timedelta(seconds=min_ready_seconds) - now).total_seconds() + AVAILABILITY_SLACK
        due = max(due, AVAILABILITY_SLACK)
        earliest = due if earliest is None else min(earliest, due)
    return earliest


@dataclass(frozen=True)
class CloneSetInformers:
    """The shared informers a CloneSet controller reads from."""

    clonesets: SharedIndexInformer
    pods: SharedIndexInformer
    pvcs: SharedIndexInformer
    revisions: SharedIndexInformer


class CloneSetSync:
    """The reconcile function of the CloneSet controller over shared informers."""

    def __init__(
        self,
        client: ApiClient,
        informers: CloneSetInformers,
        recorder: EventRecorder,
        control: CloneSetControl,
        scale: ScaleExpectations,
        versions: ResourceVersionExpectations,
        *,
        gates: CloneSetFeatureGates,
        behaviour: CloneSetBehaviour,
        wall: Callable[[], datetime],
        rng: random.Random,
        expectations_timeout: float = EXPECTATIONS_TIMEOUT,
        write_concurrency: int = DEFAULT_WRITE_CONCURRENCY,
    ) -> None:
        self.client = client
        self.informers = informers
        self.recorder = recorder
        self.control = control
        self.scale = scale
        self.versions = versions
        self.gates = gates
        self.behaviour = behaviour
        self.wall = wall
        self.expectations_timeout = expectations_timeout
        self.steps = CloneSetSteps(client, recorder, control, gates=gates, behaviour=behaviour, rng=rng,
                                   write_concurrency=write_concurrency)
        self.image_pull_jobs = (ImagePullJobs(client, recorder, versions, gates)
                                if gates.pre_download_image_for_in_place_update else None)
        self._tallies: dict[str, CloneSetPodTally] = {}
        """Running pod facts by CloneSet UID (:mod:`.tally`), marked from the pod cache."""
        self._tally_uids: dict[str, str] = {}
        """CloneSet key -> the UID its tally is kept under."""
        informers.pods.indexer.add_change_listener(self._on_pod_stored)

    def _on_pod_stored(self, key: str, old: Obj | None, new: Obj | None) -> None:
        """Pod cache listener: mark the pod in the tally of every CloneSet it references."""
        tallies = self._tallies
        if not tallies:
            return
        for pod in (old, new):
            if pod is None:
                continue
            refs = (pod.get("metadata") or {}).get("ownerReferences")
            if not refs:
                continue
            for ref in refs:
                tally = tallies.get(str(ref.get("uid"))) if isinstance(ref, Mapping) else None
                if tally is not None:
                    tally.mark(key)

    def _tally(self, cs: Obj, selector: Selector) -> CloneSetPodTally:
        """The CloneSet's tally, brought up to date (a new one when its UID or selector changed)."""
        uid = uid_of(cs)
        selector_spec = (cs.get("spec") or {}).get("selector") or {}
        tally = self._tallies.get(uid)
        if tally is None or not tally.matches_identity(uid, selector_spec):
            old_uid = self._tally_uids.get(object_key(cs))
            if old_uid is not None:
                self._tallies.pop(old_uid, None)
            tally = CloneSetPodTally(uid, copy.deepcopy(selector_spec), selector)
            self._tallies[uid] = tally
            self._tally_uids[object_key(cs)] = uid
        indexer = self.informers.pods.indexer
        tally.update(indexer.epoch, indexer.index_key_view(OWNER_UID_INDEX, uid), indexer.get)
        return tally

    def forget_tally(self, key: str) -> None:
        uid = self._tally_uids.pop(key, None)
        if uid is not None:
            self._tallies.pop(uid, None)

    async def reconcile(self, request: Request) -> Result | None:
        cs = self.informers.clonesets.indexer.get_by_name(request.namespace, request.name)
        if cs is None:
            self.scale.delete(request.key)
            self.forget_tally(request.key)
            if self.image_pull_jobs is not None:
                self.image_pull_jobs.forget(request.key)
            return None
        try:
            return await self._reconcile(cs)
        except (ApiException, TransportError):
            raise
        except InvalidCloneSetError as exc:
            log.warning("cloneset %s: %s", request.key, exc)
            self.recorder.event(cs, WARNING, "InvalidCloneSet", str(exc))
            return Result(requeue=True)
        except Exception as exc:
            # Malformed input the pure core could not digest: report it and retry with back-off
            # rather than letting one object take the worker down.
            log.exception("cloneset %s: reconcile failed", request.key)
            self.recorder.event(cs, WARNING, "ReconcileError", f"failed to reconcile: {exc}")
            return Result(requeue=True)

    async def _reconcile(self, cs: Obj) -> Result | None:
        key = object_key(cs)
        selector = parse_selector(cs)
        if not self.versions.satisfied(uid_of(cs), resource_version_of(cs)):
            # Our last status (or spec) write is not in the cache yet: acting on the older
            # copy would, for one, write a stale collisionCount or currentRevision back.
            return Result(requeue_after=CACHE_LAG_RECHECK)

        satisfied, waited, pending = self.scale.satisfied(key)
        if not satisfied:
            if waited < self.expectations_timeout:
                return Result(requeue_after=self.expectations_timeout - waited)
            log.warning("cloneset %s: expectations unsatisfied for %.0fs, trusting the cache: %s",
                        key, waited, pending)
            self.scale.delete(key)

        uid = uid_of(cs)
        indexer = self.informers.pods.indexer
        pvcs = [p for p in self.informers.pvcs.indexer.by_index(OWNER_UID_INDEX, uid) if not is_being_deleted(p)]
        tally = self._tally(cs, selector)
        view: TallyView | None = None
        if tally.to_claim or disable_pvc_reuse(cs):
            # Pods to adopt or release, or PVCs to hand over: the per-pod path, as upstream.
            owned = indexer.by_index(OWNER_UID_INDEX, uid)
            active = [p for p in owned if is_pod_active(p)]
            if disable_pvc_reuse(cs):
                inactive = [p for p in owned if not is_pod_active(p)]
                pvcs = await self._cleanup_pvcs(cs, active, inactive, pvcs)
            pods = await self._claim_pods(cs, selector, active)
        else:
            # Every active owned pod is claimed as it is: the claim would keep them all. The
            # tally holds them as the cache does now (it was just brought up to date).
            pods = tally.claimed_pods()
            if min_ready_seconds_of(cs) == 0 and not pods_to_delete_of(cs):
                view = tally.view()

        revisions = self._list_revisions(cs, selector)
        if any(not self.versions.satisfied(uid_of(r), resource_version_of(r)) for r in revisions):
            return Result(requeue_after=CACHE_LAG_RECHECK)
        current, update, collision_count = await self._active_revisions(cs, revisions)
        if not self._pods_cached_as_written(pods, tally if view is not None else None):
            return Result(requeue_after=CACHE_LAG_RECHECK)

        if self.image_pull_jobs is not None:
            await self.image_pull_jobs.sync(cs, current, update, str(selector))

        now = self.wall()
        requeue = Requeue()
        failure: tuple[str, str] | None = None
        if not is_being_deleted(cs):
            failure = await self._sync(cs, pods, pvcs, revisions, current, update, now, requeue, view)

        status, deadline_delay = calculate_status(
            cs, pods, update_revision=name_of(update), current_revision=name_of(current),
            collision_count=collision_count, label_selector=str(selector), now=now,
            pod_counts=None if view is None else view.status_counts(name_of(update)),
        )
        requeue.push(deadline_delay)
        if failure is not None:
            status = with_failure_condition(status, failure[0], failure[1], now)
        if status_changed(cs.get("status") or {}, status):
            await self.control.write_status(cs, status)

        if pods_to_delete_of(cs) and truncated_pods_to_delete(cs, pods) is not None:
            await self.control.truncate_pods_to_delete(cs, {name_of(p) for p in pods})
        live = live_revision_names(name_of(current), name_of(update), pods, revisions,
                                   labels=None if view is None else view.revision_labels())
        for revision in revisions_to_delete(revisions, live, revision_history_limit_of(cs)):
            await self.control.delete_revision(revision)

        requeue.push(availability_recheck(pods, min_ready_seconds_of(cs), now))
        if failure is not None:
            return Result(requeue=True)
        return Result(requeue_after=requeue.after) if requeue.after is not None else None

    # -- listing and claiming ---------------------------------------------------------------
    def _pods_cached_as_written(self, pods: list[Obj], tally: CloneSetPodTally | None) -> bool:
        """Whether the cache shows every pod at least at the version we last wrote; with a
        ``tally`` (whose claimed pods are ``pods``) only the pods with a pending expectation
        are looked at."""
        if tally is None:
            return all(self.versions.satisfied(uid_of(p), resource_version_of(p)) for p in pods)
        get = self.informers.pods.indexer.get
        for pending in self.versions.pending():
            key = tally.claimed_uids.get(pending)
            pod = get(key) if key is not None else None
            if pod is not None and not self.versions.satisfied(pending, resource_version_of(pod)):
                return False
        return True

    async def _cleanup_pvcs(self, cs: Obj, active: list[Obj], inactive: list[Obj], pvcs: list[Obj]) -> list[Obj]:
        cleanup = pvc_cleanup(active, inactive, pvcs)
        for pvc, pod in cleanup.reown:
            await self.control.replace_pvc(pvc_owned_by_pod(pvc, cs, pod))
        for pvc in cleanup.delete:
            await self.control.delete_pvc(cs, pvc)
        return [dict(p) for p in cleanup.keep]

    async def _claim_pods(self, cs: Obj, selector: Selector, active: list[Obj]) -> list[Obj]:
        async def patch(pod: Obj, body: Obj) -> Obj:
            result: Obj = await self.client.patch(PODS, name_of(pod), body, patch_type="strategic",
                                                  namespace=namespace_of(pod))
            return result

        async def get_owner() -> Obj | None:
            try:
                fresh: Obj = await self.client.get(CLONESETS, name_of(cs), namespace=namespace_of(cs))
            except Exception as exc:
                if is_not_found(exc):
                    return None
                raise
            return fresh

        manager = ControllerRefManager(cs, kruise.API_VERSION, kruise.CLONESET_KIND,
                                       lambda pod: selector.matches(labels_of(pod)), patch, get_owner)
        return await manager.claim(active)

    def _list_revisions(self, cs: Obj, selector: Selector) -> list[Obj]:
        """Revisions of the namespace matching the selector, unowned or controlled by ``cs``,
        sorted by revision number."""
        found = []
        for revision in self.informers.revisions.indexer.by_namespace(namespace_of(cs)):
            reference = controller_of(revision)
            if reference is not None and reference.get("uid") != uid_of(cs):
                continue
            if selector.matches(labels_of(revision)):
                found.append(revision)
        return [dict(r) for r in sort_revisions(found)]

    async def _active_revisions(self, cs: Obj, revisions: list[Obj]) -> tuple[Obj, Obj, int]:
        """``(current, update, collisionCount)``, creating or bumping the update revision."""
        plan = active_revisions(cs, revisions)
        count = plan.collision_count
        update: Obj = dict(plan.update_revision)
        for _ in range(MAX_COLLISIONS):
            if plan.action != "create":
                break
            created, existing = await self.control.create_revision(plan.update_revision)
            if created is not None:
                update = created
                break
            if existing is not None and revisions_equal(existing, plan.update_revision):
                update = existing
                break
            count += 1
            plan = active_revisions(cs, revisions, count)
            update = dict(plan.update_revision)
        else:
            raise InvalidCloneSetError("too many revision name collisions")
        if plan.action == "bump":
            update = await self.control.replace_revision(plan.update_revision)
        current = dict(plan.current_revision)
        if name_of(current) == name_of(update):
            current = update
        return current, update, count

    # -- scale and update -------------------------------------------------------------------
    async def _sync(
        self,
        cs: Obj,
        pods: list[Obj],
        pvcs: list[Obj],
        revisions: list[Obj],
        current: Obj,
        update: Obj,
        now: datetime,
        requeue: Requeue,
        view: TallyView | None = None,
    ) -> tuple[str, str] | None:
        """Scale, then (when Scale wrote nothing) Update; returns the failure condition, if any."""
        current_cs = apply_revision(cs, current)
        update_cs = apply_revision(cs, update)
        failure: tuple[str, str] | None = None
        try:
            if await self.steps.scale(current_cs, update_cs, pods, pvcs, name_of(current), name_of(update), now,
                                      view):
                return None
        except (ApiException, TransportError, PodTemplateError) as exc:
            log.warning("cloneset %s: scale failed: %s", object_key(cs), exc)
            failure = (kruise.CONDITION_FAILED_SCALE, str(exc))
        try:
            await self.steps.update(update_cs, pods, revisions, current, update, now, requeue, view)
        except (ApiException, TransportError, UpdateError) as exc:
            log.warning("cloneset %s: update failed: %s", object_key(cs), exc)
            failure = (kruise.CONDITION_FAILED_UPDATE, str(exc))
        return failure
