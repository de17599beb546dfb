"""``application/vnd.kubernetes.protobuf``: kube objects as kube-apiserver writes them in protobuf.

A body is the 4-byte magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message: ``typeMeta``
(apiVersion, kind), ``raw`` (the object's own message) and the empty ``contentEncoding`` and
``contentType`` Go always writes (apimachinery pkg/runtime/serializer/protobuf/protobuf.go,
``Serializer.doEncode`` and ``runtime.Unknown.NestedMarshalTo``). A watch stream
(``;stream=watch``) is a sequence of frames, each a 4-byte big-endian length and a bare
``metav1.WatchEvent`` message (the stream serializer is the ``RawSerializer``: no magic, no
envelope) whose ``object.raw`` is the object encoded as a whole body, magic and envelope
included (apiserver pkg/endpoints/handlers/watch.go: the embedded encoder is the negotiated
``Serializer``; pkg/util/framer: the length-delimited framer).

Message schemas come from the wire facts of the registry of kinds (:mod:`kubeloop.server.kinds.wire`).
Descriptors are built at runtime from those facts (one proto file per API package, added to a
private pool when first needed), and encoding and parsing are done by the pinned ``protobuf``
library (upb, in C); what stays in Python is one compiled converter per message between our
JSON-form dicts and the messages' constructor arguments / parsed fields.

Go semantics kept on both sides:

- encoding writes what Go's generated marshaller writes: every non-pointer scalar and struct
  even at its zero value (a zero ``metav1.Time`` as an empty message), pointers only when set,
  maps sorted by key;
- decoding gives the dict our JSON path stores for the same Go object: a non-pointer field with
  ``omitempty`` at its zero value is left out (JSON would leave it out), a zero Time is left out
  (JSON writes ``null``), pointers and fields without ``omitempty`` are kept even at zero, and
  structs are kept even when empty (Go's JSON writes ``{}``);
- kube's special types: ``metav1.Time`` / ``MicroTime`` ({seconds, nanos} <-> RFC 3339 text as
  Go formats it), ``resource.Quantity`` ({string}), ``intstr.IntOrString`` ({type, intVal,
  strVal}), ``metav1.Duration`` (nanoseconds <-> Go's duration text), ``runtime.RawExtension`` /
  apiextensions ``JSON`` / ``FieldsV1`` (raw bytes = JSON text), ``bytes`` fields (base64 text in
  JSON), named-slice wrappers (``Verbs``, ``ExtraValue``: one ``items`` field, a plain list in
  JSON), inline-embedded structs, and the ``JSONSchemaProps*Or*`` unions.

A body that is not a valid kube protobuf message raises :class:`ProtobufError` whose text is
what Go's decoder says (gogo's generated ``Unmarshal``: ``proto: Pod: illegal tag 0 (wire type
0)``, ``unexpected EOF``, ...), wrapped as the apiserver's ``transformDecodeError``
(pkg/endpoints/handlers/rest.go) when the caller names the kind the body must be.
"""

from __future__ import annotations

import base64
import datetime
import functools
import re
import struct
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

from kubeloop.server.kinds import wire

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
STREAM_MEDIA_TYPE = MEDIA_TYPE + ";stream=watch"
MAGIC = b"k8s\x00"

Obj = dict[str, Any]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_UNKNOWN = "io.k8s.apimachinery.pkg.runtime.Unknown"
_WATCH_EVENT = _META + "WatchEvent"
_EXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
_EXT_BETA = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1."

_ZERO_SECONDS = -62135596800
"""Go's zero ``time.Time`` as Unix seconds (``IsZero``: JSON writes it as ``null``)."""

_SPECIAL: dict[str, str] = {
    _META + "Time": "time",
    _META + "MicroTime": "microtime",
    _META + "Duration": "duration",
    _META + "FieldsV1": "raw",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intstr",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "raw",
    **{prefix + "JSON": "raw" for prefix in (_EXT, _EXT_BETA)},
    **{prefix + "JSONSchemaPropsOrArray": "or_array" for prefix in (_EXT, _EXT_BETA)},
    **{prefix + "JSONSchemaPropsOrBool": "or_bool" for prefix in (_EXT, _EXT_BETA)},
    **{prefix + "JSONSchemaPropsOrStringArray": "or_strings" for prefix in (_EXT, _EXT_BETA)},
}
"""Messages whose JSON form is not their fields (Go gives them custom JSON marshalling)."""


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


