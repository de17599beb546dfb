"""Protobuf message bytes written by code generated from the wire facts, as gogo's ``Marshal`` writes them.

One Python function per message, generated from :mod:`kubeloop.server.kinds.wire` as source text
and compiled once with ``exec`` (the technique of attrs and pydantic v1): field numbers become
tag bytes spelled as literals, a field Go writes at its zero value when the dict lacks it becomes
one precomputed constant (the tag and the zero message), and every value is appended to one
``bytearray``. A nested message is written in place and its length prefix inserted in front of
it afterwards (``bytearray.insert`` of one byte for the usual short message), so no intermediate
``bytes`` are built and joined.

The bytes are those of :func:`kubeloop.server.codec.protobuf_library.encode_message` (the pinned
``protobuf`` library's deterministic serialization of the same message), which the tests hold
it to for every built-in kind, with one difference that is Go's: map keys are sorted as Go's
``sortkeys.Strings`` sorts them, an empty key first (the library puts it last). Semantics
(gogo's generated ``Marshal``, see :mod:`kubeloop.server.codec.protobuf`): every non-pointer
scalar and struct written even at its zero value, pointers only when set (``None`` is unset),
bytes only when present, repeated fields unpacked, maps sorted by key, fields in number order,
inline-embedded structs written from the same dict, kube's special types
(``metav1.Time`` seconds only with zero nanos, ``MicroTime`` microseconds, the zero time as an
empty message, ``Quantity`` text, ``IntOrString``, ``Duration`` nanoseconds, raw JSON,
named-slice wrappers and the ``JSONSchemaProps*Or*`` unions).

Nested messages worth it are written through a memo by their JSON text
(:mod:`~kubeloop.server.codec.protobuf_memo`): a pod template's spec is written once for all its pods.

Which writer serves: :func:`writer`, :func:`encode_message` and :func:`encode_delimited` use the
C writer of :mod:`~kubeloop.server.codec.protobuf_native` (fed from this generator's facts, held
to these functions' bytes) when it is built, else the generated functions
(:func:`python_writer`, :func:`python_encode_message`); ``KUBELOOP_PROTOBUF_WRITER`` forces either.

Why generated code: the library path spent most of its time in Python building the constructor
arguments and in the library building messages from them (docs/decisions.md, ``bench/protobuf.py``).
"""

from __future__ import annotations

import base64
import functools
import struct
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from kubeloop.server.codec import gotext
from kubeloop.server.codec.protobuf_library import SPECIAL
from kubeloop.server.codec.protobuf_memo import memo_writer, memoized
from kubeloop.server.kinds import wire

Writer = Callable[[Any, bytearray], None]
"""Appends the message's fields (no tag, no length) for a JSON-form value to the buffer."""

_SCALARS = frozenset({"string", "bool", "int32", "int64", "uint32", "uint64", "double", "float", "bytes"})
_SMALL = [bytes((n,)) for n in range(128)]


def varint(value: int) -> bytes:
    """A varint; negative numbers as their 64-bit two's complement (ten bytes), as Go writes
    ``int32`` and ``int64``."""
    if 0 <= value < 128:
        return _SMALL[value]
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def _delimited(number: int, content: bytes) -> bytes:
    return _tag(number, 2) + varint(len(content)) + content


# --- kube's special types: content writers ----------------------------------------------------------


@functools.lru_cache(maxsize=8192)
def _time(value: str) -> bytes:
    # metav1.Time: seconds and a zero nanos field (time_proto.go); the zero time writes nothing.
    seconds, _ = gotext.parse_time(value)
    if seconds == gotext.ZERO_SECONDS:
        return b"\x00"
    content = b"\x08" + varint(seconds) + b"\x10\x00"
    return varint(len(content)) + content


@functools.lru_cache(maxsize=8192)
def _microtime(value: str) -> bytes:
    seconds, nanos = gotext.parse_time(value)
    if seconds == gotext.ZERO_SECONDS and nanos < 1000:
        return b"\x00"
    content = b"\x08" + varint(seconds) + b"\x10" + varint(nanos - nanos % 1000)
    return varint(len(content)) + content


@functools.lru_cache(maxsize=8192, typed=True)  # 1, 1.0 and True write differently
def _quantity(value: Any) -> bytes:
    text = (value if isinstance(value, str) else str(value)).encode()
    content = b"\x0a" + varint(len(text)) + text
    return varint(len(content)) + content


