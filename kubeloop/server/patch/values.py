"""Decoded JSON values seen the way upstream's Go code sees them.

Upstream decodes JSON into ``interface{}`` values: ``map[string]interface {}``, ``[]interface {}``,
``string``, ``int64``, ``float64``, ``bool`` and ``nil``. Its error texts print those types and
values with Go's formatting, which the helpers here reproduce.
"""

from __future__ import annotations

import math
from typing import Any

import orjson


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (through orjson; plain recursion for what orjson refuses,
    such as integers beyond 64 bits built in Python)."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:
        return _copy_slowly(value)


def _copy_slowly(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy_slowly(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_slowly(item) for item in value]
    return value


def go_type_name(value: Any) -> str:
    """The Go type a decoded JSON value has in upstream's maps (``reflect.TypeOf``)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "[]interface {}"


def json_kind(value: Any) -> str:
    """The JSON kind word Go's decoder uses in ``cannot unmarshal <kind> into ...`` errors."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    return "array"


def go_format(value: Any) -> str:
    """Go's ``%v`` for a decoded JSON value: ``map[a:1 b:[x y]]``, ``<nil>``, ``1e+06``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    return str(value)


def _go_float(value: float) -> str:
    """``strconv.FormatFloat(v, 'g', -1, 64)``: shortest digits, exponent form when the decimal
    exponent is below -4 or at least 6 (the decision Go makes for shortest precision)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    shortest = repr(value)
    sign = "-" if value < 0 else ""
    digits_part, _, exp_part = shortest.lstrip("-").partition("e")
    int_part, _, frac_part = digits_part.partition(".")
    exponent = int(exp_part) if exp_part else 0
    digits = (int_part + frac_part).lstrip("0")
    # Decimal exponent of the first significant digit.
    if int_part.strip("0"):
        decimal_exponent = len(int_part.lstrip("0")) - 1 + exponent
    else:
        decimal_exponent = -(len(frac_part) - len(frac_part.lstrip("0")) + 1) + exponent
    digits = digits.rstrip("0") or "0"
    if decimal_exponent < -4 or decimal_exponent >= 6:
        head, tail = digits[0], digits[1:]
        body = f"{head}.{tail}" if tail else head
        exp_sign = "-" if decimal_exponent < 0 else "+"
        return f"{sign}{body}e{exp_sign}{abs(decimal_exponent):02d}"
    if decimal_exponent >= 0:
        whole = digits[: decimal_exponent + 1].ljust(decimal_exponent + 1, "0")
        frac = digits[decimal_exponent + 1 :]
        return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"
    return f"{sign}0.{'0' * (-decimal_exponent - 1)}{digits}"
