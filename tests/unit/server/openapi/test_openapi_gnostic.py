"""The gnostic protobuf form of the document: field numbers, round trips, what kubectl reads."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.crd import infos_for
from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.openapi import decode_document, openapi_v2_json, openapi_v2_protobuf, served_from_infos
from kubeloop.server.openapi.gnostic import Document, encode_document

SERVED = served_from_infos([*BUILTIN_RESOURCES, *infos_for(CLONESET_CRD)])


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi_v2_json(SERVED, [CLONESET_CRD])


@pytest.fixture(scope="module")
def encoded(document: dict[str, Any]) -> bytes:
    return openapi_v2_protobuf(document)


def test_whole_document_round_trips(document: dict[str, Any], encoded: bytes) -> None:
    assert decode_document(encoded) == document


def test_encoding_is_deterministic(document: dict[str, Any], encoded: bytes) -> None:
    assert openapi_v2_protobuf(document) == encoded


def test_wire_bytes_use_gnostic_field_numbers() -> None:
    document = {"swagger": "2.0", "definitions": {"T": {"type": "object", "x-a": "b"}}}
    # Document.swagger=1 ("2.0"); Document.paths=8 (empty); Document.definitions=9 {
    #   NamedSchema additional_properties=1 { name=1 "T", value=2 Schema {
    #     type=22 TypeItem{value=1 "object"}, vendor_extension=31 NamedAny{name=1 "x-a", value=2 Any{yaml=2 "b\n"}}}}}
    named_any = b"\x0a\x03x-a" + b"\x12\x04" + b"\x12\x02b\n"
    schema = b"\xb2\x01\x08\x0a\x06object" + b"\xfa\x01" + bytes([len(named_any)]) + named_any
    named_schema = b"\x0a\x01T" + b"\x12" + bytes([len(schema)]) + schema
    definitions = b"\x0a" + bytes([len(named_schema)]) + named_schema
    expected = b"\x0a\x032.0" + b"\x42\x00" + b"\x4a" + bytes([len(definitions)]) + definitions
    assert encode_document(document) == expected


def test_empty_body_is_an_empty_document() -> None:
    assert decode_document(b"") == {"swagger": "", "info": {}, "paths": {}, "definitions": {}}


def _supports_dry_run(message: Any, group: str, version: str, kind: str) -> bool | None:
    """kubectl 1.20's dry-run verifier: the first path whose PATCH carries the GVK decides."""
    for path in message.paths.path:
        patch = path.value.patch
        extensions = {e.name: yaml.safe_load(e.value.yaml) for e in patch.vendor_extension}
        if extensions.get("x-kubernetes-group-version-kind") != {"group": group, "version": version, "kind": kind}:
            continue
        return any(p.parameter.non_body_parameter.query_parameter_sub_schema.name == "dryRun"
                   for p in patch.parameters)
    return None


@pytest.mark.parametrize("served", [s for s in SERVED if "patch" in s.verbs],
                         ids=lambda s: f"{s.group or 'core'}/{s.kind}")
def test_dry_run_verifier_finds_every_kind(encoded: bytes, served: Any) -> None:
    message: Any = Document()
    message.ParseFromString(encoded)
    assert _supports_dry_run(message, served.group, served.version, served.kind) is True


def _definition_for(message: Any, group: str, version: str, kind: str) -> Any:
    """How kubectl finds a kind's model: through the list-valued GVK extension of a definition."""
    for named in message.definitions.additional_properties:
        for extension in named.value.vendor_extension:
            if extension.name == "x-kubernetes-group-version-kind" and {
                    "group": group, "version": version, "kind": kind} in yaml.safe_load(extension.value.yaml):
                return named.value
    return None


def test_models_carry_types_and_patch_metadata(encoded: bytes) -> None:
    message: Any = Document()
    message.ParseFromString(encoded)
    deployment = _definition_for(message, "apps", "v1", "Deployment")
    assert deployment is not None
    spec_ref = next(p.value for p in deployment.properties.additional_properties if p.name == "spec")._ref
    assert spec_ref == "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
    containers = _named_schema(message, "io.k8s.api.core.v1.PodSpec", "containers")
    extensions = {e.name: yaml.safe_load(e.value.yaml) for e in containers.vendor_extension}
    assert extensions["x-kubernetes-patch-merge-key"] == "name"
    assert extensions["x-kubernetes-patch-strategy"] == "merge"
    assert list(containers.type.value) == ["array"]
    assert containers.items.schema[0]._ref == "#/definitions/io.k8s.api.core.v1.Container"
    labels = _named_schema(message, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "labels")
    assert list(labels.additional_properties.schema.type.value) == ["string"]
    assert _definition_for(message, "apps.kruise.io", "v1alpha1", "CloneSet") is not None


def _named_schema(message: Any, definition: str, field: str) -> Any:
    found = next(d.value for d in message.definitions.additional_properties if d.name == definition)
    return next(p.value for p in found.properties.additional_properties if p.name == field)


def test_every_schema_has_at_most_one_type(document: dict[str, Any]) -> None:
    """kubectl's model reader rejects a ``type`` list with more than one entry."""
    def walk(value: Any) -> None:
        if isinstance(value, dict):
            assert not isinstance(value.get("type"), list)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
    walk(document["definitions"])


def test_boolean_additional_properties_and_reference_parameters_round_trip() -> None:
    document = {
        "swagger": "2.0", "info": {"title": "t", "version": "v"},
        "paths": {"/x": {"get": {"parameters": [{"$ref": "#/parameters/p"}],
                                 "responses": {"200": {"$ref": "#/responses/r"}}}}},
        "definitions": {"A": {"type": "object", "additionalProperties": False, "default": {"k": [1, 2]},
                              "enum": ["a", "b"], "items": [{"type": "string"}, {"type": "integer"}],
                              "allOf": [{"$ref": "#/definitions/A"}], "maximum": 2.5, "minLength": 1}},
    }
    assert decode_document(encode_document(document)) == document
