"""The ReplicaSet controller: keep ``spec.replicas`` pods running and report on them.

Wiring (upstream ``pkg/controller/replicaset/replica_set.go``, ``addPod``, ``updatePod``,
``deletePod``): ReplicaSet events enqueue the ReplicaSet; pod events
enqueue the pod's controlling ReplicaSet (or, for an orphan, every ReplicaSet whose selector
matches it, so one can adopt it) and feed the expectations: a pod that appears counts as an
observed creation, a pod that gets a deletionTimestamp or disappears as an observed deletion
(counted once per pod, whichever comes first).

A sync (:meth:`ReplicaSetController.reconcile`) reads the ReplicaSet and the namespace's pods
from the caches, claims the active pods (adopting matching orphans, releasing owned pods that
stopped matching), creates or deletes pods when the expectations of the previous round are met
and the ReplicaSet is not being deleted, then writes the status through ``/status`` when it
changed. Creation goes in slow-start batches (1, 2, 4, ...), at most ``burst_replicas`` per
sync; deletion takes the pods ranked first by :mod:`.ranking`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kubeloop.api.errorstatus import is_namespace_terminating
from kubeloop.api.labels import Selector, SelectorError, selector_from_label_selector
from kubeloop.api.meta import (
    controller_of,
    deep_copy,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    now,
    object_key,
    resource_version_of,
    uid_of,
)
from kubeloop.api.nested import section
from kubeloop.client import PODS, REPLICA_SETS, is_conflict, is_not_found
from kubeloop.controllers.kubegates import kube_gate
from kubeloop.controllers.replicaset.batching import BURST_REPLICAS, replicas_to_manage, slow_start_batch
from kubeloop.controllers.replicaset.nodecounts import NodeCounts, disjoint
from kubeloop.controllers.replicaset.podcontrol import (
    REPLICA_SET_API_VERSION,
    REPLICA_SET_KIND,
    PodTemplateError,
    pod_from_template,
)
from kubeloop.controllers.replicaset.podfacts import PodFacts, PodFactsCache, pod_facts
from kubeloop.controllers.replicaset.ranking import RankingFactsCache, select_for_deletion
from kubeloop.controllers.replicaset.related import related_pods_per_node
from kubeloop.controllers.replicaset.status import (
    ReplicaCounts,
    availability_recheck_after,
    became_ready_recheck_after,
    status_from_counts,
    status_needs_update,
    status_to_write,
    template_labels,
)
from kubeloop.controllers.replicaset.tally import OwnedPodTally
from kubeloop.runtime.clock import REAL_CLOCK, Clock
from kubeloop.runtime.collaborators import CachedObjects, ObjectClient, Recorder
from kubeloop.runtime.controller import Result
from kubeloop.runtime.controllerref import controller_ref_manager
from kubeloop.runtime.events import NORMAL, WARNING
from kubeloop.runtime.expectations import UIDTrackingControllerExpectations
from kubeloop.runtime.handlers import Funcs, Queue, Request
from kubeloop.runtime.informers import NAMESPACE_INDEX, DeletedFinalStateUnknown
from kubeloop.runtime.manager import Manager
from kubeloop.runtime.retry import Backoff, retry_on_conflict

log = logging.getLogger(__name__)

Obj = dict[str, Any]

SUCCESSFUL_CREATE = "SuccessfulCreate"
FAILED_CREATE = "FailedCreate"
SUCCESSFUL_DELETE = "SuccessfulDelete"
FAILED_DELETE = "FailedDelete"
INVALID_SELECTOR = "InvalidSelector"

NAME = "replicaset"
# Upstream's statusUpdateRetries = 1 (pkg/controller/replicaset/replica_set.go, used by
# updateReplicaSetStatus in replica_set_utils.go): one more try, at once, on a fresh read.
STATUS_UPDATE_RETRY = Backoff(steps=2, duration=0)
POD_CONTROLLER_INDEX = "replicaset-controller/pod-controller"
"""Pods by ``<namespace>/<controller uid>``, and by ``<namespace>/`` for pods with no controller."""
COMPONENT = "replicaset-controller"


class InvalidObjectError(ValueError):
    """The cached object cannot be acted on (a malformed selector); retried with back-off."""


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def desired_replicas(replica_set: Mapping[str, Any]) -> int:
    return _int(section(replica_set, "spec").get("replicas"), 1)


def replica_set_selector(replica_set: Mapping[str, Any]) -> Selector:
    """The ReplicaSet's selector; raises :class:`InvalidObjectError` when it is malformed."""
    raw = section(replica_set, "spec").get("selector")
    try:
        return selector_from_label_selector(raw if isinstance(raw, Mapping) else None)
    except SelectorError as exc:
        raise InvalidObjectError(f"invalid selector: {exc}") from exc


