"""DELETE of one object and of a collection (deletecollection).

A DeleteOptions body is read in any of upstream's body media types (JSON, YAML, protobuf: the
meta codecs upstream's delete.go decodes it with), for built-in kinds and custom resources
alike; the answer (the deleted object, its Status, or the list) is negotiated as a read's.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kubeloop.api.status import status_details
from kubeloop.server.admission.scheduling import refuse_system_priority_class_delete
from kubeloop.server.handlers.admitted import call_for, delete_options_object, drive
from kubeloop.server.handlers.common import read_body
from kubeloop.server.handlers.read import get_object, output_for, present, selector_predicate
from kubeloop.server.objects import delete_steps
from kubeloop.server.requests import DeleteOptions, decode_document, delete_options
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState

Obj = dict[str, Any]


async def _options(request: web.Request) -> DeleteOptions:
    raw = await read_body(request)
    body = decode_document(raw, request.headers.get("Content-Type")) if raw.strip() else None
    return delete_options(body, request.query, request.query.getall("dryRun", []))


def _success(target: Target, deleted: Obj) -> Obj:
    info = target.info
    details = status_details(deleted["metadata"]["name"], info.group, info.resource, deleted["metadata"].get("uid", ""))
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


async def handle_delete(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    output = output_for(state, request, target.info)
    options = await _options(request)
    current = get_object(state, target)
    refuse_system_priority_class_delete(target.info.group, target.info.kind, str(target.name))
    call = call_for(state, target, "DELETE", name=str(target.name), namespace=target.namespace or "",
                    dry_run=options.dry_run, options=delete_options_object(options))
    result, gone = await drive(state, delete_steps(state, target.info, current, options), call)
    if gone and not target.info.return_deleted_object:
        return output.answer(_success(target, result))
    return output.answer(present(target.info, result))


async def handle_delete_collection(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    """Delete every object of the collection the selectors match; answers the list of them."""
    info = target.info
    output = output_for(state, request, info)
    options = await _options(request)
    predicate = selector_predicate(info, request.query)
    items, _, _ = state.storage.list(info.resource_type, target.namespace, predicate=predicate)
    results = []
    for item in items:
        # Upstream's DeleteCollection deletes item by item, each through admission with the
        # collection request's attributes: no name, the URL's namespace, the item as oldObject.
        call = call_for(state, target, "DELETE", name="", namespace=target.namespace or "",
                        dry_run=options.dry_run, options=delete_options_object(options))
        results.append(present(info, (await drive(state, delete_steps(state, info, item, options), call))[0]))
    body = {"kind": info.list_kind, "apiVersion": info.api_version,
            "metadata": {"resourceVersion": str(state.storage.revision)}, "items": results}
    return output.response(output.list(body))