# --- descriptors -----------------------------------------------------------------------------

_FIELD_TYPES = {
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    "uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
    "uint64": descriptor_pb2.FieldDescriptorProto.TYPE_UINT64,
    "double": descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
    "float": descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
}
_OPTIONAL = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
_REPEATED = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
_MESSAGE = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE


def _proto_name(definition: str) -> str:
    """The message's full name in our pool: the definition name, dashes made underscores."""
    return definition.replace("-", "_")


def _package(definition: str) -> str:
    return definition.rpartition(".")[0]


def _field_name(number: int) -> str:
    """Fields are named by number in the pool: JSON names such as ``$ref`` are not identifiers."""
    return f"f{number}"


class _Pool:
    """A private descriptor pool, filled one API package (one proto file) at a time."""

    def __init__(self) -> None:
        self.pool = descriptor_pool.DescriptorPool()
        self._files: set[str] = set()
        self._by_package: dict[str, list[str]] = {}
        for name in wire.messages():
            self._by_package.setdefault(_package(name), []).append(name)

    def message_class(self, definition: str) -> type[Message]:
        self._add_package(_package(definition))
        descriptor = self.pool.FindMessageTypeByName(_proto_name(definition))
        found: type[Message] = message_factory.GetMessageClass(descriptor)
        return found

    def _add_package(self, package: str) -> None:
        if package in self._files:
            return
        self._files.add(package)
        file = descriptor_pb2.FileDescriptorProto(name=package + ".proto", package=_proto_name(package),
                                                  syntax="proto2")
        deps: set[str] = set()
        messages = wire.messages()
        for name in self._by_package[package]:
            message = file.message_type.add(name=name.rpartition(".")[2])
            for entry in messages[name]["fields"]:
                self._add_field(file, message, entry, package, deps)
        for dep in sorted(deps):
            self._add_package(dep)
        file.dependency.extend(sorted(dep + ".proto" for dep in deps))
        self.pool.Add(file)

    def _add_field(self, file: descriptor_pb2.FileDescriptorProto, message: descriptor_pb2.DescriptorProto,
                   entry: Mapping[str, Any], package: str, deps: set[str]) -> None:
        number: int = entry["n"]
        type_name: str = entry["t"]
        field = message.field.add(name=_field_name(number), number=number)
        if "map" in entry:
            # A map is a repeated nested entry message with key = 1, value = 2 and map_entry set.
            entry_name = f"F{number}Entry"
            nested = message.nested_type.add(name=entry_name)
            nested.options.map_entry = True
            nested.field.add(name="key", number=1, label=_OPTIONAL, type=_FIELD_TYPES[entry["map"]])
            value = nested.field.add(name="value", number=2, label=_OPTIONAL)
            self._set_type(value, type_name, package, deps)
            field.label = _REPEATED
            field.type = _MESSAGE
            field.type_name = f".{_proto_name(package)}.{message.name}.{entry_name}"
            return
        field.label = _REPEATED if entry.get("rep") else _OPTIONAL
        self._set_type(field, type_name, package, deps)
        del file

    @staticmethod
    def _set_type(field: descriptor_pb2.FieldDescriptorProto, type_name: str, package: str, deps: set[str]) -> None:
        scalar = _FIELD_TYPES.get(type_name)
        if scalar is not None:
            field.type = scalar
            return
        field.type = _MESSAGE
        field.type_name = "." + _proto_name(type_name)
        if _package(type_name) != package:
            deps.add(_package(type_name))


@functools.cache
def _pool() -> _Pool:
    return _Pool()


# --- Go's text forms ---------------------------------------------------------------------------

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_TIME_TEXT = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
                        r"(?:([Zz])|([+-])(\d{2}):(\d{2}))$")


def _parse_time(text: str) -> tuple[int, int]:
    """RFC 3339 text -> (Unix seconds, nanoseconds), as Go's ``time.Parse`` reads it."""
    found = _TIME_TEXT.match(text)
    if found is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    year, month, day, hour, minute, second, fraction, _, sign, off_h, off_m = found.groups()
    moment = datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                               tzinfo=datetime.UTC)
    seconds = (moment - _EPOCH) // datetime.timedelta(seconds=1)
    if sign:
        offset = int(off_h) * 3600 + int(off_m) * 60
        seconds += -offset if sign == "+" else offset
    nanos = int((fraction or "0")[:9].ljust(9, "0"))
    return seconds, nanos


