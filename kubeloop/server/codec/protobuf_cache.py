"""Protobuf messages written once per object: kept by the stored object itself, else by its JSON text.

One stored object is written many times: as the answer of the write that stored it, to every
watcher of its kind, in every list and on every get. Two caches keep what was written:

- **by object** (a dict with ``metadata.name`` and ``metadata.resourceVersion``): the
  store hands the same dict to every reader and never changes it (``Storage``'s ownership
  contract: whoever changes an object copies it), so the dict itself names the message. An
  entry is found by (message, kind, namespace, name) and holds the dict; it answers only for
  that very dict (``is``), and a newer version of the object replaces it, so superseded
  versions are not kept alive. The lookup costs a few dictionary reads, where a JSON text costs
  an ``orjson`` encoding of the whole object (the fifth of a create's protobuf cost it was);
- **by JSON text** for anything else (Status bodies, list heads, objects without a resource
  version): the text names the value exactly.

Objects that carry a resource version but are made per request (conversions to another
version, PartialObjectMetadata views) go the first way too: each is written afresh, as it is a
new dict, and replaces its predecessor's entry.

The trust in "never changed" is checked, not assumed, wherever
``KUBELOOP_ENCODED_MUTATION_DETECTOR`` is on (the test suite turns it on): every entry keeps the
object's JSON text, and a hit whose object no longer matches it raises
:class:`EncodedObjectMutated` -- the server answers 500 and the test fails -- instead of serving
bytes of an older content.

Both caches are bounded (least recently used first out): JSON keys and messages by their bytes,
objects by four times their message's bytes (a rough measure of the dict they hold).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from kubeloop.server.codec import protobuf_writer

ENV_VAR = "KUBELOOP_ENCODED_MUTATION_DETECTOR"

Write = Callable[[Mapping[str, Any], str], bytes]
"""Writes ``obj`` as the message ``name``: ``write(obj, name)``."""

_HELD = 4
"""An object entry is counted as this many times its message's bytes (the dict it keeps alive)."""


class EncodedObjectMutated(AssertionError):
    """An object was changed in place after the codec wrote it (detector on)."""


def detector_enabled_by_env() -> bool:
    return os.environ.get(ENV_VAR, "").lower() in ("1", "true", "yes", "on")


def _object_key(name: str, obj: Mapping[str, Any]) -> tuple[str, Any, Any, Any] | None:
    """The entry of a stored-like object (a name and a resource version: lists have no name), else None."""
    metadata = obj.get("metadata")
    if type(metadata) is not dict or not metadata.get("resourceVersion"):
        return None
    object_name = metadata.get("name")
    return None if not object_name else (name, obj.get("kind"), metadata.get("namespace"), object_name)


class MessageCache:
    """Recently written messages, by object and by JSON text (see the module doc)."""

    def __init__(self, limit: int) -> None:
        self._texts: OrderedDict[tuple[str, bytes], bytes] = OrderedDict()
        self._objects: OrderedDict[tuple[str, Any, Any, Any], tuple[Mapping[str, Any], bytes, bytes | None]] = \
            OrderedDict()
        self._texts_size = 0
        self._objects_size = 0
        self._limit = limit
        self._verify: bool | None = None

    def message(self, name: str, obj: Mapping[str, Any]) -> bytes:
        """The message ``name`` of ``obj``."""
        return self.written(name, obj, protobuf_writer.encode_message)

    def written(self, name: str, obj: Mapping[str, Any], write: Write) -> bytes:
        """``write(obj, name)``, or what it gave for the same object or the same JSON text before."""
        key = _object_key(name, obj)
        if key is not None:
            entry = self._objects.get(key)
            if entry is not None and entry[0] is obj:
                return self._found(key, entry)
            return self._keep(key, obj, write(obj, name))
        try:
            text_key = (name, orjson.dumps(obj))
        except TypeError:
            return write(obj, name)
        found = self._texts.get(text_key)
        if found is not None:
            self._texts.move_to_end(text_key)
            return found
        return self._store_text(text_key, write(obj, name))

    def items(self, head: bytes, tag: bytes, name: str, objs: Iterable[Mapping[str, Any]]) -> list[bytes]:
        """The parts of a list's message: ``head``, then each item's ``tag``, length and message
        ``name`` (as :meth:`message` gives it), in one loop: a list's items are its cost."""
        parts = [head]
        objects = self._objects
        varint = protobuf_writer.varint
        for obj in objs:
            key = _object_key(name, obj)
            entry = None if key is None else objects.get(key)
            if entry is not None and entry[0] is obj:
                assert key is not None
                data = self._found(key, entry)
            elif key is not None:
                data = self._keep(key, obj, protobuf_writer.encode_message(obj, name))
            else:
                data = self.message(name, obj)
            parts += (tag, varint(len(data)), data)
        return parts

    def clear(self) -> None:
        self._texts.clear()
        self._objects.clear()
        self._texts_size = self._objects_size = 0

    def _found(self, key: tuple[str, Any, Any, Any], entry: tuple[Mapping[str, Any], bytes, bytes | None]) -> bytes:
        obj, data, text = entry
        if text is not None and orjson.dumps(obj) != text:
            raise EncodedObjectMutated(f"{key[1]} {key[2]}/{key[3]} changed in place after it was written "
                                       "(the store's objects must be copied to be changed)")
        self._objects.move_to_end(key)
        return data

    def _keep(self, key: tuple[str, Any, Any, Any], obj: Mapping[str, Any], data: bytes) -> bytes:
        if self._verify is None:
            self._verify = detector_enabled_by_env()
        objects = self._objects
        old = objects.pop(key, None)
        if old is not None:
            self._objects_size -= _HELD * len(old[1])
        objects[key] = (obj, data, orjson.dumps(obj) if self._verify else None)
        self._objects_size += _HELD * len(data)
        while self._objects_size > self._limit and objects:
            _, (_, evicted, _) = objects.popitem(last=False)
            self._objects_size -= _HELD * len(evicted)
        return data

    def _store_text(self, key: tuple[str, bytes], data: bytes) -> bytes:
        texts = self._texts
        texts[key] = data
        self._texts_size += len(key[1]) + len(data)
        while self._texts_size > self._limit and texts:
            (_, text), old = texts.popitem(last=False)
            self._texts_size -= len(text) + len(old)
        return data
