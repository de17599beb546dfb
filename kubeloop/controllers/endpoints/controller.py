"""Wiring of the Endpoints controller (kube-controller-manager's ``endpoint``).

Service events enqueue the Service; pod events enqueue every Service of the pod's namespace
whose selector matches the pod (before or after the change: the runtime maps both sides of an
update). A deleted Endpoints object enqueues the Service of the same name, so it is put back,
and so do the Endpoints listed at start (upstream's ``checkLeftoverEndpoints``: those whose
Service went while the controller was down are deleted); Endpoints created or changed by others
are left alone, as upstream leaves them. A sync reads the Service, its pods and its Endpoints from the
caches, asks :func:`~.plan.plan_endpoints` for the object to write and creates or updates it;
a Service that is gone (or no longer managed: no selector, ExternalName) has its Endpoints
deleted only when it is gone, as upstream does.
"""

from __future__ import annotations

import logging
from typing import Any

from kubeloop.client import ENDPOINTS, PODS, SERVICES, is_already_exists, is_conflict, is_not_found
from kubeloop.controllers.endpoints.plan import plan_endpoints
from kubeloop.controllers.endpointutil.pods import service_selector
from kubeloop.controllers.endpointutil.services import pod_mapper, pods_of
from kubeloop.controllers.endpointutil.triggertime import TriggerTimeTracker
from kubeloop.runtime.collaborators import CachedObjects, ObjectClient
from kubeloop.runtime.controller import Result
from kubeloop.runtime.handlers import Funcs, Queue, Request
from kubeloop.runtime.informers import DeletedFinalStateUnknown
from kubeloop.runtime.manager import Manager

log = logging.getLogger(__name__)

NAME = "endpoint"
Obj = dict[str, Any]


LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"


def endpoints_handler() -> Funcs:
    """Enqueue the Service of an Endpoints object that was deleted or was there at start."""

    def on_add(obj: Obj, is_in_initial_list: bool, queue: Queue) -> None:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if is_in_initial_list and LEADER_ANNOTATION not in annotations:
            queue.add(Request.for_object(obj))

    def on_delete(obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        actual = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if actual is not None:
            queue.add(Request.for_object(actual))

    return Funcs(create=on_add, delete=on_delete)


class EndpointsController:
    """The reconcile function of the Endpoints controller over shared informers."""

    def __init__(self, client: ObjectClient, services: CachedObjects, pods: CachedObjects,
                 endpoints: CachedObjects) -> None:
        self.client = client
        self.services = services
        self.pods = pods
        self.endpoints = endpoints
        self.triggers = TriggerTimeTracker()

    async def reconcile(self, request: Request) -> Result | None:
        service = self.services.indexer.get_by_name(request.namespace, request.name)
        if service is None:
            self.triggers.forget(request.key)
            try:
                await self.client.delete(ENDPOINTS, request.name, namespace=request.namespace)
            except Exception as exc:
                if not is_not_found(exc):
                    raise
            return None
        selector = service_selector(service)
        if selector is None:
            return None
        pods = pods_of(self.pods, service, selector)
        trigger = self.triggers.compute(request.key, service, pods)
        current = self.endpoints.indexer.get_by_name(request.namespace, request.name)
        wanted = plan_endpoints(service, pods, current, trigger)
        if wanted is None:
            return None
        try:
            if current is None:
                await self.client.create(ENDPOINTS, wanted, namespace=request.namespace)
            else:
                await self.client.update(ENDPOINTS, wanted, namespace=request.namespace)
        except Exception as exc:
            if is_conflict(exc) or is_already_exists(exc) or is_not_found(exc):
                # The cache is behind the store: forget the trigger times seen and retry.
                self.triggers.forget(request.key)
                return Result(requeue=True)
            raise
        return None


async def add_endpoints_controller(manager: Manager, *, workers: int = 5) -> EndpointsController:
    """Build the Endpoints controller on ``manager``'s shared informers and register it."""
    services = await manager.factory.informer_for(SERVICES)
    pods = await manager.factory.informer_for(PODS)
    endpoints = await manager.factory.informer_for(ENDPOINTS)
    controller = EndpointsController(manager.client, services, pods, endpoints)
    await (
        manager.controller(NAME)
        .for_(SERVICES)
        .watches(PODS, pod_mapper(services))
        .watches(ENDPOINTS, endpoints_handler())
        .with_options(max_concurrent_reconciles=workers)
        .complete(controller.reconcile)
    )
    return controller
