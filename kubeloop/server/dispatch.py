"""From an HTTP request to the handler of its verb.

Resolves the path (discovery document or resource target), checks the verb is served for the
resource, and calls the handler. Upstream's verb names: GET is get, list or watch; POST create;
PUT update; PATCH patch; DELETE delete or deletecollection. Every request that reaches a handler
is recorded in the server's metrics with its answer's code and duration (``kubeloop.server.metrics``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable

from aiohttp import web

from kubeloop.api.status import ApiError, method_not_allowed_error, not_acceptable_error
from kubeloop.server import aggregated_discovery, discovery
from kubeloop.server.handlers import token_request
from kubeloop.server.handlers.binding import handle_binding
from kubeloop.server.handlers.common import json_response
from kubeloop.server.handlers.delete import handle_delete, handle_delete_collection
from kubeloop.server.handlers.patch import handle_patch
from kubeloop.server.handlers.read import get_object, handle_get, handle_list, output_for
from kubeloop.server.handlers.scale import scale_of
from kubeloop.server.handlers.subresources import NO_CONTAINERS, evict, no_containers_error, pod_log
from kubeloop.server.handlers.virtual import component_status_get, component_status_list, handle_virtual_create
from kubeloop.server.handlers.write import handle_create, handle_update
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import parse_bool
from kubeloop.server.routing import DiscoveryTarget, Target, not_found_path, resolve
from kubeloop.server.state import ServerState
from kubeloop.server.watch import handle_watch

_JSON_RANGES = frozenset({"application/json", "application/*", "*/*", "application/yaml", "application/json-patch+json",
                          "application/merge-patch+json", "application/strategic-merge-patch+json"})
_SERVED_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


def _accepts_json(accept: str | None) -> bool:
    if not accept:
        return True
    return any(part.split(";", 1)[0].strip().lower() in _JSON_RANGES for part in accept.split(","))


def _method_not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def _require_verb(info: ResourceInfo, verb: str) -> None:
    if verb not in info.verbs:
        raise method_not_allowed_error(info.resource, info.group, verb)


async def dispatch(state: ServerState, request: web.Request) -> web.StreamResponse:
    """Answer one API request (authentication already checked)."""
    started = time.perf_counter()
    target = resolve(state.registry, request.path)
    if isinstance(target, DiscoveryTarget):
        # Discovery is served in JSON only (what client-go asks for); resource requests
        # negotiate their answer in their handlers (kubeloop.server.codec.serving).
        if not _accepts_json(request.headers.get("Accept")):
            raise not_acceptable_error(_SERVED_TYPES)
        if request.method != "GET":
            raise _method_not_allowed()
        aggregated = aggregated_discovery.requested_version(request.headers.get("Accept"))
        if aggregated is not None and target.group is None:
            document = json_response(aggregated_discovery.group_discovery_list(state.registry, target.legacy,
                                                                               aggregated))
            document.headers["Content-Type"] = aggregated_discovery.content_type(aggregated)
            return document
        return json_response(_discovery_document(state, request, target))
    # Routing errors (a verb the resource does not serve) are raised here, before any handler
    # runs: upstream has no route for them, so they are not recorded either.
    handler = _resource(state, request, target)
    metrics = state.metrics
    try:
        response: web.StreamResponse = await handler
    except ApiError as error:
        metrics.observe_request(request, target, error.code, time.perf_counter() - started)
        raise
    except web.HTTPException as error:
        metrics.observe_request(request, target, error.status, time.perf_counter() - started)
        raise
    except Exception:
        # The middleware answers it as a 500 InternalError.
        metrics.observe_request(request, target, 500, time.perf_counter() - started)
        raise
    metrics.observe_request(request, target, response.status, time.perf_counter() - started)
    return response


def _discovery_document(state: ServerState, request: web.Request, target: DiscoveryTarget) -> object:
    registry = state.registry
    if target.group is None:
        if target.legacy:
            return discovery.api_versions(request.host)
        return discovery.api_group_list(registry)
    if target.version is None:
        return discovery.api_group(registry, target.group)
    return discovery.api_resource_list(registry, target.group, target.version)


async def _virtual(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    info = target.info
    method = request.method
    if method == "GET" and info.resource == "componentstatuses":
        # Negotiated as any read, so that kubectl get cs receives upstream's Table.
        output = output_for(state, request, info)
        if target.is_collection:
            return output.response(output.list(component_status_list()))
        return output.response(output.object(component_status_get(str(target.name))))
    if method == "POST" and target.is_collection and not (info.namespaced and target.namespace is None):
        _require_verb(info, "create")
        if info.resource == "bindings":
            return await handle_binding(state, request, target)
        return await handle_virtual_create(state, request, target)
    raise _method_not_allowed()


async def _other_subresource(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    """Subresources beyond status, scale and binding."""
    info = target.info
    sub = info.subresource(str(target.subresource))
    assert sub is not None, "routing resolved only served subresources"
    method = request.method
    verb = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method)
    if verb not in sub.verbs:
        raise _method_not_allowed()
    if sub.name in NO_CONTAINERS:
        raise no_containers_error(info, target, sub.name)
    if sub.name == "log" and info.group == "" and info.resource == "pods":
        return await pod_log(state, request, target)
    if sub.name == "eviction":
        return await evict(state, request, target)
    if sub.name == "token" and info.resource == "serviceaccounts":
        return await token_request.handle_token_request(state, request, target)
    if method == "GET":
        return await handle_get(state, request, Target(info, target.namespace, target.name, None))
    if method == "PUT":
        return await handle_update(state, request, target)
    return await handle_patch(state, request, target)


async def _scale(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    output = output_for(state, request, target.info, api_version="autoscaling/v1", kind="Scale")
    return output.answer(scale_of(target.info, get_object(state, target)))


def _resource(state: ServerState, request: web.Request, target: Target) -> Awaitable[web.StreamResponse]:
    """The handler's coroutine for the request (not started), or the routing error."""
    info = target.info
    method = request.method
    collection = target.is_collection
    if info.virtual:
        return _virtual(state, request, target)
    if target.subresource not in (None, "status", "scale", "binding", "finalize"):
        return _other_subresource(state, request, target)
    if method == "GET" and target.subresource != "finalize":
        if collection:
            watch = request.query.get("watch")
            if watch and parse_bool("watch", watch):
                _require_verb(info, "watch")
                return handle_watch(state, request, target)
            _require_verb(info, "list")
            return handle_list(state, request, target)
        _require_verb(info, "get")
        if target.subresource == "scale":
            return _scale(state, request, target)
        return handle_get(state, request, target)
    if method == "POST" and target.subresource == "binding":
        _require_verb(info, "create")
        return handle_binding(state, request, target)
    if target.subresource == "binding":
        raise _method_not_allowed()
    if target.subresource == "finalize" and method != "PUT":
        # Upstream's namespaces/finalize serves update only.
        raise _method_not_allowed()
    if method == "POST":
        if not collection or (info.namespaced and target.namespace is None):
            raise _method_not_allowed()
        _require_verb(info, "create")
        return handle_create(state, request, target)
    if collection and method == "DELETE":
        if info.namespaced and target.namespace is None:
            raise _method_not_allowed()
        _require_verb(info, "deletecollection")
        return handle_delete_collection(state, request, target)
    if collection:
        raise _method_not_allowed()
    if method == "PUT":
        _require_verb(info, "update")
        return handle_update(state, request, target)
    if method == "PATCH":
        _require_verb(info, "patch")
        return handle_patch(state, request, target)
    if method == "DELETE" and target.subresource is None:
        _require_verb(info, "delete")
        return handle_delete(state, request, target)
    if method in ("HEAD", "OPTIONS", "DELETE", "CONNECT", "TRACE"):
        raise _method_not_allowed()
    raise not_found_path()
