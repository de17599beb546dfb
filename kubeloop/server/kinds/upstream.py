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

Loading costs one JSON parse of 1.4 MB on first use (not at import); each definition is
converted when first asked for (measured in docs/decisions.md).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
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


@functools.cache
def _load_raw_once() -> dict[str, Any]:
    return _load_raw()


def _load_raw() -> dict[str, Any]:
    data = resources.files(_PACKAGE).joinpath(_FOLDER, "_definitions.json").read_bytes()
    parsed: dict[str, Any] = orjson.loads(data)["$defs"]
    return parsed


def _converted(name: str, schema: Mapping[str, Any]) -> Schema:
    if name in _REPLACED:
        replaced = dict(_REPLACED[name])
        if "description" in schema:
            replaced["description"] = schema["description"]
        return replaced
    out: Schema = _convert(schema)
    if GVK_EXTENSION in out:
        for field in ("apiVersion", "kind"):
            prop = out.get("properties", {}).get(field)
            if isinstance(prop, dict):
                prop.pop("enum", None)
    return out


class _Definitions(Mapping[str, Schema]):
    """The definitions, each converted on first access: a server that never serves OpenAPI
    converts only the few its requests decode (the whole set takes ten times longer)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw
        self._names = sorted(raw)
        self._done: dict[str, Schema] = {}

    def __getitem__(self, name: str) -> Schema:
        found = self._done.get(name)
        if found is None:
            found = self._done[name] = _converted(name, self._raw[name])
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._raw


@functools.cache
def definitions() -> Mapping[str, Schema]:
    """Every upstream definition by name (``io.k8s.api.apps.v1.Deployment``), Swagger 2.0 form.

    Shared and cached: never mutate a schema taken from it.
    """
    return _Definitions(_load_raw_once())


@functools.cache
def tagged_kinds() -> tuple[tuple[str, str, str, str], ...]:
    """``(group, version, kind, definition name)`` of every definition tagged with a kind."""
    return tuple((entry["group"], entry["version"], entry["kind"], name)
                 for name, schema in sorted(_load_raw_once().items())
                 for entry in schema.get(GVK_EXTENSION, ()))


@functools.cache
def _by_kind() -> Mapping[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for group, version, kind, name in tagged_kinds():
        # A few kinds (DeleteOptions, WatchEvent) are tagged in every group: keep the first.
        index.setdefault((group, version, kind), name)
    return MappingProxyType(index)


def preload() -> None:
    """Read the schemas and index them now (servers do it at start, before freezing the heap)."""
    _by_kind()


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a built-in group-version-kind, ``None`` when upstream has none."""
    return _by_kind().get((group, version, kind))


def resolve(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` itself, or the definition its ``$ref`` names (one level)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/definitions/"):
        return definitions()[ref[len("#/definitions/"):]]
    return schema