def _format_time(seconds: int, nanos: int, micro: bool) -> str:
    """Go's ``Time.MarshalJSON`` (RFC 3339, seconds, UTC) or ``MicroTime``'s (6 fraction digits)."""
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if micro:
        text += f".{nanos // 1000:06d}"
    return text + "Z"


_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9,
                   "h": 3600 * 10**9}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Go's ``time.ParseDuration``: ``"1h0m0s"`` -> nanoseconds."""
    body = text
    sign = 1
    if body[:1] in "+-" and body:
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return 0
    total = 0
    position = 0
    for part in _DURATION_PART.finditer(body):
        if part.start() != position:
            break
        number, unit = part.groups()
        whole, _, fraction = number.partition(".")
        scale = _DURATION_UNITS[unit]
        total += int(whole or "0") * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
        position = part.end()
    if position != len(body) or not body:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def format_duration(nanos: int) -> str:
    """Go's ``time.Duration.String``: ``3600000000000`` -> ``"1h0m0s"``."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    value = abs(nanos)
    if value < 10**9:
        for unit, scale in (("ms", 10**6), ("µs", 10**3), ("ns", 1)):
            if value >= scale:
                return sign + _fraction(value, scale) + unit
    seconds_text = _fraction(value % (60 * 10**9), 10**9) + "s"
    minutes = value // (60 * 10**9)
    if minutes == 0:
        return sign + seconds_text
    hours, minutes = divmod(minutes, 60)
    if hours == 0:
        return f"{sign}{minutes}m{seconds_text}"
    return f"{sign}{hours}h{minutes}m{seconds_text}"


def _fraction(value: int, scale: int) -> str:
    whole, rest = divmod(value, scale)
    if rest == 0:
        return str(whole)
    digits = len(str(scale)) - 1
    return f"{whole}.{rest:0{digits}d}".rstrip("0")


# --- converters ----------------------------------------------------------------------------------

Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def _to_float(value: Any) -> float:
    return float(value)


def _from_float(value: float) -> float | int:
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


def _to_bytes(value: Any) -> bytes:
    return base64.b64decode(value)


def _from_bytes(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


_ZERO_SCALARS: dict[str, Any] = {"string": "", "bool": False, "int32": 0, "int64": 0, "uint32": 0, "uint64": 0,
                                 "double": 0.0, "float": 0.0}


class _Converter:
    """Compiled conversions of one message between its JSON-form dict and the library's message.

    ``encode(obj)`` gives the constructor arguments (nested dicts and lists the library turns into
    messages in C); ``decode(msg)`` the JSON-form dict of a parsed message.
    """

    __slots__ = ("by_number", "decode", "encode", "fields", "inline", "name", "special", "zeros")

    def __init__(self, name: str) -> None:
        self.name = name
        self.special = _SPECIAL.get(name, "list" if wire.messages()[name].get("list") else "")
        self.fields: list[tuple[str, str, Encode]] = []
        self.inline: list[tuple[str, _Converter]] = []
        self.by_number: dict[int, tuple[str, Decode, bool, bool]] = {}
        self.zeros: dict[str, Any] = {}
        self.encode: Encode = self._encode_struct
        self.decode: Decode = self._decode_struct

    def compile(self) -> None:
        special = self.special
        if special:
            self.encode = getattr(self, "_encode_" + special)
            self.decode = getattr(self, "_decode_" + special)
            self.zeros = self._special_zeros()
            return
        for entry in wire.messages()[self.name]["fields"]:
            number: int = entry["n"]
            key = _field_name(number)
            type_name: str = entry["t"]
            scalar = type_name in _ZERO_SCALARS or type_name == "bytes"
            sub = None if scalar else _converter(type_name)
            if entry.get("inline"):
                assert sub is not None
                self.inline.append((key, sub))
                self.by_number[number] = ("", sub.decode, False, True)
                self.zeros[key] = sub.zeros
                continue
            enc: Encode
            dec: Decode
            if type_name == "bytes":
                enc, dec = _to_bytes, _from_bytes
            elif type_name in ("double", "float"):
                enc, dec = _to_float, _from_float
            elif sub is None:
                enc, dec = _identity, _identity
            else:
                enc, dec = sub.encode, sub.decode
            repeated = bool(entry.get("rep"))
            mapped = "map" in entry
            if repeated:
                enc, dec = _list_of(enc), _list_of(dec)
            elif mapped:
                enc, dec = _map_of(enc), _map_of(dec)
            self.fields.append((entry["name"], key, enc))
            omit = bool(entry.get("omit"))
            self.by_number[number] = (entry["name"], dec, omit, False)
            if not (repeated or mapped or entry.get("ptr")):
                if scalar:
                    if type_name != "bytes":
                        self.zeros[key] = _ZERO_SCALARS[type_name]
                else:
                    assert sub is not None
                    self.zeros[key] = sub.zeros

    def _special_zeros(self) -> dict[str, Any]:
        special = self.special
        if special == "intstr":
            return {"f1": 0, "f2": 0, "f3": ""}
        if special == "quantity":
            return {"f1": "0"}
        if special in ("duration",):
            return {"f1": 0}
        if special == "or_bool":
            return {"f1": False}
        return {}

    # structs

    def _encode_struct(self, obj: Any) -> dict[str, Any]:
        out = dict(self.zeros)
        for name, key, enc in self.fields:
            value = obj.get(name)
            if value is not None:
                out[key] = enc(value)
        for key, sub in self.inline:
            out[key] = sub.encode(obj)
        return out

    def _decode_struct(self, msg: Message) -> Obj:
        out: Obj = {}
        by_number = self.by_number
        for field, value in msg.ListFields():
            found = by_number.get(field.number)
            if found is None:
                continue
            name, dec, omit, inline = found
            if inline:
                out.update(dec(value))
                continue
            if omit and not value:
                continue
            decoded = dec(value)
            if decoded is not _ABSENT:
                out[name] = decoded
        return out

    # special types

    # metav1.Time writes seconds only (time_proto.go: ProtoTime), MicroTime microseconds too
    # (micro_time_proto.go); both write nothing at all for the zero time, and read an empty
    # message back as the zero time (which JSON writes as null).

    @staticmethod
    def _encode_time(value: Any) -> dict[str, int]:
        seconds, _ = _parse_time(value)
        if seconds == _ZERO_SECONDS:
            return {}
        return {"f1": seconds, "f2": 0}

    @staticmethod
    def _encode_microtime(value: Any) -> dict[str, int]:
        seconds, nanos = _parse_time(value)
        if seconds == _ZERO_SECONDS and nanos < 1000:
            return {}
        return {"f1": seconds, "f2": nanos - nanos % 1000}

    @staticmethod
    def _decode_time(msg: Any) -> Any:
        if msg.f1 == _ZERO_SECONDS or not msg.ListFields():
            return _ABSENT
        return _format_time(msg.f1, 0, micro=False)

    @staticmethod
    def _decode_microtime(msg: Any) -> Any:
        nanos = msg.f2 - msg.f2 % 1000
        if (msg.f1 == _ZERO_SECONDS and nanos == 0) or not msg.ListFields():
            return _ABSENT
        return _format_time(msg.f1, nanos, micro=True)

    @staticmethod
    def _encode_quantity(value: Any) -> dict[str, str]:
        return {"f1": value if isinstance(value, str) else str(value)}

    @staticmethod
    def _decode_quantity(msg: Any) -> str:
        return str(msg.f1)

    @staticmethod
    def _encode_intstr(value: Any) -> dict[str, Any]:
        if isinstance(value, str):
            return {"f1": 1, "f2": 0, "f3": value}
        return {"f1": 0, "f2": value, "f3": ""}

    @staticmethod
    def _decode_intstr(msg: Any) -> Any:
        return msg.f3 if msg.f1 == 1 else msg.f2

    @staticmethod
    def _encode_duration(value: Any) -> dict[str, int]:
        return {"f1": parse_duration(value)}

    @staticmethod
    def _decode_duration(msg: Any) -> str:
        return format_duration(msg.f1)

    @staticmethod
    def _encode_raw(value: Any) -> dict[str, bytes]:
        return {"f1": orjson.dumps(value)}

    @staticmethod
    def _decode_raw(msg: Any) -> Any:
        raw = msg.f1
        if not raw:
            return _ABSENT
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            raise _FieldError(f"invalid JSON in a raw field: {error}") from None

    def _encode_list(self, value: Any) -> dict[str, Any]:
        return {"f1": list(value)}

    @staticmethod
    def _decode_list(msg: Any) -> list[Any]:
        return list(msg.f1)

    def _schema(self) -> _Converter:
        return _converter(self.name.rpartition(".")[0] + ".JSONSchemaProps")

    def _encode_or_array(self, value: Any) -> dict[str, Any]:
        schema = self._schema()
        if isinstance(value, list):
            return {"f2": [schema.encode(item) for item in value]}
        return {"f1": schema.encode(value)}

    def _decode_or_array(self, msg: Any) -> Any:
        schema = self._schema()
        if msg.HasField("f1"):
            return schema.decode(msg.f1)
        return [schema.decode(item) for item in msg.f2]

    def _encode_or_bool(self, value: Any) -> dict[str, Any]:
        if isinstance(value, bool):
            return {"f1": value}
        return {"f1": True, "f2": self._schema().encode(value)}

    def _decode_or_bool(self, msg: Any) -> Any:
        if msg.HasField("f2"):
            return self._schema().decode(msg.f2)
        return bool(msg.f1)

    def _encode_or_strings(self, value: Any) -> dict[str, Any]:
        if isinstance(value, list):
            return {"f2": list(value)}
        return {"f1": self._schema().encode(value)}

    def _decode_or_strings(self, msg: Any) -> Any:
        if msg.HasField("f1"):
            return self._schema().decode(msg.f1)
        return list(msg.f2)


class _Absent:
    """A decoded value JSON would not write (a zero Time, an empty raw extension)."""


_ABSENT: Any = _Absent()


class _FieldError(Exception):
    """A field's content that Go's decoder refuses after parsing (invalid JSON in a raw field)."""


def _list_of(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if convert is _identity:
        return list
    return lambda values: [convert(value) for value in values]


def _map_of(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if convert is _identity:
        return dict
    return lambda values: {key: convert(value) for key, value in values.items()}


_CONVERTERS: dict[str, _Converter] = {}


def _converter(name: str) -> _Converter:
    found = _CONVERTERS.get(name)
    if found is None:
        found = _CONVERTERS[name] = _Converter(name)
        found.compile()
    return found


@functools.cache
def _codec(name: str) -> tuple[_Converter, type[Message]]:
    return _converter(name), _pool().message_class(name)


# --- public interface ------------------------------------------------------------------------------------


def has_schema(api_version: str, kind: str) -> bool:
    """Whether ``kind`` at ``api_version`` can be carried in protobuf (built-in kinds, their lists,
    meta.k8s.io's kinds; not custom resources, not Table)."""
    return wire.message_name(api_version, kind) is not None


def _message_name(api_version: str, kind: str) -> str:
    name = wire.message_name(api_version, kind)
    if name is None:
        raise ValueError(f"no protobuf message for {api_version} {kind}")
    return name


def encode_message(obj: Mapping[str, Any], api_version: str, kind: str) -> bytes:
    """The object's own message bytes (the envelope's ``raw``)."""
    converter, cls = _codec(_message_name(api_version, kind))
    data: bytes = cls(**converter.encode(obj)).SerializeToString(deterministic=True)
    return data


def _length_delimited(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode(obj: Mapping[str, Any]) -> bytes:
    """The whole body as kube-apiserver writes it: magic, then ``runtime.Unknown`` around the
    object's message (apiVersion and kind from the dict)."""
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    raw = encode_message(obj, api_version, kind)
    type_meta = _length_delimited(1, api_version.encode()) + _length_delimited(2, kind.encode())
    # contentEncoding (3) and contentType (4) are empty, and Go writes them anyway.
    return MAGIC + _length_delimited(1, type_meta) + _length_delimited(2, raw) + b"\x1a\x00\x22\x00"


def encode_watch_event(event_type: str, obj: Mapping[str, Any]) -> bytes:
    """One frame of a protobuf watch stream: length, then a bare WatchEvent whose object's raw
    is the object as a whole body (magic and envelope included)."""
    event = _length_delimited(1, event_type.encode()) + _length_delimited(2, _length_delimited(1, encode(obj)))
    return struct.pack(">I", len(event)) + event


def decode_watch_frames(data: bytes) -> list[tuple[str, Obj]]:
    """The events of a protobuf watch stream's bytes (complete frames only)."""
    events: list[tuple[str, Obj]] = []
    _, event_class = _codec(_WATCH_EVENT)
    position = 0
    while position + 4 <= len(data):
        (length,) = struct.unpack_from(">I", data, position)
        frame = data[position + 4:position + 4 + length]
        if len(frame) < length:
            break
        position += 4 + length
        try:
            event: Any = event_class.FromString(frame)
        except DecodeError:
            raise ProtobufError(_scan_error(frame, _WATCH_EVENT), _scan_error(frame, _WATCH_EVENT)) from None
        events.append((str(event.f1), decode(bytes(event.f2.f1))))
    return events


def decode(body: bytes, into: tuple[str, str] | None = None) -> Obj:
    """The JSON-form dict of a protobuf body, apiVersion and kind from the envelope.

    ``into`` is the (apiVersion, kind) the request's URL expects: it fills what the envelope
    leaves empty (upstream's ``copyKindDefaults``) and words errors as the apiserver's
    ``transformDecodeError`` does for that kind.
    """
    into_kind = into[1] if into else ""
    if not body:
        raise _error("empty data", body, into_kind)
    if body[:4] != MAGIC:
        raise _error("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
                     body, into_kind)
    if len(body) == 4:
        raise _error("empty body", body, into_kind)
    data = body[4:]
    _, unknown_class = _codec(_UNKNOWN)
    try:
        unknown: Any = unknown_class.FromString(data)
    except DecodeError:
        raise _error(_scan_error(data, _UNKNOWN), body, into_kind) from None
    api_version = str(unknown.f1.f1)
    kind = str(unknown.f1.f2)
    if into is not None:
        api_version, kind = _kind_defaults(api_version, kind, into)
    if not kind:
        raise _error(f"Object 'Kind' is missing in '{_go_type_meta(unknown)}'", body, into_kind)
    group, version = wire.split_api_version(api_version)
    if not version:
        raise _error(f"Object 'apiVersion' is missing in '{_go_type_meta(unknown)}'", body, into_kind)
    name = wire.message_name(api_version, kind)
    if name is None:
        raise _error(f'no kind "{kind}" is registered for version "{api_version}" in scheme '
                     '"pkg/api/legacyscheme/scheme.go:30"', body, into_kind, api_version, kind)
    converter, cls = _codec(name)
    raw = unknown.f2
    try:
        message = cls.FromString(raw)
    except DecodeError:
        raise _error(_scan_error(raw, name), body, into_kind, api_version, kind) from None
    try:
        obj: Obj = {"kind": kind, "apiVersion": api_version}
        obj.update(converter.decode(message))
    except (_FieldError, ValueError, UnicodeDecodeError) as error:
        raise _error(str(error), body, into_kind, api_version, kind) from None
    del group
    return obj


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


def _go_type_meta(unknown: Any) -> str:
    return f'runtime.TypeMeta{{APIVersion:"{unknown.f1.f1}", Kind:"{unknown.f1.f2}"}}'


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
    head = body[:limit]
    more = " ..." if len(body) > limit else ""
    if body[:1] == b"{":
        return head.decode(errors="replace") + more
    return head.hex() + more


# --- Go's decoder errors -------------------------------------------------------------------------------


def _scan_error(data: bytes, name: str) -> str:
    """The error gogo's generated ``Unmarshal`` returns for ``data`` as the message ``name``.

    Only called once the library refused the bytes, so walking them in Python costs nothing on
    the good path; the text is the first error Go meets walking the same bytes.
    """
    try:
        _Scanner(data).message(name, 0, len(data))
    except _ScanError as error:
        return str(error)
    return "unexpected EOF"


class _ScanError(Exception):
    pass


_OVERFLOW = "proto: integer overflow"
_EOF = "unexpected EOF"
_NEGATIVE = "proto: negative length found during unmarshaling"

_WIRE_TYPES = {"string": 2, "bytes": 2, "bool": 0, "int32": 0, "int64": 0, "uint32": 0, "uint64": 0, "double": 1,
               "float": 5}

_GO_MESSAGE_NAMES = {_META + "Time": "Timestamp", _META + "MicroTime": "Timestamp"}


class _Scanner:
    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def varint(self, position: int, end: int) -> tuple[int, int]:
        value = 0
        shift = 0
        while True:
            if shift >= 64:
                raise _ScanError(_OVERFLOW)
            if position >= end:
                raise _ScanError(_EOF)
            byte = self.data[position]
            position += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value, position
            shift += 7

    def length(self, position: int, end: int) -> tuple[int, int]:
        length, position = self.varint(position, end)
        if length >= 1 << 63:
            raise _ScanError(_NEGATIVE)
        if position + length > end:
            raise _ScanError(_EOF)
        return position + length, position

    def message(self, name: str, position: int, end: int) -> None:
        entries = {entry["n"]: entry for entry in wire.messages()[name]["fields"]}
        go_name = _GO_MESSAGE_NAMES.get(name, name.rpartition(".")[2])
        while position < end:
            key, position = self.varint(position, end)
            wire_type = key & 7
            number = key >> 3
            if number >= 1 << 31:
                number -= 1 << 32
            if wire_type == 4:
                raise _ScanError(f"proto: {go_name}: wiretype end group for non-group")
            if number <= 0:
                raise _ScanError(f"proto: {go_name}: illegal tag {number} (wire type {wire_type})")
            entry = entries.get(number)
            if entry is None:
                position = self.skip(wire_type, position, end)
                continue
            position = self.field(entry, wire_type, position, end)

    def field(self, entry: Mapping[str, Any], wire_type: int, position: int, end: int) -> int:
        type_name: str = entry["t"]
        go_field = entry.get("go") or entry["name"][:1].upper() + entry["name"][1:]
        expected = _WIRE_TYPES.get(type_name, 2)
        if "map" in entry:
            expected = 2
        packable = entry.get("rep") and expected != 2
        if wire_type != expected and not (packable and wire_type == 2):
            raise _ScanError(f"proto: wrong wireType = {wire_type} for field {go_field}")
        if wire_type == 0:
            return self.varint(position, end)[1]
        if wire_type == 1 or wire_type == 5:
            size = 8 if wire_type == 1 else 4
            if position + size > end:
                raise _ScanError(_EOF)
            return position + size
        stop, start = self.length(position, end)
        if "map" in entry:
            self.map_entry(entry, start, stop)
        elif expected == 2 and type_name not in _WIRE_TYPES:
            self.message(type_name, start, stop)
        elif packable:
            while start < stop:
                start = self.varint(start, stop)[1] if expected == 0 else start + (8 if expected == 1 else 4)
            if start > stop:
                raise _ScanError(_EOF)
        return stop

    def map_entry(self, entry: Mapping[str, Any], position: int, end: int) -> None:
        value_type: str = entry["t"]
        while position < end:
            key, position = self.varint(position, end)
            number, wire_type = key >> 3, key & 7
            if number == 1 and wire_type == 2:
                position = self.length(position, end)[0]
            elif number == 2:
                expected = _WIRE_TYPES.get(value_type, 2)
                if wire_type != expected:
                    position = self.skip(wire_type, position, end)
                elif wire_type == 0:
                    position = self.varint(position, end)[1]
                elif wire_type == 2:
                    stop, start = self.length(position, end)
                    if value_type not in _WIRE_TYPES:
                        self.message(value_type, start, stop)
                    position = stop
                else:
                    position = self.skip(wire_type, position, end)
            else:
                position = self.skip(wire_type, position, end)

    def skip(self, wire_type: int, position: int, end: int) -> int:
        """gogo's ``skipGenerated`` for one field whose number the message does not know."""
        depth = 0
        while True:
            if wire_type == 0:
                position = self.varint(position, end)[1]
            elif wire_type == 1:
                position += 8
            elif wire_type == 2:
                length, position = self.varint(position, end)
                if length >= 1 << 63:
                    raise _ScanError(_NEGATIVE)
                position += length
            elif wire_type == 3:
                depth += 1
            elif wire_type == 4:
                if depth == 0:
                    raise _ScanError("proto: unexpected end of group")
                depth -= 1
            elif wire_type == 5:
                position += 4
            else:
                raise _ScanError(f"proto: illegal wireType {wire_type}")
            if position > end:
                raise _ScanError(_EOF)
            if depth == 0:
                return position
            key, position = self.varint(position, end)
            wire_type = key & 7
