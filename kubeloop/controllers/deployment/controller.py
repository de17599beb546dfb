"""The Deployment controller's wiring: informers, event handlers, retries.

Handlers (upstream ``pkg/controller/deployment/deployment_controller.go``, ``addReplicaSet``,
``updateReplicaSet``, ``deletePod`` and their siblings) only decide which Deployments to enqueue:

- Deployment events enqueue the Deployment;
- ReplicaSet events enqueue the owning Deployment, both owners when the controller reference
  changed, and for an orphan every Deployment whose selector matches (one may adopt it);
- a pod deletion enqueues a Recreate Deployment once none of its pods is left, since a
  Recreate rollout waits for exactly that; other pod events are not watched (the ReplicaSet
  status, which the ReplicaSet controller keeps current, drives the Deployment).

:meth:`DeploymentController.reconcile` reads the Deployment from the cache and runs a
:class:`~kubeloop.controllers.deployment.sync.DeploymentSync`. A failing sync is retried with
the queue's back-off up to :data:`MAX_RETRIES` times, then dropped until the next event, as
upstream does; a write conflict is retried the same way without logging a traceback. A
Deployment the controller cannot act on (malformed strategy or selector) also gets a Warning
Event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from kubeloop.api.errorstatus import is_namespace_terminating
from kubeloop.api.intstr import IntOrPercentError
from kubeloop.api.meta import controller_of, name_of, namespace_of, now, uid_of
from kubeloop.client import DEPLOYMENTS, PODS, REPLICA_SETS, is_conflict
from kubeloop.controllers.deployment import events
from kubeloop.controllers.deployment.objects import RECREATE, strategy_type
from kubeloop.controllers.deployment.selection import (
    deployments_for_replica_set_added,
    deployments_for_replica_set_deleted,
    deployments_for_replica_set_updated,
    pods_by_replica_set_uid,
    recreate_needs_sync_after_pod_deletion,
    resolve_controller,
)
from kubeloop.controllers.deployment.strategy import UnsupportedStrategyError
from kubeloop.controllers.deployment.sync import DEPLOYMENT_KIND, DeploymentSync, InvalidDeploymentError
from kubeloop.runtime.collaborators import CachedObjects, ObjectClient, Recorder, RetryQueue
from kubeloop.runtime.controller import Result
from kubeloop.runtime.handlers import Funcs, Queue, Request
from kubeloop.runtime.informers import DeletedFinalStateUnknown
from kubeloop.runtime.manager import Manager

log = logging.getLogger(__name__)

Obj = dict[str, Any]

NAME = "deployment"
COMPONENT = "deployment-controller"
MAX_RETRIES = 15
FAILED_SYNC = "FailedSync"

# Errors that come from the object itself, not from the API: retrying cannot fix them until
# the user does, so they are worth an Event.
INVALID_OBJECT_ERRORS: tuple[type[Exception], ...] = (
    InvalidDeploymentError,
    UnsupportedStrategyError,
    IntOrPercentError,
)


class DeploymentController:
    """Event handlers and the reconcile function of the Deployment controller."""

    def __init__(
        self,
        client: ObjectClient,
        deployments: CachedObjects,
        replica_sets: CachedObjects,
        pods: CachedObjects,
        recorder: Recorder,
        *,
        wall: Callable[[], datetime] = now,
    ) -> None:
        self.deployments = deployments
        self.replica_sets = replica_sets
        self.pods = pods
        self.recorder = recorder
        self.syncer = DeploymentSync(client, deployments, replica_sets, pods, recorder, wall)
        self._queue: RetryQueue | None = None

    # -- wiring ---------------------------------------------------------------------------
    def bind(self, queue: RetryQueue) -> None:
        """Hand over the work queue, whose retry counts :meth:`reconcile` reads."""
        self._queue = queue

    def replica_set_handler(self) -> Funcs:
        return Funcs(create=self.on_replica_set_add, update=self.on_replica_set_update,
                     delete=self.on_replica_set_delete)

    def pod_handler(self) -> Funcs:
        return Funcs(delete=self.on_pod_delete)

    @staticmethod
    def _enqueue_all(queue: Queue, deployments: Iterable[Mapping[str, Any]]) -> None:
        for deployment in deployments:
            queue.add(Request(namespace_of(deployment), name_of(deployment)))

    def _namespace_deployments(self, obj: Mapping[str, Any]) -> list[Obj]:
        return self.deployments.indexer.by_namespace(namespace_of(obj))

    # -- handlers -------------------------------------------------------------------------
    def on_replica_set_add(self, replica_set: Obj, is_in_initial_list: bool, queue: Queue) -> None:
        deployments = deployments_for_replica_set_added(replica_set, self._namespace_deployments(replica_set))
        self._enqueue_all(queue, deployments)

    def on_replica_set_update(self, old: Obj, current: Obj, queue: Queue) -> None:
        deployments = self._namespace_deployments(current)
        self._enqueue_all(queue, deployments_for_replica_set_updated(old, current, deployments))

    def on_replica_set_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        replica_set = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if replica_set is not None:
            deployments = self._namespace_deployments(replica_set)
            self._enqueue_all(queue, deployments_for_replica_set_deleted(replica_set, deployments))

    def on_pod_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if pod is None:
            return
        namespace = namespace_of(pod)
        reference = controller_of(pod)
        if reference is None or reference.get("kind") != REPLICA_SETS.kind:
            return
        replica_set = self.replica_sets.indexer.get_by_name(namespace, str(reference.get("name") or ""))
        if replica_set is None or uid_of(replica_set) != reference.get("uid"):
            return
        deployment = resolve_controller(namespace, controller_of(replica_set), self._namespace_deployments(pod))
        if deployment is None or strategy_type(deployment) != RECREATE:
            # Only a Recreate rollout waits for pods to go; skip grouping the namespace's pods.
            return
        owned = [
            rs for rs in self.replica_sets.indexer.by_namespace(namespace)
            if (controller_of(rs) or {}).get("uid") == uid_of(deployment)
        ]
        pod_map = pods_by_replica_set_uid(deployment, owned, self.pods.indexer.by_namespace(namespace))
        if recreate_needs_sync_after_pod_deletion(deployment, pod_map):
            self._enqueue_all(queue, [deployment])

    # -- reconcile ------------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result | None:
        deployment = self.deployments.indexer.get(request.key)
        if deployment is None:
            # Deleted: the garbage collector takes care of its ReplicaSets.
            return None
        try:
            return await self.syncer.sync(deployment)
        except Exception as exc:
            if is_namespace_terminating(exc):
                return None
            if is_conflict(exc) and (self._queue is None or self._queue.num_requeues(request) < MAX_RETRIES):
                # A write raced with another (usually our own earlier one, not yet in the
                # cache): try again from the cache, with back-off.
                log.debug("deployment %s: conflict, retrying: %s", request, exc)
                return Result(requeue=True)
            if isinstance(exc, INVALID_OBJECT_ERRORS):
                self.syncer.event(deployment, events.Event(events.WARNING, FAILED_SYNC, str(exc)))
            if self._queue is not None and self._queue.num_requeues(request) >= MAX_RETRIES:
                log.warning("dropping deployment %s out of the queue after %d retries: %s", request,
                            MAX_RETRIES, exc)
                return None
            raise


async def add_deployment_controller(
    manager: Manager, *, workers: int = 5, wall: Callable[[], datetime] = now
) -> DeploymentController:
    """Build the Deployment controller on ``manager``'s shared informers and register it."""
    deployments = await manager.factory.informer_for(DEPLOYMENTS)
    replica_sets = await manager.factory.informer_for(REPLICA_SETS)
    pods = await manager.factory.informer_for(PODS)
    controller = DeploymentController(
        manager.client, deployments, replica_sets, pods, manager.recorder(COMPONENT), wall=wall
    )
    runtime_controller = await (
        manager.controller(NAME)
        .for_(DEPLOYMENTS)
        .watches(REPLICA_SETS, controller.replica_set_handler())
        .watches(PODS, controller.pod_handler())
        .with_options(max_concurrent_reconciles=workers)
        .complete(controller.reconcile)
    )
    controller.bind(runtime_controller.queue)
    return controller


__all__ = ["DEPLOYMENT_KIND", "MAX_RETRIES", "DeploymentController", "add_deployment_controller"]
