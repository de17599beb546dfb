"""Every built-in kind survives JSON -> protobuf -> JSON, and the codec agrees with the library.

For each kind the server serves (its catalog entries, their lists and the kinds of their
subresources), random valid objects are drawn from the kind's 1.33 OpenAPI schema, put through
the server's JSON path (typed decoding), encoded to protobuf and decoded back. The two dicts
must agree once Go's zero values of non-pointer fields are set aside (Go writes those to
protobuf, and JSON leaves them out under ``omitempty``; which fields those are is the wire facts'
``ptr`` / ``omit``; that they are written and read back exactly as Go does is held by the
golden and kubectl-captured cases in test_protobuf_wire.py). The pinned ``protobuf`` library's
parser, with descriptors built from the same facts, must read the bytes to the same dict as the
codec's own reader.
"""

from __future__ import annotations

import base64
import copy
import datetime
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeloop.api.catalog import CATALOG
from kubeloop.server.codec import protobuf, protobuf_library, protobuf_writer
from kubeloop.server.kinds import upstream, wire
from kubeloop.server.kinds.decode import IGNORE, STRICT, decode_object

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."


def _served_kinds() -> list[tuple[str, str]]:
    kinds: set[tuple[str, str]] = set()
    for entry in CATALOG:
        api_version = f"{entry.group}/{entry.version}" if entry.group else entry.version
        kinds.add((api_version, entry.kind))
        if "list" in entry.verbs:
            kinds.add((api_version, entry.kind + "List"))
        for sub in entry.subresources:
            group = entry.group if sub.group is None else sub.group
            version = sub.version or entry.version
            kinds.add((f"{group}/{version}" if group else version, sub.kind))
        if entry.scale:
            kinds.add(("autoscaling/v1", "Scale"))
    kinds.update({("v1", "Status"), ("meta.k8s.io/v1", "PartialObjectMetadata"),
                  ("meta.k8s.io/v1", "PartialObjectMetadataList"), ("meta.k8s.io/v1beta1", "PartialObjectMetadataList"),
                  ("v1", "DeleteOptions"), ("v1", "WatchEvent")})
    return sorted(kinds)


KINDS = _served_kinds()

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | _TEXT,
                     lambda children: st.lists(children, max_size=2) | st.dictionaries(_TEXT, children, max_size=2),
                     max_leaves=4)
_MAX_DEPTH = 5


def _time(micro: bool) -> st.SearchStrategy[str]:
    # Rendered with datetime, not with the codec's own formatter.
    def render(seconds: int, micros: int) -> str:
        moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=seconds,
                                                                                          microseconds=micros)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")
    return st.builds(render, st.integers(0, 4_102_444_800), st.integers(0, 999_999) if micro else st.just(0))


_SPECIAL: dict[str, st.SearchStrategy[Any]] = {
    _META + "Time": _time(micro=False),
    _META + "MicroTime": _time(micro=True),
    _META + "FieldsV1": st.dictionaries(_TEXT, _JSON, max_size=2),
    "io.k8s.apimachinery.pkg.runtime.RawExtension": st.dictionaries(_TEXT, _JSON, max_size=2),
    "io.k8s.apimachinery.pkg.api.resource.Quantity": st.sampled_from(["0", "1", "100m", "1Gi", "2.5", "1e3"]),
}


def _schema_strategy(schema: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _definition(ref.rpartition("/")[2], depth)
    kind = schema.get("type")
    fmt = schema.get("format")
    if kind == "string":
        if fmt == "int-or-string":
            return st.integers(-(2**31), 2**31 - 1) | _TEXT
        if fmt == "byte":
            return st.binary(max_size=5).map(lambda data: base64.b64encode(data).decode())
        return _TEXT
    if kind == "integer":
        bits = 31 if fmt == "int32" else 63
        return st.integers(-(2**bits), 2**bits - 1)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        if depth > _MAX_DEPTH:
            return st.just([])
        return st.lists(_schema_strategy(schema.get("items") or {}, depth + 1), max_size=2)
    extra = schema.get("additionalProperties")
    if kind == "object" and isinstance(extra, Mapping):
        if depth > _MAX_DEPTH:
            return st.just({})
        return st.dictionaries(_TEXT, _schema_strategy(extra, depth + 1), max_size=2)
    properties = schema.get("properties")
    if properties:
        if depth > _MAX_DEPTH:
            return st.just({})
        # A kind's own apiVersion and kind travel in the envelope, not in its message.
        top_level = "x-kubernetes-group-version-kind" in schema
        return st.fixed_dictionaries({}, optional={name: _schema_strategy(prop, depth + 1)
                                                   for name, prop in properties.items()
                                                   if not (top_level and name in ("apiVersion", "kind"))})
    if kind == "object":
        return st.just({})
    return _JSON


def _definition(name: str, depth: int) -> st.SearchStrategy[Any]:
    special = _SPECIAL.get(name)
    if special is not None:
        return special
    if name.endswith(".JSONSchemaPropsOrBool"):
        return st.booleans()
    if name.endswith((".JSONSchemaPropsOrArray", ".JSONSchemaPropsOrStringArray", ".JSON")) and depth > 2:
        return st.just([])
    return st.deferred(lambda: _schema_strategy(_message_schema(name), depth))


_FACT_TYPES: dict[str, dict[str, str]] = {
    "string": {"type": "string"}, "bool": {"type": "boolean"}, "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"}, "bytes": {"type": "string", "format": "byte"},
    "double": {"type": "number"},
}


