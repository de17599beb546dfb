"""Building the served OpenAPI documents: ``/openapi/v2`` (JSON and protobuf) and ``/openapi/v3``.

All builders are pure: they take the served resources and the stored CRDs and return plain
data; :class:`Encoded` adds the bytes, an ETag and the content type a handler needs, and
:mod:`kubeloop.server.openapi.cache` keeps them until what is served changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kubeloop.server.openapi.crd_definitions import crd_definitions
from kubeloop.server.openapi.definitions import BUILTIN_DEFINITIONS
from kubeloop.server.openapi.dsl import Schema
from kubeloop.server.openapi.gnostic import encode_document
from kubeloop.server.openapi.paths import resource_paths
from kubeloop.server.openapi.served import ServedResource

PROTOBUF_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
"""What the server answers protobuf requests with. Never the requested ``...v2@v1.0+protobuf``:
Go's MIME parser rejects the ``@`` and client-go then fails even on a 200 response."""
JSON_CONTENT_TYPE = "application/json"
INFO = {"title": "Kubernetes", "version": "v1.33.0"}

_V2_REF = "#/definitions/"
_V3_REF = "#/components/schemas/"


@dataclass(frozen=True)
class Encoded:
    """A document ready to send: ``body``, a strong ``etag`` (quoted) and its ``content_type``."""

    body: bytes
    etag: str
    content_type: str


def encoded(body: bytes, content_type: str) -> Encoded:
    return Encoded(body, f'"{hashlib.sha256(body).hexdigest().upper()}"', content_type)


def _all_definitions(crds: Iterable[Mapping[str, Any]]) -> dict[str, Schema]:
    definitions = dict(BUILTIN_DEFINITIONS)
    for crd in crds:
        definitions.update(crd_definitions(crd))
    return definitions


def _all_paths(served: Iterable[ServedResource]) -> dict[str, Schema]:
    paths: dict[str, Schema] = {}
    for resource in served:
        paths.update(resource_paths(resource))
    return dict(sorted(paths.items()))


def openapi_v2_json(served: Iterable[ServedResource], crds: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The Swagger 2.0 document: our built-in definitions, one per served CRD version, and the
    operations of every served resource. ``crds`` are stored CustomResourceDefinition objects."""
    return {
        "swagger": "2.0",
        "info": dict(INFO),
        "paths": _all_paths(served),
        "definitions": dict(sorted(_all_definitions(crds).items())),
    }


def openapi_v2_protobuf(document: Mapping[str, Any]) -> bytes:
    """The gnostic protobuf form of a document from :func:`openapi_v2_json`."""
    return encode_document(document)


def encoded_v2(document: Mapping[str, Any], protobuf: bool) -> Encoded:
    if protobuf:
        return encoded(openapi_v2_protobuf(document), PROTOBUF_CONTENT_TYPE)
    return encoded(orjson.dumps(document), JSON_CONTENT_TYPE)


def _v3_schema(value: Any) -> Any:
    """A v2 schema (or any part of one) in OpenAPI 3 form: references point into components,
    and a reference with siblings is wrapped in ``allOf`` (siblings of ``$ref`` are ignored there)."""
    if isinstance(value, list):
        return [_v3_schema(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    converted = {k: _v3_schema(v) for k, v in value.items()}
    target = converted.get("$ref")
    if isinstance(target, str) and target.startswith(_V2_REF):
        target = _V3_REF + target[len(_V2_REF):]
        if len(converted) == 1:
            return {"$ref": target}
        del converted["$ref"]
        converted["allOf"] = [{"$ref": target}]
    return converted


def _v3_parameter(parameter: Mapping[str, Any]) -> Schema:
    out: Schema = {k: parameter[k] for k in ("name", "in", "description", "required") if k in parameter}
    out["schema"] = {k: parameter[k] for k in ("type", "uniqueItems", "format") if k in parameter}
    return out


def _v3_operation(operation: Mapping[str, Any]) -> Schema:
    out: Schema = {k: v for k, v in operation.items()
                   if k not in ("parameters", "responses", "consumes", "produces", "schemes")}
    parameters = []
    for parameter in operation.get("parameters") or ():
        if parameter.get("in") == "body":
            media = operation.get("consumes") or ["*/*"]
            out["requestBody"] = {"required": True,
                                  "content": {m: {"schema": _v3_schema(parameter["schema"])} for m in media}}
        else:
            parameters.append(_v3_parameter(parameter))
    if parameters:
        out["parameters"] = parameters
    responses: Schema = {}
    for code, response in (operation.get("responses") or {}).items():
        converted: Schema = {"description": response.get("description", "")}
        if "schema" in response:
            converted["content"] = {m: {"schema": _v3_schema(response["schema"])}
                                    for m in operation.get("produces") or [JSON_CONTENT_TYPE]}
        responses[code] = converted
    out["responses"] = responses
    return out


def _references(value: Any, found: set[str]) -> None:
    if isinstance(value, list):
        for item in value:
            _references(item, found)
    elif isinstance(value, Mapping):
        target = value.get("$ref")
        if isinstance(target, str) and target.startswith(_V2_REF):
            found.add(target[len(_V2_REF):])
        for item in value.values():
            _references(item, found)


def _closure(roots: Iterable[Any], definitions: Mapping[str, Schema]) -> list[str]:
    """Names of every definition reachable from ``roots`` through references."""
    pending: set[str] = set()
    for root in roots:
        _references(root, pending)
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen or name not in definitions:
            continue
        seen.add(name)
        _references(definitions[name], pending)
    return sorted(seen)


def openapi_v3_document(group_version_path: str, served: Iterable[ServedResource],
                        crds: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The OpenAPI 3.0 document of one group version (``"apis/apps/v1"``, ``"api/v1"``), ``None``
    when nothing is served there."""
    mine = [s for s in served if s.openapi_v3_path == group_version_path]
    if not mine:
        return None
    definitions = _all_definitions(crds)
    v2_paths = _all_paths(mine)
    kinds = [definitions[name] for s in mine for name in (s.definition_name, s.list_definition_name)
             if name is not None and name in definitions]
    names = _closure([*v2_paths.values(), *kinds], definitions)
    for s in mine:
        for name in (s.definition_name, s.list_definition_name):
            if name is not None and name in definitions and name not in names:
                names.append(name)
    paths: dict[str, Any] = {}
    for url, item in v2_paths.items():
        converted: Schema = {}
        for key, value in item.items():
            if key == "parameters":
                converted["parameters"] = [_v3_parameter(p) for p in value]
            else:
                converted[key] = _v3_operation(value)
        paths[url] = converted
    return {
        "openapi": "3.0.0",
        "info": dict(INFO),
        "paths": paths,
        "components": {"schemas": {name: _v3_schema(definitions[name]) for name in sorted(names)}},
    }


def openapi_v3_discovery(etags: Mapping[str, str]) -> dict[str, Any]:
    """The ``/openapi/v3`` index: each group version path with a URL that carries its hash.

    ``etags`` maps a group version path (``"apis/apps/v1"``) to its document's ETag (quotes
    are dropped from the hash, as real servers do)."""
    return {"paths": {path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={etag.strip(chr(34))}"}
                      for path, etag in sorted(etags.items())}}


def group_version_paths(served: Iterable[ServedResource]) -> list[str]:
    """The group version paths that have a v3 document."""
    return sorted({s.openapi_v3_path for s in served})
