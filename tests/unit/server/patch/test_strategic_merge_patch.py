"""Strategic merge patch semantics on a small test type, restating apimachinery's cases.

The test type ``Widget`` has:
  ``parts``  list of objects merged on ``id`` (each part has its own ``parts`` and ``tags``),
  ``tags``   list of scalars with the merge strategy,
  ``plain``  list without strategy (replaced), ``labels`` a plain map,
  ``shape``  map with ``retainKeys`` (its ``tags`` and ``parts`` merge too),
  ``slots``  list merged on ``id`` with ``merge,retainKeys``,
  ``blob``   map with the ``replace`` strategy.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.server.patch import FieldMeta, PatchError, PatchSchema, apply_strategic_merge_patch
from kubeloop.server.patch.schema import REPLACE, merge_list, nested, obj, retain_keys

PART = obj(parts=merge_list("id"), tags=merge_list())
SHAPE = obj(tags=merge_list(), parts=merge_list("id"))
WIDGET = obj(
    parts=merge_list("id", PART),
    tags=merge_list(),
    shape=retain_keys(SHAPE),
    slots=merge_list("id", retain_keys=True),
    blob=FieldMeta((REPLACE,)),
    inner=nested(obj(parts=merge_list("id"))),
)


def smp(doc: dict[str, Any], patch: Any, schema: PatchSchema = WIDGET) -> dict[str, Any]:
    doc_before, patch_before = copy.deepcopy(doc), copy.deepcopy(patch)
    result = apply_strategic_merge_patch(doc, patch, schema)
    assert doc == doc_before, "the document was modified"
    assert patch == patch_before, "the patch was modified"
    return result


def ids(items: list[dict[str, Any]]) -> list[Any]:
    return [item["id"] for item in items]


CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ("scalar lists merge as a union", {"tags": [1, 2]}, {"tags": [2, 3]}, {"tags": [1, 2, 3]}),
    (
        "a map deleted by directive becomes empty",
        {"labels": {"a": "1", "b": "1"}},
        {"labels": {"$patch": "delete"}},
        {"labels": {}},
    ),
    (
        "replace directive alone empties a merge list",
        {"parts": [{"id": 1}, {"id": 2}]},
        {"parts": [{"$patch": "replace"}]},
        {"parts": []},
    ),
    ("empty merge lists stay empty", {"parts": []}, {"parts": []}, {"parts": []}),
    ("top-level replace drops every key", {"a": 1, "b": 1}, {"$patch": "replace"}, {}),
    ("top-level replace keeps the patch keys", {"a": 1, "b": 1}, {"c": "x", "$patch": "replace"}, {"c": "x"}),
    ("top-level delete", {"a": 1}, {"$patch": "delete"}, {}),
    (
        "delete removes every duplicate",
        {"parts": [{"id": 1}, {"id": 1}, {"id": 2, "v": "a"}, {"id": 3}, {"id": 3}]},
        {"parts": [{"id": 1, "$patch": "delete"}, {"id": 3, "$patch": "delete"}]},
        {"parts": [{"id": 2, "v": "a"}]},
    ),
    (
        "retainKeys map without directive adds",
        {"shape": {"kind": "a"}},
        {"shape": {"size": 2}},
        {"shape": {"kind": "a", "size": 2}},
    ),
    (
        "retainKeys map without directive deletes with null",
        {"shape": {"kind": "a", "size": 1}},
        {"shape": {"size": None}},
        {"shape": {"kind": "a"}},
    ),
    ("retainKeys map merged with an empty map", {"shape": {"kind": "a"}}, {"shape": {}}, {"shape": {"kind": "a"}}),
    (
        "retainKeys list element without directive",
        {"slots": [{"id": "x"}, {"id": "y", "v": "a"}]},
        {"slots": [{"id": "y", "v": None}]},
        {"slots": [{"id": "x"}, {"id": "y"}]},
    ),
    (
        "patch order wins for elements it names",
        {"parts": [{"id": 1}, {"id": 2, "v": "b"}, {"id": 3}]},
        {"parts": [{"id": 3, "v": "c"}, {"id": 1, "v": "a"}, {"id": 2, "o": "x"}]},
        {"parts": [{"id": 3, "v": "c"}, {"id": 1, "v": "a"}, {"id": 2, "v": "b", "o": "x"}]},
    ),
    (
        "server-only elements keep their place before later shared ones",
        {"parts": [{"id": 1}, {"id": 2, "v": "b"}, {"id": 3}]},
        {"parts": [{"id": 3, "v": "c"}, {"id": 1, "v": "a"}]},
        {"parts": [{"id": 2, "v": "b"}, {"id": 3, "v": "c"}, {"id": 1, "v": "a"}]},
    ),
    ("scalar list in patch order", {"tags": [1, 2, 3]}, {"tags": [3, 1, 2]}, {"tags": [3, 1, 2]}),
    ("scalar list partly reordered", {"tags": [1, 2, 3]}, {"tags": [3, 1]}, {"tags": [2, 3, 1]}),
    ("a new scalar comes before the server-only ones", {"tags": ["a"]}, {"tags": ["b"]}, {"tags": ["b", "a"]}),
    (
        "an element new to the list comes before the server-only ones",
        {"parts": [{"id": "a"}, {"id": "b"}]},
        {"parts": [{"id": "c"}]},
        {"parts": [{"id": "c"}, {"id": "a"}, {"id": "b"}]},
    ),
    (
        "a new element follows the shared element it is listed after",
        {"parts": [{"id": "a"}, {"id": "b"}, {"id": "c"}]},
        {"parts": [{"id": "b", "v": 1}, {"id": "d"}]},
        {"parts": [{"id": "a"}, {"id": "b", "v": 1}, {"id": "d"}, {"id": "c"}]},
    ),
    (
        "order list naming an element the list lacks",
        {"parts": [{"id": 1}, {"id": 3}]},
        {"$setElementOrder/parts": [{"id": 3}, {"id": 2}, {"id": 1}], "parts": [{"id": 3, "v": 3}, {"id": 1, "v": 1}]},
        {"parts": [{"id": 3, "v": 3}, {"id": 1, "v": 1}]},
    ),
    (
        "scalar order list naming a value the list lacks",
        {"tags": [1, 3]},
        {"$setElementOrder/tags": [3, 2, 1]},
        {"tags": [3, 1]},
    ),
    (
        "deleting a value the list lacks adds nothing",
        {"tags": [1, 2]},
        {"$deleteFromPrimitiveList/tags": [3]},
        {"tags": [1, 2]},
    ),
    ("deleting from a null list leaves it", {"tags": None}, {"$deleteFromPrimitiveList/tags": [3]}, {"tags": None}),
    (
        "deleting from a missing list does not create it",
        {"foo": ["bar"]},
        {"$deleteFromPrimitiveList/tags": [3]},
        {"foo": ["bar"]},
    ),
    ("deleting from a merge list", {"tags": [1, 2, 3]}, {"$deleteFromPrimitiveList/tags": [2]}, {"tags": [1, 3]}),
    (
        "deleting from a list without strategy",
        {"plain": [1, 2, 3]},
        {"$deleteFromPrimitiveList/plain": [2]},
        {"plain": [1, 3]},
    ),
    (
        "deleting duplicates and keeping the order",
        {"tags": [1, 2, 3, 3, 4]},
        {"$setElementOrder/tags": [1, 2], "$deleteFromPrimitiveList/tags": [3]},
        {"tags": [1, 2, 4]},
    ),
    (
        "adding and deleting scalars",
        {"tags": [1, 2, 3, 4]},
        {"$setElementOrder/tags": [1, 2, 4], "$deleteFromPrimitiveList/tags": [3]},
        {"tags": [1, 2, 4]},
    ),
    (
        "adding and deleting with the new value in the patch",
        {"tags": [1, 2, 3]},
        {"$setElementOrder/tags": [1, 2, 4], "$deleteFromPrimitiveList/tags": [3], "tags": [4]},
        {"tags": [1, 2, 4]},
    ),
    (
        "directive elements of a new list are dropped",
        {"name": "hi"},
        {"parts": [{"id": "hello"}, {"$patch": "delete", "id": "gone"}]},
        {"name": "hi", "parts": [{"id": "hello"}]},
    ),
    (
        "order list, patch list and server-only elements",
        {"parts": [{"id": 1, "o": "a"}, {"id": 2, "v": 2, "o": "b"}]},
        {
            "$setElementOrder/parts": [{"id": 4}, {"id": 1}, {"id": 2}, {"id": 3}],
            "parts": [{"id": 4, "v": 4}, {"id": 3, "v": 3}],
        },
        {"parts": [{"id": 4, "v": 4}, {"id": 1, "o": "a"}, {"id": 2, "v": 2, "o": "b"}, {"id": 3, "v": 3}]},
    ),
    (
        # Upstream deletes in place, so the server order it consults afterwards holds the new
        # element where the deleted one was: the server-only "d" stays in front of "c".
        "order list after a deletion and an addition",
        {"parts": [{"id": "d"}, {"id": "b"}, {"id": "a"}]},
        {
            "$setElementOrder/parts": [{"id": "c"}, {"id": "a"}, {"id": "b"}],
            "parts": [{"id": "b", "$patch": "delete"}, {"id": "c"}, {"id": "a"}],
        },
        {"parts": [{"id": "d"}, {"id": "c"}, {"id": "a"}]},
    ),
    (
        "server-only element at the end",
        {"parts": [{"id": 1}, {"id": 3}, {"id": 4}, {"id": 2}, {"id": 9}]},
        {"$setElementOrder/parts": [{"id": 4}, {"id": 2}, {"id": 3}, {"id": 1}]},
        {"parts": [{"id": 4}, {"id": 2}, {"id": 3}, {"id": 1}, {"id": 9}]},
    ),
    (
        "server-only element in the middle",
        {"parts": [{"id": 1}, {"id": 2}, {"id": 9}, {"id": 3}, {"id": 4}]},
        {"$setElementOrder/parts": [{"id": 2}, {"id": 1}, {"id": 4}, {"id": 3}]},
        {"parts": [{"id": 2}, {"id": 1}, {"id": 9}, {"id": 4}, {"id": 3}]},
    ),
    (
        "several server-only elements in the middle",
        {"parts": [{"id": 1}, {"id": 2}, {"id": 7}, {"id": 9}, {"id": 8}, {"id": 3}, {"id": 4}]},
        {"$setElementOrder/parts": [{"id": 2}, {"id": 1}, {"id": 4}, {"id": 3}]},
        {"parts": [{"id": 2}, {"id": 1}, {"id": 7}, {"id": 9}, {"id": 8}, {"id": 4}, {"id": 3}]},
    ),
    (
        "order list with duplicate keys",
        {"parts": [{"id": 1}, {"id": 2, "v": "d1"}, {"id": 3}, {"id": 2, "v": "d2"}, {"id": 4}]},
        {"$setElementOrder/parts": [{"id": 2}, {"id": 1}, {"id": 4}, {"id": 3}, {"id": 2}]},
        {"parts": [{"id": 2, "v": "d1"}, {"id": 2, "v": "d2"}, {"id": 1}, {"id": 4}, {"id": 3}]},
    ),
    (
        "scalar order list with duplicates",
        {"tags": [1, 2, 3, 2, 4]},
        {"$setElementOrder/tags": [2, 1, 4, 3, 2]},
        {"tags": [2, 2, 1, 4, 3]},
    ),
    (
        "retainKeys directive clears what it does not list",
        {"shape": {"size": "foo"}},
        {"shape": {"$retainKeys": ["other"], "other": "bar"}},
        {"shape": {"other": "bar"}},
    ),
    (
        "retainKeys directive switching a union member",
        {"shape": {"kind": "t1", "size": "foo"}},
        {"shape": {"$retainKeys": ["kind", "other"], "kind": "t2", "other": "bar"}},
        {"shape": {"kind": "t2", "other": "bar"}},
    ),
    (
        "retainKeys keeps listed keys the patch does not touch",
        {"shape": {"kind": "a", "size": 1, "x": 2}},
        {"shape": {"$retainKeys": ["kind", "size"], "size": 3}},
        {"shape": {"kind": "a", "size": 3}},
    ),
    (
        "retainKeys with nested merge lists",
        {"shape": {"tags": [1, 2], "size": 1}},
        {"shape": {"$retainKeys": ["tags"], "tags": [3], "$deleteFromPrimitiveList/tags": [1]}},
        {"shape": {"tags": [3, 2]}},
    ),
    (
        "retainKeys inside a list element",
        {"slots": [{"id": "a", "v": 1, "w": 2}, {"id": "b", "w": 3}]},
        {"slots": [{"id": "a", "$retainKeys": ["id", "x"], "x": 9}]},
        {"slots": [{"id": "a", "x": 9}, {"id": "b", "w": 3}]},
    ),
    (
        "delete one list and reorder another",
        {"parts": [{"id": "a", "v": "a"}, {"id": "b", "v": "b"}], "slots": [{"id": "c"}, {"id": "d"}]},
        {
            "$setElementOrder/parts": [{"id": "b"}],
            "$setElementOrder/slots": [{"id": "d"}, {"id": "c"}],
            "parts": [{"$patch": "delete", "id": "a"}],
        },
        {"parts": [{"id": "b", "v": "b"}], "slots": [{"id": "d"}, {"id": "c"}]},
    ),
    (
        "replace strategy swaps the whole map",
        {"blob": {"Some": "Generic", "Field": "Period"}, "k": 1},
        {"blob": {"Newly": "Modified"}},
        {"blob": {"Newly": "Modified"}, "k": 1},
    ),
    ("non-merge lists are replaced", {"plain": [{"id": 1, "v": 1}]}, {"plain": [{"id": 1}]}, {"plain": [{"id": 1}]}),
    (
        "nested merge lists merge",
        {"parts": [{"id": 1, "parts": [{"id": "x", "v": 1}], "tags": ["a"]}]},
        {"parts": [{"id": 1, "parts": [{"id": "x", "w": 2}], "tags": ["b"]}]},
        {"parts": [{"id": 1, "parts": [{"id": "x", "v": 1, "w": 2}], "tags": ["b", "a"]}]},
    ),
    (
        "nulls delete keys and unmatched nulls are ignored",
        {"a": 1, "m": {"x": 1}},
        {"a": None, "b": None, "m": {"y": None}},
        {"m": {"x": 1}},
    ),
    (
        "nulls inside new values are dropped",
        {},
        {"m": {"x": None, "y": {"z": None, "w": 1}}, "l": [{"k": None}]},
        {"m": {"y": {"w": 1}}, "l": [{}]},
    ),
    (
        "nulls in the document survive",
        {"thing": None, "c": {"k": None}},
        {"n": {"v": 5}},
        {"thing": None, "c": {"k": None}, "n": {"v": 5}},
    ),
    (
        "a type change takes the patch value",
        {"a": {"b": 1}, "l": [1]},
        {"a": [1], "l": {"x": 1}},
        {"a": [1], "l": {"x": 1}},
    ),
    ("new maps with a directive are not stored", {"k": 1}, {"m": {"$patch": "replace", "a": 1}}, {"k": 1}),
    (
        "directive keys in new values are not stored",
        {},
        {"shape": {"$retainKeys": ["a"], "a": 1, "$setElementOrder/tags": [1], "$deleteFromPrimitiveList/x": [2]}},
        {"shape": {"a": 1}},
    ),
    (
        "replace directive inside a nested map",
        {"inner": {"a": 1, "parts": [{"id": 1}]}},
        {"inner": {"$patch": "replace", "b": 2}},
        {"inner": {"b": 2}},
    ),
    (
        "replace directive in a list keeps only the patch elements",
        {"parts": [{"id": 1}, {"id": 2}]},
        {"parts": [{"id": 3, "v": None}, {"$patch": "replace"}, {"id": 4}]},
        {"parts": [{"id": 3}, {"id": 4}]},
    ),
    (
        "scalars replace scalars",
        {"a": 1, "b": "x", "c": True},
        {"a": 2.5, "b": "y", "c": False},
        {"a": 2.5, "b": "y", "c": False},
    ),
    (
        "merge key values compare with their type",
        {"parts": [{"id": 1}]},
        {"parts": [{"id": "1"}]},
        {"parts": [{"id": "1"}, {"id": 1}]},
    ),
    ("an empty patch changes nothing", {"a": {"b": [1]}}, {}, {"a": {"b": [1]}}),
]


@pytest.mark.parametrize(("doc", "patch", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_strategic_merge(doc: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    assert smp(doc, patch) == expected


ERRORS: list[tuple[str, dict[str, Any], Any, int, str]] = [
    (
        "order list contradicting the patch list",
        {"parts": [{"id": 1}, {"id": 3}, {"id": 2}]},
        {"$setElementOrder/parts": [{"id": 1}, {"id": 2}, {"id": 3}], "parts": [{"id": 3, "v": 3}, {"id": 1, "v": 1}]},
        422,
        "The order in patch list:\n[map[id:3 v:3] map[id:1 v:1]]\n doesn't match $setElementOrder list:\n"
        "[map[id:1] map[id:2] map[id:3]]\n",
    ),
    (
        "scalar order list contradicting the patch list",
        {"tags": [1, 3, 2]},
        {"$setElementOrder/tags": [1, 2, 3], "tags": [3, 1]},
        422,
        "doesn't match $setElementOrder list",
    ),
    (
        "element without its merge key",
        {"parts": [{"id": 1, "v": "a"}]},
        {"parts": [{"v": "b"}]},
        422,
        "map: map[v:b] does not contain declared merge key: id",
    ),
    (
        "delete directive without the merge key",
        {"parts": [{"id": 1}]},
        {"parts": [{"$patch": "delete"}]},
        422,
        "map: map[$patch:delete] does not contain declared merge key: id",
    ),
    (
        "server element without the merge key",
        {"parts": [{"v": 1}]},
        {"parts": [{"id": 2}]},
        422,
        "map: map[v:1] does not contain declared merge key: id",
    ),
    (
        "merge directive in a list",
        {"parts": [{"id": 1}]},
        {"parts": [{"$patch": "merge"}]},
        422,
        "merging lists cannot yet be specified in the patch",
    ),
    (
        "unknown directive in a list",
        {"parts": [{"id": 1}]},
        {"parts": [{"$patch": "frob", "id": 1}]},
        422,
        "unknown patch type: frob in map: map[$patch:frob id:1]",
    ),
    (
        "merge directive on a map",
        {"m": {"a": 1}},
        {"m": {"$patch": "merge"}},
        422,
        "unknown patch type: merge in map: map[$patch:merge]",
    ),
    (
        "non-string directive",
        {"m": {"a": 1}},
        {"m": {"$patch": 1}},
        422,
        "unknown patch type: %!s(int64=1) in map: map[$patch:1]",
    ),
    ("lists of lists", {"tags": [[1]]}, {"tags": [[2]]}, 422, "lists of lists are not supported"),
    ("mixed element types", {"tags": [1]}, {"tags": ["a"]}, 422, "list element types are not identical: [[1] [a]]"),
    (
        "bad retainKeys value",
        {"shape": {"a": 1}},
        {"shape": {"$retainKeys": "a"}},
        400,
        "invalid patch format of retainKeys",
    ),
    (
        "patch key missing from retainKeys",
        {"shape": {"a": 1}},
        {"shape": {"$retainKeys": ["a"], "b": 1}},
        400,
        "invalid patch format of retainKeys",
    ),
    (
        "malformed deletion directive",
        {"tags": [1]},
        {"$deleteFromPrimitiveListtags": [1]},
        400,
        "invalid patch format of primitive list",
    ),
    (
        "malformed order directive",
        {"tags": [1]},
        {"$setElementOrdertags": [1]},
        400,
        "invalid patch format of setElementOrder list",
    ),
    (
        "order directive that is not a list",
        {"tags": [1]},
        {"$setElementOrder/tags": 1},
        422,
        "expected a []interface {}, but received a int64",
    ),
    (
        "order directive over a list that is not a list",
        {"tags": "x"},
        {"$setElementOrder/tags": [1]},
        422,
        "expected a []interface {}, but received a string",
    ),
    (
        "order directive over two empty lists",
        {"tags": []},
        {"$setElementOrder/tags": [], "tags": []},
        422,
        "no elements in any of the given slices",
    ),
    (
        "a patch that is a list",
        {},
        [1],
        400,
        "json: cannot unmarshal array into Go value of type map[string]interface {}",
    ),
    (
        "a patch that is a string",
        {},
        "x",
        400,
        "json: cannot unmarshal string into Go value of type map[string]interface {}",
    ),
]


@pytest.mark.parametrize(("doc", "patch", "code", "message"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors(doc: dict[str, Any], patch: Any, code: int, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        smp(doc, patch)
    assert caught.value.code == code
    assert message in caught.value.message


def test_error_answers() -> None:
    with pytest.raises(PatchError) as caught:
        smp({"parts": [{"id": 1}]}, {"parts": [{"v": 1}]})
    status = caught.value.api_error().status()
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert status["message"] == "map: map[v:1] does not contain declared merge key: id"
    with pytest.raises(PatchError) as caught:
        smp({"tags": [[1]]}, {"tags": [[1]]})
    status = caught.value.api_error().status()
    assert status["message"] == "the server rejected our request due to an error in our request"
    with pytest.raises(PatchError) as caught:
        smp({"shape": {}}, {"shape": {"$retainKeys": 1}})
    assert caught.value.api_error().status()["reason"] == "BadRequest"


def test_null_patch_is_an_empty_patch() -> None:
    assert smp({"a": 1}, None) == {"a": 1}


def test_result_shares_nothing_with_the_inputs() -> None:
    doc = {"parts": [{"id": 1, "m": {"k": [1]}}]}
    patch = {"parts": [{"id": 2, "m": {"k": [2]}}], "x": {"y": [3]}}
    result = smp(doc, patch)
    result["parts"][0]["m"]["k"].append(9)
    result["parts"][1]["m"]["k"].append(9)
    result["x"]["y"].append(9)
    assert doc == {"parts": [{"id": 1, "m": {"k": [1]}}]}
    assert patch == {"parts": [{"id": 2, "m": {"k": [2]}}], "x": {"y": [3]}}


def test_unknown_fields_merge_without_strategy() -> None:
    assert smp({"u": {"a": 1, "l": [1]}}, {"u": {"b": 2, "l": [2]}}) == {"u": {"a": 1, "b": 2, "l": [2]}}


# --- properties --------------------------------------------------------------------------------

_ids = st.integers(0, 6)
_parts = st.lists(
    st.fixed_dictionaries({"id": _ids}, optional={"v": st.integers(0, 3)}), max_size=5, unique_by=lambda p: p["id"]
)
_tags = st.lists(st.integers(0, 6), max_size=5, unique=True)


@given(_parts, _parts)
def test_merged_parts_hold_the_union_of_ids_and_the_patch_values(
    server: list[dict[str, Any]], patch: list[dict[str, Any]]
) -> None:
    result = smp({"parts": server}, {"parts": patch})["parts"]
    assert sorted(ids(result)) == sorted(set(ids(server)) | set(ids(patch)))
    by_id = {p["id"]: p for p in result}
    for item in patch:
        for key, value in item.items():
            assert by_id[item["id"]][key] == value
    patch_ids = ids(patch)
    assert [i for i in ids(result) if i in patch_ids] == patch_ids
    server_only = [i for i in ids(server) if i not in patch_ids]
    assert [i for i in ids(result) if i in server_only] == server_only


@given(_tags, _tags, _tags)
def test_scalar_merge_then_delete(server: list[int], added: list[int], removed: list[int]) -> None:
    merged = smp({"tags": server}, {"tags": added})["tags"]
    assert sorted(merged) == sorted(set(server) | set(added))
    pruned = smp({"tags": merged}, {"$deleteFromPrimitiveList/tags": removed})["tags"]
    assert pruned == [t for t in merged if t not in removed]


@given(_parts.filter(bool), st.permutations(list(range(7))))
def test_set_element_order_orders_the_listed_elements(server: list[dict[str, Any]], order: list[int]) -> None:
    listed = [i for i in order if i in ids(server)]
    result = smp({"parts": server}, {"$setElementOrder/parts": [{"id": i} for i in listed]})["parts"]
    assert ids(result) == listed