def _message_schema(name: str) -> Mapping[str, Any]:
    """The OpenAPI definition of a message, or for the few messages OpenAPI does not publish
    (PartialObjectMetadata, the connect options), a schema written from its wire facts."""
    if name in upstream.definitions():
        return upstream.definitions()[name]
    properties: dict[str, Any] = {}
    for field in wire.messages()[name]["fields"]:
        type_name: str = field["t"]
        one = _FACT_TYPES.get(type_name) or {"$ref": "#/definitions/" + type_name}
        if field.get("rep"):
            one = {"type": "array", "items": one}
        elif "map" in field:
            one = {"type": "object", "additionalProperties": one}
        properties[field["name"]] = one
    return {"properties": properties}


def _zero(value: Any) -> bool:
    return value is False or value == 0 or value == "" or value == {}


def _aside(value: Any, name: str) -> Any:
    """``value`` (a dict of the message ``name``) without Go's zero values of non-pointer fields,
    nor keys the message does not have."""
    facts = wire.messages()[name]
    special = protobuf.SPECIAL.get(name, "list" if facts.get("list") else "")
    if special in ("or_array", "or_strings", "or_bool"):
        schema = name.rpartition(".")[0] + ".JSONSchemaProps"
        if isinstance(value, Mapping):
            return _aside(value, schema)
        return [_aside(item, schema) if isinstance(item, Mapping) else item for item in value] \
            if isinstance(value, list) else value
    if special:
        return value
    out: dict[str, Any] = {}
    for field in facts["fields"]:
        type_name: str = field["t"]
        if field.get("inline"):
            out.update(_aside(value, type_name))
            continue
        item = value.get(field["name"])
        if item is None:
            continue
        nested = type_name in wire.messages()
        if field.get("rep"):
            item = [_aside(one, type_name) if nested else one for one in item]
            if not item:
                continue
        elif "map" in field:
            item = {key: _aside(one, type_name) if nested else one for key, one in item.items()}
            if not item:
                continue
        else:
            item = _aside(item, type_name) if nested else item
            if not field.get("ptr") and _zero(item):
                continue
        out[field["name"]] = item
    return out


@pytest.mark.parametrize(("api_version", "kind"), KINDS, ids=[f"{a}/{k}" for a, k in KINDS])
def test_every_kind_survives_protobuf(api_version: str, kind: str) -> None:
    name = wire.message_name(api_version, kind)
    assert name is not None, f"no protobuf message for {api_version} {kind}"
    assert protobuf.has_schema(api_version, kind)
    group, _, version = api_version.rpartition("/")
    schema = _message_schema(name)

    @settings(max_examples=4, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(_schema_strategy(schema, 0))
    def survives(drawn: dict[str, Any]) -> None:
        obj = copy.deepcopy(drawn)
        decode_object(group, version, kind, obj, IGNORE)
        # After typed decoding: kinds such as WatchEvent do not declare apiVersion and kind.
        obj.update(apiVersion=api_version, kind=kind)
        body = protobuf.encode(obj)
        back = protobuf.decode(body)
        assert (back["apiVersion"], back["kind"]) == (api_version, kind)
        assert _aside(back, name) == _aside(obj, name)
        # What the reader gives already is what typed decoding gives (the wire types are Go's
        # types): a protobuf body needs no typed decoding pass.
        typed = copy.deepcopy(back)
        if kind == "WatchEvent":  # its type declares neither apiVersion nor kind
            del typed["apiVersion"], typed["kind"]
        untouched = copy.deepcopy(typed)
        assert decode_object(group, version, kind, typed, STRICT) == []
        assert typed == untouched
        # The library's parser reads the same bytes to the same dict as the codec's reader.
        raw = protobuf.encode_message(obj, api_version, kind)
        # The generated writer writes the library's bytes, but for the order of map keys, which
        # is Go's (test_protobuf_wire) and not the library's: re-serialized by the library, the
        # two are the same bytes.
        assert raw == protobuf_writer.encode_message(obj, name)
        assert protobuf_library.reserialize(raw, name) == protobuf_library.encode_message(obj, name)
        assert protobuf_library.decode_message(raw, name) == {k: v for k, v in back.items()
                                                               if k not in ("apiVersion", "kind")}

    survives()


def test_custom_resources_and_tables_have_no_protobuf_form() -> None:
    assert not protobuf.has_schema("apps.kruise.io/v1alpha1", "CloneSet")
    assert not protobuf.has_schema("meta.k8s.io/v1", "Table")
    assert not protobuf.has_schema("apps/v1", "Pod")
    assert protobuf.has_schema("meta.k8s.io/v1beta1", "PartialObjectMetadata")
