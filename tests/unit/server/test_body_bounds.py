"""Request bodies are held to a nesting depth and a bounded alias expansion (nesting.py, yaml_body.py)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.nesting import (
    MANAGED_FIELDS_DEPTH,
    MAX_DEPTH,
    ORJSON_MAX_DEPTH,
    depth_exceeds,
    encode_within,
    encodes_within,
    object_too_deep,
    raw_json_within,
)
from kubeloop.server.requests import decode_document
from kubeloop.server.yaml_body import YamlBodyError, allowed_alias_ratio, excessive_aliasing, load_yaml


def nested(depth: int) -> Any:
    """A document of exactly ``depth`` containers, alternating objects and arrays."""
    value: Any = {}
    for level in range(depth - 1):
        value = [value] if level % 2 else {"a": value}
    return value


@pytest.mark.parametrize(("document", "depth"), [
    (1, 0), ("x", 0), ({}, 1), ([], 1), ({"a": 1}, 1), ({"a": [1]}, 2), ([[], [[{}]]], 4),
    (nested(7), 7), (nested(5000), 5000),
])
def test_depth_exceeds_measures_containers(document: Any, depth: int) -> None:
    assert not depth_exceeds(document, depth)
    if depth:
        assert depth_exceeds(document, depth - 1)


@pytest.mark.parametrize("depth", [1, 50, 200, ORJSON_MAX_DEPTH])
def test_encodes_within_agrees_with_depth_exceeds(depth: int) -> None:
    assert encodes_within(nested(depth), depth)
    assert not encodes_within(nested(depth + 1), depth)
    # The wrapper trick relies on orjson's own bound: it must still be 254.
    orjson.dumps(nested(ORJSON_MAX_DEPTH))
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(nested(ORJSON_MAX_DEPTH + 1))


@pytest.mark.parametrize("limit", [1, 54, 100, 200, ORJSON_MAX_DEPTH])
def test_encode_within_gives_the_documents_bytes_or_none(limit: int) -> None:
    for depth in (limit - 1, limit, limit + 1):
        document = {"a": [1, "x", None, 2.5], "b": nested(depth)} if depth > 1 else [1, 2]
        fits = not depth_exceeds(document, limit)
        # Twice: the second call reuses the wrapping the first put back.
        for _ in range(2):
            assert encode_within(document, limit) == (orjson.dumps(document) if fits else None)
            assert encodes_within(document, limit) is fits


def test_encode_within_leaves_no_document_behind_after_a_failure() -> None:
    assert encode_within({"n": 2**70}, 200) is None  # beyond 64 bits: orjson cannot encode it
    assert encode_within(nested(201), 200) is None
    assert encode_within({"fine": True}, 200) == b'{"fine":true}'


@pytest.mark.parametrize("document", [
    {}, [], {"a": "{[{["}, nested(MAX_DEPTH), nested(MAX_DEPTH + 1), [[]] * 60, {"k": [{"x": [1]}] * 40},
])
def test_raw_json_within_never_passes_a_deeper_text(document: Any) -> None:
    raw = orjson.dumps(document)
    if raw_json_within(raw, MAX_DEPTH):
        assert not depth_exceeds(document, MAX_DEPTH)
    # Brackets in strings only make it cautious; a text with few containers passes.
    assert raw_json_within(b'{"a":"{[{["}', 5) is True
    assert raw_json_within(b'{"a":"{[{["}', 4) is False


def _message(raw: bytes, content_type: str) -> str:
    with pytest.raises(ApiError) as caught:
        decode_document(raw, content_type)
    assert caught.value.code == 400
    return caught.value.message


def test_bodies_at_the_depth_limit_decode_and_deeper_ones_are_400() -> None:
    at_limit = orjson.dumps(nested(MAX_DEPTH))
    assert decode_document(at_limit, "application/json") == nested(MAX_DEPTH)
    assert decode_document(at_limit, "application/yaml") == nested(MAX_DEPTH)
    deeper = orjson.dumps(nested(MAX_DEPTH + 1))
    assert _message(deeper, "application/json") == f"error decoding body: exceeded max depth of {MAX_DEPTH}"
    assert _message(deeper, "application/yaml") == (f"error decoding YAML body: yaml: exceeded max depth of "
                                                   f"{MAX_DEPTH}")
    # Far past Python's recursion limit: still a 400, not a RecursionError.
    assert "exceeded max depth" in _message(b"[" * 5000 + b"]" * 5000, "application/yaml")
    assert "exceeded max depth" in _message(b"a: " + b"[" * 5000 + b"]" * 5000, "application/yaml")


def _bomb(levels: int, width: int = 9) -> bytes:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: bomb}", "x:",
             "  l0: &l0 [" + ",".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"  l{level}: &l{level} [" + ",".join([f"*l{level - 1}"] * width) + "]")
    return "\n".join(lines).encode()


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    raw = _bomb(9)
    assert len(raw) < 1000  # 9**9 strings once expanded
    assert _message(raw, "application/yaml") == "error decoding YAML body: yaml: document contains excessive aliasing"


def test_modest_aliasing_is_kept() -> None:
    # Two levels: 9 + 81 strings, under goyaml's floor of 1,000 decoded nodes.
    document = load_yaml(_bomb(2))
    assert document["x"]["l1"] == [["lol"] * 9] * 9


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(YamlBodyError, match="excessive aliasing"):
        load_yaml(b"a: &a [1, *a]")


@pytest.mark.parametrize(("decoded", "aliased", "refused"), [
    (1000, 990, False),  # goyaml's floors: more than 1,000 nodes and more than 100 aliased
    (5000, 100, False),
    (5000, 4950, False), (5000, 4951, True),  # 0.99 up to 400,000 nodes
    (4_000_000, 400_000, False), (4_000_000, 400_001, True),  # 0.10 from 4,000,000
])
def test_alias_ratio_is_goyamls(decoded: int, aliased: int, refused: bool) -> None:
    assert excessive_aliasing(decoded, aliased) is refused


def test_alias_ratio_falls_linearly_between_goyamls_bounds() -> None:
    assert allowed_alias_ratio(2_200_000) == pytest.approx(0.545)


@pytest.mark.parametrize(("text", "expected"), [
    (b"a: !!binary aGVsbG8=", {"a": "hello"}),
    (b"a: !!binary //4=", {"a": "\ufffd\ufffd"}),
    (b"a: 2001-12-14t21:59:43.10-05:00", {"a": "2001-12-14t21:59:43.10-05:00"}),
    (b"a: 2002-12-14", {"a": "2002-12-14"}),
    (b"a: !!set {x, y}", {"a": {"x": None, "y": None}}),
    (b"1: a\nnull: b", {"1": "a", "null": "b"}),
    (b"", None),
])
def test_yaml_only_values_become_what_goyaml_gives(text: bytes, expected: Any) -> None:
    assert load_yaml(text) == expected


def test_more_than_one_document_is_refused() -> None:
    with pytest.raises(YamlBodyError, match="single document"):
        load_yaml(b"a: 1\n---\nb: 2\n")


def _with_managed(spec_depth: int, managed_depth: int) -> dict[str, Any]:
    """An object whose ``spec`` nests ``spec_depth`` and whose managed fields, as a document of
    their own, nest ``managed_depth`` containers."""
    return {"metadata": {"name": "x", "managedFields": [nested(managed_depth - 1)]}, "spec": nested(spec_depth)}


@pytest.mark.parametrize(("spec_depth", "managed_depth", "too_deep"), [
    (MAX_DEPTH - 1, MAX_DEPTH + MANAGED_FIELDS_DEPTH, False),
    (MAX_DEPTH, MAX_DEPTH, True),
    (MAX_DEPTH - 1, MAX_DEPTH + MANAGED_FIELDS_DEPTH + 1, True),
    (10, MAX_DEPTH + MANAGED_FIELDS_DEPTH, False),
])
def test_managed_fields_are_measured_apart(spec_depth: int, managed_depth: int, too_deep: bool) -> None:
    document = _with_managed(spec_depth, managed_depth)
    assert isinstance(document["metadata"]["managedFields"], list)
    assert object_too_deep(document) is too_deep
    if not too_deep:
        assert decode_document(orjson.dumps(document), "application/json") == document
    # Without the managed fields only the rest counts.
    del document["metadata"]["managedFields"]
    assert object_too_deep(document) is (spec_depth + 1 > MAX_DEPTH)
