"""The garbage collector: deletes dependents of deleted owners, for every kind the server has.

At start, and every ``rediscovery_period`` seconds after (for new CRDs), it reads discovery
and watches, through the manager's shared informer factory, every resource that can be
listed, watched and deleted (custom resources included; Events are left out, as upstream
does). Informer events keep a :class:`~.graph.DependencyGraph` current and
enqueue work, keyed by UID, on a rate-limited queue served by ``workers`` tasks:

- ``delete`` an object: if it is deleting its dependents (foreground), drop its
  ``foregroundDeletion`` finalizer once no dependent blocks it; otherwise look at its owners
  (the graph, or a live GET for owners not observed) and strip dangling references, or delete
  it when no owner is left (see :func:`~.graph.decide_dependent`);
- ``orphan`` an owner: remove its reference from every dependent, then its ``orphan``
  finalizer.

Writes are full updates of freshly read objects (optimistic concurrency); conflicts and other
errors are retried with the queue's back-off. Owners found absent are remembered by UID.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from kubeloop.api.meta import uid_of
from kubeloop.client import ApiClient, Resource, is_conflict, is_not_found
from kubeloop.controllers.garbagecollector.graph import (
    FOREGROUND_FINALIZER,
    ORPHAN_FINALIZER,
    DependencyGraph,
    Identity,
    Node,
    OwnerState,
    blocking_dependents,
    classify_owners,
    decide_dependent,
    node_from_object,
    with_unblocked_owner_references,
    without_finalizer,
    without_owner_references,
)
from kubeloop.runtime.informers import DeletedFinalStateUnknown, EventHandlerFuncs, SharedIndexInformer
from kubeloop.runtime.informers.factory import SharedInformerFactory
from kubeloop.runtime.manager import Manager
from kubeloop.runtime.workqueue import MetricsProvider, RateLimitingQueue, default_controller_rate_limiter

log = logging.getLogger(__name__)

Obj = dict[str, Any]
WorkItem = tuple[str, str]

DELETE = "delete"
ORPHAN = "orphan"
REQUIRED_VERBS = frozenset({"list", "watch", "delete"})
IGNORED_RESOURCES = frozenset({("", "events"), ("events.k8s.io", "events")})


class UnknownKindError(LookupError):
    """An owner reference names a kind the server's discovery does not list."""


def collectable_resources(resources: list[Resource]) -> list[Resource]:
    """One entry per (group, resource), preferred version first as discovery orders them."""
    seen: set[tuple[str, str]] = set()
    chosen = []
    for resource in resources:
        key = (resource.group, resource.plural)
        if key in seen or key in IGNORED_RESOURCES or not resource.verbs >= REQUIRED_VERBS:
            continue
        seen.add(key)
        chosen.append(resource)
    return chosen


