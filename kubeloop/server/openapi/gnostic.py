"""The gnostic ``openapi.v2.Document`` protobuf message, which kubectl reads from ``/openapi/v2``.

kubectl 1.20 asks for ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` and feeds
the body straight into protobuf decoding of gnostic's ``Document`` (JSON is not accepted). The
message types are declared here from gnostic's field numbers, only the part of the schema a
Kubernetes document uses, and built into a private descriptor pool at import time; fields we
never write are simply absent (a decoder treats them as unset).

:func:`encode_document` turns a Swagger 2.0 JSON document into the message's bytes the way
gnostic's compiler does: ``x-`` keys become vendor extensions holding YAML text, ``type`` a list
of strings, ``items`` a list of schemas, maps become repeated name/value pairs in key order.
:func:`decode_document` reads such bytes back into a JSON document (for tests and tools).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import-untyped]
from google.protobuf.message import Message  # type: ignore[import-untyped]

PACKAGE = "openapi.v2"

_T = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"string": _T.TYPE_STRING, "bool": _T.TYPE_BOOL, "double": _T.TYPE_DOUBLE, "int64": _T.TYPE_INT64}

# message -> [(field, number, type, repeated?, oneof group or "")]; types are scalars or message names.
_MESSAGES: dict[str, list[tuple[str, int, str, bool, str]]] = {
    "Document": [("swagger", 1, "string", False, ""), ("info", 2, "Info", False, ""),
                 ("host", 3, "string", False, ""), ("base_path", 4, "string", False, ""),
                 ("schemes", 5, "string", True, ""), ("consumes", 6, "string", True, ""),
                 ("produces", 7, "string", True, ""), ("paths", 8, "Paths", False, ""),
                 ("definitions", 9, "Definitions", False, ""), ("vendor_extension", 16, "NamedAny", True, "")],
    "Info": [("title", 1, "string", False, ""), ("version", 2, "string", False, ""),
             ("description", 3, "string", False, ""), ("vendor_extension", 7, "NamedAny", True, "")],
    "Any": [("yaml", 2, "string", False, "")],
    "NamedAny": [("name", 1, "string", False, ""), ("value", 2, "Any", False, "")],
    "Definitions": [("additional_properties", 1, "NamedSchema", True, "")],
    "NamedSchema": [("name", 1, "string", False, ""), ("value", 2, "Schema", False, "")],
    "Properties": [("additional_properties", 1, "NamedSchema", True, "")],
    "TypeItem": [("value", 1, "string", True, "")],
    "ItemsItem": [("schema", 1, "Schema", True, "")],
    "AdditionalPropertiesItem": [("schema", 1, "Schema", False, "oneof"), ("boolean", 2, "bool", False, "oneof")],
    "Schema": [("_ref", 1, "string", False, ""), ("format", 2, "string", False, ""),
               ("title", 3, "string", False, ""), ("description", 4, "string", False, ""),
               ("default", 5, "Any", False, ""), ("multiple_of", 6, "double", False, ""),
               ("maximum", 7, "double", False, ""), ("exclusive_maximum", 8, "bool", False, ""),
               ("minimum", 9, "double", False, ""), ("exclusive_minimum", 10, "bool", False, ""),
               ("max_length", 11, "int64", False, ""), ("min_length", 12, "int64", False, ""),
               ("pattern", 13, "string", False, ""), ("max_items", 14, "int64", False, ""),
               ("min_items", 15, "int64", False, ""), ("unique_items", 16, "bool", False, ""),
               ("max_properties", 17, "int64", False, ""), ("min_properties", 18, "int64", False, ""),
               ("required", 19, "string", True, ""), ("enum", 20, "Any", True, ""),
               ("additional_properties", 21, "AdditionalPropertiesItem", False, ""),
               ("type", 22, "TypeItem", False, ""), ("items", 23, "ItemsItem", False, ""),
               ("all_of", 24, "Schema", True, ""), ("properties", 25, "Properties", False, ""),
               ("read_only", 27, "bool", False, ""), ("example", 30, "Any", False, ""),
               ("vendor_extension", 31, "NamedAny", True, "")],
    "Paths": [("vendor_extension", 1, "NamedAny", True, ""), ("path", 2, "NamedPathItem", True, "")],
    "NamedPathItem": [("name", 1, "string", False, ""), ("value", 2, "PathItem", False, "")],
    "PathItem": [("_ref", 1, "string", False, ""), ("get", 2, "Operation", False, ""),
                 ("put", 3, "Operation", False, ""), ("post", 4, "Operation", False, ""),
                 ("delete", 5, "Operation", False, ""), ("options", 6, "Operation", False, ""),
                 ("head", 7, "Operation", False, ""), ("patch", 8, "Operation", False, ""),
                 ("parameters", 9, "ParametersItem", True, ""), ("vendor_extension", 10, "NamedAny", True, "")],
    "Operation": [("tags", 1, "string", True, ""), ("summary", 2, "string", False, ""),
                  ("description", 3, "string", False, ""), ("operation_id", 5, "string", False, ""),
                  ("produces", 6, "string", True, ""), ("consumes", 7, "string", True, ""),
                  ("parameters", 8, "ParametersItem", True, ""), ("responses", 9, "Responses", False, ""),
                  ("schemes", 10, "string", True, ""), ("deprecated", 11, "bool", False, ""),
                  ("vendor_extension", 13, "NamedAny", True, "")],
    "ParametersItem": [("parameter", 1, "Parameter", False, "oneof"),
                       ("json_reference", 2, "JsonReference", False, "oneof")],
    "JsonReference": [("_ref", 1, "string", False, ""), ("description", 2, "string", False, "")],
    "Parameter": [("body_parameter", 1, "BodyParameter", False, "oneof"),
                  ("non_body_parameter", 2, "NonBodyParameter", False, "oneof")],
    "BodyParameter": [("description", 1, "string", False, ""), ("name", 2, "string", False, ""),
                      ("in", 3, "string", False, ""), ("required", 4, "bool", False, ""),
                      ("schema", 5, "Schema", False, ""), ("vendor_extension", 6, "NamedAny", True, "")],
    "NonBodyParameter": [("query_parameter_sub_schema", 3, "QueryParameterSubSchema", False, "oneof"),
                         ("path_parameter_sub_schema", 4, "PathParameterSubSchema", False, "oneof")],
    "QueryParameterSubSchema": [("required", 1, "bool", False, ""), ("in", 2, "string", False, ""),
                                ("description", 3, "string", False, ""), ("name", 4, "string", False, ""),
                                ("type", 6, "string", False, ""), ("format", 7, "string", False, ""),
                                ("unique_items", 20, "bool", False, ""),
                                ("vendor_extension", 23, "NamedAny", True, "")],
    "PathParameterSubSchema": [("required", 1, "bool", False, ""), ("in", 2, "string", False, ""),
                               ("description", 3, "string", False, ""), ("name", 4, "string", False, ""),
                               ("type", 5, "string", False, ""), ("format", 6, "string", False, ""),
                               ("unique_items", 19, "bool", False, ""),
                               ("vendor_extension", 22, "NamedAny", True, "")],
    "Responses": [("response_code", 1, "NamedResponseValue", True, ""),
                  ("vendor_extension", 2, "NamedAny", True, "")],
    "NamedResponseValue": [("name", 1, "string", False, ""), ("value", 2, "ResponseValue", False, "")],
    "ResponseValue": [("response", 1, "Response", False, "oneof"),
                      ("json_reference", 2, "JsonReference", False, "oneof")],
    "Response": [("description", 1, "string", False, ""), ("schema", 2, "SchemaItem", False, ""),
                 ("vendor_extension", 5, "NamedAny", True, "")],
    "SchemaItem": [("schema", 1, "Schema", False, "oneof")],
}


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name="kubeloop/openapiv2.proto", package=PACKAGE, syntax="proto3")
    for name, fields in _MESSAGES.items():
        message = proto.message_type.add(name=name)
        oneofs: list[str] = []
        for field_name, number, kind, repeated, oneof in fields:
            field = message.field.add(name=field_name, number=number, json_name=field_name)
            field.label = _T.LABEL_REPEATED if repeated else _T.LABEL_OPTIONAL
            if kind in _SCALARS:
                field.type = _SCALARS[kind]
            else:
                field.type = _T.TYPE_MESSAGE
                field.type_name = f".{PACKAGE}.{kind}"
            if oneof:
                if oneof not in oneofs:
                    oneofs.append(oneof)
                    message.oneof_decl.add(name=oneof)
                field.oneof_index = oneofs.index(oneof)
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file_descriptor())


def message_class(name: str) -> type[Message]:
    """The generated class of message ``name`` (``"Document"``, ``"Schema"``, ...)."""
    found: type[Message] = message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))
    return found


Document = message_class("Document")

SCHEMA_FIELDS: dict[str, str] = {
    "$ref": "_ref", "format": "format", "title": "title", "description": "description",
    "multipleOf": "multiple_of", "maximum": "maximum", "exclusiveMaximum": "exclusive_maximum",
    "minimum": "minimum", "exclusiveMinimum": "exclusive_minimum", "maxLength": "max_length",
    "minLength": "min_length", "pattern": "pattern", "maxItems": "max_items", "minItems": "min_items",
    "uniqueItems": "unique_items", "maxProperties": "max_properties", "minProperties": "min_properties",
    "readOnly": "read_only",
}
"""JSON key -> protobuf field of the scalar members of ``Schema``."""
PARAMETER_FIELDS: dict[str, str] = {
    "required": "required", "in": "in", "description": "description", "name": "name", "type": "type",
    "format": "format", "uniqueItems": "unique_items",
}
"""The same for query and path parameters."""
OPERATION_FIELDS: dict[str, str] = {
    "summary": "summary", "description": "description", "operationId": "operation_id", "deprecated": "deprecated",
}
OPERATION_LIST_FIELDS: dict[str, str] = {
    "tags": "tags", "produces": "produces", "consumes": "consumes", "schemes": "schemes",
}
METHODS = ("get", "put", "post", "delete", "options", "head", "patch")


_DOCUMENT_END = "...\n"


def _yaml(value: Any) -> str:
    """YAML text of an extension value, as gnostic stores it (``merge\n``, or a block list).

    PyYAML ends a bare scalar with an explicit document end marker that Go's YAML does not
    write; it is dropped so that the bytes match what a Go server sends."""
    text = yaml.safe_dump(value, default_flow_style=False, sort_keys=False)
    return text.removesuffix(_DOCUMENT_END)


def _any(target: Message, value: Any) -> None:
    target.yaml = _yaml(value)


def _extensions(target: Any, source: Mapping[str, Any]) -> None:
    for key, value in source.items():
        if key.startswith("x-"):
            entry = target.vendor_extension.add(name=key)
            _any(entry.value, value)


def _schema(target: Any, source: Mapping[str, Any]) -> None:
    for key, field in SCHEMA_FIELDS.items():
        if key in source:
            setattr(target, field, source[key])
    if "default" in source:
        _any(target.default, source["default"])
    if "example" in source:
        _any(target.example, source["example"])
    for value in source.get("enum") or ():
        _any(target.enum.add(), value)
    target.required.extend(source.get("required") or ())
    kind = source.get("type")
    if kind is not None:
        target.type.value.extend([kind] if isinstance(kind, str) else kind)
    items = source.get("items")
    if isinstance(items, Mapping):
        _schema(target.items.schema.add(), items)
    elif isinstance(items, list):
        for item in items:
            _schema(target.items.schema.add(), item)
    additional = source.get("additionalProperties")
    if isinstance(additional, bool):
        target.additional_properties.boolean = additional
    elif isinstance(additional, Mapping):
        _schema(target.additional_properties.schema, additional)
    for part in source.get("allOf") or ():
        _schema(target.all_of.add(), part)
    properties = source.get("properties")
    if isinstance(properties, Mapping):
        target.properties.SetInParent()
        for name, sub in properties.items():
            _schema(target.properties.additional_properties.add(name=name).value, sub)
    _extensions(target, source)


def _parameter(target: Any, source: Mapping[str, Any]) -> None:
    if "$ref" in source:
        target.json_reference._ref = source["$ref"]
        return
    if source.get("in") == "body":
        body = target.parameter.body_parameter
        for key in ("description", "name", "in", "required"):
            if key in source:
                setattr(body, key, source[key])
        _schema(body.schema, source.get("schema") or {})
        _extensions(body, source)
        return
    wrapper = target.parameter.non_body_parameter
    sub = wrapper.path_parameter_sub_schema if source.get("in") == "path" else wrapper.query_parameter_sub_schema
    for key, field in PARAMETER_FIELDS.items():
        if key in source:
            setattr(sub, field, source[key])
    _extensions(sub, source)


def _operation(target: Any, source: Mapping[str, Any]) -> None:
    for key, field in OPERATION_FIELDS.items():
        if key in source:
            setattr(target, field, source[key])
    for key, field in OPERATION_LIST_FIELDS.items():
        getattr(target, field).extend(source.get(key) or ())
    for parameter in source.get("parameters") or ():
        _parameter(target.parameters.add(), parameter)
    for code, response in (source.get("responses") or {}).items():
        value = target.responses.response_code.add(name=str(code)).value
        if "$ref" in response:
            value.json_reference._ref = response["$ref"]
            continue
        value.response.description = response.get("description", "")
        if "schema" in response:
            _schema(value.response.schema.schema, response["schema"])
        _extensions(value.response, response)
    _extensions(target, source)


def document_message(document: Mapping[str, Any]) -> Message:
    """The ``openapi.v2.Document`` message of a Swagger 2.0 JSON ``document``."""
    message: Any = Document()
    message.swagger = document.get("swagger", "2.0")
    info = document.get("info") or {}
    for key in ("title", "version", "description"):
        if key in info:
            setattr(message.info, key, info[key])
    for key in ("schemes", "consumes", "produces"):
        getattr(message, key).extend(document.get(key) or ())
    if "host" in document:
        message.host = document["host"]
    if "basePath" in document:
        message.base_path = document["basePath"]
    message.paths.SetInParent()
    for url, item in (document.get("paths") or {}).items():
        value = message.paths.path.add(name=url).value
        for method in METHODS:
            if method in item:
                _operation(getattr(value, method), item[method])
        for parameter in item.get("parameters") or ():
            _parameter(value.parameters.add(), parameter)
        _extensions(value, item)
    message.definitions.SetInParent()
    for name, schema in (document.get("definitions") or {}).items():
        _schema(message.definitions.additional_properties.add(name=name).value, schema)
    _extensions(message, document)
    return message


def encode_document(document: Mapping[str, Any]) -> bytes:
    """The protobuf bytes kubectl expects from ``/openapi/v2``."""
    data: bytes = document_message(document).SerializeToString(deterministic=True)
    return data
