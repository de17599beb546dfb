"""A small vocabulary for writing Swagger 2.0 schemas as compact Python data.

Every helper returns a fresh plain ``dict`` in the shape the OpenAPI document carries, so the
definition modules read like a field list: ``"replicas": integer("How many pods.")``. The
Kubernetes vendor extensions (patch strategy and merge key, list type and map keys, the
group-version-kind of a top-level kind) are keyword arguments, spelled as upstream spells the
extension keys in the served document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Schema = dict[str, Any]

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
"""Name prefix of the ``meta/v1`` definitions (``ObjectMeta``, ``ListMeta``, ...)."""
CORE = "io.k8s.api.core.v1."
APPS = "io.k8s.api.apps.v1."
COORDINATION = "io.k8s.api.coordination.v1."
EVENTS = "io.k8s.api.events.v1."
AUTOSCALING = "io.k8s.api.autoscaling.v1."
APIEXTENSIONS = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"

GVK_EXTENSION = "x-kubernetes-group-version-kind"
PATCH_STRATEGY = "x-kubernetes-patch-strategy"
PATCH_MERGE_KEY = "x-kubernetes-patch-merge-key"
LIST_TYPE = "x-kubernetes-list-type"
LIST_MAP_KEYS = "x-kubernetes-list-map-keys"
MAP_TYPE = "x-kubernetes-map-type"


def _described(schema: Schema, description: str) -> Schema:
    if description:
        schema["description"] = description
    return schema


def string(description: str = "", fmt: str = "") -> Schema:
    schema: Schema = {"type": "string"}
    if fmt:
        schema["format"] = fmt
    return _described(schema, description)


def integer(description: str = "", fmt: str = "int32") -> Schema:
    return _described({"type": "integer", "format": fmt}, description)


def int64(description: str = "") -> Schema:
    return integer(description, "int64")


def number(description: str = "") -> Schema:
    return _described({"type": "number", "format": "double"}, description)


def boolean(description: str = "") -> Schema:
    return _described({"type": "boolean"}, description)


def any_object(description: str = "") -> Schema:
    """An object of any shape (``type: object`` without properties: kubectl checks nothing inside)."""
    return _described({"type": "object"}, description)


def ref(name: str, description: str = "") -> Schema:
    """A reference to the definition called ``name`` (a full name such as ``CORE + "PodSpec"``)."""
    return _described({"$ref": f"#/definitions/{name}"}, description)


def with_patch(schema: Schema, strategy: str = "", merge_key: str = "") -> Schema:
    """``schema`` with strategic-merge extensions added (in place; returns it)."""
    if merge_key:
        schema[PATCH_MERGE_KEY] = merge_key
    if strategy:
        schema[PATCH_STRATEGY] = strategy
    return schema


def array(items: Schema, description: str = "", *, strategy: str = "", merge_key: str = "",
          list_type: str = "", map_keys: Iterable[str] = ()) -> Schema:
    """A list of ``items``; ``strategy``/``merge_key`` are the strategic-merge tags and
    ``list_type``/``map_keys`` the server-side-apply list semantics."""
    schema: Schema = {"type": "array", "items": items}
    _described(schema, description)
    with_patch(schema, strategy, merge_key)
    if list_type:
        schema[LIST_TYPE] = list_type
    keys = list(map_keys)
    if keys:
        schema[LIST_MAP_KEYS] = keys
    return schema


def map_of(values: Schema, description: str = "", *, strategy: str = "") -> Schema:
    """An object with arbitrary keys whose values are ``values``."""
    schema = _described({"type": "object", "additionalProperties": values}, description)
    return with_patch(schema, strategy)


def string_map(description: str = "") -> Schema:
    return map_of(string(), description)


def gvk(group: str, version: str, kind: str) -> dict[str, str]:
    """One entry of the ``x-kubernetes-group-version-kind`` extension."""
    return {"group": group, "version": version, "kind": kind}


def definition(description: str, properties: Mapping[str, Schema], required: Iterable[str] = (), *,
               kinds: Iterable[Mapping[str, str]] = (), map_type: str = "") -> Schema:
    """An object definition; ``kinds`` lists the group-version-kinds served with this schema."""
    schema: Schema = {"description": description, "type": "object", "properties": dict(properties)}
    names = list(required)
    if names:
        schema["required"] = names
    found = [dict(k) for k in kinds]
    if found:
        schema[GVK_EXTENSION] = found
    if map_type:
        schema[MAP_TYPE] = map_type
    return schema


def type_meta_fields() -> dict[str, Schema]:
    """``apiVersion`` and ``kind``, which every top-level kind and list carries."""
    return {
        "apiVersion": string("The versioned schema of this representation of the object, "
                             "such as apps/v1; servers convert to their own version."),
        "kind": string("The REST resource this object represents, in CamelCase, such as Deployment."),
    }


def list_definition(item_name: str, description: str, kind: Mapping[str, str]) -> Schema:
    """The ``<Kind>List`` definition of a kind whose items are ``item_name``."""
    properties = type_meta_fields()
    properties["items"] = array(ref(item_name), "The objects of the list.")
    properties["metadata"] = ref(META + "ListMeta", "Standard list metadata: resourceVersion and continue token.")
    return definition(description, dict(sorted(properties.items())), ["items"], kinds=[kind])
