"""Services and their pods as the endpoint controllers read them from the caches.

:func:`pods_of` lists the cached pods a Service selects; :func:`pod_mapper` maps a pod to the
Services selecting it (the requests a pod event causes), as upstream's
``endpointsutil.GetPodServiceMemberships`` (``pkg/controller/util/endpoint/controller_utils.go``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubeloop.api.meta import namespace_of
from kubeloop.controllers.endpointutil.pods import selects, services_selecting
from kubeloop.runtime.collaborators import CachedObjects
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers import NAMESPACE_INDEX

Obj = dict[str, Any]


def pods_of(pods: CachedObjects, service: Mapping[str, Any], selector: Mapping[str, str]) -> list[Obj]:
    """The cached pods of the Service's namespace its selector matches."""
    return [pod for pod in pods.indexer.by_index(NAMESPACE_INDEX, namespace_of(service)) if selects(selector, pod)]


def pod_mapper(services: CachedObjects) -> Callable[[Obj], list[Request]]:
    """Pod -> the Services (by the cache) selecting it."""

    def mapper(pod: Obj) -> list[Request]:
        candidates = services.indexer.by_index(NAMESPACE_INDEX, namespace_of(pod))
        return [Request.for_object(dict(s)) for s in services_selecting(pod, candidates)]

    return mapper