@functools.lru_cache(maxsize=8192, typed=True)  # 1, 1.0 and True write differently
def _intstr(value: Any) -> bytes:
    if isinstance(value, str):
        text = value.encode()
        content = b"\x08\x01\x10\x00\x1a" + varint(len(text)) + text
    else:
        content = b"\x08\x00\x10" + varint(value) + b"\x1a\x00"
    return varint(len(content)) + content


@functools.lru_cache(maxsize=8192)
def _duration(value: Any) -> bytes:
    content = b"\x08" + varint(gotext.parse_duration(value))
    return varint(len(content)) + content


def _unique_string(value: str) -> bytes:
    """A string's length prefix and UTF-8 bytes, for strings that never recur (:data:`_UNIQUE`):
    kept, they would only push the recurring ones out of :func:`_string`'s cache (a list of
    5,000 pods holds 15,000 of them)."""
    text = value.encode()
    return varint(len(text)) + text


_string = functools.lru_cache(maxsize=16384)(_unique_string)
"""The same, kept: most strings of stored objects recur (enum values, images, paths, label values)."""


_UNIQUE = frozenset({("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", name)
                     for name in ("name", "uid", "resourceVersion")})
"""(message, field) of strings that name one object (or one version of it)."""


_DELIMITED_SPECIALS: dict[str, Callable[[Any], bytes]] = {
    "time": _time, "microtime": _microtime, "quantity": _quantity, "intstr": _intstr, "duration": _duration}
"""Special types written as one cached ``bytes`` (length prefix included) per value."""


def _write_raw(value: Any, out: bytearray) -> None:
    out += _delimited(1, orjson.dumps(value))


def _write_list(value: Any, out: bytearray) -> None:
    for item in value:
        out += _delimited(1, item.encode())


def _write_nested(number: int, writer: Writer, value: Any, out: bytearray) -> None:
    out += _tag(number, 2)
    start = len(out)
    writer(value, out)
    out[start:start] = varint(len(out) - start)


def _schema_writer(name: str) -> Writer:
    # Python's own, on either path: the C writer calls these unions back, and the tests compare
    # the C writer with the Python one, which must not lean on it.
    return python_writer(name.rpartition(".")[0] + ".JSONSchemaProps")


def _or_array(name: str) -> Writer:
    def write(value: Any, out: bytearray) -> None:
        schema = _schema_writer(name)
        if isinstance(value, list):
            for item in value:
                _write_nested(2, schema, item, out)
        else:
            _write_nested(1, schema, value, out)
    return write


def _or_bool(name: str) -> Writer:
    def write(value: Any, out: bytearray) -> None:
        if isinstance(value, bool):
            out += b"\x08\x01" if value else b"\x08\x00"
        else:
            out += b"\x08\x01"
            _write_nested(2, _schema_writer(name), value, out)
    return write


def _or_strings(name: str) -> Writer:
    def write(value: Any, out: bytearray) -> None:
        if isinstance(value, list):
            for item in value:
                out += _delimited(2, item.encode())
        else:
            _write_nested(1, _schema_writer(name), value, out)
    return write


_SPECIAL_WRITERS: dict[str, Callable[[str], Writer]] = {
    "raw": lambda name: _write_raw, "list": lambda name: _write_list,
    "or_array": _or_array, "or_bool": _or_bool, "or_strings": _or_strings,
}

_SPECIAL_ZEROS = {"time": b"", "microtime": b"", "quantity": b"\x0a\x010", "intstr": b"\x08\x00\x10\x00\x1a\x00",
                  "duration": b"\x08\x00", "or_bool": b"\x08\x00", "raw": b"", "list": b"", "or_array": b"",
                  "or_strings": b""}
"""What Go writes for a special type's zero value (a ``Quantity``'s is the text ``0``)."""


def _special(name: str) -> str:
    return SPECIAL.get(name, "list" if wire.messages()[name].get("list") else "")


# --- generated struct writers --------------------------------------------------------------------------

_SCALAR_ZEROS = {"string": b"\x00", "bool": b"\x00", "int32": b"\x00", "int64": b"\x00", "uint32": b"\x00",
                 "uint64": b"\x00", "double": bytes(8), "float": bytes(4)}
_WIRE_TYPES = {"string": 2, "bytes": 2, "double": 1, "float": 5}


