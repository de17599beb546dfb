"""Wiring of the EndpointSlice controller (kube-controller-manager's ``endpointslice``).

Service events enqueue the Service; pod events enqueue the Services selecting the pod (both
sides of an update); EndpointSlice events enqueue the Service named by the slice's
``kubernetes.io/service-name`` label when the slice is managed by this controller, so edits and
deletions by others are undone. A sync reads the Service, its pods and its slices from the
caches, waits (requeues) while the cache has not seen the controller's own last writes
(:mod:`.tracker`), asks :func:`~.plan.plan_slices` what to write and writes it. Slices of a
deleted Service are left to the garbage collector (they are owned by it), as upstream does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubeloop.api.meta import labels_of, name_of, namespace_of
from kubeloop.client import PODS, SERVICES, Resource, is_conflict, is_not_found
from kubeloop.controllers.endpointslice.plan import CONTROLLER_NAME, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, plan_slices
from kubeloop.controllers.endpointslice.tracker import SliceTracker
from kubeloop.controllers.endpointutil.pods import service_selector
from kubeloop.controllers.endpointutil.services import pod_mapper, pods_of
from kubeloop.controllers.endpointutil.triggertime import TriggerTimeTracker
from kubeloop.runtime.collaborators import CachedObjects, ObjectClient
from kubeloop.runtime.controller import Result
from kubeloop.runtime.handlers import Funcs, Request
from kubeloop.runtime.informers import DeletedFinalStateUnknown
from kubeloop.runtime.manager import Manager

log = logging.getLogger(__name__)

NAME = "endpointslice"
ENDPOINT_SLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, frozenset(), (),
                           "endpointslice", frozenset({"create", "delete", "deletecollection", "get", "list",
                                                       "patch", "update", "watch"}))
SERVICE_INDEX = "endpointslice-controller/service"
STALE_RETRY_SECONDS = 0.2
Obj = dict[str, Any]


def managed_service_index(slice_: Mapping[str, Any]) -> list[str]:
    """Index value ``<namespace>/<service>`` of the slices this controller manages."""
    labels = labels_of(slice_)
    if labels.get(MANAGED_BY_LABEL) != CONTROLLER_NAME or not labels.get(SERVICE_NAME_LABEL):
        return []
    return [f"{namespace_of(slice_)}/{labels[SERVICE_NAME_LABEL]}"]


def slice_to_service(slice_: Obj) -> list[Request]:
    labels = labels_of(slice_)
    if labels.get(MANAGED_BY_LABEL) != CONTROLLER_NAME or not labels.get(SERVICE_NAME_LABEL):
        return []
    return [Request(namespace_of(slice_), labels[SERVICE_NAME_LABEL])]


class EndpointSliceController:
    """The reconcile function of the EndpointSlice controller over shared informers."""

    def __init__(self, client: ObjectClient, services: CachedObjects, pods: CachedObjects,
                 slices: CachedObjects) -> None:
        self.client = client
        self.services = services
        self.pods = pods
        self.slices = slices
        self.triggers = TriggerTimeTracker()
        self.tracker = SliceTracker()

    def on_slice_deleted(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        actual = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if actual is None:
            return
        for key in managed_service_index(actual):
            self.tracker.deleted(key, name_of(actual))

    async def reconcile(self, request: Request) -> Result | None:
        key = request.key
        service = self.services.indexer.get_by_name(request.namespace, request.name)
        if service is None:
            self.triggers.forget(key)
            self.tracker.forget(key)
            return None
        selector = service_selector(service)
        if selector is None:
            return None
        if self.tracker.stale(key, lambda name: self.slices.indexer.get_by_name(request.namespace, name)):
            return Result(requeue_after=STALE_RETRY_SECONDS)
        pods = pods_of(self.pods, service, selector)
        existing = self.slices.indexer.by_index(SERVICE_INDEX, key)
        trigger = self.triggers.compute(key, service, pods)
        plan = plan_slices(service, pods, existing, trigger)
        if plan.empty():
            return None
        try:
            for slice_ in plan.create:
                self.tracker.wrote(key, await self.client.create(ENDPOINT_SLICES, slice_, namespace=request.namespace))
            for slice_ in plan.update:
                self.tracker.wrote(key, await self.client.update(ENDPOINT_SLICES, slice_, namespace=request.namespace))
            for slice_ in plan.delete:
                try:
                    await self.client.delete(ENDPOINT_SLICES, name_of(slice_), namespace=request.namespace)
                except Exception as exc:
                    if not is_not_found(exc):
                        raise
                self.tracker.removed(key, name_of(slice_))
        except Exception as exc:
            if is_conflict(exc) or is_not_found(exc):
                self.triggers.forget(key)
                return Result(requeue=True)
            raise
        return None


async def add_endpoint_slice_controller(manager: Manager, *, workers: int = 5) -> EndpointSliceController:
    """Build the EndpointSlice controller on ``manager``'s shared informers and register it."""
    services = await manager.factory.informer_for(SERVICES)
    pods = await manager.factory.informer_for(PODS)
    slices = await manager.factory.informer_for(ENDPOINT_SLICES, indexers={SERVICE_INDEX: managed_service_index})
    controller = EndpointSliceController(manager.client, services, pods, slices)
    await (
        manager.controller(NAME)
        .for_(SERVICES)
        .watches(PODS, pod_mapper(services))
        .watches(ENDPOINT_SLICES, slice_to_service)
        .watches(ENDPOINT_SLICES, Funcs(delete=lambda obj, _queue: controller.on_slice_deleted(obj)))
        .with_options(max_concurrent_reconciles=workers)
        .complete(controller.reconcile)
    )
    return controller
