"""GET of one object and of collections (list), with selectors, paging and RV rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from aiohttp import web

from kubeloop.api.fields import FieldSelectorError, parse_field_selector
from kubeloop.api.labels import SelectorError, parse_selector
from kubeloop.api.status import (
    ApiError,
    FieldError,
    bad_request_error,
    forbidden,
    invalid_error,
    not_found_error,
    not_supported,
    too_large_resource_version_error,
)
from kubeloop.server.codec.negotiation import negotiate_output
from kubeloop.server.codec.output import Output, ServedType
from kubeloop.server.codec.serving import served_media_types
from kubeloop.server.conversion import served, stored
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import decode_continue, encode_continue, optional_int, parse_resource_version
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState
from kubeloop.server.storage import ResourceType
from kubeloop.server.tables import TableConverter, table_converter
from kubeloop.server.tables.printers import Printer

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]

_MATCH_VALUES = ("Exact", "NotOlderThan")
CRD_TYPE = ResourceType("apiextensions.k8s.io", "customresourcedefinitions")


def present(info: ResourceInfo, obj: Obj) -> Obj:
    """A stored object as served at ``info``'s version (:mod:`kubeloop.server.conversion`)."""
    return served(info, obj)


def get_object(state: ServerState, target: Target) -> Obj:
    info = target.info
    assert target.name is not None
    found = state.storage.get(info.resource_type, target.namespace or "", target.name)
    if found is None:
        raise not_found_error(info.resource, info.group, target.name)
    return found


def output_for(state: ServerState, request: web.Request, info: ResourceInfo, *, watch: bool = False,
               api_version: str | None = None, kind: str | None = None) -> Output:
    """The negotiated answer form of a request to ``info``'s endpoint (406 when ``Accept``
    allows none); ``api_version`` and ``kind`` name what the endpoint answers with when it is
    not ``info``'s kind (``/scale``: autoscaling/v1 Scale).

    Negotiation comes first, as upstream's handlers do; a Table converter (kubectl get) is only
    built when the answer is, so ``includeObject`` is checked after the read."""
    served_types = served_media_types(api_version or info.api_version, kind or info.kind,
                                      custom=info.custom is not None)
    options = negotiate_output(request.headers.get("Accept"),
                               encoded=served_types.streams if watch else served_types.encoded,
                               standard=served_types.standard)

    def table() -> TableConverter:
        definition = None
        if info.custom is not None:
            definition = state.storage.get(CRD_TYPE, "", f"{info.resource}.{info.group}")
        converter = table_converter(request.headers.get("Accept"), request.query.get("includeObject"), info.group,
                                    info.version, info.kind, state.clock(), crd=definition)
        assert converter is not None, "negotiated a Table that the table converter does not see"
        if info.conversion is not None and info.custom is None:
            # Rows are printed from the stored form, as upstream prints the internal object;
            # the row's object (includeObject) stays the served one.
            converter.printer = printing_stored(converter.printer, info)
        return converter

    return Output(options, ServedType(info.group, info.kind, info.custom is not None), table)


def printing_stored(printer: Printer, info: ResourceInfo) -> Printer:
    """``printer`` fed with the stored form of the served objects it is given."""
    def cells(obj: Mapping[str, Any], now: datetime) -> list[Any]:
        return printer.cells(stored(info, dict(obj)), now)

    def conditions(obj: Mapping[str, Any]) -> list[dict[str, str]]:
        return printer.conditions(stored(info, dict(obj)))

    return replace(printer, cells=cells, conditions=conditions)


