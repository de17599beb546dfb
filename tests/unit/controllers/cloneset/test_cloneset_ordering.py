"""Priority, scatter and scale-in orders (upstream's updatesort and pod_sorter tables)."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import Any

import pytest
from cloneset_pods import NOW
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.api.deletioncost import POD_DELETION_COST_ANNOTATION
from kubeloop.api.meta import format_time
from kubeloop.controllers.cloneset.ordering import (
    active_pods_compare,
    active_pods_key,
    priority_before,
    priority_sort,
    same_node_ranks,
    scale_in_compare,
    scatter_sort,
    scatter_terms,
    spread_constraint_ranks,
    trailing_integer,
)


def _labelled(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"labels": labels}}


WEIGHTS = {
    "weightPriority": [
        {"weight": 20, "matchSelector": {"matchLabels": {"key": "foo"}}},
        {"weight": 10, "matchSelector": {"matchLabels": {"key": "bar"}}},
    ]
}


@pytest.mark.parametrize(
    ("strategy", "labels_i", "labels_j", "expected"),
    [
        (WEIGHTS, {}, {}, True),
        (WEIGHTS, {"key": "foo"}, {"key": "foo"}, True),
        (WEIGHTS, {"key": "bar"}, {"key": "foo"}, False),
        (WEIGHTS, {}, {"key": "bar"}, False),
        (WEIGHTS, {}, {"key": "foo"}, False),
        (
            {
                "weightPriority": [
                    {"weight": 20, "matchSelector": {"matchLabels": {"key1": "foo"}}},
                    {"weight": 10, "matchSelector": {"matchLabels": {"key2": "bar"}}},
                    {"weight": 15, "matchSelector": {"matchLabels": {"key3": "baz"}}},
                ]
            },
            {"key1": "foo"},
            {"key2": "bar", "key3": "baz"},
            False,
        ),
        (
            {
                "weightPriority": [
                    {"weight": 20, "matchSelector": {"matchLabels": {"key1": "foo"}}},
                    {"weight": 10, "matchSelector": {"matchLabels": {"key2": "bar"}}},
                    {"weight": 5, "matchSelector": {"matchLabels": {"key3": "baz"}}},
                ]
            },
            {"key2": "bar", "key3": "baz"},
            {"key1": "foo"},
            False,
        ),
        ({"orderPriority": [{"orderedKey": "key1"}, {"orderedKey": "key2"}]}, {}, {}, True),
        ({"orderPriority": [{"orderedKey": "key1"}, {"orderedKey": "key2"}]}, {"key1": "o-10"}, {"key1": "o-5"}, True),
        ({"orderPriority": [{"orderedKey": "key1"}, {"orderedKey": "key2"}]}, {"key1": "o-10"}, {"key1": "o-10"}, True),
        (
            {"orderPriority": [{"orderedKey": "key1"}, {"orderedKey": "key2"}]},
            {"key1": "o-10"},
            {"key1": "o-20"},
            False,
        ),
        (
            {"orderPriority": [{"orderedKey": "key1"}, {"orderedKey": "key2"}]},
            {"key2": "o-20"},
            {"key1": "o-10"},
            False,
        ),
        ({"orderPriority": [{"orderedKey": "key1"}, {"orderedKey": "key2"}]}, {"key2": "o-20"}, {"key2": "o-10"}, True),
    ],
)
def test_priority_compare(
    strategy: dict[str, Any], labels_i: dict[str, str], labels_j: dict[str, str], expected: bool
) -> None:
    assert priority_before(strategy, labels_i, labels_j, True) is expected


def test_pods_without_any_ordered_key_sort_first() -> None:
    strategy = {"orderPriority": [{"orderedKey": "key1"}]}
    pods = [_labelled({"key1": "a-1"}), _labelled({})]
    assert priority_sort(strategy, pods, [0, 1]) == [1, 0]


def test_priority_sort() -> None:
    strategy = {
        "weightPriority": [
            {"weight": 100, "matchSelector": {"matchLabels": {"foo": "bar"}}},
            {"weight": 90, "matchSelector": {"matchLabels": {"hello": "world"}}},
        ]
    }
    pods = [_labelled({"hello": "world"}), _labelled({}), _labelled({"foo": "bar"}), _labelled({})]
    assert priority_sort(strategy, pods, [0, 1, 2, 3]) == [2, 0, 1, 3]
    assert priority_sort(strategy, [_labelled({})] * 3, [2, 0, 1]) == [2, 0, 1]
    assert priority_sort({}, pods, [3, 2, 1, 0]) == [3, 2, 1, 0]


@pytest.mark.parametrize(("value", "expected"), [("5", 5), ("sts-10", 10), ("abc", 0), ("", 0), ("a1b22", 22)])
def test_trailing_integer(value: str, expected: int) -> None:
    assert trailing_integer(value) == expected


# --- scale-in order -----------------------------------------------------------------------


def _pod(
    *,
    node: str = "n",
    phase: str = "Running",
    ready: bool | None = None,
    ready_since: Any = NOW,
    restarts: int = 0,
    created: Any = None,
    cost: str | None = None,
    uid: str = "u",
) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = []
    if ready is not None:
        condition: dict[str, Any] = {"type": "Ready", "status": "True" if ready else "False"}
        if ready_since is not None:
            condition["lastTransitionTime"] = format_time(ready_since)
        conditions.append(condition)
    meta: dict[str, Any] = {"uid": uid}
    if created is not None:
        meta["creationTimestamp"] = format_time(created)
    if cost is not None:
        meta["annotations"] = {POD_DELETION_COST_ANNOTATION: cost}
    spec = {"nodeName": node} if node else {}
    status = {"phase": phase, "conditions": conditions, "containerStatuses": [{"name": "c", "restartCount": restarts}]}
    return {"metadata": meta, "spec": spec, "status": status}


MONTH_AGO = NOW - timedelta(days=30)
SCALE_IN_CHAIN = [
    _pod(node="", phase="Pending"),
    _pod(phase="Pending"),
    _pod(phase="Unknown"),
    _pod(ready=False),
    _pod(ready=True, ready_since=None),
    _pod(ready=True, ready_since=NOW),
    _pod(ready=True, ready_since=MONTH_AGO),
]


@pytest.mark.parametrize("index", range(len(SCALE_IN_CHAIN) - 1))
def test_scale_in_order_chain(index: int) -> None:
    lesser, greater = SCALE_IN_CHAIN[index], SCALE_IN_CHAIN[index + 1]
    assert scale_in_compare(lesser, greater) < 0
    assert scale_in_compare(greater, lesser) > 0


def test_scale_in_order_tie_breakers() -> None:
    assert scale_in_compare(_pod(ready=True, restarts=9001), _pod(ready=True)) < 0
    assert scale_in_compare(_pod(ready=True, created=NOW), _pod(ready=True, created=MONTH_AGO)) < 0
    assert scale_in_compare(_pod(ready=True, cost="10"), _pod(ready=True, cost="100")) < 0
    for pod in SCALE_IN_CHAIN:
        assert scale_in_compare(pod, pod) == 0


def test_scale_in_prefers_unavailable_and_higher_rank() -> None:
    a, b = _pod(ready=True, uid="a"), _pod(ready=True, uid="b")
    assert scale_in_compare(a, b, available=lambda p: p is b) < 0
    assert scale_in_compare(a, b, ranks={"b": 1.0}) > 0


def test_update_default_order_ignores_deletion_cost() -> None:
    assert active_pods_compare(_pod(ready=True, cost="10"), _pod(ready=True, cost="100")) == 0
    assert active_pods_compare(_pod(ready=False), _pod(ready=True)) < 0


def test_same_node_ranks() -> None:
    nodes = ["a", "", "", "b", "a", "c", "b", "d", "d", "d", "a"]
    pods = [{"metadata": {"uid": str(i)}, "spec": {"nodeName": n} if n else {}} for i, n in enumerate(nodes)]
    assert same_node_ranks(pods) == {"0": 2.0, "4": 1.0, "3": 1.0, "7": 2.0, "8": 1.0}


ZONE = "failure-domain.beta.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SPREAD_NODES = [
    {"metadata": {"name": "a", "labels": {}}},
    *[{"metadata": {"name": n, "labels": {HOST: n, ZONE: "z1"}}} for n in "bcd"],
    *[{"metadata": {"name": n, "labels": {HOST: n, ZONE: "z2"}}} for n in "efg"],
    *[{"metadata": {"name": n, "labels": {HOST: n, ZONE: "z3"}}} for n in "hi"],
]
SPREAD_PODS = [
    {"metadata": {"uid": f"{node}-{i}"}, "spec": {"nodeName": node}}
    for node, count in [("a", 2), ("b", 2), ("c", 3), ("d", 5), ("e", 5), ("f", 3), ("i", 5)]
    for i in range(count)
]


@pytest.mark.parametrize(
    ("constraints", "expected"),
    [
        (
            [{"topologyKey": ZONE}],
            "d-0|d-1|c-0,e-0|d-2,e-1|b-0,e-2|c-1,f-0,i-0|d-3,e-3,i-1|b-1,f-1,i-2|c-2,e-4,i-3|d-4,f-2,i-4",
        ),
        ([{"topologyKey": ZONE, "limitedValues": ["z2", "z3"]}], "e-0|e-1|e-2|f-0,i-0|e-3,i-1|f-1,i-2|e-4,i-3|f-2,i-4"),
        (
            [{"topologyKey": ZONE}, {"topologyKey": HOST}],
            "d-0,e-0|d-1,e-1|c-0,i-0|d-2,e-2|i-1,f-0|b-0,c-1|i-2,d-3|e-3,f-1|i-3,b-1|c-2,e-4|d-4,f-2,i-4",
        ),
    ],
)
def test_spread_constraint_ranks(constraints: list[dict[str, Any]], expected: str) -> None:
    """Pods with a rank, stably sorted by descending rank (``|`` only groups for reading)."""
    ranks = spread_constraint_ranks(SPREAD_PODS, constraints, SPREAD_NODES)
    ranked = [p["metadata"]["uid"] for p in SPREAD_PODS if ranks.get(p["metadata"]["uid"], 0) > 0]
    ranked.sort(key=lambda uid: -ranks[uid])
    assert ranked == expected.replace("|", ",").split(",")


# --- scatter ------------------------------------------------------------------------------

_SCATTER_LABELS = {"A": ("labelA", "AAA"), "B": ("labelB", "BBB"), "C": ("labelC", "CCC")}


def _scatter_pod(token: str) -> dict[str, Any] | None:
    if token == "nil":
        return None
    labels: dict[str, str] = {}
    for letter in token:
        if letter in _SCATTER_LABELS:
            key, value = _SCATTER_LABELS[letter]
            labels[key] = value
        elif letter == "x":
            labels["labelX"] = "other"
    return _labelled(labels)


@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        ("-", [0]),
        ("A", [0]),
        ("A-", [0, 1]),
        ("----AA", [4, 0, 1, 2, 3, 5]),
        ("---AAA", [3, 0, 1, 4, 2, 5]),
        ("---A--A", [3, 0, 1, 2, 4, 5, 6]),
        ("------AAA", [6, 0, 1, 2, 7, 3, 4, 5, 8]),
        ("--AAAA", [2, 3, 0, 4, 1, 5]),
        ("--A-AAAAA", [2, 4, 0, 5, 6, 1, 7, 3, 8]),
        ("-A-A--AAA", [1, 0, 3, 2, 6, 4, 7, 5, 8]),
        ("-------AAA", [7, 0, 1, 2, 3, 8, 4, 5, 6, 9]),
    ],
)
def test_scatter_by_one_rule(pods: str, expected: list[int]) -> None:
    pod_objs = [_scatter_pod("A" if c == "A" else ".") for c in pods]
    assert scatter_sort([{"key": "labelA", "value": "AAA"}], pod_objs, range(len(pods))) == expected


def test_scatter_terms() -> None:
    terms = [{"key": "labelA", "value": "AAA"}, {"key": "labelB", "value": "BBB"}]
    assert scatter_terms(terms[:1], [], []) == [("labelA", "AAA")]
    pods = [_labelled({}), _labelled({}), _labelled({"labelB": "B"}), *[_scatter_pod(t) for t in ("B", "A", "A")]]
    assert scatter_terms(terms, pods, range(6)) == [("labelA", "AAA"), ("labelB", "BBB")]


SCATTER_SORT_ROWS = [
    ("A", "AB", 1, [0]),
    ("", ". . . . . .", 6, [0, 1, 2, 3, 4, 5]),
    ("A", ". . . . A A", 6, [4, 0, 1, 2, 3, 5]),
    ("B", ". . . . x x B A A AB", 10, [6, 0, 1, 2, 3, 4, 5, 7, 8, 9]),
    ("AB", "B B . . A A", 6, [0, 4, 2, 3, 5, 1]),
    ("AB", ". . . B AB A", 6, [4, 0, 1, 2, 5, 3]),
    ("BA", ". . . . x x B A A B", 10, [7, 6, 0, 1, 2, 3, 4, 5, 9, 8]),
    ("AB", ". . . . x x B A A B", 10, [6, 7, 0, 1, 2, 3, 4, 5, 8, 9]),
    ("AB", ". . . . x x AB . . AB", 10, [6, 0, 1, 2, 3, 4, 5, 7, 8, 9]),
    ("AB", ". . . x x AB . . AB", 9, [5, 0, 1, 2, 3, 4, 6, 7, 8]),
    ("AB", ". . . A x x AB . . .", 8, [3, 0, 1, 2, 4, 5, 7, 6]),
    ("AB", ". . . A . . x x AB . . AB", 11, [0, 1, 2, 4, 3, 5, 6, 7, 9, 10, 8]),
    ("AB", ". . . A A x AB . . AB", 10, [6, 3, 0, 1, 4, 2, 5, 7, 8, 9]),
    ("AB", ". A A x x AB . . AB", 9, [5, 1, 0, 3, 2, 4, 6, 7, 8]),
    ("AB", "A . . A A x AB . . AB", 8, [1, 0, 2, 3, 5, 4, 7, 6]),
    ("AB", ". . A A . A x x AB . . AB", 11, [0, 2, 1, 4, 3, 6, 7, 5, 9, 10, 8]),
    ("ABC", ". A A B B C C C C C", 10, [3, 1, 5, 0, 6, 7, 8, 9, 2, 4]),
    ("ABC", ". A AC BC B . . C C C", 10, [3, 2, 0, 7, 8, 5, 6, 9, 1, 4]),
    ("A", ". . . . A A A", 6, [0, 1, 4, 2, 3, 5]),
    ("A", "A A . . . . . . . A", 7, [2, 0, 3, 4, 5, 6, 1]),
    ("ABC", ". A AC BC B nil . . C C C", 10, [3, 2, 0, 8, 9, 6, 7, 10, 1, 4]),
]


@pytest.mark.parametrize(("terms", "pods", "candidates", "expected"), SCATTER_SORT_ROWS)
def test_scatter_sort(terms: str, pods: str, candidates: int, expected: list[int]) -> None:
    strategy = [{"key": _SCATTER_LABELS[t][0], "value": _SCATTER_LABELS[t][1]} for t in terms]
    pod_objs = [_scatter_pod(token) for token in pods.split()]
    indexes = [i for i, pod in enumerate(pod_objs) if pod is not None][:candidates]
    assert scatter_sort(strategy, pod_objs, indexes) == expected


_TIMES = st.one_of(st.none(), st.integers(0, 5).map(lambda offset: format_time(NOW - timedelta(seconds=offset))),
                   st.just("2026-01-02T03:04:05.123456Z"), st.just("2026-01-02T03:04:05.123457Z"))


@st.composite
def _pods(draw: st.DrawFn) -> dict[str, Any]:
    status: dict[str, Any] = {}
    phase = draw(st.sampled_from([None, "Pending", "Unknown", "Running", "Succeeded", "Failed"]))
    if phase is not None:
        status["phase"] = phase
    ready = draw(st.sampled_from([None, "True", "False"]))
    if ready is not None:
        condition: dict[str, Any] = {"type": "Ready", "status": ready}
        since = draw(_TIMES)
        if since is not None:
            condition["lastTransitionTime"] = since
        status["conditions"] = [condition]
    restarts = draw(st.lists(st.integers(0, 3), max_size=2))
    if restarts:
        status["containerStatuses"] = [{"name": f"c{i}", "restartCount": n} for i, n in enumerate(restarts)]
    metadata: dict[str, Any] = {"name": "p"}
    created = draw(_TIMES)
    if created is not None:
        metadata["creationTimestamp"] = created
    node = draw(st.sampled_from([None, "", "a", "b"]))
    return {"metadata": metadata, "spec": {} if node is None else {"nodeName": node}, "status": status}


@settings(max_examples=300, deadline=None)
@given(st.lists(_pods(), max_size=12))
def test_the_active_pods_key_sorts_as_the_comparison(pods: list[dict[str, Any]]) -> None:
    by_compare = sorted(range(len(pods)), key=functools.cmp_to_key(lambda i, j: active_pods_compare(pods[i], pods[j])))
    by_key = sorted(range(len(pods)), key=lambda i: active_pods_key(pods[i]))
    assert by_key == by_compare
