"""Pieces every verb handler shares: reading bodies, answering JSON, checking identity fields.

Reading the body is the only awaiting step of a write: everything after it runs without
yielding to the event loop, so read-check-write against the (synchronous) store is atomic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

from kubeloop.api.status import (
    OBJECT_MODIFIED,
    ApiError,
    bad_request_error,
    conflict_error,
    not_found_error,
    too_large_error,
)
from kubeloop.server.apply import UPDATE, Manager, manager_from_user_agent
from kubeloop.server.codec.encoding import encode_json
from kubeloop.server.kinds.decode import BODY, decode_object, field_validation, warning_headers
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import MAX_BODY_BYTES, PROTOBUF, decode_document, dry_run_values, media_type
from kubeloop.server.routing import Target
from kubeloop.server.storage import KeyNotFound, RevisionMismatch, StorageError

Obj = dict[str, Any]

JSON_CONTENT_TYPE = "application/json"


def json_response(body: Any, status: int = 200, warnings: Sequence[str] = ()) -> web.Response:
    """``body`` as JSON, newline-terminated as Go's encoder writes it, with ``Warning`` headers."""
    response = web.Response(body=encode_json(body), status=status, content_type=JSON_CONTENT_TYPE)
    for value in warning_headers(list(warnings)):
        response.headers.add("Warning", value)
    return response


SCALE_TYPE = ("autoscaling/v1", "Scale")


def decode_body(raw: bytes, request: web.Request, target: Target) -> Any:
    """A create or update body for ``target`` in the request's Content-Type (JSON, YAML,
    protobuf): decoded into the endpoint's kind, the built-in autoscaling/v1 Scale for
    ``/scale``, whose protobuf form custom resources share."""
    info = target.info
    scale = target.subresource == "scale"
    return decode_document(raw, request.headers.get("Content-Type"),
                           into=SCALE_TYPE if scale else (info.api_version, info.kind),
                           custom=info.custom is not None and not scale)


def decode_typed(info: ResourceInfo, obj: Obj, request: web.Request, *, kind: str | None = None,
                 group: str | None = None, version: str | None = None, source: str = BODY) -> list[str]:
    """Decode a built-in object as kube-apiserver decodes it into its Go type (see
    :mod:`kubeloop.server.kinds.decode`); returns the warnings to send. Custom resources are
    pruned by their own schema elsewhere. A protobuf body was decoded into exactly these types
    already (:mod:`kubeloop.server.codec.protobuf`; its tests hold that this pass changes nothing
    on the codec's output), so it is not walked twice."""
    if info.custom is not None:
        return []
    if source == BODY and media_type(request.headers.get("Content-Type")) == PROTOBUF:
        return []
    return decode_object(group if group is not None else info.group, version or info.version, kind or info.kind,
                         obj, field_validation(request.query), source)


async def read_body(request: web.Request) -> bytes:
    """The request body, refusing more than kube-apiserver's 3 MiB with a 413 Status."""
    length = request.content_length
    if length is not None and length > MAX_BODY_BYTES:
        raise too_large_error(MAX_BODY_BYTES)
    try:
        # aiohttp enforces the same limit (the application's client_max_size) for chunked bodies.
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise too_large_error(MAX_BODY_BYTES) from None


def is_dry_run(request: web.Request) -> bool:
    return dry_run_values(request.query.getall("dryRun", []))


def metadata_of(obj: Obj) -> Obj:
    """The object's ``metadata``, created when absent; 400 when it is not an object."""
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise bad_request_error("metadata must be an object")
    for key in ("name", "namespace", "generateName", "resourceVersion", "uid"):
        value = meta.get(key)
        if value is not None and not isinstance(value, str):
            raise bad_request_error(f"metadata.{key} must be a string")
    return meta


def check_type(info: ResourceInfo, obj: Obj, kind: str | None = None, api_version: str | None = None) -> None:
    """``kind`` and ``apiVersion`` must name the URL's type when given; they are filled when absent."""
    want_kind = kind or info.kind
    want_version = api_version or info.api_version
    given_version = obj.get("apiVersion")
    given_kind = obj.get("kind")
    if given_version not in (None, "") and given_version != want_version:
        raise bad_request_error(f"the API version in the data ({given_version}) does not match the expected "
                                f"API version ({want_version})")
    if given_kind not in (None, "") and given_kind != want_kind:
        raise bad_request_error(f"the kind in the data ({given_kind}) does not match the expected kind "
                                f"({want_kind})")
    # Wire order as Go encodes it: apiVersion, kind, metadata, then the rest.
    rest = {key: value for key, value in obj.items() if key not in ("apiVersion", "kind", "metadata")}
    meta = obj.get("metadata")
    obj.clear()
    obj["apiVersion"] = want_version
    obj["kind"] = want_kind
    if meta is not None:
        obj["metadata"] = meta
    obj.update(rest)


def apply_namespace(target: Target, meta: Obj) -> str:
    """Reconcile the body's namespace with the URL's; returns the namespace to store under."""
    if not target.info.namespaced:
        meta.pop("namespace", None)
        return ""
    url_namespace = target.namespace or ""
    body_namespace = meta.get("namespace") or ""
    if body_namespace and body_namespace != url_namespace:
        raise bad_request_error("the namespace of the provided object does not match the namespace sent on "
                                "the request")
    meta["namespace"] = url_namespace
    return url_namespace


def check_name(target: Target, meta: Obj) -> None:
    """On update and patch the body's name must be the URL's."""
    name = meta.get("name") or ""
    if name and name != target.name:
        raise bad_request_error(f"the name of the object ({name}) does not match the name on the URL "
                                f"({target.name})")
    meta["name"] = target.name


def storage_error(info: ResourceInfo, name: str, error: StorageError) -> ApiError:
    """Map an unexpected store refusal onto the Status a client understands."""
    if isinstance(error, KeyNotFound):
        return not_found_error(info.resource, info.group, name)
    if isinstance(error, RevisionMismatch):
        return conflict_error(info.resource, info.group, name, OBJECT_MODIFIED)
    return ApiError(500, "InternalError", f"Internal error occurred: {error}")


def expected_revision(info: ResourceInfo, name: str, text: str | None, current_rv: str) -> None:
    """A resourceVersion in a write must be the current one (optimistic concurrency, 409 otherwise)."""
    if text and text != current_rv:
        raise conflict_error(info.resource, info.group, name, OBJECT_MODIFIED)


def update_manager(request: web.Request, target: Target, api_version: Any) -> Manager:
    """The ``Update`` manager of a write: ``?fieldManager=`` or the user agent's product name."""
    name = request.query.get("fieldManager") or manager_from_user_agent(request.headers.get("User-Agent"))
    return Manager(name, UPDATE, str(api_version or ""), target.subresource or "")
