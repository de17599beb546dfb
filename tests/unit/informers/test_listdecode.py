"""Item-by-item list decoding: always equal to decoding the whole body."""

import json
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.runtime.informers import listdecode
from kubeloop.runtime.informers.listdecode import decode_list

Obj = dict[str, Any]

# Strings that look like the separator the splitter searches for, to make false candidates.
_tricky = st.sampled_from(['},{"metadata":', '"},{"metadata":{', "}]}", '"items":[', "\\", '"', "x"])
_leaf = st.none() | st.booleans() | st.integers(-5, 5) | _tricky
_value = st.recursive(
    _leaf,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(["metadata", "spec", "a"]), children, max_size=3),
    max_leaves=12,
)
_item = st.fixed_dictionaries({"metadata": _value}, optional={"spec": _value, "status": _value})


def _check(body: bytes) -> None:
    expected = orjson.loads(body)
    page = decode_list(body)
    items = list(page)
    assert items == expected.pop("items", [])
    assert [orjson.dumps(i) for i in items] == [orjson.dumps(i) for i in orjson.loads(body).get("items", [])]
    assert page.envelope == expected


@settings(max_examples=150, deadline=None)
@given(items=st.lists(_item, max_size=6), continue_token=st.none() | _tricky)
def test_split_items_equal_whole_decoding(items: list[Obj], continue_token: str | None) -> None:
    meta: Obj = {"resourceVersion": "7"}
    if continue_token is not None:
        meta["continue"] = continue_token
    _check(orjson.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items}))


def test_items_are_decoded_one_at_a_time(monkeypatch: Any) -> None:
    items = [{"metadata": {"name": f"p{i}"}, "spec": [{"metadata": 1}, {"metadata": 2}]} for i in range(4)]
    body = orjson.dumps({"kind": "PodList", "metadata": {"resourceVersion": "9"}, "items": items})
    calls: list[int] = []
    real = orjson.loads

    def counting(data: Any) -> Any:
        calls.append(len(data))
        return real(data)

    monkeypatch.setattr(listdecode.orjson, "loads", counting)
    page = decode_list(body)
    assert page.envelope == {"kind": "PodList", "metadata": {"resourceVersion": "9"}}
    assert len(calls) == 1  # only the envelope so far
    iterator = iter(page)
    assert next(iterator) == items[0]
    assert all(size < len(body) // 2 for size in calls)  # no whole-body decode
    assert list(iterator) == items[1:]
    assert max(calls) < len(body) // 2


def test_unexpected_shapes_fall_back_to_whole_decoding() -> None:
    items = [{"metadata": {"name": "a"}}, {"spec": 1, "metadata": {"name": "b"}}, {"metadata": {}}]
    for body in (
        json.dumps({"kind": "L", "metadata": {}, "items": items}, indent=1).encode(),  # whitespace
        orjson.dumps({"kind": "L", "items": items, "metadata": {"resourceVersion": "1"}}),  # items not last
        orjson.dumps({"kind": "L", "metadata": {}, "items": items}),  # first keys differ
        orjson.dumps({"kind": "L", "metadata": {}, "items": []}),
        orjson.dumps({"kind": "L", "metadata": {}}),
        orjson.dumps({"kind": "L", "metadata": {"x": '"items":['}, "items": items}),
        orjson.dumps({"kind": "L", "metadata": {}, "items": [1, {"metadata": 2}]}) + b"\n",
    ):
        _check(body)
