"""Written messages are kept by stored object, else by JSON text (protobuf_cache.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Mapping
from typing import Any

import pytest

from kubeloop.server.codec import protobuf, protobuf_cache
from kubeloop.server.codec.protobuf_cache import EncodedObjectMutated, MessageCache


class Stored(dict[str, Any]):
    """A dict that can be watched with a weak reference (plain dicts cannot)."""


def pod(rv: str, image: str = "nginx", name: str = "web") -> Stored:
    return Stored({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name, "namespace": "default", "resourceVersion": rv},
                   "spec": {"containers": [{"name": "c", "image": image}]}})


class Writes:
    """A writer that counts its calls and writes what the codec would."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, obj: Mapping[str, Any], name: str) -> bytes:
        self.calls += 1
        return protobuf.encode_message(obj, "v1", "Pod")


@pytest.fixture(autouse=True)
def detector_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(protobuf_cache.ENV_VAR, raising=False)


def test_a_stored_object_is_written_once_and_found_by_itself() -> None:
    cache, write = MessageCache(1 << 20), Writes()
    first = pod("1")
    data = cache.written("", first, write)
    assert cache.written("", first, write) == data
    assert write.calls == 1
    # An equal dict that is not the same object is written again: the entry answers only for
    # the dict it holds.
    assert cache.written("", pod("1"), write) == data
    assert write.calls == 2


def test_a_newer_version_replaces_the_entry_and_the_old_one_is_let_go() -> None:
    cache, write = MessageCache(1 << 20), Writes()
    old = pod("1")
    cache.written("", old, write)
    gone = weakref.ref(old)
    newer = pod("2", image="nginx:2")
    cache.written("", newer, write)
    del old
    gc.collect()
    assert gone() is None
    assert cache.written("", newer, write) == protobuf.encode_message(newer, "v1", "Pod")
    assert write.calls == 2


def test_objects_without_a_name_or_resource_version_are_kept_by_json_text() -> None:
    cache, write = MessageCache(1 << 20), Writes()
    for obj in ({"kind": "Pod", "metadata": {"name": "x"}}, {"kind": "Pod", "metadata": {"resourceVersion": "3"}}):
        cache.written("", dict(obj), write)
        cache.written("", dict(obj), write)  # equal text, another dict: found
    assert write.calls == 2


def test_list_items_share_the_entries_of_their_objects() -> None:
    cache = MessageCache(1 << 20)
    items = [pod("1", name="a"), pod("2", name="b")]
    name = "io.k8s.api.core.v1.Pod"
    first = cache.items(b"head", b"\x12", name, items)
    assert first[0] == b"head"
    assert first[3] == protobuf.encode_message(items[0], "v1", "Pod")
    again = cache.items(b"head", b"\x12", name, items)
    assert all(a is b for a, b in zip(first[1:], again[1:], strict=True) if len(a) > 2)


def test_the_bound_lets_the_least_recently_used_go() -> None:
    size = len(protobuf.encode_message(pod("1"), "v1", "Pod"))
    cache, write = MessageCache(4 * size * 2), Writes()  # room for two objects
    objects = [pod(str(rv), name=f"p{rv}") for rv in range(1, 4)]
    for obj in objects:
        cache.written("", obj, write)
    assert write.calls == 3
    cache.written("", objects[2], write)
    cache.written("", objects[1], write)
    assert write.calls == 3
    cache.written("", objects[0], write)  # pushed out by the third
    assert write.calls == 4


def test_the_detector_refuses_an_object_changed_after_it_was_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(protobuf_cache.ENV_VAR, "1")
    cache, write = MessageCache(1 << 20), Writes()
    obj = pod("1")
    cache.written("", obj, write)
    cache.written("", obj, write)  # unchanged: found
    obj["spec"]["containers"][0]["image"] = "changed"
    with pytest.raises(EncodedObjectMutated, match="Pod default/web changed in place"):
        cache.written("", obj, write)
    # Off, the same change goes unnoticed: that is what the detector is for.
    monkeypatch.delenv(protobuf_cache.ENV_VAR)
    quiet = MessageCache(1 << 20)
    other = pod("1")
    quiet.written("", other, write)
    other["spec"]["containers"][0]["image"] = "changed"
    assert quiet.written("", other, write) == protobuf.encode_message(pod("1"), "v1", "Pod")
