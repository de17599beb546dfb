"""Typed decoding of built-in objects, as kube-apiserver decodes a body into its Go types.

kube-apiserver turns every request body into the kind's Go struct (``sigs.k8s.io/json``, a strict
variant of ``encoding/json``) before anything else looks at it. What that decoding does, and what
:func:`decode_object` reproduces on the plain dict from the kind's upstream schema:

- a value of the wrong JSON type, or an integer outside its ``int32`` / ``int64`` range or with a
  fraction, fails the request with a 400 whose text is Go's ``UnmarshalTypeError``
  (``json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type
  int32``);
- a field the struct does not declare is dropped; ``fieldValidation=Strict`` turns the unknown
  fields into a 400 (``strict decoding error: unknown field "spec.bogus"``), ``Warn`` (the
  default) into one ``Warning`` header each, ``Ignore`` into nothing;
- ``null`` leaves a field at its zero value, which ``omitempty`` then leaves out, and empty maps
  and lists of optional fields are left out when the object is written back (``omitempty``).

Compiled types are cached per definition; walking a pod costs tens of microseconds (see
docs/decisions.md for the measurement).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

import orjson

from kubeloop.api.status import ApiError, bad_request_error, invalid, invalid_error
from kubeloop.server.kinds import upstream

Obj = dict[str, Any]

STRICT = "Strict"
WARN = "Warn"
IGNORE = "Ignore"
FIELD_VALIDATION_VALUES = (IGNORE, WARN, STRICT)

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_PLAIN: dict[str, type] = {"string": str, "bool": bool, "quantity": str, "intstr": str, "int32": int, "int64": int}
_TIMES = {"io.k8s.apimachinery.pkg.apis.meta.v1.Time", "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"}
_GO_TIME_LAYOUT = "2006-01-02T15:04:05Z07:00"


class _Node:
    """A compiled type: ``kind`` is one of ``struct``, ``list``, ``map``, ``string``, ``int32``,
    ``int64``, ``float64``, ``bool``, ``intstr``, ``quantity``, ``time``, ``any``."""

    __slots__ = ("bounds", "fields", "go_type", "item", "kind", "plain", "plain_fields", "required", "struct_name")

    def __init__(self, kind: str, go_type: str) -> None:
        self.kind = kind
        self.go_type = go_type
        self.fields: dict[str, _Node] = {}
        self.required: frozenset[str] = frozenset()
        self.item: _Node | None = None
        self.struct_name = ""
        self.plain: type | None = _PLAIN.get(kind)
        """The Python type a value of this kind is taken as it is, without a call (a string for
        strings, quantities and int-or-strings; ``int`` only within :attr:`bounds`)."""
        self.bounds: tuple[int, int] = _INT32 if kind == "int32" else _INT64
        self.plain_fields: dict[str, type] = {}
        """Of a struct, the fields whose values are taken as they are when of this type (strings,
        booleans, quantities and int-or-strings given as text): one lookup per such field, the
        common case, instead of the general loop's tests. Integers are not here (their range is
        checked)."""


class _Compiler:
    def __init__(self) -> None:
        self._structs: dict[str, _Node] = {}

    def definition(self, name: str) -> _Node:
        found = self._structs.get(name)
        if found is not None:
            return found
        schema = upstream.definitions()[name]
        package, _, short = name.rpartition(".")
        go_type = f"{package.rpartition('.')[2]}.{short}"
        if name == upstream.INT_OR_STRING:
            return _Node("intstr", "intstr.IntOrString")
        if name == upstream.QUANTITY:
            return _Node("quantity", "resource.Quantity")
        if name in _TIMES:
            return _Node("time", go_type)
        properties = schema.get("properties")
        if not properties:
            node = self._plain(schema, go_type)
            self._structs[name] = node
            return node
        node = _Node("struct", go_type)
        node.struct_name = short
        self._structs[name] = node
        node.required = frozenset(schema.get("required") or ())
        node.fields = {field: self.node(prop) for field, prop in properties.items()}
        node.plain_fields = {field: child.plain for field, child in node.fields.items()
                             if child.plain is not None and child.plain is not int}
        return node

    def _plain(self, schema: Mapping[str, Any], go_type: str) -> _Node:
        kind = schema.get("type")
        if kind == "object" and "additionalProperties" not in schema:
            return _Node("any", go_type)
        if kind is None:
            return _Node("any", go_type)
        return self.node(schema)

    def node(self, prop: Mapping[str, Any]) -> _Node:
        ref = prop.get("$ref")
        if isinstance(ref, str):
            return self.definition(ref.rpartition("/")[2])
        kind = prop.get("type")
        fmt = prop.get("format")
        if kind == "string":
            return _Node("string", "string") if fmt != "int-or-string" else _Node("intstr", "intstr.IntOrString")
        if kind == "integer":
            return _Node("int32", "int32") if fmt == "int32" else _Node("int64", "int64")
        if kind == "number":
            return _Node("float64", "float64")
        if kind == "boolean":
            return _Node("bool", "bool")
        if kind == "array":
            item = self.node(prop.get("items") or {})
            node = _Node("list", "[]" + item.go_type)
            node.item = item
            return node
        if kind == "object":
            extra = prop.get("additionalProperties")
            if isinstance(extra, Mapping):
                value = self.node(extra)
                node = _Node("map", "map[string]" + value.go_type)
                node.item = value
                return node
        return _Node("any", "interface {}")


@functools.cache
def _compiler() -> _Compiler:
    return _Compiler()


@functools.cache
def kind_node(group: str, version: str, kind: str) -> _Node | None:
    """The compiled type of a built-in kind, ``None`` when upstream publishes no schema for it."""
    name = upstream.definition_name(group, version, kind)
    return None if name is None else _compiler().definition(name)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {_go_number(value)}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _go_number(value: int | float) -> str:
    return repr(value)


class _Walk:
    """One decoding pass: the path being walked (for error texts) and the unknown fields met.

    Paths are kept as a stack of keys and list indices and only joined into text when an error
    or an unknown field needs one: building them per field would triple the cost of a pass.
    """

    __slots__ = ("collect_unknown", "prune", "stack", "unknown")

    def __init__(self, collect_unknown: bool, prune: bool = True) -> None:
        self.collect_unknown = collect_unknown
        self.prune = prune
        """Drop nulls and empty optional maps and lists (Go's zero values and ``omitempty``);
        off for apply configurations, where they are statements about ownership."""
        self.unknown: list[str] = []
        self.stack: list[str | int] = []

    def go_path(self) -> str:
        """Go's field path: names only, no list indices or map keys."""
        return ".".join(p for p in self.stack if isinstance(p, str) and not p.startswith("\0"))

    def shown_path(self, last: str) -> str:
        text = ""
        for part in [*self.stack, last]:
            if isinstance(part, int):
                text += f"[{part}]"
            else:
                name = part[2:] if part.startswith("\0") else part
                text = f"{text}.{name}" if text else name
        return text


class DecodeError(Exception):
    """A value Go's decoder would not accept; ``str()`` is Go's text."""


def _type_error(value: Any, struct: str, walk: _Walk, go_type: str) -> DecodeError:
    """Go's ``UnmarshalTypeError`` text (a number is named without its value here, as Go does)."""
    kind = "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else _json_type(value)
    return DecodeError(f"json: cannot unmarshal {kind} into Go struct field {struct}.{walk.go_path()} of type "
                       f"{go_type}")


_SCALAR_TYPES: dict[str, type] = {"string": str, "bool": bool}


def _decode_struct(node: _Node, value: Any, struct: str, walk: _Walk) -> Any:
    if type(value) is not dict:
        raise _type_error(value, struct, walk, node.go_type)
    fields = node.fields
    plain_fields = node.plain_fields
    name = node.struct_name
    stack = walk.stack
    drop: list[str] | None = None
    for key, item in value.items():
        if type(item) is plain_fields.get(key):
            # A declared string or boolean field holding one (``type()`` is never None, so an
            # unknown key never passes here).
            continue
        field = fields.get(key)
        if field is None:
            if walk.collect_unknown:
                walk.unknown.append(walk.shown_path(key))
            drop = [key] if drop is None else [*drop, key]
            continue
        if item is None:
            if walk.prune:
                drop = [key] if drop is None else [*drop, key]
            continue
        # Most fields are plain values that decode as they are: checked here, without a call
        # (the calls below give the same errors for what does not pass).
        plain = field.plain
        if plain is int:
            low, high = field.bounds
            if type(item) is int and low <= item <= high:
                continue
        elif type(item) is plain:
            continue
        kind = field.kind
        stack.append(key)
        decoded = (_decode_struct(field, item, name, walk) if kind == "struct" else
                   _decode(field, item, name, walk))
        stack.pop()
        if decoded is not item:
            value[key] = decoded
        elif not decoded and kind in ("map", "list") and key not in node.required and walk.prune:
            drop = [key] if drop is None else [*drop, key]
    if drop is not None:
        for key in drop:
            del value[key]
    return value


def _decode(node: _Node, value: Any, struct: str, walk: _Walk) -> Any:
    """``value`` decoded as ``node`` (the same object, changed in place, or a replacement)."""
    kind = node.kind
    if kind == "struct":
        return _decode_struct(node, value, struct, walk)
    if kind in ("int32", "int64"):
        if type(value) is not int:
            if type(value) is float:
                raise DecodeError(f"json: cannot unmarshal number {_go_number(value)} into Go struct field "
                                  f"{struct}.{walk.go_path()} of type {kind}")
            raise _type_error(value, struct, walk, kind)
        low, high = _INT32 if kind == "int32" else _INT64
        if not low <= value <= high:
            raise DecodeError(f"json: cannot unmarshal number {value} into Go struct field {struct}."
                              f"{walk.go_path()} of type {kind}")
        return value
    if kind == "string" or kind == "bool":
        if type(value) is not _SCALAR_TYPES[kind]:
            raise _type_error(value, struct, walk, kind)
        return value
    if kind == "list":
        if type(value) is not list:
            raise _type_error(value, struct, walk, node.go_type)
        item_node = node.item
        assert item_node is not None
        item_kind = item_node.kind
        wanted = _SCALAR_TYPES.get(item_kind)
        stack = walk.stack
        decode = _decode_struct if item_kind == "struct" else _decode
        for index, item in enumerate(value):
            if item is None:
                continue
            if wanted is not None:
                if type(item) is not wanted:
                    raise _type_error(item, struct, walk, item_kind)
                continue
            stack.append(index)
            decoded = decode(item_node, item, struct, walk)
            stack.pop()
            if decoded is not item:
                value[index] = decoded
        return value
    if kind == "map":
        if type(value) is not dict:
            raise _type_error(value, struct, walk, node.go_type)
        value_node = node.item
        assert value_node is not None
        wanted = _SCALAR_TYPES.get(value_node.kind)
        plain = value_node.plain
        stack = walk.stack
        for key, item in value.items():
            if item is None:
                continue
            if wanted is not None:
                if type(item) is not wanted:
                    raise _type_error(item, struct, walk, value_node.kind)
                continue
            if plain is str and type(item) is str:
                # A quantity or int-or-string given as text (resource requests and limits).
                continue
            # A map key is shown in unknown-field paths but is not part of Go's field path.
            stack.append("\0\0" + key)
            decoded = _decode(value_node, item, struct, walk)
            stack.pop()
            if decoded is not item:
                value[key] = decoded
        return value
    if kind == "float64":
        if type(value) not in (int, float):
            raise _type_error(value, struct, walk, "float64")
        return value
    if kind == "intstr":
        if type(value) is str:
            return value
        if type(value) is int:
            if not _INT32[0] <= value <= _INT32[1]:
                raise DecodeError(f"json: cannot unmarshal number {value} into Go value of type int32")
            return value
        raise DecodeError(f"json: cannot unmarshal {_json_type(value).split(' ')[0]} into Go value of type int32")
    if kind == "quantity":
        if type(value) is str:
            return value
        if type(value) in (int, float):
            return _quantity_text(value)
        raise DecodeError("quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    if kind == "time":
        if type(value) is not str:
            raise _type_error(value, struct, walk, node.go_type)
        if not _RFC3339.match(value):
            raise DecodeError(f'parsing time "{value}" as "{_GO_TIME_LAYOUT}": cannot parse "{value}" as "2006"')
        return value
    return value


def _quantity_text(value: int | float) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    return repr(value)


BODY = "body"
"""A create or update body: errors are 400s with the handlers' ``... cannot be handled as a ...``."""
PATCH = "patch"
"""A JSON, merge or strategic merge patch: the patched object failed to decode, a 422 on ``patch``."""
APPLY = "apply"
"""A server-side apply configuration: Go's text alone, as a 400. Nulls and empty maps and lists
are kept (they say what the applier owns); :func:`omit_empty` prunes the merged object."""


def decode_object(group: str, version: str, kind: str, obj: Obj, validation: str, source: str = BODY) -> list[str]:
    """Decode ``obj`` (a private copy, changed in place) as the built-in kind; returns warnings.

    Raises what kube-apiserver answers for a type error, or for unknown fields under ``Strict``,
    in the form ``source`` calls for (upstream's create/update handlers, ``patch.go`` and the apply
    path each word it their own way). Kinds without an upstream schema pass unchanged.
    """
    node = kind_node(group, version, kind)
    if node is None:
        return []
    walk = _Walk(collect_unknown=validation != IGNORE, prune=source != APPLY)
    try:
        _decode(node, obj, node.struct_name, walk)
    except DecodeError as error:
        raise _refusal(kind, version, str(error), source, obj) from None
    except RecursionError:
        raise _refusal(kind, version, "json: exceeded max depth", source, obj) from None
    if not walk.unknown:
        return []
    texts = [f'unknown field "{path}"' for path in walk.unknown]
    if validation == STRICT:
        raise _refusal(kind, version, "strict decoding error: " + ", ".join(texts), source, obj)
    return texts


def _refusal(kind: str, version: str, text: str, source: str, obj: Obj) -> ApiError:
    if source == BODY:
        return bad_request_error(f'{kind} in version "{version}" cannot be handled as a {kind}: {text}')
    if source == PATCH:
        # Upstream shows the patched document as the invalid value of the field "patch".
        shown = orjson.dumps(obj).decode(errors="replace")
        return invalid_error("", "", "", [invalid("patch", shown, text)])
    return bad_request_error(text)


def omit_empty(group: str, version: str, kind: str, obj: Obj) -> None:
    """Drop nulls and empty optional maps and lists from an object of a built-in kind (in place),
    as writing it through its Go type does (``omitempty``): for merged apply results."""
    node = kind_node(group, version, kind)
    if node is None:
        return
    try:
        _decode(node, obj, node.struct_name, _Walk(collect_unknown=False))
    except (DecodeError, RecursionError):
        # Only values that already decoded reach here; leave anything else for validation.
        return


_ZEROS: dict[str, Any] = {"string": "", "int32": 0, "int64": 0, "float64": 0, "bool": False}


@functools.cache
def _initial_status(group: str, version: str, kind: str) -> Obj | None:
    node = kind_node(group, version, kind)
    status = node.fields.get("status") if node is not None else None
    if status is None or status.kind != "struct":
        return None
    return {name: _ZEROS[field.kind] for name, field in status.fields.items()
            if name in status.required and field.kind in _ZEROS}


def initial_status(group: str, version: str, kind: str) -> Obj | None:
    """The ``status`` a new object of a built-in kind is stored with, ``None`` for kinds without one.

    Go writes a struct-valued ``status`` even when empty, with the fields it always writes
    (those without ``omitempty``, published as ``required``) at their zero values: a new
    Deployment has ``status: {}``, a new ReplicaSet ``status: {replicas: 0}``.
    """
    found = _initial_status(group, version, kind)
    return None if found is None else dict(found)


def field_validation(query: Mapping[str, str]) -> str:
    """The request's ``fieldValidation`` directive (``Warn`` when absent), 400 for an unknown one."""
    value = query.get("fieldValidation", "")
    if value == "":
        return WARN
    if value not in FIELD_VALIDATION_VALUES:
        raise bad_request_error(f"fieldValidation parameter unsupported: {value}. Must be one of: Ignore, Warn, "
                                "or Strict")
    return value


def warning_headers(texts: list[str]) -> list[str]:
    """``Warning`` header values as kube-apiserver writes them (code 299, agent ``-``)."""
    return ['299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"' for text in texts]
