"""Reading an ``openapi.v2.Document`` protobuf back into Swagger 2.0 JSON.

The inverse of :func:`kubeloop.server.openapi.gnostic.encode_document` for everything that
function writes; it exists so tests (and anyone debugging what kubectl sees) can check the
bytes without a Go toolchain. proto3 scalars carry no presence, so a scalar holding its zero
value (``false``, ``0``, ``""``) reads back as absent; the documents we build never hold such
values where it matters.
"""

from __future__ import annotations

from typing import Any

import yaml

from kubeloop.server.openapi.gnostic import (
    METHODS,
    OPERATION_FIELDS,
    OPERATION_LIST_FIELDS,
    PARAMETER_FIELDS,
    SCHEMA_FIELDS,
    Document,
)

Json = dict[str, Any]


def _value(any_message: Any) -> Any:
    return yaml.safe_load(any_message.yaml)


def _extensions(out: Json, message: Any) -> Json:
    for entry in message.vendor_extension:
        out[entry.name] = _value(entry.value)
    return out


def _scalars(out: Json, message: Any, names: dict[str, str]) -> None:
    for key, field in names.items():
        value = getattr(message, field)
        if value:
            out[key] = value


def schema_json(message: Any) -> Json:
    """One ``Schema`` message as JSON."""
    out: Json = {}
    _scalars(out, message, SCHEMA_FIELDS)
    if message.HasField("default"):
        out["default"] = _value(message.default)
    if message.HasField("example"):
        out["example"] = _value(message.example)
    if message.enum:
        out["enum"] = [_value(v) for v in message.enum]
    if message.required:
        out["required"] = list(message.required)
    if message.HasField("type"):
        values = list(message.type.value)
        out["type"] = values[0] if len(values) == 1 else values
    if message.HasField("items"):
        items = [schema_json(s) for s in message.items.schema]
        out["items"] = items[0] if len(items) == 1 else items
    if message.HasField("additional_properties"):
        which = message.additional_properties.WhichOneof("oneof")
        out["additionalProperties"] = (message.additional_properties.boolean if which == "boolean"
                                       else schema_json(message.additional_properties.schema))
    if message.all_of:
        out["allOf"] = [schema_json(s) for s in message.all_of]
    if message.HasField("properties"):
        out["properties"] = {p.name: schema_json(p.value) for p in message.properties.additional_properties}
    return _extensions(out, message)


def _parameter_json(item: Any) -> Json:
    if item.WhichOneof("oneof") == "json_reference":
        return {"$ref": item.json_reference._ref}
    parameter = item.parameter
    if parameter.WhichOneof("oneof") == "body_parameter":
        body = parameter.body_parameter
        out: Json = {}
        _scalars(out, body, {"name": "name", "in": "in", "required": "required", "description": "description"})
        out["schema"] = schema_json(body.schema)
        return _extensions(out, body)
    wrapper = parameter.non_body_parameter
    sub = getattr(wrapper, wrapper.WhichOneof("oneof"))
    out = {}
    _scalars(out, sub, PARAMETER_FIELDS)
    return _extensions(out, sub)


def _operation_json(message: Any) -> Json:
    out: Json = {}
    _scalars(out, message, OPERATION_FIELDS)
    for key, field in OPERATION_LIST_FIELDS.items():
        if getattr(message, field):
            out[key] = list(getattr(message, field))
    if message.parameters:
        out["parameters"] = [_parameter_json(p) for p in message.parameters]
    responses: Json = {}
    for entry in message.responses.response_code:
        if entry.value.WhichOneof("oneof") == "json_reference":
            responses[entry.name] = {"$ref": entry.value.json_reference._ref}
            continue
        response = entry.value.response
        decoded: Json = {"description": response.description}
        if response.HasField("schema"):
            decoded["schema"] = schema_json(response.schema.schema)
        responses[entry.name] = _extensions(decoded, response)
    if responses:
        out["responses"] = responses
    return _extensions(out, message)


def decode_document(data: bytes) -> Json:
    """The Swagger 2.0 JSON document the protobuf ``data`` holds."""
    message: Any = Document()
    message.ParseFromString(data)
    out: Json = {"swagger": message.swagger}
    info: Json = {}
    _scalars(info, message.info, {"title": "title", "version": "version", "description": "description"})
    out["info"] = info
    for key in ("schemes", "consumes", "produces"):
        if getattr(message, key):
            out[key] = list(getattr(message, key))
    paths: Json = {}
    for entry in message.paths.path:
        item: Json = {}
        for method in METHODS:
            if entry.value.HasField(method):
                item[method] = _operation_json(getattr(entry.value, method))
        if entry.value.parameters:
            item["parameters"] = [_parameter_json(p) for p in entry.value.parameters]
        paths[entry.name] = _extensions(item, entry.value)
    out["paths"] = paths
    out["definitions"] = {d.name: schema_json(d.value) for d in message.definitions.additional_properties}
    return _extensions(out, message)
