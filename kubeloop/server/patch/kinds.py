"""Strategic-merge metadata of every built-in kind, derived from upstream's schemas.

Upstream reads ``patchStrategy`` / ``patchMergeKey`` from the Go struct tags of ``k8s.io/api``;
the same tags are published in its OpenAPI document as ``x-kubernetes-patch-strategy`` /
``x-kubernetes-patch-merge-key``, which :mod:`kubeloop.server.kinds.upstream` reads. A
:class:`PatchSchema` is built per definition, once, on first use; recursive types (the
``JSONSchemaProps`` of a CRD) share one schema object per definition.

Every built-in kind has a schema, so strategic merge works for all of them; custom resources
have none (:func:`patch_schema_for` returns ``None``): kube-apiserver answers their strategic
merge patches with 415.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kubeloop.server.kinds import upstream
from kubeloop.server.patch.schema import FieldMeta, PatchSchema

_REF = "#/definitions/"
_VERSION_PREFERENCE = ("v1", "v2")


def _definition_of(schema: Mapping[str, Any]) -> str | None:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        return ref[len(_REF):]
    return None


class _Builder:
    """Builds the schema of each definition once; a definition under construction is reused as is."""

    def __init__(self) -> None:
        self._built: dict[str, PatchSchema] = {}

    def schema(self, name: str) -> PatchSchema:
        found = self._built.get(name)
        if found is not None:
            return found
        fields: dict[str, FieldMeta] = {}
        result = PatchSchema(name="struct")
        self._built[name] = result
        properties = upstream.definitions()[name].get("properties") or {}
        for field_name, prop in properties.items():
            meta = self._field(prop)
            if meta is not None:
                fields[field_name] = meta
        # Filled in place so that recursive references see the finished schema.
        result.fields_mut().update(fields)
        return result

    def _value_schema(self, prop: Mapping[str, Any]) -> PatchSchema | None:
        """The object type a property leads to (through a list's items), ``None`` for scalars and maps."""
        target = prop.get("items") if prop.get("type") == "array" else prop
        if not isinstance(target, Mapping):
            return None
        name = _definition_of(target)
        if name is None or not upstream.definitions()[name].get("properties"):
            return None
        return self.schema(name)

    def _field(self, prop: Mapping[str, Any]) -> FieldMeta | None:
        strategy = prop.get("x-kubernetes-patch-strategy")
        schema = self._value_schema(prop)
        if isinstance(strategy, str) and strategy:
            merge_key = prop.get("x-kubernetes-patch-merge-key")
            return FieldMeta(tuple(strategy.split(",")), merge_key if isinstance(merge_key, str) else "",
                             schema if schema is not None else PatchSchema(name="struct"))
        if schema is None:
            return None
        return FieldMeta(schema=schema)


@functools.cache
def _builder() -> _Builder:
    return _Builder()


@functools.cache
def _by_group_kind() -> Mapping[tuple[str, str], str]:
    index: dict[tuple[str, str], tuple[int, str]] = {}
    for group, version, kind, name in upstream.tagged_kinds():
        rank = _VERSION_PREFERENCE.index(version) if version in _VERSION_PREFERENCE else len(_VERSION_PREFERENCE)
        key = (group, kind)
        if key not in index or rank < index[key][0]:
            index[key] = (rank, name)
    return {key: name for key, (_, name) in index.items()}


def patch_schema_for(group: str, kind: str) -> PatchSchema | None:
    """The strategic-merge schema of a built-in kind, ``None`` for kinds without one (custom
    resources), which kube-apiserver serves without strategic merge (415)."""
    name = _by_group_kind().get((group, kind))
    if name is None:
        return None
    return _builder().schema(name)


def definition_schema(name: str) -> PatchSchema:
    """The strategic-merge schema of one upstream definition (``io.k8s.api.core.v1.PodSpec``)."""
    return _builder().schema(name)


def object_meta_schema() -> PatchSchema:
    """The strategic-merge schema of ``metadata`` (``ObjectMeta``), custom resources' included."""
    return _builder().schema("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")


def kinds_with_schema() -> list[tuple[str, str]]:
    """Every ``(group, kind)`` that has a schema, for discovery and tests."""
    return sorted(_by_group_kind())
