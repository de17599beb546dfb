"""Recurring nested messages read and written once: memos keyed by their bytes and their JSON text.

Objects that Go clients send and the server stores repeat large parts of each other: every pod
a ReplicaSet creates carries the same ``PodSpec`` (its template's), a controller's update sends
back the same containers, a list holds many pods of one template. A nested message's decoding
is a pure function of its bytes, and its writing a pure function of its value, whose JSON text
(orjson, C speed) names it exactly. So the codec keeps, per message type, what it read for
recent bytes and what it wrote for recent JSON texts, and a message met again costs a slice, a
hash and a lookup instead of a Python walk of its fields.

- :func:`memo_reader` keeps the JSON text of the decoded dict and answers a hit with
  ``orjson.loads`` of it: a fresh dict each time (the handlers default and mutate what they
  get), equal to what the reader gives for the same bytes;
- :func:`memo_writer` keys by ``orjson.dumps`` with subclasses, dataclasses and datetimes
  passed through, so anything JSON would not carry exactly (``TypeError``) is written without
  the memo; ``1``, ``1.0`` and ``True`` have different texts and so different entries;
- :func:`memoized` picks the messages worth it: structs (no special type) of at least
  :data:`MIN_FIELDS` fields, none of them (transitively) a float (a JSON round trip of a NaN is
  not the NaN), and not ``ObjectMeta``/``ListMeta`` (an object's metadata never recurs:
  its uid and resourceVersion are its own). Top-level objects are read without the memo (their
  metadata makes every body new), and written through the whole-body cache of
  :mod:`kubeloop.server.codec.protobuf`.

Each memo holds at most :data:`LIMIT` entries and is emptied when full (cheaper than LRU
bookkeeping on every hit; the working set refills it at once).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import orjson

from kubeloop.server.kinds import wire

MIN_FIELDS = 4
"""Smaller messages are written and read about as fast as a memo's key is made."""

LIMIT = 2048
"""Entries per message type."""

_NEVER = frozenset({wire.META + "v1.ObjectMeta", wire.META + "v1.ListMeta"})
_FLOATS = frozenset({"double", "float"})
_EXACT = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

Reader = Callable[[bytes, int, int], Any]
Writer = Callable[[Any, bytearray], None]

_MEMOS: list[dict[bytes, bytes]] = []


def clear() -> None:
    """Empty every memo (for measurements of a first read or write)."""
    for memo in _MEMOS:
        memo.clear()


@functools.cache
def memoized(name: str) -> bool:
    """Whether the nested message ``name`` goes through a memo (see the module doc)."""
    facts = wire.messages()[name]
    if name in _NEVER or facts.get("list") or len(facts["fields"]) < MIN_FIELDS:
        return False
    return not _has_float(name, frozenset())


def _has_float(name: str, seen: frozenset[str]) -> bool:
    if name in _FLOATS:
        return True
    facts = wire.messages().get(name)
    if facts is None or name in seen:
        return False
    seen = seen | {name}
    return any(_has_float(entry["t"], seen) or _has_float(entry.get("map", ""), seen) for entry in facts["fields"])


def memo_reader(read: Reader) -> Reader:
    """``read`` with a memo of its results by the message's bytes."""
    memo: dict[bytes, bytes] = {}
    _MEMOS.append(memo)
    loads = orjson.loads
    dumps = orjson.dumps

    def read_memoized(data: bytes, position: int, end: int) -> Any:
        key = data[position:end]
        found = memo.get(key)
        if found is not None:
            return loads(found)
        value = read(data, position, end)
        if len(memo) >= LIMIT:
            memo.clear()
        memo[key] = dumps(value)
        return value

    return read_memoized


def memo_writer(write: Callable[[], Writer], varint: Callable[[int], bytes]) -> Callable[[Any], bytes]:
    """A function giving the length-prefixed message of a value, through a memo by its JSON
    text; ``write()`` is the message's writer (looked up on a miss, so writers of messages that
    refer to each other can be made in any order)."""
    memo: dict[bytes, bytes] = {}
    _MEMOS.append(memo)
    dumps = orjson.dumps

    def written(value: Any) -> bytes:
        try:
            key = dumps(value, option=_EXACT)
        except TypeError:
            return _write(value)
        found = memo.get(key)
        if found is not None:
            return found
        data = _write(value)
        if len(memo) >= LIMIT:
            memo.clear()
        memo[key] = data
        return data

    def _write(value: Any) -> bytes:
        out = bytearray()
        write()(value, out)
        return varint(len(out)) + out

    return written
