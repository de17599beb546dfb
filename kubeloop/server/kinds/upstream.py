"""Upstream's schemas of the built-in kinds, read from the pinned ``kubernetes-validate`` package.

That package ships, for every Kubernetes release, the OpenAPI definitions kube-apiserver
publishes (descriptions, formats, required fields, list types and map keys, patch strategies and
merge keys, the group-version-kind of each top-level kind) restated as JSON Schema. This module
reads the 1.33 release once and turns it back into the Swagger 2.0 form kube-apiserver serves at
``/openapi/v2``, so that one source of facts feeds OpenAPI, strategic merge, server-side apply
and typed decoding alike.

The restatement changed three things that are undone here:
- optional fields are typed ``[T, "null"]``: the first non-null type is kept;
- references point at ``#/$defs/``: they point at ``#/definitions/`` again;
- ``IntOrString`` and ``Quantity`` became ``oneOf`` unions: they are strings again, the former
  with ``format: int-or-string`` as upstream writes it; and ``apiVersion`` / ``kind`` of each
  top-level kind gained a one-value ``enum`` that upstream's document does not have.

Loading costs one JSON parse of 1.4 MB and one walk (measured in docs/decisions.md); it happens on
first use, not at import.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any

import orjson

Schema = dict[str, Any]

RELEASE = "v1.33.0"
"""The Kubernetes release whose schemas the server serves."""

_PACKAGE = "kubernetes_validate"
_FOLDER = f"kubernetes-json-schema/{RELEASE}-local"
_REF_PREFIX = "#/$defs/"
GVK_EXTENSION = "x-kubernetes-group-version-kind"

INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"

_REPLACED: dict[str, Schema] = {
    INT_OR_STRING: {"type": "string", "format": "int-or-string"},
    QUANTITY: {"type": "string"},
}


def _convert(value: Any) -> Any:
    if isinstance(value, dict):
        out: Schema = {}
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str) and item.startswith(_REF_PREFIX):
                out[key] = "#/definitions/" + item[len(_REF_PREFIX):]
            elif key == "type" and isinstance(item, list):
                types = [t for t in item if t != "null"]
                out[key] = types[0] if types else "object"
            elif key in ("properties", "x-kubernetes-group-version-kind", "enum"):
                out[key] = _convert_members(key, item)
            else:
                out[key] = _convert(item)
        return out
    if isinstance(value, list):
        return [_convert(item) for item in value]
    return value


def _convert_members(key: str, item: Any) -> Any:
    if key == "properties" and isinstance(item, dict):
        return {name: _convert(schema) for name, schema in item.items()}
    return _convert(item)


def _load_raw() -> dict[str, Any]:
    data = resources.files(_PACKAGE).joinpath(_FOLDER, "_definitions.json").read_bytes()
    parsed: dict[str, Any] = orjson.loads(data)["$defs"]
    return parsed


@functools.cache
def definitions() -> Mapping[str, Schema]:
    """Every upstream definition by name (``io.k8s.api.apps.v1.Deployment``), Swagger 2.0 form.

    Shared and cached: never mutate a schema taken from it.
    """
    converted: dict[str, Schema] = {}
    for name, schema in _load_raw().items():
        if name in _REPLACED:
            replaced = dict(_REPLACED[name])
            if "description" in schema:
                replaced["description"] = schema["description"]
            converted[name] = replaced
            continue
        out = _convert(schema)
        if GVK_EXTENSION in out:
            for field in ("apiVersion", "kind"):
                prop = out.get("properties", {}).get(field)
                if isinstance(prop, dict):
                    prop.pop("enum", None)
        converted[name] = out
    return MappingProxyType(dict(sorted(converted.items())))


@functools.cache
def _by_kind() -> Mapping[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for entry in schema.get(GVK_EXTENSION, ()):
            key = (entry["group"], entry["version"], entry["kind"])
            # A few kinds (DeleteOptions, WatchEvent) are tagged in every group: keep the first.
            index.setdefault(key, name)
    return MappingProxyType(index)


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a built-in group-version-kind, ``None`` when upstream has none."""
    return _by_kind().get((group, version, kind))


def resolve(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` itself, or the definition its ``$ref`` names (one level)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/definitions/"):
        return definitions()[ref[len("#/definitions/"):]]
    return schema
