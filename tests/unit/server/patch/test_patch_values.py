"""Go-style rendering of decoded JSON values in patch error texts, and JSON copies."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.server.patch import apply_merge_patch
from kubeloop.server.patch.values import copy_json, go_format, go_type_name, json_kind


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "<nil>"),
        (True, "true"),
        (7, "7"),
        (80.0, "80"),
        (1.5, "1.5"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (1e-05, "1e-05"),
        (-2.5e-07, "-2.5e-07"),
        (0.0, "0"),
        (float("inf"), "+Inf"),
        ("text", "text"),
        ({"b": [1, "x", None], "a": {"z": 1.0}}, "map[a:map[z:1] b:[1 x <nil>]]"),
        ([], "[]"),
    ],
)
def test_go_format(value: Any, text: str) -> None:
    assert go_format(value) == text


_SAMPLES: tuple[Any, ...] = (None, True, 1, 1.0, "s", {}, [])


def test_type_names_and_kinds() -> None:
    assert [go_type_name(v) for v in _SAMPLES] == [
        "<nil>",
        "bool",
        "int64",
        "float64",
        "string",
        "map[string]interface {}",
        "[]interface {}",
    ]
    assert [json_kind(v) for v in _SAMPLES] == [
        "null",
        "bool",
        "number",
        "number",
        "string",
        "object",
        "array",
    ]


def test_copies_are_deep_even_beyond_what_orjson_encodes() -> None:
    value: dict[str, Any] = {"big": 2**70, "nested": {"list": [1, {"k": "v"}]}}
    copied = copy_json(value)
    assert copied == value
    copied["nested"]["list"][1]["k"] = "changed"
    assert value["nested"]["list"][1]["k"] == "v"
    assert apply_merge_patch(value, {"b": 1})["big"] == 2**70
