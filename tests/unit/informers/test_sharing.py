"""Structural sharing of cached objects: equal to plain decoding, never mutating, really shared."""

import asyncio
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.runtime.informers.informer import EventHandlerFuncs, SharedIndexInformer, strip_managed_fields
from kubeloop.runtime.informers.sharing import SubtreeSharer, same_json

from .fakes import FakeCollection, InstantClock

Obj = dict[str, Any]

# A small alphabet makes equal-looking subtrees frequent, including Python's equal-but-not-JSON
# pairs (True == 1 == 1.0, False == 0 == 0.0 == -0.0) and dicts equal up to key order.
_scalars = st.sampled_from([None, True, False, 0, 1, 1.0, 0.0, -0.0, 2, "x", "y", "1", ""])
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), children, max_size=4),
    max_leaves=16,
)
_objects = st.dictionaries(st.sampled_from(["metadata", "spec", "status", "a"]), _json, max_size=4)


def _bytes(value: Any) -> bytes:
    return orjson.dumps(value)


@settings(max_examples=150, deadline=None)
@given(new=_objects, ref=_objects)
def test_result_encodes_like_the_input_and_nothing_is_mutated(new: Obj, ref: Obj) -> None:
    new_bytes, ref_bytes = _bytes(new), _bytes(ref)
    out = SubtreeSharer().share(new, ref)
    assert _bytes(out) == new_bytes
    assert _bytes(new) == new_bytes
    assert _bytes(ref) == ref_bytes


@settings(max_examples=60, deadline=None)
@given(history=st.lists(_objects, min_size=1, max_size=12), small_table=st.booleans())
def test_a_stream_of_objects_matches_plain_decoding(history: list[Obj], small_table: bool) -> None:
    """As the informer uses it: each object against the previous one, with earlier results kept
    alive and checked again at the end (a later share must not change an earlier result)."""
    sharer = SubtreeSharer(strings=2 if small_table else 16384)
    sent = [orjson.dumps(obj) for obj in history]
    results = []
    for i, raw in enumerate(sent):
        previous = results[i - 1] if i % 2 and results else None  # alternate: explicit ref, last result
        results.append(sharer.share(orjson.loads(raw), previous))
    assert [_bytes(r) for r in results] == sent


def test_equal_but_differently_typed_values_are_not_shared() -> None:
    sharer = SubtreeSharer()
    ref = {"spec": {"on": 1, "n": 1, "z": 0.0}, "order": {"a": 1, "b": 2}, "l": [1, True]}
    new = {"spec": {"on": True, "n": 1.0, "z": -0.0}, "order": {"b": 2, "a": 1}, "l": [True, 1]}
    out = sharer.share(new, ref)
    assert _bytes(out) == _bytes(new)
    assert out["spec"]["on"] is True
    assert type(out["spec"]["n"]) is float
    assert list(out["order"]) == ["b", "a"]
    assert out["order"] is not ref["order"]
    assert not same_json({"a": True}, {"a": 1})


def _pod(name: str, node: str, image: str = "nginx:1.25") -> Obj:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"}},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": image, "resources": {}}],
                 "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}]},
        "status": {"phase": "Running"},
    }


def test_parts_equal_to_the_reference_are_the_reference_s_own() -> None:
    sharer = SubtreeSharer()
    first = sharer.share(_pod("a", "node-1"))
    second = sharer.share(orjson.loads(orjson.dumps(_pod("b", "node-2"))))  # against the last result
    assert second["metadata"]["labels"] is first["metadata"]["labels"]
    assert second["spec"] is not first["spec"]  # nodeName differs ...
    assert second["spec"]["containers"] is first["spec"]["containers"]  # ... the rest is shared
    assert second["spec"]["tolerations"] is first["spec"]["tolerations"]
    assert second["status"] is first["status"]
    third = sharer.share(orjson.loads(orjson.dumps(_pod("c", "node-1"))))
    assert third["spec"]["nodeName"] is first["spec"]["nodeName"]  # a string seen before, not a neighbour's


