"""CRD schemas turned into OpenAPI v2 definitions the way kube-apiserver publishes them."""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.openapi import crd_definition_name, crd_definitions

CLONESET = "io.kruise.apps.v1alpha1.CloneSet"


def _crd(schema: dict[str, Any] | None, *, served: bool = True, list_kind: str | None = None) -> dict[str, Any]:
    names: dict[str, Any] = {"plural": "widgets", "kind": "Widget"}
    if list_kind:
        names["listKind"] = list_kind
    version: dict[str, Any] = {"name": "v1", "served": served, "storage": True}
    if schema is not None:
        version["schema"] = {"openAPIV3Schema": schema}
    return {"metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": names, "scope": "Namespaced", "versions": [version]}}


def test_definition_name_reverses_the_group() -> None:
    assert crd_definition_name("apps.kruise.io", "v1alpha1", "CloneSet") == CLONESET
    assert crd_definition_name("example.com", "v1", "Widget") == "com.example.v1.Widget"


def test_cloneset_definition_has_gvk_metadata_reference_and_its_fields() -> None:
    definitions = crd_definitions(CLONESET_CRD)
    assert set(definitions) == {CLONESET, CLONESET + "List"}
    cloneset = definitions[CLONESET]
    assert cloneset["x-kubernetes-group-version-kind"] == [
        {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "CloneSet"}]
    assert cloneset["properties"]["metadata"]["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    spec = cloneset["properties"]["spec"]
    assert spec["required"] == ["selector", "template"]
    assert spec["properties"]["replicas"]["type"] == "integer"
    assert definitions[CLONESET + "List"]["x-kubernetes-group-version-kind"] == [
        {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "CloneSetList"}]


def test_open_and_int_or_string_values_become_untyped_or_unlisted() -> None:
    spec = crd_definitions(CLONESET_CRD)[CLONESET]["properties"]["spec"]
    template = spec["properties"]["template"]
    assert "properties" not in template
    assert "x-kubernetes-preserve-unknown-fields" not in template
    partition = spec["properties"]["updateStrategy"]["properties"]["partition"]
    assert "type" not in partition and "anyOf" not in partition


def test_v3_only_constructs_are_dropped_and_nullable_fields_become_optional() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["a", "b"],
                "properties": {
                    "a": {"type": "string", "nullable": True},
                    "b": {"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": {"type": "string"}},
                    "c": {"type": "object", "additionalProperties": {"type": "string", "nullable": True}},
                    "d": {"oneOf": [{"type": "string"}], "type": "string", "x-kubernetes-list-type": "set"},
                },
            },
        },
    }
    spec = crd_definitions(_crd(schema))["com.example.v1.Widget"]["properties"]["spec"]
    assert spec["required"] == ["b"]
    assert spec["properties"]["a"] == {}
    assert spec["properties"]["b"] == {}
    assert spec["properties"]["c"] == {"type": "object", "additionalProperties": {}}
    assert spec["properties"]["d"] == {"type": "string", "x-kubernetes-list-type": "set"}


def test_input_crd_is_not_modified() -> None:
    before = copy.deepcopy(CLONESET_CRD)
    crd_definitions(CLONESET_CRD)
    assert before == CLONESET_CRD


def test_version_without_schema_is_an_open_object_and_unserved_versions_are_left_out() -> None:
    open_definition = crd_definitions(_crd(None, list_kind="WidgetCollection"))
    assert set(open_definition) == {"com.example.v1.Widget", "com.example.v1.WidgetCollection"}
    assert open_definition["com.example.v1.Widget"]["type"] == "object"
    assert crd_definitions(_crd(None, served=False)) == {}


def test_crd_without_group_or_kind_gives_nothing() -> None:
    assert crd_definitions({"spec": {"names": {"plural": "x"}}}) == {}
