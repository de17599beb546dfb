"""The C protobuf writer (``_pbwrite``) fed from the generated writers' own facts, and the choice of writer.

:mod:`kubeloop.server.codec._pbwrite` walks JSON-form dicts in C and writes exactly the bytes of
the generated Python writers of :mod:`~kubeloop.server.codec.protobuf_writer` (their docstring is
the byte contract; the tests hold the two to each other for every built-in kind). It knows no
message: this module gives it one table per message, built from what the Python generator
itself uses -- the wire facts' fields in number order (:mod:`kubeloop.server.kinds.wire`), the
generator's tag bytes, its zero value of each field, and its functions for kube's special types.
``Time``, ``MicroTime``, ``Quantity``, ``IntOrString`` and raw JSON have fast paths in C for their
usual values (RFC 3339 text, an exact str or int, dicts of strings); each keeps the generator's
Python function (``orjson.dumps`` for raw JSON) as its fallback for any value the fast path does
not take, so bytes and errors stay the Python writers'. ``Duration``, the named-slice wrappers and
the ``JSONSchemaProps`` unions are the Python functions, called back from C. One source of facts,
two writers.

The memos of nested messages (:mod:`~kubeloop.server.codec.protobuf_memo`) are not used on this
path: in C, writing a pod spec costs less than making its memo key.

Which writer serves is read once from ``KUBELOOP_PROTOBUF_WRITER``:

- ``auto`` (the default): the C writer when the extension imports and its :data:`ABI` matches,
  else the Python writers (an install without a C compiler);
- ``native``: the C writer; its absence is an error at first use;
- ``python``: the generated Python writers.

Why C and not mypyc: docs/decisions.md ("Protobuf creates: a writer in C").
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Mapping
from typing import Any

import orjson

from kubeloop.native import NativeChoice
from kubeloop.server.codec import protobuf_writer as pw
from kubeloop.server.kinds import wire

ENV_VAR = "KUBELOOP_PROTOBUF_WRITER"
ABI = 2
"""The table shape this module builds; the extension's ``ABI`` must equal it."""

_VARINTS = frozenset({"int32", "int64", "uint32", "uint64"})

CHOICE = NativeChoice("kubeloop.server.codec._pbwrite", ABI, ENV_VAR)

EXTENSION = CHOICE.extension
"""The extension module, None when not built (or of another ABI)."""

available = CHOICE.available
mode = CHOICE.mode
resolve = CHOICE.resolve
enabled = functools.cache(CHOICE.enabled)
"""Whether the C writer serves (read once per process; ``enabled.cache_clear()`` reads it again)."""


class _Tables:
    """Message ids of the extension, defined on first use from the Python generator's facts."""

    def __init__(self, extension: Any) -> None:
        self.ext = extension
        extension.init(Mapping, base64.b64decode, orjson.dumps)
        self.ids: dict[str, int] = {}

    def id(self, name: str) -> int:
        found = self.ids.get(name)
        if found is None:
            pw._GENERATOR._ensure(name)  # the zeros and special functions of everything reachable
            found = self._define(name)
        return found

    def _define(self, name: str) -> int:
        found = self.ids.get(name)
        if found is not None:
            return found  # defined, or being defined higher up a recursive schema
        ident: int = self.ext.reserve()
        self.ids[name] = ident
        fields = sorted(wire.messages()[name]["fields"], key=lambda entry: entry["n"])
        self.ext.define(ident, tuple(self._field(entry) for entry in fields))
        return ident

    def _field(self, entry: Mapping[str, Any]) -> tuple[str, int, bytes, int, bytes, int, Any, bytes]:
        ext = self.ext
        number: int = entry["n"]
        type_name: str = entry["t"]
        if entry.get("inline"):
            return ("", ext.INLINE, pw._tag(number, 2), ext.KIND_MESSAGE, b"", self._define(type_name), None, b"")
        zero = pw._GENERATOR._zero(entry)
        if "map" in entry:
            if entry["map"] != "string":
                raise ValueError(f"map keys of {entry['map']} are not written by _pbwrite")
            kind, tag, sub, call = self._value(2, type_name)
            return (entry["name"], ext.MAP, pw._tag(number, 2), kind, tag, sub, call, zero)
        kind, tag, sub, call = self._value(number, type_name)
        return (entry["name"], ext.REPEATED if entry.get("rep") else 0, b"", kind, tag, sub, call, zero)

    def _value(self, number: int, type_name: str) -> tuple[int, bytes, int, Any]:
        """(kind, tag, sub, call) of one value, as ``_Generator._value`` writes it."""
        ext = self.ext
        if type_name in pw._SCALARS:
            tag = pw._tag(number, pw._WIRE_TYPES.get(type_name, 0))
            kind = {"string": ext.KIND_STRING, "bytes": ext.KIND_BYTES, "bool": ext.KIND_BOOL,
                    "double": ext.KIND_DOUBLE, "float": ext.KIND_FLOAT}.get(type_name, ext.KIND_VARINT)
            if kind == ext.KIND_VARINT and type_name not in _VARINTS:
                raise ValueError(f"scalar {type_name} is not written by _pbwrite")
            return kind, tag, -1, None
        tag = pw._tag(number, 2)
        special = pw._special(type_name)
        if not special:
            return ext.KIND_MESSAGE, tag, self._define(type_name), None
        if special == "raw":
            return ext.KIND_RAW, tag, -1, None
        function = pw._GENERATOR.namespace[pw._GENERATOR.names[type_name]]
        fast = {"time": ext.KIND_TIME, "microtime": ext.KIND_MICROTIME, "quantity": ext.KIND_QUANTITY,
                "intstr": ext.KIND_INTSTR}.get(special)
        if fast is not None:
            return fast, tag, -1, function  # the function: the fallback of the C fast path
        return (ext.KIND_DELIMITED if special in pw._DELIMITED_SPECIALS else ext.KIND_WRITER), tag, -1, function


@functools.cache
def _tables() -> _Tables:
    if EXTENSION is None:
        raise RuntimeError("kubeloop.server.codec._pbwrite is not built")
    return _Tables(EXTENSION)


def message_id(name: str) -> int | None:
    """The extension's id of the message ``name`` when the C writer serves and ``name`` is a
    struct (kube's special types keep their Python functions), else None."""
    return _struct_id(name) if enabled() else None


@functools.cache
def _struct_id(name: str) -> int | None:
    return None if pw._special(name) else _tables().id(name)


def writer(name: str) -> pw.Writer:
    """The C writer of the struct message ``name`` in the shape of a generated one: ``(obj, out)``."""
    return functools.partial(_tables().ext.write_into, _tables().id(name))


def encode_message(obj: Mapping[str, Any], name: str) -> bytes:
    """The message bytes of ``obj`` as the struct message ``name``."""
    tables = _tables()
    data: bytes = tables.ext.write(tables.id(name), obj)
    return data
