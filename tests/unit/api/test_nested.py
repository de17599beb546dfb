"""``section``: the one tolerant reader of nested mappings (it replaces the Deployment's
``section``, the ReplicaSet's ``_section`` / ``_spec`` / ``_mapping``, the CloneSet's and the
endpoints controllers' ``_mapping``)."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import pytest

from kubeloop.api.nested import section

RS = {"spec": {"template": {"metadata": {"labels": {"app": "x"}}}, "replicas": 3}}


@pytest.mark.parametrize(
    ("value", "path", "expected"),
    [
        (RS, ("spec", "template", "metadata", "labels"), {"app": "x"}),
        (RS, ("spec",), RS["spec"]),
        (RS, (), RS),
        (RS, ("spec", "replicas"), {}),  # not a mapping
        (RS, ("spec", "replicas", "deeper"), {}),  # a step that is not a mapping
        (RS, ("status",), {}),
        (RS, ("status", "conditions"), {}),
        ({"spec": None}, ("spec",), {}),
        ({"spec": []}, ("spec",), {}),
        ({"spec": "x"}, ("spec", "template"), {}),
        (None, (), {}),
        (None, ("spec",), {}),
        ("text", (), {}),
        (7, ("spec",), {}),
        ([{"a": 1}], (), {}),
        (OrderedDict(spec=OrderedDict(a=1)), ("spec",), {"a": 1}),
        (MappingProxyType({"spec": {"a": 1}}), ("spec",), {"a": 1}),
    ],
)
def test_section(value: Any, path: tuple[str, ...], expected: Any) -> None:
    assert section(value, *path) == expected


def test_the_mapping_found_is_returned_as_it_is() -> None:
    assert section(RS, "spec", "template") is RS["spec"]["template"]


def test_an_empty_answer_is_a_fresh_mapping() -> None:
    first, second = section(None), section(None)
    assert first == {} and first is not second
