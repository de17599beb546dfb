"""The depth bound of protobuf bodies (protobuf_depth.py) never clears a body deeper than it says.

For every kind the server serves, an instance with *every* field set (one item per list, one
entry per map, nested JSON in each raw field) is written to protobuf and read back; its measured
depth (nesting.depth_exceeds, which knows nothing of schemas) must be within the bound, and
reach the schema's own depth (the bound is not loose). Then bodies through the request path:
within the bound they are accepted without a measurement, beyond MAX_DEPTH they are 400s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.codec import protobuf, protobuf_depth
from kubeloop.server.codec.protobuf_library import SPECIAL
from kubeloop.server.kinds import wire
from kubeloop.server.nesting import MAX_DEPTH, depth_exceeds
from kubeloop.server.requests import decode_document
from tests.unit.server.codec.test_protobuf_kinds import KINDS

PROTOBUF = "application/vnd.kubernetes.protobuf"
RAW_JSON: Any = {"a": [{"b": 1}]}
"""What each raw field holds: three containers, three brackets."""

_SCALARS: dict[str, Any] = {"string": "s", "bytes": "YQ==", "bool": True, "int32": 1, "int64": 1, "uint32": 1,
                            "uint64": 1, "double": 1.5, "float": 1.5}
_SPECIAL_VALUES: dict[str, Any] = {"time": "2026-01-02T03:04:05Z", "microtime": "2026-01-02T03:04:05.000006Z",
                                   "quantity": "1Gi", "intstr": "http", "duration": "1m0s", "raw": RAW_JSON}


def _value(type_name: str) -> Any:
    if type_name in _SCALARS:
        return _SCALARS[type_name]
    special = SPECIAL.get(type_name)
    if special is not None:
        return _SPECIAL_VALUES[special]
    if wire.messages()[type_name].get("list"):
        return ["s"]
    return _full(type_name)


def _full(name: str) -> dict[str, Any]:
    """An instance of message ``name`` with every field set."""
    out: dict[str, Any] = {}
    for entry in wire.messages()[name]["fields"]:
        if entry.get("inline"):
            out.update(_full(entry["t"]))
        elif entry.get("rep"):
            out[entry["name"]] = [_value(entry["t"])]
        elif "map" in entry:
            out[entry["name"]] = {"k": _value(entry["t"])}
        else:
            out[entry["name"]] = _value(entry["t"])
    return out


BOUNDED = [(api_version, kind) for api_version, kind in KINDS
           if protobuf_depth.schema_depth(wire.message_name(api_version, kind) or "") is not None]


def test_recursive_schemas_have_no_bound_and_the_rest_do() -> None:
    crd = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
    assert protobuf_depth.schema_depth(crd) is None
    assert protobuf_depth.schema_depth("io.k8s.api.core.v1.Pod") is not None
    assert len(BOUNDED) > 100


@pytest.mark.parametrize(("api_version", "kind"), BOUNDED, ids=[f"{a}/{k}" for a, k in BOUNDED])
def test_a_body_with_every_field_set_is_within_the_bound(api_version: str, kind: str) -> None:
    name = wire.message_name(api_version, kind)
    assert name is not None
    depth = protobuf_depth.schema_depth(name)
    assert depth is not None
    body = protobuf.encode({"apiVersion": api_version, "kind": kind, **_full(name)})
    decoded = protobuf.decode(body)
    brackets = body.count(b"{") + body.count(b"[")
    assert not depth_exceeds(decoded, depth + brackets)
    # Tight: the filled instance reaches the schema's depth (raw JSON aside, which only adds).
    assert depth_exceeds(decoded, depth - 1)
    assert protobuf_depth.surely_within(body, api_version, kind, depth + brackets)
    assert not protobuf_depth.surely_within(body, api_version, kind, depth + brackets - 1)


def _revision(data: Any) -> bytes:
    return protobuf.encode({"apiVersion": "apps/v1", "kind": "ControllerRevision",
                            "metadata": {"name": "r"}, "revision": 1, "data": data})


def _nested(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_protobuf_bodies_at_the_limit_decode_and_deeper_ones_are_400() -> None:
    # ControllerRevision.data is a RawExtension two levels below the object: JSON of
    # MAX_DEPTH - 1 containers puts the body exactly at the limit.
    at_limit = _revision(_nested(MAX_DEPTH - 1))
    assert not protobuf_depth.surely_within(at_limit, "apps/v1", "ControllerRevision", MAX_DEPTH)
    assert decode_document(at_limit, PROTOBUF, into=("apps/v1", "ControllerRevision"))["data"] == \
        _nested(MAX_DEPTH - 1)
    with pytest.raises(ApiError) as caught:
        decode_document(_revision(_nested(MAX_DEPTH)), PROTOBUF, into=("apps/v1", "ControllerRevision"))
    assert caught.value.code == 400
    assert caught.value.message == f"error decoding body: exceeded max depth of {MAX_DEPTH}"


def test_brackets_inside_strings_only_make_the_bound_cautious() -> None:
    shallow = _revision({"text": "[" * MAX_DEPTH})
    assert not protobuf_depth.surely_within(shallow, "apps/v1", "ControllerRevision", MAX_DEPTH)
    assert decode_document(shallow, PROTOBUF, into=("apps/v1", "ControllerRevision"))["data"] == \
        {"text": "[" * MAX_DEPTH}


def test_a_recursive_schemas_body_is_measured() -> None:
    def properties(depth: int) -> Mapping[str, Any]:
        schema: dict[str, Any] = {"type": "object"}
        for _ in range(depth):
            schema = {"type": "object", "properties": {"p": schema}}
        return schema

    def crd(depth: int) -> bytes:
        return protobuf.encode({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "things", "kind": "Thing"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": properties(depth)}}]}})

    into = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert not protobuf_depth.surely_within(crd(3), *into, MAX_DEPTH)
    assert decode_document(crd(3), PROTOBUF, into=into)["spec"]["names"]["kind"] == "Thing"
    with pytest.raises(ApiError) as caught:
        decode_document(crd(MAX_DEPTH // 2), PROTOBUF, into=into)
    assert caught.value.message == f"error decoding body: exceeded max depth of {MAX_DEPTH}"
