"""JSON merge patch: the RFC 7386 examples and the library behaviour kube-apiserver shows."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.server.patch import PatchError, apply_merge_patch
from kubeloop.server.patch.merge_patch import INVALID_JSON_PATCH


@pytest.mark.parametrize(
    ("doc", "patch", "expected"),
    [
        # RFC 7386 appendix A, restated (the cases whose document is an object).
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
        # Library behaviour: nulls are pruned from values the document had no object for,
        # including objects inside arrays; a null in the document counts as absent.
        ({}, {"a": [{"x": None, "y": 1}, None]}, {"a": [{"y": 1}, None]}),
        ({"a": None}, {"a": {"b": None, "c": 1}}, {"a": {"c": 1}}),
        ({"a": 1}, {"a": {"b": None}}, {"a": {}}),
        # ... but not from a non-object value replacing an object.
        ({"a": {"k": 1}}, {"a": [{"x": None}]}, {"a": [{"x": None}]}),
        ({"a": {"b": {"c": 1, "d": 2}}}, {"a": {"b": {"c": None}}}, {"a": {"b": {"d": 2}}}),
        ({"a": 1}, {}, {"a": 1}),
    ],
)
def test_merge(doc: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    doc_before, patch_before = copy.deepcopy(doc), copy.deepcopy(patch)
    assert apply_merge_patch(doc, patch) == expected
    assert doc == doc_before
    assert patch == patch_before


@pytest.mark.parametrize("patch", [None, "bar", 3, True])
def test_null_and_scalar_patches_are_bad_requests(patch: Any) -> None:
    with pytest.raises(PatchError) as caught:
        apply_merge_patch({"a": "foo"}, patch)
    assert (caught.value.code, caught.value.message) == (400, INVALID_JSON_PATCH)
    status = caught.value.api_error().status()
    assert (status["reason"], status["message"]) == ("BadRequest", "Invalid JSON Patch")


def test_array_patch_replaces_the_document_which_is_then_invalid() -> None:
    with pytest.raises(PatchError) as caught:
        apply_merge_patch({"a": "b"}, [{"c": None}, None])
    error = caught.value.api_error()
    assert (error.code, error.reason) == (422, "Invalid")
    assert error.details is not None
    cause = error.details["causes"][0]
    assert cause["field"] == "patch"
    assert cause["message"].startswith('Invalid value: "[{},null]": couldn\'t get version/kind')


def test_kubectl_scale_shape() -> None:
    deployment = {"metadata": {"name": "web"}, "spec": {"replicas": 1, "paused": True}}
    assert apply_merge_patch(deployment, {"spec": {"replicas": 5}}) == {
        "metadata": {"name": "web"},
        "spec": {"replicas": 5, "paused": True},
    }


_json = st.recursive(
    st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)
_docs = st.dictionaries(st.text(max_size=3), _json, max_size=4)


@given(_docs, _docs)
def test_patch_values_without_nulls_always_end_up_in_the_result(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    result = apply_merge_patch(doc, patch)
    for key, value in patch.items():
        if not isinstance(value, dict):
            assert result[key] == value


@given(_docs, _docs)
def test_applying_twice_is_idempotent(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    once = apply_merge_patch(doc, patch)
    assert apply_merge_patch(once, patch) == once