class _Generator:
    """Source text of the writers; every writer lives in one namespace so that writers of messages
    that refer to each other (cycles included) find each other by name when called."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {
            "_varint": varint, "_b64decode": base64.b64decode, "_pack_d": struct.Struct("<d").pack,
            "_pack_f": struct.Struct("<f").pack, "_Mapping": Mapping, "_sorted": sorted, "_string": _string,
            "_unique_string": _unique_string,
        }
        self.names: dict[str, str] = {}
        self.zeros: dict[str, bytes] = {}

    def writer(self, name: str) -> Writer:
        self._ensure(name)
        found: Writer = self.namespace[self.names[name]]
        return found

    def _ensure(self, name: str) -> str:
        var = self.names.get(name)
        if var is not None:
            return var
        var = self.names[name] = f"w{len(self.names)}"
        special = _special(name)
        if special in _DELIMITED_SPECIALS:
            self.namespace[var] = _DELIMITED_SPECIALS[special]
            self.zeros[name] = _SPECIAL_ZEROS[special]
            return var
        if special:
            self.namespace[var] = _SPECIAL_WRITERS[special](name)
            self.zeros[name] = _SPECIAL_ZEROS[special]
            return var
        if memoized(name):
            self.namespace["m" + var] = memo_writer(lambda: self.namespace[var], varint)
        fields = sorted(wire.messages()[name]["fields"], key=lambda entry: entry["n"])
        for entry in fields:
            if entry["t"] not in _SCALARS:
                self._ensure(entry["t"])
        source = self._source(var, name, fields)
        exec(compile(source, f"<protobuf writer {name}>", "exec"), self.namespace)
        zero = bytearray()
        self.namespace[var]({}, zero)
        self.zeros[name] = bytes(zero)
        return var

    def _source(self, var: str, name: str, fields: list[Mapping[str, Any]]) -> str:
        lines = [f"def {var}(obj, out):",
                 "    if type(obj) is not dict and not isinstance(obj, _Mapping):",
                 # A struct without fields takes any JSON through typed decoding; Go writes its zero.
                 "        obj = {}",
                 "    get = obj.get"]
        for entry in fields:
            lines.extend(self._field(entry, (name, entry["name"]) in _UNIQUE))
        if len(lines) == 4:
            lines.append("    pass")
        return "\n".join(lines) + "\n"

    def _field(self, entry: Mapping[str, Any], unique: bool) -> list[str]:
        number: int = entry["n"]
        type_name: str = entry["t"]
        if entry.get("inline"):
            sub = self.names[type_name]
            return [f"    out += {_tag(number, 2)!r}", "    s = len(out)", f"    {sub}(obj, out)",
                    *_length("    ")]
        lines = [f"    v = get({entry['name']!r})", "    if v is None:"]
        zero = self._zero(entry)
        lines.append(f"        out += {zero!r}" if zero else "        pass")
        lines.append("    else:")
        if entry.get("rep"):
            lines.append("        for x in v:")
            lines.extend(self._value(number, type_name, "x", "            "))
        elif "map" in entry:
            lines.append("        for k in _sorted(v):")
            lines.append("            y = v[k]")
            lines.append(f"            out += {_tag(number, 2)!r}")
            lines.append("            t = len(out)")
            lines.extend(self._value(1, entry["map"], "k", "            "))
            lines.extend(self._value(2, type_name, "y", "            "))
            lines.extend(_length("            ", start="t"))
        elif unique:
            lines += [f"        out += {_tag(number, 2)!r}", "        out += _unique_string(v)"]
        else:
            lines.extend(self._value(number, type_name, "v", "        "))
        return lines

    def _zero(self, entry: Mapping[str, Any]) -> bytes:
        """What Go writes for the field when the dict does not set it."""
        if entry.get("ptr") or entry.get("rep") or "map" in entry:
            return b""
        type_name: str = entry["t"]
        if type_name == "bytes":
            return b""
        if type_name in _SCALARS:
            return _tag(entry["n"], _WIRE_TYPES.get(type_name, 0)) + _SCALAR_ZEROS[type_name]
        return _delimited(entry["n"], self.zeros[type_name])

    def _value(self, number: int, type_name: str, value: str, indent: str) -> list[str]:
        """Lines appending one value (tag included) held in the local ``value``."""
        tag = _tag(number, _WIRE_TYPES.get(type_name, 0) if type_name in _SCALARS else 2)
        lines = [f"out += {tag!r}"]
        if type_name == "string":
            lines += [f"out += _string({value})"]
        elif type_name == "bytes":
            lines += [f"b = _b64decode({value})", "out += _varint(len(b))", "out += b"]
        elif type_name == "bool":
            true, false = tag + b"\x01", tag + b"\x00"
            return [f"{indent}out += {true!r} if {value} else {false!r}"]
        elif type_name in ("int32", "int64", "uint32", "uint64"):
            lines += [f"if 0 <= {value} < 128:", f"    out.append({value})", "else:", f"    out += _varint({value})"]
        elif type_name == "double":
            lines += [f"out += _pack_d(float({value}))"]
        elif type_name == "float":
            lines += [f"out += _pack_f(float({value}))"]
        elif _special(type_name) in _DELIMITED_SPECIALS:
            lines += [f"out += {self.names[type_name]}({value})"]
        elif memoized(type_name):
            lines += [f"out += m{self.names[type_name]}({value})"]
        else:
            lines += ["s = len(out)", f"{self.names[type_name]}({value}, out)", *_length("")]
        return [indent + line for line in lines]


def _length(indent: str, start: str = "s") -> list[str]:
    """Lines inserting the length prefix of what was written since ``start``."""
    return [f"{indent}n = len(out) - {start}", f"{indent}if n < 128:", f"{indent}    out.insert({start}, n)",
            f"{indent}else:", f"{indent}    out[{start}:{start}] = _varint(n)"]


_GENERATOR = _Generator()


def python_writer(name: str) -> Writer:
    """The generated Python writer of the message ``name`` (a definition name)."""
    return _GENERATOR.writer(name)


def python_encode_message(obj: Mapping[str, Any], name: str) -> bytes:
    """The message bytes of ``obj`` as the message ``name``, by the generated Python writer."""
    out = bytearray()
    python_writer(name)(obj, out)
    return bytes(out)


# --- the writer that serves: the C one when built (protobuf_native), else the generated ones --------

_NATIVE: Any = None
"""The module :mod:`~kubeloop.server.codec.protobuf_native` once imported (it imports this one)."""


def _native_id(name: str) -> int | None:
    """The C writer's id of the message ``name`` when the C writer serves it, else None."""
    global _NATIVE
    if _NATIVE is None:
        from kubeloop.server.codec import protobuf_native

        _NATIVE = protobuf_native
    ident: int | None = _NATIVE.message_id(name)
    return ident


