"""How deep a decoded protobuf body can nest, known from its message schema and its bytes.

Every request body is held to :data:`kubeloop.server.nesting.MAX_DEPTH` containers. A JSON body
is cleared by counting the brackets of its text; a protobuf body has no brackets to count, and
measuring the decoded object (an ``orjson`` encoding inside 154 wrapping arrays) cost a fifth of
decoding it. But a protobuf body cannot nest as it likes: its messages nest as their schema says
(a Pod's fields are at most 10 containers deep), and free-form JSON enters the decoded object
only through the raw types (``RawExtension``, ``JSON``, ``FieldsV1``), whose content is JSON text
carried verbatim in the body. A JSON text nests no deeper than the brackets it opens, so

    depth(decoded body) <= schema depth of its message + brackets anywhere in the body's bytes

(bytes of strings and numbers counted as brackets too: this overestimates, never under).
:func:`surely_within` answers from that bound; a body it cannot clear -- a recursive schema
(``JSONSchemaProps`` of CustomResourceDefinitions), or more brackets than the bound leaves room
for -- is measured as decoded, as before. The depth counts containers of the JSON form, as
:mod:`kubeloop.server.nesting` does: a message is an object, a repeated field an array, a map an
object, an inline-embedded message adds none (its fields sit in the enclosing object), and kube's
special types with a scalar JSON form (times, quantities, int-or-strings, durations) add none.
"""

from __future__ import annotations

import functools

from kubeloop.server.codec.protobuf_library import SPECIAL
from kubeloop.server.kinds import wire

_SCALAR_SPECIALS = frozenset({"time", "microtime", "quantity", "intstr", "duration"})
"""Special types whose JSON form is a string or a number."""


def surely_within(raw: bytes, api_version: str, kind: str, limit: int) -> bool:
    """Whether the protobuf body ``raw`` of ``kind`` decodes to at most ``limit`` nested
    containers, by the bound in the module doc; False means "measure it", not "too deep"."""
    name = wire.message_name(api_version, kind)
    depth = None if name is None else schema_depth(name)
    return depth is not None and depth + raw.count(b"{") + raw.count(b"[") <= limit


@functools.cache
def schema_depth(name: str) -> int | None:
    """Containers the JSON form of message ``name`` nests at most, raw JSON content aside; None
    when its schema is recursive (no bound)."""
    return _depth(name, frozenset())


def _depth(name: str, seen: frozenset[str]) -> int | None:
    """The message's own object and its deepest field."""
    inner = _fields_depth(name, seen)
    return None if inner is None else 1 + inner


def _fields_depth(name: str, seen: frozenset[str]) -> int | None:
    if name in seen:
        return None
    seen = seen | {name}
    deepest = 0
    for entry in wire.messages()[name]["fields"]:
        if entry.get("inline"):
            found = _fields_depth(entry["t"], seen)
        else:
            found = _value_depth(entry["t"], seen)
            if found is not None and (entry.get("rep") or "map" in entry):
                found += 1
        if found is None:
            return None
        deepest = max(deepest, found)
    return deepest


def _value_depth(type_name: str, seen: frozenset[str]) -> int | None:
    """Containers one value of ``type_name`` nests (0 for scalars)."""
    messages = wire.messages()
    if type_name not in messages:
        return 0
    special = SPECIAL.get(type_name)
    if special in _SCALAR_SPECIALS or special == "raw":
        # A raw value's JSON is counted by the body's brackets.
        return 0
    if special is not None:
        # JSONSchemaProps' either-or forms: the schema they hold is recursive.
        return None
    if messages[type_name].get("list"):
        return 1
    return _depth(type_name, seen)
