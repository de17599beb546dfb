"""OpenAPI v2 definitions of custom resources, made from their CRDs' ``openAPIV3Schema``.

Real servers publish a definition per served CRD version (named after the reversed group,
``io.kruise.apps.v1alpha1.CloneSet``) so that kubectl validates and explains custom resources.
Swagger 2.0 and kubectl's model reader understand less than a CRD schema says, so the schema is
cut down the way kube-apiserver does it for ``/openapi/v2``:

- ``allOf``/``anyOf``/``oneOf``/``not`` are dropped (kubectl cannot check them);
- a ``nullable`` value loses its type, items and properties (null must stay acceptable);
- a value that keeps unknown fields (``x-kubernetes-preserve-unknown-fields``) loses its items
  and properties, so kubectl does not reject the fields it does not list;
- an array left without items loses its type (kubectl needs an item schema for arrays);
- ``metadata`` of the object becomes a reference to ``ObjectMeta``; ``apiVersion`` and ``kind``
  get their usual descriptions; the definition carries the group-version-kind extension.

The cut-down schema is used only for documentation and client-side checks; the server itself
validates against the full CRD schema.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from kubeloop.server.openapi.dsl import GVK_EXTENSION, META, Schema, gvk, list_definition, ref, type_meta_fields

_UNSUPPORTED = ("allOf", "anyOf", "oneOf", "not")
_V3_ONLY = ("nullable", "x-kubernetes-validations", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
            "x-kubernetes-preserve-unknown-fields")


def crd_definition_name(group: str, version: str, kind: str) -> str:
    """Upstream's name for a custom resource definition: the group reversed, then version and kind."""
    reversed_group = ".".join(reversed(group.split(".")))
    return f"{reversed_group}.{version}.{kind}"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _to_v2(schema: Mapping[str, Any]) -> Schema:
    """The Swagger 2.0 form of one (sub)schema, recursively; ``schema`` is not modified."""
    out: Schema = {k: copy.deepcopy(v) for k, v in schema.items()
                   if k not in _UNSUPPORTED and k not in _V3_ONLY and k not in ("properties", "items",
                                                                                  "additionalProperties")}
    open_value = bool(schema.get("x-kubernetes-preserve-unknown-fields")) or bool(schema.get("nullable"))
    if schema.get("nullable"):
        out.pop("type", None)
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    if not open_value:
        properties = _mapping(schema.get("properties"))
        if properties:
            out["properties"] = {name: _to_v2(_mapping(sub)) for name, sub in properties.items()}
            nullable = {name for name, sub in properties.items() if _mapping(sub).get("nullable")}
            if nullable and isinstance(out.get("required"), list):
                out["required"] = [r for r in out["required"] if r not in nullable]
        items = schema.get("items")
        if isinstance(items, Mapping):
            out["items"] = _to_v2(items)
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        converted = _to_v2(additional)
        if additional.get("nullable"):
            converted.pop("type", None)
        out["additionalProperties"] = converted
    elif isinstance(additional, bool):
        out["additionalProperties"] = additional
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    return out


def _versions(crd: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for version in _mapping(crd.get("spec")).get("versions") or ():
        if isinstance(version, Mapping) and version.get("served") is not False and isinstance(version.get("name"), str):
            yield version["name"], version


def crd_definitions(crd: Mapping[str, Any]) -> dict[str, Schema]:
    """The definitions of every served version of ``crd`` (object and list), by name.

    Versions without a schema get an open object definition: kubectl then checks nothing inside
    but still finds the kind (for ``explain`` and dry-run discovery).
    """
    spec = _mapping(crd.get("spec"))
    names = _mapping(spec.get("names"))
    group, kind = spec.get("group"), names.get("kind")
    if not isinstance(group, str) or not isinstance(kind, str):
        return {}
    list_kind = names.get("listKind") if isinstance(names.get("listKind"), str) else f"{kind}List"
    found: dict[str, Schema] = {}
    for version, entry in _versions(crd):
        schema = _mapping(_mapping(entry.get("schema")).get("openAPIV3Schema"))
        definition: Schema = _to_v2(schema) if schema else {"type": "object"}
        properties = dict(definition.get("properties") or {})
        standard = type_meta_fields()
        for key in ("apiVersion", "kind"):
            properties[key] = {**standard[key], **{k: v for k, v in properties.get(key, {}).items()
                                                   if k != "description"}}
        properties["metadata"] = ref(META + "ObjectMeta", "Standard object metadata.")
        definition["properties"] = dict(sorted(properties.items()))
        definition.setdefault("type", "object")
        definition[GVK_EXTENSION] = [gvk(group, version, kind)]
        name = crd_definition_name(group, version, kind)
        found[name] = definition
        found[crd_definition_name(group, version, str(list_kind))] = list_definition(
            name, f"A list of {kind} objects.", gvk(group, version, str(list_kind)))
    return found
