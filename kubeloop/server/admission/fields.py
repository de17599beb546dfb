"""Reading untyped JSON objects during validation: field paths, typed access, Go-style values.

Objects reach admission as plain dicts decoded from whatever a client sent, so any field may
hold the wrong JSON type. kube-apiserver would have refused such a body while decoding it into
Go structs; here the typed accessors record a ``FieldValueTypeInvalid`` error for the field and
hand back an empty value, so the rest of validation runs on and never raises.

Error messages quote bad values the way Go's ``%#v`` prints the Go structs upstream validates;
:class:`GoLiteral` carries such a pre-rendered text through :class:`FieldError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from kubeloop.api.meta import parse_time
from kubeloop.api.status import FieldError, go_quote, type_invalid

Errors = list[FieldError]


def child(path: str, name: str) -> str:
    """``field.Path.Child``: ``spec`` + ``replicas`` is ``spec.replicas``."""
    return f"{path}.{name}" if path else name


def index(path: str, position: int) -> str:
    """``field.Path.Index``: ``containers[0]``."""
    return f"{path}[{position}]"


def key(path: str, name: str) -> str:
    """``field.Path.Key``: map keys print unquoted, ``data[my.key]``."""
    return f"{path}[{name}]"


@dataclass(frozen=True)
class GoLiteral:
    """A bad value already rendered as Go prints it (``%#v`` of a struct, a time, ...)."""

    text: str

    def __str__(self) -> str:
        return self.text


def _type_error(path: str, value: Any, expected: str) -> FieldError:
    return type_invalid(path, value, f"must be of type {expected}")


def mapping_at(parent: Mapping[str, Any], name: str, path: str, errs: Errors) -> dict[str, Any]:
    """The object under ``name`` ({} when absent or null; a type error when not an object)."""
    value = parent.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errs.append(_type_error(child(path, name), value, "object"))
        return {}
    return value


def list_at(parent: Mapping[str, Any], name: str, path: str, errs: Errors) -> list[Any]:
    """The array under ``name`` ([] when absent or null; a type error when not an array)."""
    value = parent.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        errs.append(_type_error(child(path, name), value, "array"))
        return []
    return value


def objects_at(parent: Mapping[str, Any], name: str, path: str, errs: Errors) -> list[tuple[str, dict[str, Any]]]:
    """The array of objects under ``name`` as ``(item path, item)``; non-objects are type errors."""
    items: list[tuple[str, dict[str, Any]]] = []
    for position, item in enumerate(list_at(parent, name, path, errs)):
        item_path = index(child(path, name), position)
        if isinstance(item, dict):
            items.append((item_path, item))
        else:
            errs.append(_type_error(item_path, item, "object"))
    return items


def str_at(parent: Mapping[str, Any], name: str, path: str, errs: Errors) -> str:
    """The string under ``name`` ("" when absent or null, as Go's zero value)."""
    value = parent.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        errs.append(_type_error(child(path, name), value, "string"))
        return ""
    return value


def int_at(parent: Mapping[str, Any], name: str, path: str, errs: Errors) -> int | None:
    """The integer under ``name`` (None when absent or null; booleans are not integers)."""
    value = parent.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        errs.append(_type_error(child(path, name), value, "integer"))
        return None
    return value


def str_map_at(parent: Mapping[str, Any], name: str, path: str, errs: Errors) -> dict[str, str]:
    """A ``map[string]string`` field; entries with non-string values are type errors."""
    result: dict[str, str] = {}
    for entry_key, entry_value in mapping_at(parent, name, path, errs).items():
        if isinstance(entry_value, str):
            result[entry_key] = entry_value
        elif entry_value is not None:
            errs.append(_type_error(key(child(path, name), entry_key), entry_value, "string"))
    return result


def str_list_at(parent: Mapping[str, Any], name: str, path: str, errs: Errors) -> list[str]:
    result: list[str] = []
    for position, item in enumerate(list_at(parent, name, path, errs)):
        if isinstance(item, str):
            result.append(item)
        else:
            errs.append(_type_error(index(child(path, name), position), item, "string"))
    return result


def is_set(value: Any) -> bool:
    """Whether a JSON value differs from Go's zero value for an ``omitempty`` field."""
    return value is not None and value != "" and value != [] and value != {} and value is not False


def normalized(value: Any) -> Any:
    """``value`` with null, empty and false members removed, recursively.

    Upstream compares decoded Go structs with ``Semantic.DeepEqual``, for which a missing
    ``omitempty`` field, ``null`` and an empty list or map are the same thing. Comparing
    normalised JSON gives the same answer without knowing every field's Go type.
    """
    if isinstance(value, dict):
        out = {k: normalized(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if is_set(v)}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def semantically_equal(a: Any, b: Any) -> bool:
    # Equal JSON is equal Go: the common case (an update that leaves the field alone) skips
    # normalising both sides.
    if a == b:
        return True
    return bool(normalized(a) == normalized(b))


def spec_diff(type_name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """A short ``-old`` / ``+new`` listing of the top-level fields that differ.

    Upstream appends a ``cmp.Diff`` of the Go structs to some "immutable" messages; this keeps
    its shape (a ``-``/``+`` pair per changed field) with JSON field names and values.
    """
    old_n = normalized(dict(old))
    new_n = normalized(dict(new))
    lines = [f"  {type_name}{{"]
    for field_name in sorted(set(old_n) | set(new_n)):
        if old_n.get(field_name) == new_n.get(field_name):
            continue
        for sign, side in (("-", old_n), ("+", new_n)):
            if field_name in side:
                shown = orjson.dumps(side[field_name], option=orjson.OPT_SORT_KEYS).decode()
                lines.append(f"{sign} \t{field_name}: {shown},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


def go_time(text: Any) -> GoLiteral | None:
    """A ``metav1.Time`` as Go's ``time.Time.String()`` prints it (None for no time)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = parse_time(text)
    except ValueError:
        moment = None
    if moment is None:
        return GoLiteral(text)
    return GoLiteral(_go_time_string(moment))


def _go_time_string(moment: datetime) -> str:
    # metav1.Time decodes into the server's local zone; an embedded server runs in UTC.
    moment = moment.astimezone(UTC)
    base = moment.strftime("%Y-%m-%d %H:%M:%S")
    if moment.microsecond:
        base += f".{moment.microsecond:06d}".rstrip("0")
    return f"{base} +0000 UTC"


def go_string_map(value: Any) -> str:
    """``%#v`` of a ``map[string]string`` field (``map[string]string(nil)`` when unset)."""
    if not isinstance(value, Mapping):
        return "map[string]string(nil)"
    body = ", ".join(f"{go_quote(str(k))}:{go_quote(str(v))}" for k, v in sorted(value.items()))
    return "map[string]string{" + body + "}"


def go_string_list(value: Any) -> str:
    if not isinstance(value, list):
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in value) + "}"


def go_label_selector(selector: Any) -> GoLiteral:
    """``%#v`` of a ``metav1.LabelSelector``, as selector errors print it."""
    if not isinstance(selector, Mapping):
        return GoLiteral("null")
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        rendered = []
        for expr in expressions:
            expr = expr if isinstance(expr, Mapping) else {}
            rendered.append(
                "v1.LabelSelectorRequirement{"
                f"Key:{go_quote(str(expr.get('key') or ''))}, "
                f"Operator:{go_quote(str(expr.get('operator') or ''))}, "
                f"Values:{go_string_list(expr.get('values'))}}}"
            )
        expr_text = "[]v1.LabelSelectorRequirement{" + ", ".join(rendered) + "}"
    else:
        expr_text = "[]v1.LabelSelectorRequirement(nil)"
    return GoLiteral(
        "v1.LabelSelector{"
        f"MatchLabels:{go_string_map(selector.get('matchLabels'))}, "
        f"MatchExpressions:{expr_text}}}"
    )


def go_int_or_string(value: Any) -> GoLiteral:
    """``%#v`` of an ``intstr.IntOrString`` (Type 0 is an int, 1 a string)."""
    if isinstance(value, str):
        return GoLiteral(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}")
    number = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return GoLiteral(f'intstr.IntOrString{{Type:0, IntVal:{number}, StrVal:""}}')
