"""Field sets, the FieldsV1 encoding and path texts, as structured-merge-diff defines them."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.server.apply import (
    OPEN_SHAPE,
    Path,
    Shape,
    builtin_shape,
    compare,
    decode_fields,
    encode_fields,
    field_set,
    path_text,
    schema_shape,
)

DEPLOYMENT = builtin_shape("apps", "Deployment")


def web() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "u", "resourceVersion": "3",
                         "labels": {"tier": "front"}, "finalizers": ["a", "b"]},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"spec": {"containers": [{"name": "app", "image": "nginx", "args": ["-x"]}],
                                           "securityContext": {}}}},
            "status": {"replicas": 2}}


def test_deployment_field_set_skips_server_metadata_and_status() -> None:
    container: Path = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"app"}')
    assert field_set(web(), DEPLOYMENT) == {
        ("f:metadata", "f:labels", "f:tier"),
        ("f:metadata", "f:finalizers", 'v:"a"'),
        ("f:metadata", "f:finalizers", 'v:"b"'),
        ("f:spec", "f:replicas"),
        ("f:spec", "f:selector", "f:matchLabels", "f:app"),
        container,
        (*container, "f:name"),
        (*container, "f:image"),
        (*container, "f:args"),
        ("f:spec", "f:template", "f:spec", "f:securityContext"),
    }


def test_encoding_marks_members_with_children() -> None:
    encoded = encode_fields(field_set(web(), DEPLOYMENT))
    containers = encoded["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert containers == {'k:{"name":"app"}': {".": {}, "f:args": {}, "f:image": {}, "f:name": {}}}
    assert encoded["f:metadata"]["f:finalizers"] == {'v:"a"': {}, 'v:"b"': {}}
    assert encoded["f:spec"]["f:template"]["f:spec"]["f:securityContext"] == {}
    assert "." not in encoded["f:spec"]


def test_decode_inverts_encode() -> None:
    paths = field_set(web(), DEPLOYMENT)
    assert decode_fields(encode_fields(paths)) == paths


@given(st.recursive(st.one_of(st.integers(), st.text(max_size=3)),
                    lambda inner: st.dictionaries(st.text(min_size=1, max_size=3), inner, min_size=1, max_size=3),
                    max_leaves=12))
def test_round_trip_of_open_maps(value: Any) -> None:
    paths = field_set({"spec": value}, OPEN_SHAPE)
    assert decode_fields(encode_fields(paths)) == paths


def test_decode_ignores_malformed_documents() -> None:
    assert decode_fields(None) == frozenset()
    assert decode_fields({"f:a": "x", "f:b": {".": {}, "f:c": {}}}) == {("f:a",), ("f:b",), ("f:b", "f:c")}


@pytest.mark.parametrize(("path", "text"), [
    (("f:spec", "f:replicas"), ".spec.replicas"),
    (("f:spec", "f:containers", 'k:{"name":"app"}', "f:image"), '.spec.containers[name="app"].image'),
    (("f:spec", "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'), '.spec.ports[containerPort=80,protocol="TCP"]'),
    (("f:metadata", "f:finalizers", 'v:"x"'), '.metadata.finalizers[="x"]'),
    (("f:items", "i:3"), ".items[3]"),
])
def test_path_text(path: Path, text: str) -> None:
    assert path_text(path) == text


def test_lists_without_merge_key_are_atomic_and_unknown_kinds_open() -> None:
    obj = {"spec": {"template": {"spec": {"tolerations": [{"key": "a"}], "containers": [{"image": "x"}]}}}}
    # tolerations have no strategy; containers without their merge key cannot be keyed.
    assert field_set(obj, DEPLOYMENT) == {("f:spec", "f:template", "f:spec", "f:tolerations"),
                                          ("f:spec", "f:template", "f:spec", "f:containers")}
    assert field_set({"spec": {"l": [1, 2]}}, builtin_shape("nope.example", "Nothing")) == {("f:spec", "f:l")}


def test_custom_resource_list_types() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "proto"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "args": {"type": "array", "items": {"type": "string"}},
        "extra": {"type": "object", "additionalProperties": {"type": "array", "x-kubernetes-list-type": "set"}}}}}}
    obj = {"spec": {"ports": [{"name": "http", "proto": "TCP", "port": 80}], "tags": ["a"], "args": ["x"],
                    "extra": {"k": ["v"]}}}
    port: Path = ("f:spec", "f:ports", 'k:{"name":"http","proto":"TCP"}')
    assert field_set(obj, schema_shape(schema)) == {
        port, (*port, "f:name"), (*port, "f:proto"), (*port, "f:port"),
        ("f:spec", "f:tags", 'v:"a"'), ("f:spec", "f:args"), ("f:spec", "f:extra", "f:k", 'v:"v"')}
    assert field_set(obj, schema_shape(None)) == {("f:spec", "f:ports"), ("f:spec", "f:tags"), ("f:spec", "f:args"),
                                                  ("f:spec", "f:extra", "f:k")}


def test_compare() -> None:
    old = web()
    new = web()
    new["spec"]["replicas"] = 3
    new["metadata"]["labels"] = {"team": "a"}
    new["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "busybox"})
    change = compare(old, new, DEPLOYMENT)
    side: Path = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"side"}')
    assert change.modified == {("f:spec", "f:replicas")}
    assert change.removed == {("f:metadata", "f:labels", "f:tier")}
    assert change.added == {("f:metadata", "f:labels", "f:team"), side, (*side, "f:name"), (*side, "f:image")}
    assert compare(old, web(), DEPLOYMENT).empty()


def test_odd_yaml_values_still_have_paths() -> None:
    # YAML may give integer keys and integers beyond 64 bits; tracking must not fail on them.
    obj = {"metadata": {"finalizers": [2**70]}, "spec": {1: "x"}}
    assert field_set(obj, DEPLOYMENT) == {("f:metadata", "f:finalizers", f"v:{2**70}"), ("f:spec", "f:1")}


def _live_shapes() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Shape))


def test_shapes_of_a_recursive_schema_stay_bounded_however_deep_a_document_nests() -> None:
    """Shapes are remembered per declared field, not per path: a type that contains itself
    (as JSONSchemaProps does) walked 80 levels deep adds no more shapes than walked 3 deep,
    and map keys (here under ``labels``) are never remembered."""
    from kubeloop.server.apply import patch_shape
    from kubeloop.server.patch import FieldMeta, PatchSchema
    from kubeloop.server.patch.schema import MERGE

    node = PatchSchema(name="Node")
    node.fields_mut().update({"next": FieldMeta(schema=node),
                              "items": FieldMeta(strategies=(MERGE,), merge_key="name", schema=node)})
    shape = patch_shape(node)

    def nested(depth: int) -> dict[str, Any]:
        value: dict[str, Any] = {"labels": {f"key-{depth}": "v"}, "items": [{"name": "a"}]}
        for _ in range(depth):
            value = {"next": value}
        return value

    shallow = field_set(nested(3), shape)
    assert ("f:next", "f:next", "f:next", "f:items", 'k:{"name":"a"}', "f:name") in shallow
    known = _live_shapes()
    deep = field_set(nested(80), shape)
    assert ("f:next",) * 80 + ("f:labels", "f:key-80") in deep
    assert _live_shapes() == known
    assert builtin_shape("", "Pod").child("spec") is builtin_shape("", "Pod").child("spec")