class GarbageCollector:
    """The dependency graph, its informer handlers and the workers acting on it."""

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        workers: int = 10,
        rediscovery_period: float = 30.0,
        queue_metrics: MetricsProvider | None = None,
    ) -> None:
        self.client = client
        self.factory = factory
        self.workers = workers
        self.rediscovery_period = rediscovery_period
        self.graph = DependencyGraph()
        self.queue: RateLimitingQueue[WorkItem] = RateLimitingQueue(
            default_controller_rate_limiter(), "garbage_collector", metrics_provider=queue_metrics
        )
        self.absent_owners: set[str] = set()
        self._by_kind: dict[tuple[str, str], Resource] = {}
        self._readable: dict[tuple[str, str], Resource] = {}

    # -- start ----------------------------------------------------------------------------
    async def watch_resources(self) -> list[SharedIndexInformer]:
        """Discover the collectable resources and attach the graph's handlers to the informers
        of those not watched yet; returns the new informers."""
        added = []
        served = await self.client.discovery.server_resources()
        for resource in served:
            if "get" in resource.verbs:
                self._readable.setdefault((resource.group, resource.kind), resource)
        for resource in collectable_resources(served):
            key = (resource.group, resource.kind)
            if key in self._by_kind:
                continue
            self._by_kind[key] = resource
            informer = await self.factory.informer_for(resource)
            informer.add_event_handler(self._handler(resource))
            added.append(informer)
        return added

    async def _sync_informers(self, informers: list[SharedIndexInformer]) -> None:
        await self.factory.start()
        await asyncio.gather(*(informer.wait_for_sync() for informer in informers))

    async def _rediscover(self) -> None:
        """Pick up resources added later (CRDs) every :attr:`rediscovery_period` seconds."""
        while True:
            await asyncio.sleep(self.rediscovery_period)
            try:
                self.client.discovery.invalidate()
                await self._sync_informers(await self.watch_resources())
            except Exception as exc:
                log.warning("garbage collector: rediscovery failed: %s", exc)

    async def run(self) -> None:
        """Watch, wait for the caches, then work until cancelled."""
        await self._sync_informers(await self.watch_resources())
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(self._worker()) for _ in range(self.workers)]
        tasks.append(loop.create_task(self._rediscover()))
        try:
            await asyncio.gather(*tasks)
        finally:
            self.queue.shutdown()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _handler(self, resource: Resource) -> EventHandlerFuncs:
        def add(obj: Obj, is_in_initial_list: bool = False) -> None:
            self.observe(obj, resource)

        def update(old: Obj, new: Obj) -> None:
            self.observe(new, resource)

        def delete(obj: Obj | DeletedFinalStateUnknown) -> None:
            gone = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
            if gone is not None:
                self.forget(uid_of(gone))

        return EventHandlerFuncs(add=add, update=update, delete=delete)

    # -- graph events ---------------------------------------------------------------------
    def observe(self, obj: Mapping[str, Any], resource: Resource) -> None:
        """An object was added or changed: update the graph and enqueue what it affects."""
        node = node_from_object(obj, resource.api_version, resource.kind)
        if not node.uid:
            return
        self.absent_owners.discard(node.uid)
        released = self.graph.upsert(node)
        # An owner deleting its dependents may be unblocked by any change of one of them
        # (reference removed, blockOwnerDeletion turned off).
        for owner_uid in released | {str(ref.get("uid")) for ref in node.owners}:
            self._enqueue_if_deleting_dependents(owner_uid)
        if node.orphaning:
            self.queue.add((ORPHAN, node.uid))
        if node.deleting_dependents:
            self.queue.add((DELETE, node.uid))
            for dependent in self.graph.dependents_of(node.uid):
                self.queue.add((DELETE, dependent.uid))
        if any(self._owner_unknown(ref) for ref in node.owners):
            self.queue.add((DELETE, node.uid))

    def forget(self, uid: str) -> None:
        """An object is gone: its dependents may have lost their last owner."""
        node = self.graph.remove(uid)
        self.absent_owners.add(uid)
        for dependent in self.graph.dependents_of(uid):
            self.queue.add((DELETE, dependent.uid))
        if node is not None:
            for ref in node.owners:
                self._enqueue_if_deleting_dependents(str(ref.get("uid")))

    def _owner_unknown(self, ref: Mapping[str, Any]) -> bool:
        uid = str(ref.get("uid"))
        owner = self.graph.get(uid)
        return owner is None or owner.deleting_dependents or uid in self.absent_owners

    def _enqueue_if_deleting_dependents(self, owner_uid: str) -> None:
        owner = self.graph.get(owner_uid)
        if owner is not None and owner.deleting_dependents:
            self.queue.add((DELETE, owner_uid))

    # -- work -----------------------------------------------------------------------------
    async def _worker(self) -> None:
        while True:
            got, shutdown = await self.queue.get()
            if shutdown or got is None:
                return
            item: WorkItem = got
            try:
                if item[0] == ORPHAN:
                    await self.orphan_dependents(item[1])
                else:
                    await self.attempt_to_delete(item[1])
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                level = logging.DEBUG if is_conflict(exc) else logging.WARNING
                log.log(level, "garbage collector: %s %s failed, retrying: %s", item[0], item[1], exc)
                self.queue.add_rate_limited(item)
            else:
                self.queue.forget(item)
            finally:
                self.queue.done(item)

    def resource_for(self, identity: Identity) -> Resource | None:
        return self._by_kind.get((identity.group, identity.kind))

    async def read(self, identity: Identity) -> Obj | None:
        """The live object, ``None`` if it does not exist.

        Raises :class:`UnknownKindError` for a kind discovery does not (yet) list: that proves
        nothing about the object, so the work item is retried rather than acted on.
        """
        resource = self._readable.get((identity.group, identity.kind))
        if resource is None:
            raise UnknownKindError(f"no resource serves {identity.api_version} {identity.kind}")
        try:
            obj: Obj = await self.client.get(resource, identity.name, namespace=identity.namespace or None)
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise
        return obj

    async def write(self, identity: Identity, obj: Obj) -> None:
        resource = self.resource_for(identity)
        if resource is None:
            return
        try:
            await self.client.update(resource, obj, namespace=identity.namespace or None)
        except Exception as exc:
            if not is_not_found(exc):
                raise

    async def owner_state(self, dependent: Node, ref: Mapping[str, Any]) -> OwnerState:
        uid = str(ref.get("uid"))
        if uid in self.absent_owners:
            return OwnerState.ABSENT
        owner = self.graph.get(uid)
        if owner is None:
            identity = Identity(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""),
                                dependent.identity.namespace, str(ref.get("name") or ""))
            resource = self._readable.get((identity.group, identity.kind))
            if resource is not None and not resource.namespaced:
                identity = Identity(identity.api_version, identity.kind, "", identity.name)
            live = await self.read(identity)
            if live is None or uid_of(live) != uid:
                self.absent_owners.add(uid)
                return OwnerState.ABSENT
            owner = node_from_object(live, identity.api_version, identity.kind)
        return OwnerState.DELETING_DEPENDENTS if owner.deleting_dependents else OwnerState.EXISTS

    async def attempt_to_delete(self, uid: str) -> None:
        node = self.graph.get(uid)
        if node is None:
            return
        live = await self.read(node.identity)
        if live is None or uid_of(live) != uid:
            return
        node = node_from_object(live, node.identity.api_version, node.identity.kind)
        if node.deleting_dependents:
            await self._finish_foreground_deletion(node, live)
            return
        if node.being_deleted or not node.owners:
            return
        states = {str(ref.get("uid")): await self.owner_state(node, ref) for ref in node.owners}
        dependents = self.graph.dependents_of(uid)
        action = decide_dependent(node, classify_owners(node.owners, states), bool(dependents),
                                  any(d.deleting_dependents for d in dependents))
        if action.remove_owner_uids:
            updated = without_owner_references(live, action.remove_owner_uids)
            if updated is not None:
                await self.write(node.identity, updated)
        elif action.delete_policy is not None:
            if action.unblock_owners:
                unblocked = with_unblocked_owner_references(live)
                if unblocked is not None:
                    await self.write(node.identity, unblocked)
            await self._delete(node, action.delete_policy)

    async def _delete(self, node: Node, policy: str) -> None:
        resource = self.resource_for(node.identity)
        if resource is None:
            return
        log.info("garbage collector: deleting %s %s/%s (%s)", node.identity.kind, node.identity.namespace,
                 node.identity.name, policy)
        try:
            await self.client.delete(resource, node.identity.name, namespace=node.identity.namespace or None,
                                     propagation_policy=policy, preconditions={"uid": node.uid})
        except Exception as exc:
            if not is_not_found(exc):
                raise

    async def _finish_foreground_deletion(self, owner: Node, live: Obj) -> None:
        """Remove ``foregroundDeletion`` once nothing blocks; until then make sure dependents go."""
        blocking = blocking_dependents(self.graph, owner.uid)
        if blocking:
            for dependent in self.graph.dependents_of(owner.uid):
                if not dependent.being_deleted:
                    self.queue.add((DELETE, dependent.uid))
            return
        updated = without_finalizer(live, FOREGROUND_FINALIZER)
        if updated is not None:
            await self.write(owner.identity, updated)

    async def orphan_dependents(self, uid: str) -> None:
        node = self.graph.get(uid)
        if node is None:
            return
        for dependent in self.graph.dependents_of(uid):
            live = await self.read(dependent.identity)
            if live is None or uid_of(live) != dependent.uid:
                continue
            updated = without_owner_references(live, [uid])
            if updated is not None:
                await self.write(dependent.identity, updated)
        owner = await self.read(node.identity)
        if owner is None or uid_of(owner) != uid:
            return
        updated_owner = without_finalizer(owner, ORPHAN_FINALIZER)
        if updated_owner is not None:
            await self.write(node.identity, updated_owner)


async def add_garbage_collector(manager: Manager, *, workers: int = 10) -> GarbageCollector:
    """Run a garbage collector on ``manager``'s shared factory (while leading, if electing)."""
    collector = GarbageCollector(manager.client, manager.factory, workers=workers, queue_metrics=manager.queue_metrics)
    manager.add_runnable(collector.run, needs_leader=True)
    return collector
