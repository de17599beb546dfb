"""``application/vnd.kubernetes.protobuf``: kube objects as kube-apiserver writes them in protobuf.

A body is the 4-byte magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message: ``typeMeta``
(apiVersion, kind), ``raw`` (the object's own message) and the empty ``contentEncoding`` and
``contentType`` Go always writes (apimachinery pkg/runtime/serializer/protobuf/protobuf.go,
``Serializer.doEncode`` and ``runtime.Unknown.NestedMarshalTo``). A watch stream
(``;stream=watch``) is a sequence of frames, each a 4-byte big-endian length and a bare
``metav1.WatchEvent`` message (the stream serializer is the ``RawSerializer``: no magic, no
envelope) whose ``object.raw`` is the object encoded as a whole body, magic and envelope
included (apiserver pkg/endpoints/handlers/watch.go: the embedded encoder is the negotiated
``Serializer``; apimachinery pkg/util/framer: the length-delimited framer).

Message schemas are the wire facts of the registry of kinds (:mod:`kubeloop.server.kinds.wire`).
Encoding is code generated from the facts (:mod:`~kubeloop.server.codec.protobuf_writer`; a C
writer fed from the same facts serves when built, :mod:`~kubeloop.server.codec.protobuf_native`), held
byte for byte to the pinned ``protobuf`` library's serialization
(:mod:`~kubeloop.server.codec.protobuf_library`) by the tests. Decoding reads the wire
directly: per message, a straight-line reader generated from the same facts reads the fields in
the order Go writes them, and hands anything else (fields out of order, unknown, malformed) to
per-field closures that read any order. It is Go's decoder in what it refuses and how it words
it, which the library is not (it keeps a field of the wrong wire type as an unknown field, where
Go's generated ``Unmarshal`` fails the request). Its output needs no typed decoding
(:mod:`kubeloop.server.kinds.decode`) after it: the wire types are Go's types, and the tests
hold typed decoding of it to changing nothing. Figures and the choice are in docs/decisions.md
(``bench/protobuf.py``).

Go semantics (gogo's generated ``Marshal`` / ``Unmarshal``):

- encoding writes what Go's marshaller writes: every non-pointer scalar and struct even at its
  zero value, pointers only when set, repeated fields unpacked, maps sorted by key, fields in
  number order; a zero ``metav1.Time`` as an empty message;
- decoding gives the dict our JSON path stores for the same Go object: a non-pointer field with
  ``omitempty`` at its zero value is left out (JSON would leave it out), a zero Time is left out
  (JSON writes ``null``), pointers and fields without ``omitempty`` are kept even at zero, and
  structs are kept even when empty (Go's JSON writes ``{}``); a repeated number may come packed;
- kube's special types: ``metav1.Time`` (seconds) / ``MicroTime`` (microseconds) <-> RFC 3339
  text, ``resource.Quantity`` ({string}), ``intstr.IntOrString`` ({type, intVal, strVal}),
  ``metav1.Duration`` (nanoseconds <-> Go's duration text), ``runtime.RawExtension`` /
  apiextensions ``JSON`` / ``FieldsV1`` (raw bytes = JSON text), ``bytes`` fields (base64 text in
  JSON), named-slice wrappers (``Verbs``, ``ExtraValue``: one ``items`` field, a plain list in
  JSON), inline-embedded structs, and the ``JSONSchemaProps*Or*`` unions.

A body that is not a valid kube protobuf message raises :class:`ProtobufError` whose text is
what Go's decoder says (``proto: Pod: illegal tag 0 (wire type 0)``, ``unexpected EOF``,
``proto: wrong wireType = 0 for field ObjectMeta``, ...), wrapped as the apiserver's
``transformDecodeError`` (pkg/endpoints/handlers/rest.go) when the caller names the kind the
body must be.
"""

from __future__ import annotations

import base64
import binascii
import functools
import struct
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from kubeloop.server.codec import gotext, protobuf_cache, protobuf_library, protobuf_memo, protobuf_writer
from kubeloop.server.codec.protobuf_memo import memo_reader, memoized
from kubeloop.server.kinds import wire

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
STREAM_MEDIA_TYPE = MEDIA_TYPE + ";stream=watch"
MAGIC = b"k8s\x00"

Obj = dict[str, Any]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_UNKNOWN = "io.k8s.apimachinery.pkg.runtime.Unknown"
_TYPE_META = "io.k8s.apimachinery.pkg.runtime.TypeMeta"
_WATCH_EVENT = _META + "WatchEvent"

SPECIAL = protobuf_library.SPECIAL


