"""Protobuf messages of the built-in kinds through the pinned ``protobuf`` library.

Descriptors are built at runtime from :mod:`kubeloop.server.kinds.wire` (one proto2 file per API
package, fields named by number since JSON names such as ``$ref`` are not identifiers, added to
a private ``DescriptorPool`` when first needed, cached); one converter per message turns our
JSON-form dicts into the constructor arguments of the library's message classes (nested dicts
and lists the library builds in C) and parsed messages back into dicts, with Go's semantics
(every non-pointer field written at its zero value, ``omitempty`` zeros dropped when read, kube's
special types; see :mod:`kubeloop.server.codec.protobuf`).

:func:`encode_message` and :func:`decode_message` are the reference the codec's own writer
(:mod:`kubeloop.server.codec.protobuf_writer`, generated code, several times quicker) and reader
(Go's decoder in what it refuses) are held to by the tests, for every built-in kind; the server
uses neither.

One difference from Go's bytes is the library's: its deterministic map order puts a key after
the keys it is a prefix of (``app.kubernetes.io/name`` before ``app``, an empty key last), where
Go (``sortkeys.Strings``) sorts them bytewise (``app`` first); the codec's writer sorts as Go does.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import-untyped]
from google.protobuf.message import Message  # type: ignore[import-untyped]

from kubeloop.server.codec import gotext
from kubeloop.server.kinds import wire

Obj = dict[str, Any]

_ZERO_SECONDS = gotext.ZERO_SECONDS
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_EXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
_EXT_BETA = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1."

SPECIAL: dict[str, str] = {
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
_SPECIAL = SPECIAL


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

    __slots__ = ("by_json", "by_number", "decode", "encode", "inline", "name", "special", "zeros")

    def __init__(self, name: str) -> None:
        self.name = name
        self.special = _SPECIAL.get(name, "list" if wire.messages()[name].get("list") else "")
        self.by_json: dict[str, tuple[str, Encode | None]] = {}
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
            self.by_json[entry["name"]] = (key, None if enc is _identity else enc)
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
        # Walks the keys the object has (stored objects are sparse), not every field of the type.
        out = dict(self.zeros)
        if type(obj) is not dict and not isinstance(obj, Mapping):
            # A struct without fields (CustomResourceSubresourceStatus) takes any JSON through the
            # server's typed decoding; Go has nothing to write for it but its zero value.
            return out
        by_json = self.by_json
        for name, value in obj.items():
            found = by_json.get(name)
            if found is not None and value is not None:
                key, enc = found
                out[key] = value if enc is None else enc(value)
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
        seconds, _ = gotext.parse_time(value)
        if seconds == _ZERO_SECONDS:
            return {}
        return {"f1": seconds, "f2": 0}

    @staticmethod
    def _encode_microtime(value: Any) -> dict[str, int]:
        seconds, nanos = gotext.parse_time(value)
        if seconds == _ZERO_SECONDS and nanos < 1000:
            return {}
        return {"f1": seconds, "f2": nanos - nanos % 1000}

    @staticmethod
    def _decode_time(msg: Any) -> Any:
        if msg.f1 == _ZERO_SECONDS or not msg.ListFields():
            return _ABSENT
        return gotext.format_time(msg.f1, 0, micro=False)

    @staticmethod
    def _decode_microtime(msg: Any) -> Any:
        nanos = msg.f2 - msg.f2 % 1000
        if (msg.f1 == _ZERO_SECONDS and nanos == 0) or not msg.ListFields():
            return _ABSENT
        return gotext.format_time(msg.f1, nanos, micro=True)

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
        return {"f1": gotext.parse_duration(value)}

    @staticmethod
    def _decode_duration(msg: Any) -> str:
        return gotext.format_duration(msg.f1)

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


# --- interface ---------------------------------------------------------------------------------------


def encode_message(obj: Mapping[str, Any], name: str) -> bytes:
    """The message bytes of ``obj`` as the message ``name`` (a definition name), fields in number
    order and maps sorted by key (the library's deterministic serialization)."""
    converter, cls = _codec(name)
    data: bytes = cls(**converter.encode(obj)).SerializeToString(deterministic=True)
    return data


def reserialize(data: bytes, name: str) -> bytes:
    """The message bytes ``data`` parsed and written again by the library (maps in its order)."""
    _, cls = _codec(name)
    written: bytes = cls.FromString(data).SerializeToString(deterministic=True)
    return written


def decode_message(data: bytes, name: str) -> Obj:
    """The JSON-form dict of the message bytes ``data`` as the message ``name``."""
    converter, cls = _codec(name)
    decoded: Obj = converter.decode(cls.FromString(data))
    return decoded
