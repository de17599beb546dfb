"""Lists: key order, namespaces, pagination, predicates, remaining counts."""

from __future__ import annotations

from typing import Any

import pytest
from storage_testkit import DEPLOYMENTS, NAMESPACES, PODS, make_object, names

from kubeloop.server.storage import Storage

# Namespaces chosen so that naive string keys ("ns/name") would sort them differently from
# (namespace, name) tuples: "-" and "." sort before "/", and "a" is a prefix of the others.
KEYS = [
    ("a", "z"),
    ("a", "b"),
    ("a-b", "a"),
    ("a.b", "c"),
    ("ab", "a"),
    ("b", "a"),
    ("a", "a-1"),
    ("a", "a"),
]
ORDERED = sorted(KEYS)


@pytest.fixture
def filled(store: Storage) -> Storage:
    for namespace, name in KEYS:
        store.create(PODS, make_object(name, namespace))
    return store


def test_list_is_in_namespace_then_name_order(filled: Storage) -> None:
    items, continue_after, remaining = filled.list(PODS)
    assert names(items) == ORDERED
    assert (continue_after, remaining) == (None, 0)


def test_list_of_one_namespace(filled: Storage) -> None:
    items, _, _ = filled.list(PODS, "a")
    assert names(items) == [("a", "a"), ("a", "a-1"), ("a", "b"), ("a", "z")]
    assert filled.list(PODS, "nothing-here") == ([], None, 0)


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [(None, 8), ("a", 4), ("a-b", 1), ("a.b", 1), ("ab", 1), ("b", 1), ("c", 0), ("", 0)],
)
def test_count(filled: Storage, namespace: str | None, expected: int) -> None:
    assert filled.count(PODS, namespace) == expected


def test_count_and_list_of_an_unknown_type(store: Storage) -> None:
    assert store.count(DEPLOYMENTS) == 0
    assert store.list(DEPLOYMENTS) == ([], None, 0)
    assert store.list(DEPLOYMENTS, predicate=lambda obj: True) == ([], None, -1)


def test_cluster_scoped_objects_have_the_empty_namespace(store: Storage) -> None:
    for name in ("b", "a"):
        store.create(NAMESPACES, make_object(name, ""))
    assert names(store.list(NAMESPACES)[0]) == [("", "a"), ("", "b")]
    assert names(store.list(NAMESPACES, "")[0]) == [("", "a"), ("", "b")]
    assert store.get(NAMESPACES, "", "a") is not None


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 7])
def test_pages_cover_everything_once(filled: Storage, limit: int) -> None:
    seen: list[tuple[str, str]] = []
    start_after = None
    pages = 0
    while True:
        items, start_after, remaining = filled.list(PODS, start_after=start_after, limit=limit)
        seen += names(items)
        pages += 1
        assert remaining == len(ORDERED) - len(seen)
        if start_after is None:
            break
        assert start_after == seen[-1]
        assert len(items) == limit
    assert seen == ORDERED
    assert pages == -(-len(ORDERED) // limit)


def test_exact_fit_page_offers_no_continuation(filled: Storage) -> None:
    assert filled.list(PODS, limit=len(ORDERED))[1:] == (None, 0)
    assert filled.list(PODS, "a", limit=4)[1:] == (None, 0)


@pytest.mark.parametrize("limit", [None, 0, -1])
def test_no_limit(filled: Storage, limit: int | None) -> None:
    assert len(filled.list(PODS, limit=limit)[0]) == len(ORDERED)


def test_pages_within_a_namespace(filled: Storage) -> None:
    items, start_after, remaining = filled.list(PODS, "a", limit=3)
    assert names(items) == [("a", "a"), ("a", "a-1"), ("a", "b")]
    assert (start_after, remaining) == (("a", "b"), 1)
    items, start_after, remaining = filled.list(PODS, "a", start_after=start_after, limit=3)
    assert names(items) == [("a", "z")]
    assert (start_after, remaining) == (None, 0)


@pytest.mark.parametrize(
    ("start_after", "expected_first"),
    [
        (("a", "a-0"), ("a", "a-1")),  # a key that does not exist starts at the next one
        (("", "zzz"), ("a", "a")),
        (("a", "z"), ("a-b", "a")),
        (("b", "a"), None),
        (("zz", ""), None),
    ],
)
def test_start_after_is_exclusive_and_need_not_exist(
    filled: Storage, start_after: tuple[str, str], expected_first: tuple[str, str] | None
) -> None:
    items, _, _ = filled.list(PODS, start_after=start_after)
    assert (names(items)[0] if items else None) == expected_first


def test_start_after_outside_the_namespace(filled: Storage) -> None:
    assert len(filled.list(PODS, "a", start_after=("", "x"))[0]) == 4
    assert filled.list(PODS, "a", start_after=("b", "x")) == ([], None, 0)


def test_predicate_filters_before_paging(filled: Storage) -> None:
    def named_a(obj: dict[str, Any]) -> bool:
        return bool(obj["metadata"]["name"] == "a")

    expected = [("a", "a"), ("a-b", "a"), ("ab", "a"), ("b", "a")]
    items, start_after, remaining = filled.list(PODS, predicate=named_a)
    assert (names(items), start_after, remaining) == (expected, None, -1)

    items, start_after, remaining = filled.list(PODS, predicate=named_a, limit=3)
    assert (names(items), start_after, remaining) == (expected[:3], expected[2], -1)
    items, start_after, _ = filled.list(PODS, predicate=named_a, start_after=start_after, limit=3)
    assert (names(items), start_after) == (expected[3:], None)
    items, _, _ = filled.list(PODS, "a", predicate=named_a)
    assert names(items) == [("a", "a")]


def test_predicate_page_that_ends_on_the_last_match_offers_no_continuation(filled: Storage) -> None:
    items, start_after, _ = filled.list(PODS, predicate=lambda obj: obj["metadata"]["name"] == "a-1", limit=1)
    assert (names(items), start_after) == ([("a", "a-1")], None)


def test_list_reflects_deletes_and_recreates(filled: Storage) -> None:
    filled.delete(PODS, "a", "b")
    filled.delete(PODS, "b", "a")
    filled.create(PODS, make_object("b", "a"))
    assert names(filled.list(PODS)[0]) == [key for key in ORDERED if key != ("b", "a")]