class ProtobufError(Exception):
    """A body that is not a valid kube protobuf message; ``str()`` is the text of upstream's 400.

    ``base`` is Go's decoder error alone; ``api_version`` / ``kind`` what the envelope said
    (empty when the envelope itself could not be read).
    """

    def __init__(self, message: str, base: str, api_version: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.base = base
        self.api_version = api_version
        self.kind = kind


class _GoError(Exception):
    """What Go's decoder returns, before the apiserver words it for the request."""


_EOF = "unexpected EOF"
_OVERFLOW = "proto: integer overflow"
_NEGATIVE = "proto: negative length found during unmarshaling"


# --- varints -----------------------------------------------------------------------------------

def _read_varint(data: bytes, position: int, end: int) -> tuple[int, int]:
    """gogo's varint loop: ``integer overflow`` past 64 bits, ``unexpected EOF`` past the end."""
    value = 0
    shift = 0
    while True:
        if shift >= 64:
            raise _GoError(_OVERFLOW)
        if position >= end:
            raise _GoError(_EOF)
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, position
        shift += 7


def _read_length(data: bytes, position: int, end: int) -> tuple[int, int]:
    """A length prefix: (start, stop) of the bytes it announces."""
    if position < end and data[position] < 0x80:
        length = data[position]
        position += 1
    else:
        length, position = _read_varint(data, position, end)
        if length >= 1 << 63:
            raise _GoError(_NEGATIVE)
    stop = position + length
    if stop > end:
        raise _GoError(_EOF)
    return position, stop


def _skip(wire_type: int, data: bytes, position: int, end: int) -> int:
    """gogo's ``skipGenerated``: the end of a field the message does not know."""
    depth = 0
    while True:
        if wire_type == 0:
            position = _read_varint(data, position, end)[1]
        elif wire_type == 1:
            position += 8
        elif wire_type == 2:
            length, position = _read_varint(data, position, end)
            if length >= 1 << 63:
                raise _GoError(_NEGATIVE)
            position += length
        elif wire_type == 3:
            depth += 1
        elif wire_type == 4:
            if depth == 0:
                raise _GoError("proto: unexpected end of group")
            depth -= 1
        elif wire_type == 5:
            position += 4
        else:
            raise _GoError(f"proto: illegal wireType {wire_type}")
        if position > end:
            raise _GoError(_EOF)
        if depth == 0:
            return position
        key, position = _read_varint(data, position, end)
        wire_type = key & 7


# --- compiled readers ----------------------------------------------------------------------------

# Field codes: how a value is read.
_STRING, _BOOL, _INT32, _INT64, _UINT, _DOUBLE, _FLOAT, _BYTES, _MESSAGE, _INLINE = range(10)
_SCALAR_CODES = {"string": _STRING, "bool": _BOOL, "int32": _INT32, "int64": _INT64, "uint32": _UINT,
                 "uint64": _UINT, "double": _DOUBLE, "float": _FLOAT, "bytes": _BYTES}
_WIRE_TYPE = {_STRING: 2, _BOOL: 0, _INT32: 0, _INT64: 0, _UINT: 0, _DOUBLE: 1, _FLOAT: 5, _BYTES: 2,
              _MESSAGE: 2, _INLINE: 2}
_ZERO_VALUES: dict[int, Any] = {_STRING: "", _BOOL: False, _INT32: 0, _INT64: 0, _UINT: 0, _DOUBLE: 0.0,
                                _FLOAT: 0.0}

_ABSENT: Any = object()
"""A decoded value JSON would not write (a zero Time, an empty raw extension)."""

_REPEATED = 1
_MAP = 2


FieldDecoder = Callable[[Obj, bytes, int, int], int]
"""Reads one field's value at a position (just past its tag) into the dict; returns the new position."""


class _Field:
    __slots__ = ("code", "go", "json", "number", "omit", "shape", "sub", "wire_type")

    def __init__(self, entry: Mapping[str, Any], sub: _Message | None) -> None:
        self.json: str = entry["name"]
        self.number: int = entry["n"]
        self.go: str = entry.get("go") or self.json[:1].upper() + self.json[1:]
        self.code = _INLINE if entry.get("inline") else _SCALAR_CODES.get(entry["t"], _MESSAGE)
        self.shape = _REPEATED if entry.get("rep") else _MAP if "map" in entry else 0
        self.omit = bool(entry.get("omit"))
        self.sub = sub
        self.wire_type = 2 if self.shape == _MAP else _WIRE_TYPE[self.code]

    def decoder(self) -> FieldDecoder:
        return _field_decoder(self)


def _field_decoder(field: _Field) -> FieldDecoder:
    """The field's reader; the common shapes (a string, a message, a number, kept or dropped at
    zero) are spelled out, as a call per field is most of what decoding costs."""
    name = field.json
    code = field.code
    omit = field.omit
    sub = field.sub
    if field.shape == _MAP:
        return _map_decoder(field)
    if field.shape == _REPEATED:
        convert = _value_reader(field)

        def read_repeated(out: Obj, data: bytes, position: int, end: int) -> int:
            value, position = convert(data, position, end)
            if value is not _ABSENT:
                found = out.get(name)
                if found is None:
                    out[name] = [value]
                else:
                    found.append(value)
            return position
        return read_repeated
    if code == _STRING:
        def read_string(out: Obj, data: bytes, position: int, end: int) -> int:
            size = data[position] if position < end else 0x80
            if size < 0x80:
                position += 1
                stop = position + size
                if stop > end:
                    raise _GoError(_EOF)
            else:
                position, stop = _read_length(data, position, end)
            if omit and stop == position:
                out.pop(name, None)
            else:
                out[name] = data[position:stop].decode("utf-8", "replace")
            return stop
        return read_string
    if code == _MESSAGE:
        assert sub is not None
        message_of = sub

        def read_message(out: Obj, data: bytes, position: int, end: int) -> int:
            size = data[position] if position < end else 0x80
            if size < 0x80:
                position += 1
                stop = position + size
                if stop > end:
                    raise _GoError(_EOF)
            else:
                position, stop = _read_length(data, position, end)
            value = message_of.decode(data, position, stop)
            if value is not _ABSENT:
                out[name] = value
            return stop
        return read_message
    if code == _INLINE:
        assert sub is not None
        inline_of = sub

        def read_inline(out: Obj, data: bytes, position: int, end: int) -> int:
            start, stop = _read_length(data, position, end)
            out.update(inline_of.decode(data, start, stop))
            return stop
        return read_inline
    if code in (_INT32, _INT64, _BOOL):
        def read_varint(out: Obj, data: bytes, position: int, end: int) -> int:
            # Most numbers Go writes are zeros and small counts: one byte.
            value = data[position] if position < end else 0x80
            if value < 0x80:
                position += 1
                if code == _BOOL:
                    value = value != 0
            else:
                value, position = _read_number(code, data, position, end)
            if omit and not value:
                out.pop(name, None)
            else:
                out[name] = value
            return position
        return read_varint
    convert = _value_reader(field)

    def read_value(out: Obj, data: bytes, position: int, end: int) -> int:
        value, position = convert(data, position, end)
        if omit and not value:
            out.pop(name, None)
        else:
            out[name] = value
        return position
    return read_value


def _value_reader(field: _Field) -> Callable[[bytes, int, int], tuple[Any, int]]:
    """Reads one value of the field's type: (value, position after it)."""
    code = field.code
    sub = field.sub
    if code == _STRING:
        def string(data: bytes, position: int, end: int) -> tuple[Any, int]:
            start, stop = _read_length(data, position, end)
            return data[start:stop].decode("utf-8", "replace"), stop
        return string
    if code == _MESSAGE:
        assert sub is not None
        message_of = sub

        def message(data: bytes, position: int, end: int) -> tuple[Any, int]:
            start, stop = _read_length(data, position, end)
            return message_of.decode(data, start, stop), stop
        return message
    if code == _BYTES:
        def raw(data: bytes, position: int, end: int) -> tuple[Any, int]:
            start, stop = _read_length(data, position, end)
            return base64.b64encode(data[start:stop]).decode("ascii"), stop
        return raw
    return lambda data, position, end: _read_number(code, data, position, end)


def _packed_decoder(field: _Field) -> FieldDecoder:
    """gogo reads a repeated number field packed as well as one value per tag."""
    name = field.json
    code = field.code

    def read_packed(out: Obj, data: bytes, position: int, end: int) -> int:
        start, stop = _read_length(data, position, end)
        values = out.setdefault(name, [])
        while start < stop:
            value, start = _read_number(code, data, start, stop)
            values.append(value)
        return stop
    return read_packed


def _map_decoder(field: _Field) -> FieldDecoder:
    """One map entry: gogo reads key 1 and value 2, skips anything else, and zero-fills what is
    missing."""
    name = field.json
    code = field.code
    sub = field.sub

    def read_entry(out: Obj, data: bytes, position: int, end: int) -> int:
        start, stop = _read_length(data, position, end)
        key_text = ""
        value: Any = _ZERO_VALUES.get(code, "")
        if code == _MESSAGE:
            assert sub is not None
            value = sub.decode(data, 0, 0)
        while start < stop:
            key = data[start]
            if key < 0x80:
                start += 1
            else:
                key, start = _read_varint(data, start, stop)
            number = key >> 3
            if number == 1:
                begin, start = _read_length(data, start, stop)
                key_text = data[begin:start].decode("utf-8", "replace")
            elif number == 2:
                if code in (_STRING, _MESSAGE, _BYTES):
                    begin, start = _read_length(data, start, stop)
                    if code == _STRING:
                        value = data[begin:start].decode("utf-8", "replace")
                    elif code == _BYTES:
                        value = base64.b64encode(data[begin:start]).decode("ascii")
                    else:
                        value = sub.decode(data, begin, start)  # type: ignore[union-attr]
                else:
                    value, start = _read_number(code, data, start, stop)
            else:
                start = _skip(key & 7, data, start, stop)
        found = out.get(name)
        if found is None:
            out[name] = {key_text: value}
        else:
            found[key_text] = value
        return stop
    return read_entry


class _Message:
    """One message's compiled reader."""

    __slots__ = ("by_number", "by_tag", "decode", "decoders", "fields", "go_name", "name", "read", "special")

    def __init__(self, name: str) -> None:
        self.name = name
        facts = wire.messages()[name]
        self.special = SPECIAL.get(name, "list" if facts.get("list") else "")
        self.go_name = "Timestamp" if self.special in ("time", "microtime") else name.rpartition(".")[2]
        self.fields: list[_Field] = []
        self.by_tag: dict[int, _Field] = {}
        self.by_number: dict[int, _Field] = {}
        self.decoders: dict[int, FieldDecoder] = {}
        # Bound here, before any message is compiled, so that readers of fields that refer to
        # this message (cycles included) capture the final function.
        self.decode: Callable[[bytes, int, int], Any] = self._decode_struct
        if self.special:
            special_decoder = _SPECIAL_DECODERS[self.special]
            self.decode = lambda data, position, end: special_decoder(self, data, position, end)
        # ``read`` reads without the memo: a top-level object's metadata makes every body new.
        self.read: Callable[[bytes, int, int], Any] = self.decode

    def compile(self) -> None:
        entries = sorted(wire.messages()[self.name]["fields"], key=lambda entry: entry["n"])
        for entry in entries:
            type_name: str = entry["t"]
            sub = None if type_name in _SCALAR_CODES else _message(type_name)
            field = _Field(entry, sub)
            self.fields.append(field)
            self.by_number[field.number] = field
            key = field.number << 3 | field.wire_type
            self.by_tag[key] = field
            self.decoders[key] = field.decoder()
            if field.shape == _REPEATED and field.wire_type != 2:
                self.by_tag[field.number << 3 | 2] = field
                self.decoders[field.number << 3 | 2] = _packed_decoder(field)
        if not self.special:
            self.read = _GENERATOR.reader(self)
            self.decode = self.read
            if memoized(self.name):
                # Nested occurrences (what generated readers and field closures call) go
                # through a memo by their bytes (kubeloop.server.codec.protobuf_memo).
                self.decode = memo_reader(self.read)

    def resume(self, out: Obj, key: int, data: bytes, position: int, end: int) -> Obj:
        """Reads the rest of a message whose fields came out of number order (or unknown, or
        malformed) from the field of ``key`` on, as :meth:`_decode_struct` reads a message."""
        decoder = self.decoders.get(key)
        if decoder is None:
            position = self._unknown(key, data, position, end)
        else:
            position = decoder(out, data, position, end)
        decoders = self.decoders
        while position < end:
            key, position = _read_key(data, position, end)
            decoder = decoders.get(key)
            if decoder is None:
                position = self._unknown(key, data, position, end)
            else:
                position = decoder(out, data, position, end)
        return out

    def _decode_struct(self, data: bytes, position: int, end: int) -> Any:
        out: Obj = {}
        decoders = self.decoders
        while position < end:
            key = data[position]
            if key < 0x80:
                position += 1
            elif position + 1 < end and data[position + 1] < 0x80:
                # Fields 16 to 2047: a two-byte tag.
                key = (key & 0x7F) | data[position + 1] << 7
                position += 2
            else:
                key, position = _read_varint(data, position, end)
            decoder = decoders.get(key)
            if decoder is None:
                position = self._unknown(key, data, position, end)
            else:
                position = decoder(out, data, position, end)
        return out

    def _unknown(self, key: int, data: bytes, position: int, end: int) -> int:
        wire_type = key & 7
        number = (key >> 3) & 0xFFFFFFFF
        if number & 0x80000000:
            number -= 1 << 32
        if wire_type == 4:
            raise _GoError(f"proto: {self.go_name}: wiretype end group for non-group")
        if number <= 0:
            raise _GoError(f"proto: {self.go_name}: illegal tag {number} (wire type {wire_type})")
        field = self.by_number.get(number)
        if field is not None:
            raise _GoError(f"proto: wrong wireType = {wire_type} for field {field.go}")
        return _skip(wire_type, data, position, end)


def _read_key(data: bytes, position: int, end: int) -> tuple[int, int]:
    """A field's key (``position`` is within the message)."""
    key = data[position]
    if key < 0x80:
        return key, position + 1
    if position + 1 < end and data[position + 1] < 0x80:
        return (key & 0x7F) | data[position + 1] << 7, position + 2
    return _read_varint(data, position, end)


class _ReaderGenerator:
    """Straight-line readers generated per message and compiled once with ``exec``.

    Go writes fields in number order, so a message's reader checks for each field in turn, once,
    whether the next key is that field's (tags are integer literals), reading the common shapes
    inline: a string, a number, a nested message, repeated messages and strings. A key that is
    not the next expected one (fields out of order, unknown or malformed) hands the rest of the
    message to the field closures (:meth:`_Message.resume`), which read anything, as Go reads it,
    with Go's errors; so the generated code only ever reads the well-formed common case.
    """

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {
            "_ABSENT": _ABSENT, "_GoError": _GoError, "_EOF": _EOF, "_read_length": _read_length,
            "_read_key": _read_key, "_read_number": _read_number}
        self.count = 0

    def _name(self, value: Any) -> str:
        self.count += 1
        name = f"g{self.count}"
        self.namespace[name] = value
        return name

    def reader(self, message: _Message) -> Callable[[bytes, int, int], Any]:
        var = self._name(message)
        lines = ["def read(data, pos, end):", "    out = {}", *_indent(_NEXT)]
        for field in message.fields:
            lines.extend("    " + line for line in self._field(field, message))
        lines += ["    if key < 0:", "        return out", f"    return {var}.resume(out, key, data, pos, end)"]
        namespace = self.namespace
        exec(compile("\n".join(lines) + "\n", f"<protobuf reader {message.name}>", "exec"), namespace)
        read: Callable[[bytes, int, int], Any] = namespace.pop("read")
        return read

    def _value(self, sub: _Message, start: str = "pos") -> str:
        """An expression reading one ``sub`` message from ``start`` to ``stop``."""
        if sub.special in _CACHED_SPECIALS:
            return f"{self._name(_cached_special(sub.special, sub.name))}(data[{start}:stop])"
        return f"{self._name(sub)}.decode(data, {start}, stop)"

    def _field(self, field: _Field, message: _Message) -> list[str]:
        tag = field.number << 3 | field.wire_type
        code = field.code
        sub = field.sub
        name = repr(field.json)
        lines: list[str]
        if field.shape == 0 and code == _STRING:
            # Go writes every non-pointer string, most of them empty: a zero length is read first.
            empty = ["pass"] if field.omit else [f"out[{name}] = ''"]
            store = [f"out[{name}] = data[pos:stop].decode('utf-8', 'replace')", "pos = stop"]
            lines = [f"if key == {tag}:", *_indent(["if pos < end and data[pos] == 0:", "    pos += 1",
                                                    *_indent(empty), "else:", *_indent(_LENGTH + store), *_NEXT])]
        elif field.shape == 0 and code in (_INT32, _INT64, _BOOL):
            small = ["    v = v != 0"] if code == _BOOL else []
            store = ["if v:", f"    out[{name}] = v"] if field.omit else [f"out[{name}] = v"]
            lines = [f"if key == {tag}:", *_indent(["v = data[pos] if pos < end else 0x80", "if v < 0x80:",
                                                    "    pos += 1", *small, "else:",
                                                    f"    v, pos = _read_number({code}, data, pos, end)",
                                                    *store, *_NEXT])]
        elif field.shape == 0 and code == _MESSAGE:
            assert sub is not None
            store = [f"out[{name}] = v"] if not sub.special else ["if v is not _ABSENT:", f"    out[{name}] = v"]
            lines = [f"if key == {tag}:", *_indent([*_LENGTH, f"v = {self._value(sub)}", *store, "pos = stop", *_NEXT])]
        elif field.shape == _MAP and field.code in (_STRING, _MESSAGE) and (sub is None or not sub.special
                                                                            or sub.special == "quantity"):
            # The usual entry, key 1 and value 2 each with a one-byte length, inline; any other
            # entry through the field's closure.
            value = "data[p:stop].decode('utf-8', 'replace')" if sub is None else self._value(sub, "p")
            entry = ["at = pos", *_LENGTH, "p = pos + 2", "if p <= stop and data[pos] == 10 and data[pos + 1] < 0x80:",
                     "    p += data[pos + 1]",
                     "    if p + 2 <= stop and data[p] == 18 and data[p + 1] < 0x80 and p + 2 + data[p + 1] == stop:",
                     "        k = data[pos + 2:p].decode('utf-8', 'replace')",
                     "        p += 2",
                     f"        entries[k] = {value}",
                     "        pos = stop",
                     "    else:",
                     f"        pos = {self._name(message.decoders[tag])}(out, data, at, end)",
                     "else:",
                     f"    pos = {self._name(message.decoders[tag])}(out, data, at, end)"]
            lines = [f"if key == {tag}:", f"    entries = out[{name}] = {{}}", f"    while key == {tag}:",
                     *_indent(entry + _NEXT, 2)]
        elif field.shape == _REPEATED and (code == _STRING or (code == _MESSAGE and sub is not None
                                                               and not sub.special)):
            if code == _STRING:
                value = "data[pos:stop].decode('utf-8', 'replace')"
            else:
                assert sub is not None
                value = self._value(sub)
            lines = [f"if key == {tag}:", f"    items = out[{name}] = []", f"    while key == {tag}:",
                     *_indent([*_LENGTH, f"items.append({value})", "pos = stop", *_NEXT], 2)]
        else:
            # Anything else (maps, inline structs, bytes, floats, repeated numbers or special
            # types): the field's closure, once per occurrence.
            decoder = self._name(message.decoders[tag])
            lines = [f"while key == {tag}:", f"    pos = {decoder}(out, data, pos, end)", *_indent(_NEXT)]
        return lines


_LENGTH = ["n = data[pos] if pos < end else 0x80", "stop = pos + 1 + n", "if n < 0x80 and stop <= end:",
           "    pos += 1", "elif n >= 0x80 and pos + 1 < end and data[pos + 1] < 0x80:",
           "    stop = pos + 2 + ((n & 0x7F) | data[pos + 1] << 7)", "    pos += 2", "    if stop > end:",
           "        raise _GoError(_EOF)", "else:", "    pos, stop = _read_length(data, pos, end)"]
"""Generated lines reading a length prefix: ``pos`` and ``stop`` then bound what it announces."""

_NEXT = ["key = data[pos] if pos < end else -1", "if key < 0x80:", "    pos += 1",
         "elif pos + 1 < end and data[pos + 1] < 0x80:", "    key = (key & 0x7F) | data[pos + 1] << 7",
         "    pos += 2", "else:", "    key, pos = _read_key(data, pos, end)"]
"""Generated lines reading the next key, -1 at the end of the message (``pos`` then moves past
the end, which nothing reads again)."""


def _indent(lines: list[str], depth: int = 1) -> list[str]:
    return ["    " * depth + line for line in lines]


def _read_number(code: int, data: bytes, position: int, end: int) -> tuple[Any, int]:
    if code == _DOUBLE:
        if position + 8 > end:
            raise _GoError(_EOF)
        number = struct.unpack_from("<d", data, position)[0]
        return (int(number) if number.is_integer() and abs(number) < 2**63 else number), position + 8
    if code == _FLOAT:
        if position + 4 > end:
            raise _GoError(_EOF)
        number = struct.unpack_from("<f", data, position)[0]
        return (int(number) if number.is_integer() else number), position + 4
    if position < end and data[position] < 0x80:
        value = data[position]
        position += 1
    else:
        value, position = _read_varint(data, position, end)
    if code == _BOOL:
        return value != 0, position
    if code == _INT32:
        value &= 0xFFFFFFFF
        return (value - (1 << 32) if value & 0x80000000 else value), position
    if code == _INT64:
        return (value - (1 << 64) if value & (1 << 63) else value), position
    return value, position


_GENERATOR = _ReaderGenerator()


# --- kube's special types --------------------------------------------------------------------------


def _fields(message: _Message, data: bytes, position: int, end: int) -> dict[int, Any]:
    """A special message's fields by number (last one wins, as Go's decoder assigns)."""
    found: dict[int, Any] = {}
    while position < end:
        key = data[position]
        if key < 0x80:
            position += 1
        else:
            key, position = _read_varint(data, position, end)
        field = message.by_tag.get(key)
        if field is None:
            position = message._unknown(key, data, position, end)
            continue
        if key & 7 == 2:
            start, position = _read_length(data, position, end)
            if field.code == _MESSAGE:
                assert field.sub is not None
                value: Any = field.sub.decode(data, start, position)
            else:
                value = data[start:position]
            if field.shape == _REPEATED:
                found.setdefault(field.number, []).append(value)
            else:
                found[field.number] = value
        else:
            found[field.number], position = _read_number(field.code, data, position, end)
    return found


def _length_delimited(number: int, data: bytes) -> bytes:
    return protobuf_writer.varint(number << 3 | 2) + protobuf_writer.varint(len(data)) + data


def _decode_time(message: _Message, data: bytes, position: int, end: int) -> Any:
    if position == end:
        return _ABSENT
    found = _fields(message, data, position, end)
    seconds = found.get(1, 0)
    nanos = found.get(2, 0) if message.special == "microtime" else 0
    nanos -= nanos % 1000
    if seconds == gotext.ZERO_SECONDS and nanos == 0:
        return _ABSENT
    return gotext.format_time(seconds, nanos, micro=message.special == "microtime")


def _decode_quantity(message: _Message, data: bytes, position: int, end: int) -> Any:
    return bytes(_fields(message, data, position, end).get(1, b"")).decode("utf-8", "replace")


def _decode_intstr(message: _Message, data: bytes, position: int, end: int) -> Any:
    found = _fields(message, data, position, end)
    if found.get(1, 0) == 1:
        return bytes(found.get(3, b"")).decode("utf-8", "replace")
    return found.get(2, 0)


def _decode_duration(message: _Message, data: bytes, position: int, end: int) -> Any:
    return gotext.format_duration(_fields(message, data, position, end).get(1, 0))


def _decode_raw(message: _Message, data: bytes, position: int, end: int) -> Any:
    raw = _fields(message, data, position, end).get(1)
    if not raw:
        return _ABSENT
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise _GoError(f"invalid character in raw JSON: {error}") from None


def _decode_list(message: _Message, data: bytes, position: int, end: int) -> Any:
    return [bytes(item).decode("utf-8", "replace") for item in _fields(message, data, position, end).get(1, [])]


def _decode_or_array(message: _Message, data: bytes, position: int, end: int) -> Any:
    found = _fields(message, data, position, end)
    return found[1] if 1 in found else found.get(2, [])


def _decode_or_bool(message: _Message, data: bytes, position: int, end: int) -> Any:
    found = _fields(message, data, position, end)
    return found[2] if 2 in found else bool(found.get(1, False))


def _decode_or_strings(message: _Message, data: bytes, position: int, end: int) -> Any:
    found = _fields(message, data, position, end)
    if 1 in found:
        return found[1]
    return [bytes(item).decode("utf-8", "replace") for item in found.get(2, [])]


@functools.cache
def _cached_special(special: str, name: str) -> Callable[[bytes], Any]:
    """A reader of the special type's whole message content, kept by those bytes: the same
    timestamps, quantities and ports recur throughout objects and lists."""
    @functools.lru_cache(maxsize=4096)
    def read(content: bytes) -> Any:
        return _SPECIAL_DECODERS[special](_message(name), content, 0, len(content))
    return read


_CACHED_SPECIALS = ("time", "microtime", "quantity", "intstr")
"""Special types the generated readers read through :func:`_cached_special`."""

_SPECIAL_DECODERS: dict[str, Callable[[_Message, bytes, int, int], Any]] = {
    "time": _decode_time, "microtime": _decode_time, "quantity": _decode_quantity, "intstr": _decode_intstr,
    "duration": _decode_duration, "raw": _decode_raw, "list": _decode_list, "or_array": _decode_or_array,
    "or_bool": _decode_or_bool, "or_strings": _decode_or_strings,
}

_MESSAGES: dict[str, _Message] = {}


def _message(name: str) -> _Message:
    found = _MESSAGES.get(name)
    if found is None:
        found = _MESSAGES[name] = _Message(name)
        found.compile()
    return found


# --- public interface ------------------------------------------------------------------------------


def has_schema(api_version: str, kind: str) -> bool:
    """Whether ``kind`` at ``api_version`` can be carried in protobuf (built-in kinds, their lists,
    meta.k8s.io's kinds; not custom resources, not Table)."""
    return wire.message_name(api_version, kind) is not None


def encode_message(obj: Mapping[str, Any], api_version: str, kind: str) -> bytes:
    """The object's own message bytes (the envelope's ``raw``), written by the generated writer;
    a list's items one by one, each through the cache of recently written messages."""
    return _write_message(obj, api_version, kind, cached=True)


def _write_message(obj: Mapping[str, Any], api_version: str, kind: str, *, cached: bool) -> bytes:
    name = wire.message_name(api_version, kind)
    if name is None:
        raise ValueError(f"no protobuf message for {api_version} {kind}")
    items = _list_items(name)
    if items is None:
        return _CACHE.message(name, obj) if cached else protobuf_writer.encode_message(obj, name)
    number, item_name = items
    head = protobuf_writer.encode_message({k: v for k, v in obj.items() if k != "items"}, name)
    return b"".join(_CACHE.items(head, protobuf_writer.varint(number << 3 | 2), item_name, obj.get("items") or ()))


@functools.cache
def _list_items(name: str) -> tuple[int, str] | None:
    """A list kind's ``items`` field (number, item message), when it is the last field, so that
    writing the items after the rest keeps Go's field order."""
    fields = wire.messages()[name]["fields"]
    last = max(fields, key=lambda entry: entry["n"], default=None)
    if last is None or last["name"] != "items" or not last.get("rep") or last["t"] not in wire.messages():
        return None
    return last["n"], last["t"]


_CACHE = protobuf_cache.MessageCache(32 << 20)
"""32 MiB of JSON keys and messages, and as much for objects: some ten thousand pods each."""


def clear_cache() -> None:
    """Forget the recently written messages, the nested messages' memos and the writers chosen
    per kind (for measurements of the first write or read, under either writer)."""
    _CACHE.clear()
    protobuf_memo.clear()
    _body_writer.cache_clear()
    _KNOWN_HEADS.clear()


def decode_message(data: bytes, api_version: str, kind: str) -> Obj:
    """The JSON-form fields of the message bytes ``data`` of ``kind`` (no envelope; no apiVersion
    or kind in the result); raises :class:`ProtobufError` with Go's decoder text."""
    name = wire.message_name(api_version, kind)
    if name is None:
        raise ValueError(f"no protobuf message for {api_version} {kind}")
    try:
        decoded: Obj = _message(name).read(data, 0, len(data))
    except _GoError as error:
        raise ProtobufError(str(error), str(error), api_version, kind) from None
    return decoded


_BODY = ""
"""The cache's name for whole bodies (no message is named so); their JSON text has the
apiVersion and kind the envelope is written from."""


def encode(obj: Mapping[str, Any]) -> bytes:
    """The whole body as kube-apiserver writes it: magic, then ``runtime.Unknown`` around the
    object's message (apiVersion and kind from the dict). Kept whole in the cache of written
    messages, as one stored object is written to every watcher and reader."""
    return _CACHE.written(_BODY, obj, _write_body)


def _write_body(obj: Mapping[str, Any], _: str) -> bytes:
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if type(api_version) is not str or type(kind) is not str:
        api_version = str(api_version or "")
        kind = str(kind or "")
    found = _body_writer(api_version, kind)
    if found is None:
        raw = _write_message(obj, api_version, kind, cached=False)
        return _envelope_head(api_version, kind) + protobuf_writer.varint(len(raw)) + raw + _ENVELOPE_TAIL
    # The object's message written in place after the envelope's head, its length put in front
    # of it afterwards: the bytes are copied once, not once per enclosing field.
    head, write = found
    return write(obj, head, _ENVELOPE_TAIL)


@functools.lru_cache(maxsize=1024)
def _body_writer(api_version: str, kind: str) -> tuple[bytes, protobuf_writer.DelimitedWriter] | None:
    """The envelope's head and the writer of a kind's bodies (the C or the Python writer, chosen
    here once per kind: the choice is a chain of calls a create's answer paid each time); None
    for lists (written with their items apart) and for kinds without a message (refused by the
    writing). Forgotten by :func:`clear_cache`, as the writer chosen may change between
    measurements."""
    name = wire.message_name(api_version, kind)
    if name is None or _list_items(name) is not None:
        return None
    return _envelope_head(api_version, kind), protobuf_writer.delimited_writer(name)


_ENVELOPE_TAIL = b"\x1a\x00\x22\x00"
"""contentEncoding (3) and contentType (4): empty, and Go writes them anyway."""


@functools.lru_cache(maxsize=1024)
def _envelope_head(api_version: str, kind: str) -> bytes:
    """The magic, the envelope's typeMeta and the tag of its ``raw`` (whose length follows)."""
    type_meta = _length_delimited(1, api_version.encode()) + _length_delimited(2, kind.encode())
    return MAGIC + _length_delimited(1, type_meta) + b"\x12"


def encode_watch_event(event_type: str, obj: Mapping[str, Any]) -> bytes:
    """One frame of a protobuf watch stream: length, then a bare WatchEvent whose object's raw
    is the object as a whole body (magic and envelope included)."""
    event = _length_delimited(1, event_type.encode()) + _length_delimited(2, _length_delimited(1, encode(obj)))
    return struct.pack(">I", len(event)) + event


def decode_watch_frames(data: bytes) -> list[tuple[str, Obj]]:
    """The events of a protobuf watch stream's bytes (complete frames; a partial last one is left)."""
    events: list[tuple[str, Obj]] = []
    event_message = _message(_WATCH_EVENT)
    raw_message = _message("io.k8s.apimachinery.pkg.runtime.RawExtension")
    position = 0
    while position + 4 <= len(data):
        (length,) = struct.unpack_from(">I", data, position)
        start = position + 4
        position = start + length
        if position > len(data):
            break
        try:
            fields = _delimited_fields(event_message, data, start, position)
            type_start, type_stop = fields.get(1, (0, 0))
            object_start, object_stop = fields.get(2, (0, 0))
            raw_start, raw_stop = _delimited_fields(raw_message, data, object_start, object_stop).get(1, (0, 0))
        except _GoError as error:
            raise ProtobufError(str(error), str(error)) from None
        events.append((data[type_start:type_stop].decode("utf-8", "replace"), decode(data[raw_start:raw_stop])))
    return events


def _delimited_fields(message: _Message, data: bytes, position: int, end: int) -> dict[int, tuple[int, int]]:
    """Where each length-delimited field of ``message`` lies in ``data`` (the last one of a number
    wins); other known fields are read over, unknown ones skipped as Go skips them."""
    found: dict[int, tuple[int, int]] = {}
    while position < end:
        key, position = _read_varint(data, position, end)
        field = message.by_tag.get(key)
        if field is None:
            position = message._unknown(key, data, position, end)
        elif key & 7 == 2:
            found[field.number] = _read_length(data, position, end)
            position = found[field.number][1]
        else:
            position = _read_number(field.code, data, position, end)[1]
    return found


def decode(body: bytes, into: tuple[str, str] | None = None) -> Obj:
    """The JSON-form dict of a protobuf body, apiVersion and kind from the envelope.

    ``into`` is the (apiVersion, kind) the request's URL expects: it fills what the envelope
    leaves empty (upstream's ``copyKindDefaults``) and words errors as the apiserver's
    ``transformDecodeError`` does for that kind (``str(error)`` is then the whole 400 message).
    """
    known = _known_body(body, into)
    if known is not None:
        return known
    into_kind = into[1] if into else ""
    if not body:
        raise _error("empty data", body, into_kind)
    if body[:4] != MAGIC:
        raise _error("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
                     body, into_kind)
    if len(body) == 4:
        raise _error("empty body", body, into_kind)
    try:
        api_version, kind, raw_start, raw_stop = _envelope(body)
    except _GoError as error:
        raise _error(str(error), body, into_kind) from None
    envelope = (api_version, kind)
    if into is not None:
        api_version, kind = _kind_defaults(api_version, kind, into)
    if not kind:
        raise _error(f"Object 'Kind' is missing in '{_type_meta_text(*envelope)}'", body, into_kind)
    if not wire.split_api_version(api_version)[1]:
        raise _error(f"Object 'apiVersion' is missing in '{_type_meta_text(*envelope)}'", body, into_kind)
    name = wire.message_name(api_version, kind)
    if name is None:
        raise _error(f'no kind "{kind}" is registered for version "{api_version}" in scheme '
                     '"pkg/api/legacyscheme/scheme.go:30"', body, into_kind, api_version, kind)
    message = _message(name)
    obj = _read_object(message, body, raw_start, raw_stop, into_kind, api_version, kind)
    if _usual_envelope(body) is not None:
        if len(_KNOWN_HEADS) >= _KNOWN_HEADS_LIMIT:
            _KNOWN_HEADS.clear()
        _KNOWN_HEADS[body[4:6 + body[5]], into] = (kind, api_version, message)
    return obj


_KNOWN_HEADS: dict[tuple[bytes, tuple[str, str] | None], tuple[str, str, _Message]] = {}
"""The envelope's typeMeta bytes (tag and length included) of bodies read before, with the
endpoint's (apiVersion, kind): what they were read as. Every body of one kind to one endpoint
carries the same typeMeta, so its envelope, the kind defaults and the message lookup are
settled once (the fifth of a pod create's reading was this bookkeeping)."""

_KNOWN_HEADS_LIMIT = 1024


def _known_body(body: bytes, into: tuple[str, str] | None) -> Obj | None:
    """:func:`decode`'s result for a body in the usual envelope whose typeMeta was read before
    for ``into``; None for anything else (which :func:`decode` reads the whole way). Errors
    inside the object are raised as :func:`decode` raises them."""
    end = len(body)
    if end < 12 or body[:4] != MAGIC or body[4] != 0x0A or body[5] >= 0x80:
        return None
    meta_end = 6 + body[5]
    known = _KNOWN_HEADS.get((body[4:meta_end], into))
    if known is None or meta_end + 2 > end or body[meta_end] != 0x12:
        return None
    try:
        raw_start, raw_stop = _read_length(body, meta_end + 1, end)
    except _GoError:
        return None
    if raw_stop != end and body[raw_stop:] != _ENVELOPE_TAIL:
        return None
    kind, api_version, message = known
    return _read_object(message, body, raw_start, raw_stop, into[1] if into else "", api_version, kind)


def _read_object(message: _Message, body: bytes, start: int, stop: int, into_kind: str, api_version: str,
                 kind: str) -> Obj:
    """The object of ``kind`` whose message lies in ``body[start:stop]``, or the 400's error."""
    obj: Obj = {"kind": kind, "apiVersion": api_version}
    try:
        obj.update(message.read(body, start, stop))
    except _GoError as error:
        raise _error(str(error), body, into_kind, api_version, kind) from None
    except RecursionError:
        raise _error("proto: exceeded maximum nesting depth", body, into_kind, api_version, kind) from None
    except (binascii.Error, ValueError) as error:
        raise _error(str(error), body, into_kind, api_version, kind) from None
    return obj


def _type_meta_text(api_version: str, kind: str) -> str:
    """The envelope's type as Go's ``%+v`` prints it in the missing-kind errors."""
    return f'runtime.TypeMeta{{APIVersion:"{api_version}", Kind:"{kind}"}}'


def _envelope(body: bytes) -> tuple[str, str, int, int]:
    """``runtime.Unknown``'s apiVersion, kind and where ``raw`` lies in ``body``."""
    found = _usual_envelope(body)
    if found is not None:
        return found
    unknown = _message(_UNKNOWN)
    fields = _delimited_fields(unknown, body, 4, len(body))
    meta_start, meta_stop = fields.get(1, (0, 0))
    meta = _delimited_fields(_message(_TYPE_META), body, meta_start, meta_stop)
    api_version = body[slice(*meta.get(1, (0, 0)))].decode("utf-8", "replace")
    kind = body[slice(*meta.get(2, (0, 0)))].decode("utf-8", "replace")
    raw_start, raw_stop = fields.get(2, (0, 0))
    return api_version, kind, raw_start, raw_stop


def _usual_envelope(body: bytes) -> tuple[str, str, int, int] | None:
    """The envelope as Go writes it -- typeMeta (apiVersion, kind, short), raw, then the empty
    contentEncoding and contentType or nothing -- read directly; ``None`` for any other form,
    which :func:`_envelope` reads field by field."""
    end = len(body)
    if end < 12 or body[4] != 0x0A or body[6] != 0x0A:
        return None
    meta_end = 6 + body[5]
    api_end = 8 + body[7]
    if body[5] >= 0x80 or body[7] >= 0x80 or api_end + 2 > meta_end or meta_end + 2 > end:
        return None
    if body[api_end] != 0x12 or body[api_end + 1] >= 0x80 or api_end + 2 + body[api_end + 1] != meta_end:
        return None
    if body[meta_end] != 0x12:
        return None
    try:
        raw_start, raw_stop = _read_length(body, meta_end + 1, end)
    except _GoError:
        return None
    if raw_stop != end and body[raw_stop:] != b"\x1a\x00\x22\x00":
        return None
    return (body[8:api_end].decode("utf-8", "replace"), body[api_end + 2:meta_end].decode("utf-8", "replace"),
            raw_start, raw_stop)


def _kind_defaults(api_version: str, kind: str, into: tuple[str, str]) -> tuple[str, str]:
    """upstream's copyKindDefaults: the URL's group, version and kind fill what the envelope left out."""
    group, version = wire.split_api_version(api_version)
    default_group, default_version = wire.split_api_version(into[0])
    kind = kind or into[1]
    if not version:
        if not group:
            group, version = default_group, default_version
        elif group == default_group:
            version = default_version
    return (f"{group}/{version}" if group else version), kind


def _error(base: str, body: bytes, into_kind: str, api_version: str = "", kind: str = "") -> ProtobufError:
    if not into_kind:
        return ProtobufError(base, base, api_version, kind)
    if kind:
        version = wire.split_api_version(api_version)[1]
        text = f'{kind} in version "{version}" cannot be handled as a {into_kind}: {base}'
    else:
        text = f"the object provided is unrecognized (must be of type {into_kind}): {base} ({_summary(body)})"
    return ProtobufError(text, base, api_version, kind)


def _summary(body: bytes, limit: int = 30) -> str:
    """upstream's summarizeData: a body's first bytes, as text when it looks like JSON, else hex."""
    if not body:
        return "<empty>"
    more = " ..." if len(body) > limit else ""
    if body[:1] == b"{":
        return body[:limit].decode(errors="replace") + more
    return body[:limit].hex() + more