def test_strip_managed_fields_keeps_everything_else() -> None:
    obj = {"kind": "Pod", "metadata": {"name": "a", "managedFields": [{"manager": "m"}], "uid": "u"}, "spec": {}}
    out = strip_managed_fields(obj)
    assert out == {"kind": "Pod", "metadata": {"name": "a", "uid": "u"}, "spec": {}}
    assert obj["metadata"]["managedFields"] == [{"manager": "m"}]
    assert strip_managed_fields({"kind": "X"}) == {"kind": "X"}


async def _synced(informer: SharedIndexInformer, condition: Any) -> None:
    async with asyncio.timeout(5):
        while not (informer.has_synced() and condition()):
            await asyncio.sleep(0.001)


async def test_informer_updates_never_change_shared_parts_of_other_objects() -> None:
    api = FakeCollection()
    for name in ("a", "b", "c"):
        api.put(name, spec={"containers": [{"name": "app", "image": "v1"}], "replicas": 1})
    informer = SharedIndexInformer(api, name="pods", clock=InstantClock(), detect_mutations=True)
    informer.reflector._page_size = 2
    olds: list[Obj] = []
    informer.add_event_handler(EventHandlerFuncs(update=lambda old, new: olds.append(old)))
    await informer.start()
    try:
        await _synced(informer, lambda: len(informer.indexer) == 3)
        a, b, c = (informer.indexer.get(f"ns/{n}") for n in "abc")
        assert a is not None and b is not None and c is not None
        # Sharing happened across list pages (a and b on page one, c on page two).
        assert a["spec"] is b["spec"] is c["spec"]
        before = {n: orjson.dumps(o) for n, o in (("a", a), ("b", b), ("c", c))}
        api.put("a", spec={"containers": [{"name": "app", "image": "v2"}], "replicas": 1})
        api.put("b", spec={"containers": [{"name": "app", "image": "v1"}], "replicas": 2})
        api.remove("c")
        await _synced(informer, lambda: "ns/c" not in informer.indexer and len(olds) == 2)
        new_a, new_b = informer.indexer.get("ns/a"), informer.indexer.get("ns/b")
        assert new_a is not None and new_b is not None
        assert new_a["spec"]["containers"][0]["image"] == "v2"
        assert new_b["spec"]["replicas"] == 2
        assert new_b["spec"]["containers"] is b["spec"]["containers"]  # shared with its old version
        # The old versions (still held by handlers) and the deleted object are as they were.
        assert {n: orjson.dumps(o) for n, o in (("a", a), ("b", b), ("c", c))} == before
        assert [orjson.dumps(o) for o in olds] == [before["a"], before["b"]]
        # Every cached object is exactly what the fake server holds.
        assert {k: orjson.dumps(o) for k, o in informer.indexer.items()} == {
            k: orjson.dumps(o) for k, o in api.objects.items()
        }
    finally:
        await informer.stop()  # runs the mutation detector


async def test_transform_runs_page_by_page_before_caching() -> None:
    api = FakeCollection()
    for name in ("a", "b", "c", "d", "e"):
        api.put(name, metadata={"name": name, "namespace": "ns", "managedFields": [{"manager": "x"}]})
    informer = SharedIndexInformer(api, name="cm", clock=InstantClock())
    informer.reflector._page_size = 2
    lists_seen: list[int] = []

    def transform(obj: Obj) -> Obj:
        lists_seen.append(len(api.list_calls))
        return strip_managed_fields(obj)

    informer.set_transform(transform)
    await informer.start()
    try:
        await _synced(informer, lambda: len(informer.indexer) == 5)
        assert lists_seen == [1, 1, 2, 2, 3]  # each page is transformed before the next is fetched
        assert all("managedFields" not in o["metadata"] for o in informer.indexer.list())
        api.put("f", metadata={"name": "f", "namespace": "ns", "managedFields": [{"manager": "x"}]})
        await _synced(informer, lambda: "ns/f" in informer.indexer)
        cached = informer.indexer.get("ns/f")
        assert cached is not None and "managedFields" not in cached["metadata"]
        try:
            informer.set_transform(None)
        except RuntimeError:
            pass
        else:
            raise AssertionError("set_transform after start must fail")
    finally:
        await informer.stop()
