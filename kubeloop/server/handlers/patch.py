"""PATCH of an object, its ``/status`` or its ``/scale``, in the four patch formats.

The Content-Type picks the format; the patch is applied to a copy of the current object in the
same event-loop step as the write, so it never conflicts unless it sets a resourceVersion.
The result then takes the ordinary update path. ``application/apply-patch+yaml`` is
server-side apply (:mod:`kubeloop.server.apply`), which needs ``?fieldManager=`` (422
otherwise, as upstream): it creates a missing object, tracks field ownership in
``managedFields`` and answers conflicts with 409 unless ``?force=true``; the other formats
record an ``Update`` entry for their manager.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from kubeloop.api.status import (
    ApiError,
    bad_request_error,
    invalid,
    invalid_error,
    not_found_error,
    unsupported_media_type_error,
)
from kubeloop.server.apply import (
    APPLY,
    ApplyConflicts,
    Manager,
    apply_configuration,
    require_field_manager,
)
from kubeloop.server.codec.output import Output
from kubeloop.server.conversion import storage_info, stored
from kubeloop.server.handlers.admitted import call_for, drive, webhooks_of, write_options
from kubeloop.server.handlers.common import (
    check_type,
    decode_typed,
    is_dry_run,
    metadata_of,
    read_body,
    update_manager,
)
from kubeloop.server.handlers.read import output_for, present
from kubeloop.server.handlers.scale import apply_scale, scale_of
from kubeloop.server.handlers.write import admit_scale, check_identity
from kubeloop.server.kinds.decode import APPLY as APPLY_CONFIGURATION
from kubeloop.server.kinds.decode import PATCH, omit_empty
from kubeloop.server.nesting import MAX_DEPTH, object_too_deep
from kubeloop.server.objects import STATUS_LIKE, create_steps, shape_of, update_steps
from kubeloop.server.patch import (
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
    patch_schema_for,
)
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    PATCH_TYPES,
    STRATEGIC_MERGE_PATCH,
    decode_json,
    decode_yaml,
    media_type,
)
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState, copy_object

Obj = dict[str, Any]

MAX_JSON_PATCH_OPERATIONS = 10000
def decode_patch(patch_type: str, raw: bytes) -> Any:
    """Decode the body for ``patch_type``; the shape must suit the format (400 otherwise)."""
    doc = decode_yaml(raw) if patch_type == APPLY_PATCH else decode_json(raw)
    if patch_type == JSON_PATCH:
        if not isinstance(doc, list):
            raise bad_request_error("error decoding patch: a JSON patch must be a list of operations")
        if len(doc) > MAX_JSON_PATCH_OPERATIONS:
            raise ApiError(413, "RequestEntityTooLarge", f"The allowed maximum operations in a JSON patch is "
                                                         f"{MAX_JSON_PATCH_OPERATIONS}, got {len(doc)}")
    elif not isinstance(doc, dict):
        raise bad_request_error("error decoding patch: the patch must be a JSON object")
    return doc


def apply_patch(info: ResourceInfo, patch_type: str, document: Obj, patch: Any) -> Any:
    """``document`` (a private copy) with ``patch`` applied."""
    try:
        if patch_type == JSON_PATCH:
            return apply_json_patch(document, patch)
        if patch_type == STRATEGIC_MERGE_PATCH:
            schema = None if info.custom is not None else patch_schema_for(info.group, info.kind)
            if schema is None:
                raise unsupported_media_type_error(patch_type, (JSON_PATCH, MERGE_PATCH, APPLY_PATCH))
            return apply_strategic_merge_patch(document, patch, schema)
        return apply_merge_patch(document, patch)
    except PatchError as error:
        raise error.api_error() from None


async def handle_patch(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    info = target.info
    scale = target.subresource == "scale"
    output = output_for(state, request, info, api_version="autoscaling/v1" if scale else None,
                        kind="Scale" if scale else None)
    raw = await read_body(request)
    patch_type = media_type(request.headers.get("Content-Type"))
    if patch_type not in PATCH_TYPES:
        raise unsupported_media_type_error(patch_type, PATCH_TYPES)
    dry_run = is_dry_run(request)
    patch = decode_patch(patch_type, raw)
    attempt = 1
    while True:
        try:
            return await _patch_once(state, request, target, output, patch_type, patch, dry_run)
        except ApiError as error:
            # Awaiting webhooks lets other writes in between the read and the write: as
            # upstream's GuaranteedUpdate, the patch is applied again to the object now stored.
            # Without webhooks nothing awaits in between, and a conflict is final.
            if error.code != 409 or webhooks_of(state) is None or attempt >= PATCH_ATTEMPTS:
                raise
            attempt += 1


PATCH_ATTEMPTS = 5
"""Tries of a patch that conflicts with writes made while its webhooks were called."""


async def _patch_once(state: ServerState, request: web.Request, target: Target, output: Output, patch_type: str,
                      patch: Any, dry_run: bool) -> web.StreamResponse:
    info = target.info
    scale = target.subresource == "scale"
    name = str(target.name)
    current = state.storage.get(info.resource_type, target.namespace or "", name)
    if patch_type == APPLY_PATCH and target.subresource is None:
        applier = require_field_manager(request.query.get("fieldManager"))
        return await _apply(state, target, current, patch, applier, request.query.get("force") == "true",
                            dry_run, request, output)
    if current is None:
        raise not_found_error(info.resource, info.group, name)
    if scale:
        # A Scale has no lists, so a strategic merge patch of it is a plain merge patch.
        scale_patch_type = JSON_PATCH if patch_type == JSON_PATCH else MERGE_PATCH
        scaled = apply_patch(info, scale_patch_type, scale_of(info, current), patch)
        warnings = decode_typed(info, scaled, request, group="autoscaling", version="v1", kind="Scale", source=PATCH)
        scaled, hook_warnings = await admit_scale(state, request, target, current, scaled, dry_run)
        return output.answer(apply_scale(state, info, current, scaled, name, dry_run,
                                         update_manager(request, target, current.get("apiVersion"))), 200,
                             warnings + hook_warnings)
    patched = apply_patch(info, patch_type, copy_object(_patch_base(info, current)), patch)
    if not isinstance(patched, dict):
        raise bad_request_error("the patched object must be a JSON object")
    if object_too_deep(patched):
        raise too_deep_patch_result(patched)
    check_type(info, patched, api_version=current.get("apiVersion") if info.custom is not None else None)
    metadata_of(patched)
    warnings = decode_typed(info, patched, request, source=PATCH)
    check_identity(info, target, patched, current)
    manager = update_manager(request, target, patched.get("apiVersion"))
    call = call_for(state, target, "UPDATE", name=name, namespace=target.namespace or "", dry_run=dry_run,
                    options=write_options(request, "UpdateOptions"))
    updated = await drive(state, update_steps(state, storage_info(state.registry, info), stored(info, patched),
                                              current, status=target.subresource in STATUS_LIKE, dry_run=dry_run,
                                              manager=manager), call)
    return output.answer(present(info, updated), 200, warnings + (call.warnings if call else []))


def too_deep_patch_result(patched: Obj) -> ApiError:
    """A patch that would nest the object deeper than a body may (see :mod:`kubeloop.server.nesting`):
    refused as upstream's ``patch.go`` refuses a patched object that fails to decode, a 422 on the
    field ``patch`` showing the patched document."""
    try:
        shown = orjson.dumps(patched).decode(errors="replace")
    except orjson.JSONEncodeError:
        shown = "<the patched object>"
    return invalid_error("", "", "", [invalid("patch", shown, f"exceeded max depth of {MAX_DEPTH}")])


def _patch_base(info: ResourceInfo, current: Obj) -> Obj:
    """What a patch applies to: the object as served at the URL's version. Custom resources are
    patched as stored (their versions share one schema; they keep the version they were written at)."""
    return current if info.custom is not None else present(info, current)


async def _apply(state: ServerState, target: Target, current: Obj | None, config: Obj, applier: str, force: bool,
           dry_run: bool, request: web.Request, output: Output) -> web.StreamResponse:
    """Server-side apply of ``config`` by ``applier``: create ``current`` when missing, else merge into it."""
    info = target.info
    check_type(info, config, api_version=current.get("apiVersion") if current and info.custom is not None else None)
    metadata_of(config)
    warnings = decode_typed(info, config, request, source=APPLY_CONFIGURATION)
    manager = Manager(applier, APPLY, str(config["apiVersion"]))
    meta = metadata_of(config)
    if meta.get("name") not in (None, "", target.name):
        raise bad_request_error(f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                                f"({target.name})")
    body_ns = meta.get("namespace") or ""
    if info.namespaced and body_ns and body_ns != target.namespace:
        raise bad_request_error("the namespace of the provided object does not match the namespace sent on "
                                "the request")
    base = None if current is None else _patch_base(info, current)
    try:
        obj = apply_configuration(base, config, shape_of(info), manager, state.now_text(), force=force)
    except ApplyConflicts as conflicts:
        raise conflicts.api_error() from None
    check_type(info, obj, api_version=manager.api_version)
    if info.custom is None:
        # managedFields stay as apply wrote them, an empty list included: it means "nobody".
        entries = metadata_of(obj).get("managedFields")
        omit_empty(info.group, info.version, info.kind, obj)
        if entries is not None:
            metadata_of(obj)["managedFields"] = entries
    store_info = storage_info(state.registry, info)
    if current is not None:
        call = call_for(state, target, "UPDATE", name=str(target.name), namespace=target.namespace or "",
                        dry_run=dry_run, options=write_options(request, "UpdateOptions"))
        updated = await drive(state, update_steps(state, store_info, stored(info, obj), current, status=False,
                                                  dry_run=dry_run), call)
        return output.answer(present(info, updated), 200, warnings + (call.warnings if call else []))
    new_meta = metadata_of(obj)
    new_meta["name"] = target.name
    if info.namespaced:
        new_meta["namespace"] = target.namespace
    call = call_for(state, target, "CREATE", name=str(target.name), namespace=target.namespace or "",
                    dry_run=dry_run, options=write_options(request, "CreateOptions"))
    created = await drive(state, create_steps(state, store_info, stored(info, obj), dry_run), call)
    return output.answer(present(info, created), 201, warnings + (call.warnings if call else []))