def _matching_selector(replica_set: Mapping[str, Any]) -> Selector | None:
    """The selector to offer orphans to: ``None`` when malformed or empty (it would take all)."""
    try:
        selector = replica_set_selector(replica_set)
    except InvalidObjectError:
        return None
    return None if selector.empty() else selector


def pod_controller_index(pod: Mapping[str, Any]) -> list[str]:
    """Index values for :data:`POD_CONTROLLER_INDEX`.

    A sync only ever claims pods it controls or orphans (a pod controlled by someone else is
    never adopted nor released), so looking those two groups up spares it a scan of every pod
    in the namespace: with thousands of pods the scan dominated the controller's time.
    """
    owner = controller_of(pod)
    return [f"{namespace_of(pod)}/{owner.get('uid', '') if owner is not None else ''}"]


class ReplicaSetController:
    """Handlers and the reconcile function of the ReplicaSet controller.

    ``replica_sets`` and ``pods`` are the caches of shared informers (cluster-wide or one
    namespace); :meth:`pod_handler` and :meth:`replica_set_handler` are the handlers the
    builder registers on them, and :meth:`attach_cache_listeners` hooks the pod cache's change
    listener. ``wall`` gives the current time for availability (``minReadySeconds``) and
    condition timestamps.
    """

    def __init__(
        self,
        client: ObjectClient,
        replica_sets: CachedObjects,
        pods: CachedObjects,
        recorder: Recorder,
        *,
        clock: Clock = REAL_CLOCK,
        wall: Callable[[], datetime] = now,
        burst_replicas: int = BURST_REPLICAS,
        terminating_replicas: bool = False,
    ) -> None:
        self.client = client
        self.terminating_replicas = terminating_replicas
        """The DeploymentReplicaSetTerminatingReplicas gate (alpha, off in 1.33): report
        ``status.terminatingReplicas``."""
        self.replica_sets = replica_sets
        self.pods = pods
        self.recorder = recorder
        self.wall = wall
        self.burst_replicas = burst_replicas
        self.expectations = UIDTrackingControllerExpectations(clock)
        self.pod_facts = PodFactsCache()
        self.ranking_facts = RankingFactsCache()
        self.node_counts = NodeCounts(self.pod_facts.facts)
        """Active pods per node per sibling selector, for scale-down ranking (:mod:`.nodecounts`)."""
        self._selectors: dict[str, tuple[Any, Selector]] = {}
        self._tallies: dict[str, OwnedPodTally] = {}

    # -- wiring ---------------------------------------------------------------------------
    def attach_cache_listeners(self) -> None:
        self.pods.indexer.add_change_listener(self._on_pod_stored)
        self.pods.indexer.add_change_listener(self.node_counts.on_stored)

    def pod_handler(self) -> Funcs:
        return Funcs(create=self.on_pod_add, update=self.on_pod_update, delete=self.on_pod_removed)

    def replica_set_handler(self) -> Funcs:
        """Deletions only: every ReplicaSet event also enqueues it through ``for_``."""
        return Funcs(delete=self.on_replica_set_delete)

    @staticmethod
    def _enqueue(queue: Queue, replica_set: Mapping[str, Any], after: float | None = None) -> None:
        request = Request(namespace_of(replica_set), name_of(replica_set))
        if after is None:
            queue.add(request)
        else:
            queue.add_after(request, after)

    # -- handlers -------------------------------------------------------------------------
    def _on_pod_stored(self, key: str, old: Obj | None, new: Obj | None) -> None:
        """Pod cache change listener: mark the pod in the tallies of its old and new controller."""
        tallies = self._tallies
        if not tallies:
            return
        for pod in (old, new):
            reference = controller_of(pod) if pod is not None else None
            if reference is not None:
                tally = tallies.get(reference.get("uid", ""))
                if tally is not None:
                    tally.mark(key)

    def resolve_controller(self, namespace: str, reference: Mapping[str, Any] | None) -> Obj | None:
        """The cached ReplicaSet a pod's controller reference names (kind and UID must agree)."""
        if reference is None or reference.get("kind") != REPLICA_SET_KIND:
            return None
        replica_set = self.replica_sets.indexer.get_by_name(namespace, str(reference.get("name") or ""))
        if replica_set is None or uid_of(replica_set) != reference.get("uid"):
            return None
        return replica_set

    def replica_sets_for_orphan(self, pod: Mapping[str, Any]) -> list[Obj]:
        """ReplicaSets of the pod's namespace whose non-empty selector matches its labels."""
        found = []
        labels = labels_of(pod)
        for replica_set in self.replica_sets.indexer.by_namespace(namespace_of(pod)):
            selector = _matching_selector(replica_set)
            if selector is not None and selector.matches(labels):
                found.append(replica_set)
        return found

    def on_pod_add(self, pod: Obj, is_in_initial_list: bool, queue: Queue) -> None:
        if is_being_deleted(pod):
            # Seen for the first time already deleting (e.g. after a restart): a deletion.
            self.on_pod_delete(pod, queue)
            return
        owner_ref = controller_of(pod)
        if owner_ref is not None:
            owner = self.resolve_controller(namespace_of(pod), owner_ref)
            if owner is not None:
                self.expectations.creation_observed(object_key(owner))
                self._enqueue(queue, owner)
            return
        for replica_set in self.replica_sets_for_orphan(pod):
            self._enqueue(queue, replica_set)

    def on_pod_update(self, old: Obj, current: Obj, queue: Queue) -> None:
        if resource_version_of(old) == resource_version_of(current):
            return
        labels_changed = labels_of(old) != labels_of(current)
        if is_being_deleted(current):
            self.on_pod_delete(current, queue)
            if labels_changed:
                self.on_pod_delete(old, queue)
            return
        if not labels_changed and pod_facts(old) == self.pod_facts.facts(current):
            # Nothing a sync reads for claim or status changed (e.g. the pod was bound to a
            # node): the last sync's outcome stands, so skip the re-sync upstream would run.
            return
        current_ref, old_ref = controller_of(current), controller_of(old)
        ref_changed = current_ref != old_ref
        if ref_changed and old_ref is not None:
            previous = self.resolve_controller(namespace_of(old), old_ref)
            if previous is not None:
                self._enqueue(queue, previous)
        if current_ref is not None:
            owner = self.resolve_controller(namespace_of(current), current_ref)
            if owner is not None:
                self._enqueue(queue, owner)
                min_ready = _int(section(owner, "spec").get("minReadySeconds"), 0)
                recheck = became_ready_recheck_after(old, current, min_ready)
                if recheck is not None:
                    self._enqueue(queue, owner, recheck.total_seconds())
            return
        if labels_changed or ref_changed:
            for replica_set in self.replica_sets_for_orphan(current):
                self._enqueue(queue, replica_set)

    def on_pod_removed(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        """The informer's delete event: forget the pod's cached facts, then :meth:`on_pod_delete`."""
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if pod is not None:
            self.pod_facts.forget(pod)
            self.ranking_facts.forget(pod)
        self.on_pod_delete(obj, queue)

    def on_pod_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if pod is None:
            return
        owner = self.resolve_controller(namespace_of(pod), controller_of(pod))
        if owner is None:
            return
        self.expectations.deletion_observed_of(object_key(owner), object_key(pod))
        self._enqueue(queue, owner)

    def on_replica_set_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        replica_set = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else object_key(obj)
        self.expectations.delete_expectations(key)
        if replica_set is not None:
            self._selectors.pop(uid_of(replica_set), None)
            self._tallies.pop(uid_of(replica_set), None)
            selector = _matching_selector(replica_set)
            if selector is not None:
                self.node_counts.forget(namespace_of(replica_set), selector)
            self._enqueue(queue, replica_set)

    # -- sync -----------------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result | None:
        """Sync one ReplicaSet; a write conflict is retried with back-off (no traceback logged)."""
        try:
            return await self.sync(request)
        except Exception as exc:
            if not is_conflict(exc):
                raise
            log.debug("replica set %s: conflict, retrying: %s", request, exc)
            return Result(requeue=True)

    async def sync(self, request: Request) -> Result | None:
        key = request.key
        cached = self.replica_sets.indexer.get(key)
        if cached is None:
            self.expectations.delete_expectations(key)
            return None
        replica_set: Obj = deep_copy(cached)
        try:
            selector = self._selector(replica_set)
        except InvalidObjectError as exc:
            self.recorder.event(replica_set, WARNING, INVALID_SELECTOR, str(exc), kind=REPLICA_SET_KIND,
                                api_version=REPLICA_SET_API_VERSION)
            raise
        needs_sync = self.expectations.satisfied(key)
        uid = uid_of(replica_set)
        facts = self.pod_facts.facts
        namespace = request.namespace
        tally = self._tally(replica_set, selector)
        indexer = self.pods.indexer
        if POD_CONTROLLER_INDEX in indexer.indexer_names():
            tally.update(indexer.epoch, indexer.index_key_view(POD_CONTROLLER_INDEX, f"{namespace}/{uid}"),
                         indexer.get)
            orphans = indexer.by_index(POD_CONTROLLER_INDEX, f"{namespace}/")
        else:
            orphans = indexer.by_namespace(namespace)
        # Active pods we control that match are claimed as they are (the claim rules' first
        # case); only the rest, to adopt or release, go through the claim with its writes.
        to_claim = [pod for pod in (indexer.get(k) for k in tally.to_claim_keys()) if pod is not None]
        orphan_terminating = 0
        for pod in orphans:
            pod_facts_ = facts(pod)
            if pod_facts_.active:
                to_claim.append(pod)
            elif pod_facts_.terminating and pod_facts_.controller_uid == uid:
                orphan_terminating += 1
        claimed_now = await self._claim_pods(replica_set, selector, to_claim) if to_claim else []
        claimed_now_facts = [facts(pod) for pod in claimed_now]

        def claimed() -> list[Obj]:
            as_is = [pod for pod in (indexer.get(k) for k in tally.claimed_keys()) if pod is not None]
            return [*as_is, *claimed_now]

        def counts(current: Obj, now: datetime) -> ReplicaCounts:
            extra = self._count(current, claimed_now_facts, orphan_terminating, now)
            found = tally.counts(_int(section(current, "spec").get("minReadySeconds"), 0), now, (extra,))
            return found if self.terminating_replicas else dataclasses.replace(found, terminating=None)

        manage_error: BaseException | None = None
        if needs_sync and not is_being_deleted(replica_set):
            manage_error = await self._manage_replicas(replica_set, selector, tally.active + len(claimed_now),
                                                       claimed)
        updated = await self._update_status(replica_set, counts, manage_error)
        if manage_error is not None:
            raise manage_error
        recheck = availability_recheck_after(updated, False)
        return Result(requeue_after=recheck.total_seconds()) if recheck is not None else None

    def _tally(self, replica_set: Obj, selector: Selector) -> OwnedPodTally:
        """The ReplicaSet's :class:`OwnedPodTally`, new when its UID, selector or template labels changed."""
        uid = uid_of(replica_set)
        labels = template_labels(replica_set)
        tally = self._tallies.get(uid)
        if tally is None or not tally.matches_identity(uid, selector, labels):
            tally = OwnedPodTally(uid, selector, labels, self.pod_facts)
            self._tallies[uid] = tally
        return tally

    def _selector(self, replica_set: Mapping[str, Any]) -> Selector:
        """:func:`replica_set_selector`, parsed once per ReplicaSet and selector value: the one
        object per selector also lets :class:`PodFactsCache` remember matches by identity."""
        raw = section(replica_set, "spec").get("selector")
        uid = uid_of(replica_set)
        cached = self._selectors.get(uid)
        if cached is not None and cached[0] == raw:
            return cached[1]
        selector = replica_set_selector(replica_set)
        self._selectors[uid] = (deep_copy(raw) if isinstance(raw, dict) else raw, selector)
        return selector

    async def _claim_pods(self, replica_set: Obj, selector: Selector, candidates: Sequence[Obj]) -> list[Obj]:
        manager = controller_ref_manager(self.client, replica_set, REPLICA_SETS, PODS,
                                         lambda pod: selector.matches(labels_of(pod)))
        return await manager.claim(candidates)

    async def _manage_replicas(self, replica_set: Obj, selector: Selector, active: int,
                               active_pods: Callable[[], list[Obj]]) -> BaseException | None:
        """Create or delete pods toward ``spec.replicas`` (``active`` claimed now, listed by
        ``active_pods`` when some must go); returns the first error, if any."""
        key = object_key(replica_set)
        difference = replicas_to_manage(active, desired_replicas(replica_set), self.burst_replicas)
        if difference > 0:
            return await self._create_pods(replica_set, key, difference, selector)
        if difference < 0:
            return await self._delete_pods(replica_set, key, active_pods(), -difference)
        return None

    async def _create_pods(self, replica_set: Obj, key: str, count: int, selector: Selector) -> BaseException | None:
        try:
            pod_from_template(replica_set, selector)
        except PodTemplateError as exc:
            # Every pod would be lost to this ReplicaSet at once (kubeloop.controllers.pod_guard):
            # create none, say why once per sync, and retry with back-off.
            self._event(replica_set, WARNING, FAILED_CREATE, f"Error creating: {exc}")
            return exc
        self.expectations.expect_creations(key, count)
        namespace = namespace_of(replica_set)

        async def create_one() -> None:
            try:
                created = await self.client.create(PODS, pod_from_template(replica_set, selector),
                                                   namespace=namespace)
            except Exception as exc:
                if is_namespace_terminating(exc):
                    # Nothing to create into; the watch will never report it.
                    self.expectations.creation_observed(key)
                    return
                self._event(replica_set, WARNING, FAILED_CREATE, f"Error creating: {exc}")
                raise
            self._event(replica_set, NORMAL, SUCCESSFUL_CREATE, f"Created pod: {name_of(created)}")

        successes, error = await slow_start_batch(count, create_one)
        not_observed = count - successes
        if not_observed > 0:
            # Failed or never attempted creations will not show up in the watch.
            self.expectations.lower(key, not_observed, 0)
        return error

    def _related_pods_per_node(self, replica_set: Obj) -> dict[str, int]:
        """Active pods per node among the pods of every ReplicaSet sharing this one's controller
        (siblings under one Deployment): the namespace's pods matching any sibling's selector,
        as upstream lists them: the live tallies of :mod:`.nodecounts`, else a pass over the
        namespace (:mod:`.related`)."""
        owner = controller_of(replica_set)
        if owner is None:
            return {}
        namespace = namespace_of(replica_set)
        selectors: list[Selector] = []
        for sibling in self.replica_sets.indexer.by_namespace(namespace):
            sibling_owner = controller_of(sibling)
            if sibling_owner is None or sibling_owner.get("uid") != owner.get("uid"):
                continue
            selector = _matching_selector(sibling)
            if selector is not None:
                selectors.append(selector)
        indexer = self.pods.indexer
        if all(disjoint(a, b) for i, a in enumerate(selectors) for b in selectors[i + 1:]):
            # Each pod matches one sibling at most: the sum of the live per-selector counts.
            total: dict[str, int] = {}
            for selector in selectors:
                counts = self.node_counts.per_node(
                    namespace, selector, indexer.epoch,
                    lambda: ((k, p) for k in indexer.index_key_view(NAMESPACE_INDEX, namespace)
                             if (p := indexer.get(k)) is not None))
                if counts is None:
                    break
                for node, n in counts.items():
                    total[node] = total.get(node, 0) + n
            else:
                return total
        return related_pods_per_node(indexer, namespace, selectors, self.pod_facts.facts)

    async def _delete_pods(
        self, replica_set: Obj, key: str, active_pods: list[Obj], count: int
    ) -> BaseException | None:
        per_node = self._related_pods_per_node(replica_set) if count < len(active_pods) else {}
        ranks = [per_node.get(self.ranking_facts.facts(pod).node, 0) for pod in active_pods]
        doomed = select_for_deletion(active_pods, ranks, count, self.wall(), cache=self.ranking_facts)
        self.expectations.expect_deletions_of(key, [object_key(pod) for pod in doomed])
        namespace = namespace_of(replica_set)

        async def delete_one(pod: Mapping[str, Any]) -> BaseException | None:
            try:
                await self.client.delete(PODS, name_of(pod), namespace=namespace)
            except Exception as exc:
                if is_not_found(exc):
                    return None
                self.expectations.deletion_observed_of(key, object_key(pod))
                self._event(replica_set, WARNING, FAILED_DELETE, f"Error deleting: {exc}")
                return exc
            self._event(replica_set, NORMAL, SUCCESSFUL_DELETE, f"Deleted pod: {name_of(pod)}")
            return None

        errors = await asyncio.gather(*(delete_one(pod) for pod in doomed))
        return next((error for error in errors if error is not None), None)

    @staticmethod
    def _count(replica_set: Mapping[str, Any], active_pods: Sequence[PodFacts], terminating: int,
               now: datetime) -> ReplicaCounts:
        """The status counts of the claimed active pods, in one pass over their facts."""
        min_ready = _int(section(replica_set, "spec").get("minReadySeconds"), 0)
        labels = template_labels(replica_set)
        fully_labeled = ready = available = 0
        for pod_facts_ in active_pods:
            if pod_facts_.fully_labeled(labels):
                fully_labeled += 1
            if pod_facts_.ready:
                ready += 1
                if pod_facts_.available(min_ready, now):
                    available += 1
        return ReplicaCounts(len(active_pods), fully_labeled, ready, available, terminating)

    async def _update_status(
        self, replica_set: Obj, counts: Callable[[Obj, datetime], ReplicaCounts], manage_error: BaseException | None
    ) -> Obj:
        """Write the status if it changed (retrying once on a conflict); returns the ReplicaSet as stored."""
        message = str(manage_error) if manage_error is not None else None
        cached: Obj | None = replica_set

        async def attempt() -> Obj:
            nonlocal cached
            current: Obj = cached if cached is not None else await self.client.get(
                REPLICA_SETS, name_of(replica_set), namespace=namespace_of(replica_set))
            cached = None  # a retry starts from a fresh read
            now = self.wall()
            new_status = status_from_counts(current, counts(current, now), message, now)
            if not status_needs_update(current, new_status):
                return current
            body = {**current, "status": status_to_write(current, new_status)}
            written: Obj = await self.client.update_status(REPLICA_SETS, body, namespace=namespace_of(current))
            return written

        return await retry_on_conflict(STATUS_UPDATE_RETRY, attempt)

    def _event(self, replica_set: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        self.recorder.event(replica_set, type_, reason, message, kind=REPLICA_SET_KIND,
                            api_version=REPLICA_SET_API_VERSION)


async def add_replica_set_controller(
    manager: Manager, *, workers: int = 5, wall: Callable[[], datetime] = now,
    feature_gates: Mapping[str, bool] | None = None,
) -> ReplicaSetController:
    """Build the ReplicaSet controller on ``manager``'s shared informers and register it
    (``feature_gates``: upstream names, see :data:`kubeloop.controllers.kubegates.KUBE_GATES`)."""

    replica_sets = await manager.factory.informer_for(REPLICA_SETS)
    pods = await manager.factory.informer_for(PODS, indexers={POD_CONTROLLER_INDEX: pod_controller_index})
    controller = ReplicaSetController(
        manager.client, replica_sets, pods, manager.recorder(COMPONENT), clock=manager.clock, wall=wall,
        terminating_replicas=kube_gate(feature_gates, "DeploymentReplicaSetTerminatingReplicas"),
    )
    controller.attach_cache_listeners()
    await (
        manager.controller(NAME)
        .for_(REPLICA_SETS)
        .watches(REPLICA_SETS, controller.replica_set_handler())
        .watches(PODS, controller.pod_handler())
        .with_options(max_concurrent_reconciles=workers)
        .complete(controller.reconcile)
    )
    return controller
