"""JSON patch: the RFC 6902 examples, and where kube-apiserver's library departs from the RFC."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.server.patch import GENERIC_UNPROCESSABLE, MAX_OPERATIONS, PatchError, apply_json_patch
from kubeloop.server.patch.json_patch import json_equal

# RFC 6902 appendix A, restated: (document, operations, result).
RFC_EXAMPLES: list[tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = [
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"foo": "bar", "baz": "qux"}),
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    (
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    (
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    (
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    (
        {"foo": "bar"},
        [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
        {"foo": "bar", "child": {"grandchild": {}}},
    ),
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}], {"foo": "bar", "baz": "qux"}),
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}], {"foo": ["bar", ["abc", "def"]]}),
    ({"a/b": {"m~n": 1}}, [{"op": "replace", "path": "/a~1b/m~0n", "value": 2}], {"a/b": {"m~n": 2}}),
    (
        {"a": {"b": [1, 2]}},
        [{"op": "copy", "from": "/a/b", "path": "/c"}, {"op": "add", "path": "/c/-", "value": 3}],
        {"a": {"b": [1, 2]}, "c": [1, 2, 3]},
    ),
]


@pytest.mark.parametrize(("doc", "ops", "expected"), RFC_EXAMPLES)
def test_rfc_examples(doc: dict[str, Any], ops: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    before, ops_before = copy.deepcopy(doc), copy.deepcopy(ops)
    assert apply_json_patch(doc, ops) == expected
    assert doc == before
    assert ops == ops_before


# Behaviour of the library kube-apiserver uses where a strict RFC reading differs.
LIBRARY_BEHAVIOUR: list[tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = [
    ({"a": 1}, [{"op": "replace", "path": "/b", "value": 2}], {"a": 1, "b": 2}),
    ({"a": 1}, [{"op": "copy", "from": "/missing", "path": "/b"}], {"a": 1, "b": None}),
    ({"a": 1}, [{"op": "test", "path": "/missing", "value": None}], {"a": 1}),
    ({"a": 1}, [{"op": "test", "path": "/missing"}], {"a": 1}),
    ({"a": [1, 2, 3]}, [{"op": "remove", "path": "/a/-1"}], {"a": [1, 2]}),
    ({"a": [1, 2, 3]}, [{"op": "replace", "path": "/a/-3", "value": 0}], {"a": [0, 2, 3]}),
    ({"a": [1, 2]}, [{"op": "add", "path": "/a/-1", "value": 9}], {"a": [1, 2, 9]}),
    ({"a": [1, 2]}, [{"op": "add", "path": "/a/+1", "value": 9}], {"a": [1, 9, 2]}),
    ({"a": [1, 2]}, [{"op": "add", "path": "/a/02", "value": 9}], {"a": [1, 2, 9]}),
    ({"a": 1}, [{"op": "add", "path": "/b"}], {"a": 1, "b": None}),
    ({"a": 1}, [{"op": "add", "path": "x/b", "value": 2}], {"a": 1, "b": 2}),
    ({"a": {"b": 1}}, [{"op": "replace", "path": "", "value": {"c": 2}}], {"c": 2}),
    ({"a": {"b": 1}}, [{"op": "test", "path": "", "value": {"a": {"b": 1}}}], {"a": {"b": 1}}),
    ({"a": None}, [{"op": "move", "from": "/a", "path": "/b"}], {"b": None}),
    ({"a": [1]}, [{"op": "copy", "from": "/a", "path": "/a/-"}], {"a": [1, [1]]}),
    ({"a": 1}, None, {"a": 1}),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("doc", "ops", "expected"), LIBRARY_BEHAVIOUR)
def test_library_behaviour(doc: dict[str, Any], ops: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    assert apply_json_patch(doc, ops) == expected


@pytest.mark.parametrize(
    ("doc", "ops", "message"),
    [
        (
            {"foo": "bar"},
            [{"op": "add", "path": "/baz/bat", "value": "qux"}],
            'add operation does not apply: doc is missing path: "/baz/bat": missing value',
        ),
        ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], "testing value /baz failed: test failed"),
        ({"baz": "10"}, [{"op": "test", "path": "/baz", "value": 10}], "testing value /baz failed: test failed"),
        ({"n": 1}, [{"op": "test", "path": "/n", "value": 1.0}], "testing value /n failed: test failed"),
        ({"n": True}, [{"op": "test", "path": "/n", "value": 1}], "testing value /n failed: test failed"),
        ({"n": 1}, [{"op": "test", "path": "/n", "value": None}], "testing value /n failed: test failed"),
        (
            {"a": 1},
            [{"op": "remove", "path": "/b"}],
            "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value",
        ),
        (
            {"a": [1]},
            [{"op": "remove", "path": "/a/5"}],
            "error in remove for path: '/a/5': Unable to access invalid index: 5: invalid index referenced",
        ),
        (
            {"a": [1]},
            [{"op": "remove", "path": "/a/-"}],
            "error in remove for path: '/a/-': strconv.Atoi: parsing \"-\": invalid syntax",
        ),
        (
            {"a": [1]},
            [{"op": "replace", "path": "/a/1", "value": 2}],
            "replace operation does not apply: doc is missing key: /a/1: missing value",
        ),
        (
            {"a": [1]},
            [{"op": "add", "path": "/a/x", "value": 2}],
            "error in add for path: '/a/x': value was not a proper array index: 'x': "
            'strconv.Atoi: parsing "x": invalid syntax',
        ),
        (
            {"a": [1]},
            [{"op": "add", "path": "/a/3", "value": 2}],
            "error in add for path: '/a/3': Unable to access invalid index: 3: invalid index referenced",
        ),
        (
            {"a": [1]},
            [{"op": "add", "path": "/a/-3", "value": 2}],
            "error in add for path: '/a/-3': Unable to access invalid index: -3: invalid index referenced",
        ),
        (
            {"a": 1},
            [{"op": "add", "path": "", "value": {}}],
            'add operation does not apply: doc is missing path: "": missing value',
        ),
        ({"a": 1}, [{"op": "add", "value": 1}], "add operation failed to decode path: missing value"),
        (
            {"a": 1},
            [{"op": "replace", "path": 7}],
            "replace operation failed to decode path: json: cannot unmarshal number into Go value of type string",
        ),
        (
            {"a": 1},
            [{"op": "move", "path": "/b"}],
            "move operation failed to decode from: operation, missing from field: missing value",
        ),
        (
            {"a": 1},
            [{"op": "move", "from": "/b", "path": "/c"}],
            "error in move for path: 'b': Unable to remove nonexistent key: b: missing value",
        ),
        (
            {"a": {"b": 1}},
            [{"op": "move", "from": "/a", "path": "/a/c"}],
            "move operation does not apply: doc is missing destination path: /a/c: missing value",
        ),
        (
            {"a": 1},
            [{"op": "copy", "from": "/x/y", "path": "/c"}],
            "copy operation does not apply: doc is missing from path: /x/y: missing value",
        ),
        (
            {"a": None},
            [{"op": "add", "path": "/a/b", "value": 1}],
            'add operation does not apply: doc is missing path: "/a/b": missing value',
        ),
        (
            {"a": "text"},
            [{"op": "add", "path": "/a/b", "value": 1}],
            'add operation does not apply: doc is missing path: "/a/b": missing value',
        ),
        (
            {"a": 1},
            [{"op": "replace", "path": "", "value": 3}],
            "replace operation value must be object or array: %!w(<nil>)",
        ),
        ({"a": 1}, [{"op": "frob", "path": "/a"}], "Unexpected kind: frob"),
        ({"a": 1}, [{"path": "/a"}], "Unexpected kind: unknown"),
        ({"a": 1}, [None], "Unexpected kind: unknown"),
        (
            {"a": 1},
            [{"op": "test", "path": "/x/y", "value": 1}],
            "test operation does not apply: is missing path: /x/y: missing value",
        ),
    ],
)
def test_application_errors_are_422(doc: dict[str, Any], ops: list[Any], message: str) -> None:
    before = copy.deepcopy(doc)
    with pytest.raises(PatchError) as caught:
        apply_json_patch(doc, ops)
    error = caught.value
    assert (error.code, error.message) == (422, message)
    assert doc == before
    status = error.api_error().status()
    assert (status["code"], status["reason"], status["message"]) == (422, "Invalid", GENERIC_UNPROCESSABLE)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ("x", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        (["x"], "json: cannot unmarshal string into Go value of type jsonpatch.Operation"),
        ([[1]], "json: cannot unmarshal array into Go value of type jsonpatch.Operation"),
    ],
)
def test_undecodable_patches_are_400(ops: Any, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        apply_json_patch({}, ops)
    assert (caught.value.code, caught.value.message) == (400, message)
    assert caught.value.api_error().reason == "BadRequest"


def test_operation_limit() -> None:
    ops = [{"op": "test", "path": "/a", "value": 1}] * MAX_OPERATIONS
    assert apply_json_patch({"a": 1}, ops) == {"a": 1}
    with pytest.raises(PatchError) as caught:
        apply_json_patch({"a": 1}, [*ops, ops[0]])
    error = caught.value.api_error()
    assert (error.code, error.reason) == (413, "RequestEntityTooLarge")
    assert (
        error.message == "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    )


def test_replacing_the_root_with_an_array_is_invalid() -> None:
    with pytest.raises(PatchError) as caught:
        apply_json_patch({"a": 1}, [{"op": "replace", "path": "", "value": [1]}])
    error = caught.value.api_error()
    assert (error.code, error.reason) == (422, "Invalid")
    assert error.details is not None
    assert error.details["causes"][0]["field"] == "patch"
    assert error.message.startswith(' "" is invalid: patch: Invalid value: "[1]": couldn\'t get version/kind')


def test_values_are_copied_not_shared() -> None:
    value = {"k": [1]}
    ops = [{"op": "add", "path": "/a", "value": value}, {"op": "add", "path": "/b", "value": value}]
    result = apply_json_patch({}, ops)
    result["a"]["k"].append(2)
    assert result["b"] == {"k": [1]}
    assert value == {"k": [1]}


def test_kubectl_rollout_undo_shape() -> None:
    deployment = {
        "metadata": {"name": "web", "annotations": {"deployment.kubernetes.io/revision": "2"}},
        "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}},
    }
    ops = [
        {
            "op": "replace",
            "path": "/spec/template",
            "value": {"spec": {"containers": [{"name": "app", "image": "app:1"}]}},
        },
        {"op": "replace", "path": "/metadata/annotations", "value": {"deployment.kubernetes.io/revision": "1"}},
    ]
    result = apply_json_patch(deployment, ops)
    assert result["spec"]["template"]["spec"]["containers"][0]["image"] == "app:1"
    assert result["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "1"}


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=3), _json, max_size=4), st.text(max_size=3), _json)
def test_add_then_test_then_remove(doc: dict[str, Any], key: str, value: Any) -> None:
    pointer = "/" + key.replace("~", "~0").replace("/", "~1")
    added = apply_json_patch(
        doc, [{"op": "add", "path": pointer, "value": value}, {"op": "test", "path": pointer, "value": value}]
    )
    assert json_equal(added[key], value)
    removed = apply_json_patch(added, [{"op": "remove", "path": pointer}])
    assert key not in removed
