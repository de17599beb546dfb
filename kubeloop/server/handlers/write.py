"""POST (create) and PUT (update of the object or of its ``/status``)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kubeloop.api.status import bad_request_error, conflict_error
from kubeloop.server.conversion import storage_info, stored
from kubeloop.server.handlers.admitted import admit_served, call_for, drive, webhooks_of, write_options
from kubeloop.server.handlers.common import (
    apply_namespace,
    check_name,
    check_type,
    decode_body,
    decode_typed,
    expected_revision,
    is_dry_run,
    metadata_of,
    read_body,
    update_manager,
)
from kubeloop.server.handlers.read import get_object, output_for, present
from kubeloop.server.handlers.scale import apply_scale, requested_scale, scale_of
from kubeloop.server.objects import STATUS_LIKE, create_steps, update_steps
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import require_object
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState
from kubeloop.server.webhook_admission.matching import GVK

Obj = dict[str, Any]


async def handle_create(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    info = target.info
    output = output_for(state, request, info)
    raw = await read_body(request)
    dry_run = is_dry_run(request)
    obj = require_object(decode_body(raw, request, target))
    check_type(info, obj)
    # Checked before typed decoding, which keeps this dict (a struct is decoded in place and
    # never dropped) and its string fields as they are.
    meta = metadata_of(obj)
    warnings = decode_typed(info, obj, request)
    if meta.get("resourceVersion"):
        raise bad_request_error("resourceVersion should not be set on objects to be created")
    apply_namespace(target, meta)
    manager = update_manager(request, target, obj.get("apiVersion"))
    call = call_for(state, target, "CREATE", name=str(meta.get("name") or ""), namespace=target.namespace or "",
                    dry_run=dry_run, options=write_options(request, "CreateOptions"))
    created = await drive(state, create_steps(state, storage_info(state.registry, info), stored(info, obj), dry_run,
                                              manager), call)
    return output.answer(present(info, created), 201, warnings + (call.warnings if call else []))


def check_identity(info: ResourceInfo, target: Target, obj: Obj, current: Obj) -> None:
    """Name, namespace, resourceVersion and uid of a replacement must fit the URL and the object."""
    meta = metadata_of(obj)
    apply_namespace(target, meta)
    check_name(target, meta)
    name = str(target.name)
    expected_revision(info, name, meta.get("resourceVersion"), current["metadata"]["resourceVersion"])
    uid = meta.get("uid")
    if uid and uid != current["metadata"].get("uid"):
        raise conflict_error(info.resource, info.group, name,
                             f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                             f"{current['metadata'].get('uid')}")


async def handle_update(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    info = target.info
    scale = target.subresource == "scale"
    output = output_for(state, request, info, api_version="autoscaling/v1" if scale else None,
                        kind="Scale" if scale else None)
    raw = await read_body(request)
    dry_run = is_dry_run(request)
    obj = require_object(decode_body(raw, request, target))
    current = get_object(state, target)
    if scale:
        warnings = decode_typed(info, obj, request, group="autoscaling", version="v1", kind="Scale")
        obj, hook_warnings = await admit_scale(state, request, target, current, obj, dry_run)
        return output.answer(apply_scale(state, info, current, obj, str(target.name), dry_run,
                                         update_manager(request, target, current.get("apiVersion"))), 200,
                             warnings + hook_warnings)
    check_type(info, obj)
    metadata_of(obj)
    warnings = decode_typed(info, obj, request)
    check_identity(info, target, obj, current)
    manager = update_manager(request, target, obj.get("apiVersion"))
    call = call_for(state, target, "UPDATE", name=str(target.name), namespace=target.namespace or "",
                    dry_run=dry_run, options=write_options(request, "UpdateOptions"))
    updated = await drive(state, update_steps(state, storage_info(state.registry, info), stored(info, obj), current,
                                              status=target.subresource in STATUS_LIKE, dry_run=dry_run,
                                              manager=manager, finalize=target.subresource == "finalize"), call)
    return output.answer(present(info, updated), 200, warnings + (call.warnings if call else []))


async def admit_scale(state: ServerState, request: web.Request, target: Target, parent: Obj, scale: Any,
                      dry_run: bool) -> tuple[Any, list[str]]:
    """The webhooks of a ``/scale`` write see autoscaling/v1 Scales (requested and current);
    returns the Scale to write, as the mutating webhooks left it, and their warnings."""
    if webhooks_of(state) is None or not isinstance(scale, dict):
        return scale, []
    requested = requested_scale(target.info, parent, scale, str(target.name))
    warnings = await admit_served(state, target, "UPDATE", requested, scale_of(target.info, parent),
                                  GVK("autoscaling", "v1", "Scale"), dry_run=dry_run,
                                  options=write_options(request, "UpdateOptions"))
    return requested, warnings