async def handle_get(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    output = output_for(state, request, target.info)
    obj = present(target.info, get_object(state, target))
    return output.response(output.object(obj))


def _unsupported_field_label(info: ResourceInfo, name: str) -> str:
    """Upstream's refusal of a field selector on ``name``: kinds with a field label conversion of
    their own (those with selectable fields beyond name and namespace) and custom resources
    (``crConverter.ConvertFieldLabel``) say it one way, the scheme's default conversion
    (``runtime.DefaultMetaV1FieldSelectorConversion``) the other."""
    if info.custom is not None or info.extra_fields is not None:
        return f"field label not supported: {name}"
    return f'"{name}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def stored_labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """An object's labels for selector matching. Typed decoding keeps new writes to a map of
    strings, but a store written before it may hold any shape: anything else matches as no
    labels, so one such object cannot fail every selector list of its type."""
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if not isinstance(labels, Mapping):
        return {}
    if all(isinstance(value, str) for value in labels.values()):
        return labels
    return {key: value for key, value in labels.items() if isinstance(value, str)}


def selector_predicate(info: ResourceInfo, query: Mapping[str, str]) -> Predicate | None:
    """The label and field selectors of a list or watch as one predicate (None: match all)."""
    label_text = query.get("labelSelector") or ""
    field_text = query.get("fieldSelector") or ""
    checks: list[Predicate] = []
    if label_text.strip():
        try:
            labels = parse_selector(label_text)
        except SelectorError as error:
            raise bad_request_error(str(error)) from None
        checks.append(lambda obj: labels.matches(stored_labels(obj)))
    if field_text.strip():
        try:
            fields = parse_field_selector(field_text)
        except FieldSelectorError as error:
            raise bad_request_error(str(error)) from None
        allowed = info.selectable_fields()
        for name in fields.field_names():
            if name not in allowed:
                raise bad_request_error(_unsupported_field_label(info, name))
        checks.append(lambda obj: fields.matches(info.field_set(obj)))
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    first, second = checks
    return lambda obj: first(obj) and second(obj)


@dataclass(frozen=True)
class ListRequest:
    limit: int | None
    start_after: tuple[str, str] | None
    list_rv: int


def list_request(state: ServerState, info: ResourceInfo, query: Mapping[str, str]) -> ListRequest:
    """Apply the resourceVersion / resourceVersionMatch / limit / continue rules of a list."""
    rv_text = query.get("resourceVersion") or ""
    match = query.get("resourceVersionMatch") or ""
    token = query.get("continue") or ""
    limit = optional_int(query, "limit")
    errors: list[FieldError] = []
    if match:
        if not rv_text:
            errors.append(forbidden("resourceVersionMatch",
                                    "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if token:
            errors.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is "
                                                            "provided"))
        if match == "Exact" and rv_text == "0":
            errors.append(forbidden("resourceVersionMatch",
                                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        elif match not in _MATCH_VALUES:
            errors.append(not_supported("resourceVersionMatch", match, (*_MATCH_VALUES, "")))
    if errors:
        # Upstream validates ListOptions before reading and answers 422 for kind meta.k8s.io ListOptions.
        raise invalid_error("ListOptions", "meta.k8s.io", "", errors)
    current = state.storage.revision
    if token:
        if rv_text not in ("", "0"):
            raise bad_request_error("specifying resource version is not allowed when using continue")
        decoded = decode_continue(token, info.namespaced)
        if decoded.rv > current:
            raise bad_request_error("continue key is not valid: the resource version is in the future")
        return ListRequest(limit if limit and limit > 0 else None, (decoded.namespace, decoded.name),
                           decoded.rv if decoded.rv > 0 else current)
    if rv_text:
        requested = parse_resource_version("resourceVersion", rv_text)
        if requested > current:
            raise too_large_resource_version_error(requested, current)
        if requested == 0 and match != "NotOlderThan":
            # "Any": served from the watch cache upstream, which ignores limit.
            limit = None
    return ListRequest(limit if limit and limit > 0 else None, None, current)


def list_objects(state: ServerState, target: Target, query: Mapping[str, str]) -> tuple[list[Obj], Obj]:
    """The items and list metadata of a collection GET."""
    info = target.info
    predicate = selector_predicate(info, query)
    request = list_request(state, info, query)
    items, last, remaining = state.storage.list(info.resource_type, target.namespace, predicate=predicate,
                                                start_after=request.start_after, limit=request.limit)
    meta: Obj = {"resourceVersion": str(request.list_rv)}
    if last is not None:
        meta["continue"] = encode_continue(request.list_rv, last[0], last[1])
        if predicate is None and remaining >= 0:
            meta["remainingItemCount"] = remaining
    return items, meta


async def handle_list(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    info = target.info
    output = output_for(state, request, info)
    items, meta = list_objects(state, target, request.query)
    if info.conversion is not None:
        items = [present(info, item) for item in items]
    body = output.list({"kind": info.list_kind, "apiVersion": info.api_version, "metadata": meta, "items": items})
    try:
        payload = output.encode(body)
    except TypeError as error:
        raise ApiError(500, "InternalError", f"Internal error occurred: {error}") from None
    return web.Response(body=payload, content_type=output.content_type)