def writer(name: str) -> Writer:
    """The writer of the message ``name`` (a definition name): C when built, else generated Python."""
    ident = _native_id(name)
    if ident is not None:
        return functools.partial(_NATIVE.EXTENSION.write_into, ident)
    return python_writer(name)


def encode_message(obj: Mapping[str, Any], name: str) -> bytes:
    """The message bytes of ``obj`` as the message ``name``."""
    ident = _native_id(name)
    if ident is not None:
        data: bytes = _NATIVE.EXTENSION.write(ident, obj)
        return data
    return python_encode_message(obj, name)


DelimitedWriter = Callable[[Mapping[str, Any], bytes, bytes], bytes]
"""``write(obj, head, tail)``: ``head``, the length of the message of ``obj``, the message, ``tail``."""


def delimited_writer(name: str) -> DelimitedWriter:
    """:func:`encode_delimited` of the message ``name`` with the writer chosen once: callers that
    keep it (the body writer of each kind) skip choosing the writer on every write."""
    ident = _native_id(name)
    if ident is not None:
        return functools.partial(_NATIVE.EXTENSION.delimited, ident)
    return lambda obj, head, tail: encode_delimited(head, obj, name, tail)


def encode_delimited(head: bytes, obj: Mapping[str, Any], name: str, tail: bytes) -> bytes:
    """``head``, the length of the message, the message ``name`` of ``obj``, then ``tail``
    (a whole body: the envelope's head and tail around the object)."""
    ident = _native_id(name)
    if ident is not None:
        body: bytes = _NATIVE.EXTENSION.delimited(ident, obj, head, tail)
        return body
    out = bytearray(head)
    start = len(out)
    python_writer(name)(obj, out)
    out[start:start] = varint(len(out) - start)
    out += tail
    return bytes(out)
