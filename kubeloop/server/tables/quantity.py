"""Quantities as Go prints them (``resource.Quantity.String()``): the canonical form.

kube-apiserver stores and prints quantities canonicalized; this server keeps them as written,
so printers canonicalize on the way out. The form follows the suffix the value was written
with: binary (``Ki``..``Ei``) values print with the largest binary suffix that keeps the number
whole (values below 1024, or not whole bytes, print as decimal instead); decimal exponents
(``1e3``) print as ``<n>e<3k>``; everything else uses the decimal suffixes ``n u m "" k M G T P E``
with the largest suffix that keeps the number whole. Values are rounded up to nano units, as
upstream does. Text that is not a quantity is returned unchanged.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Any

from kubeloop.server.admission.quantity import QuantityError, parse_quantity

_BINARY = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))
_DECIMAL = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_NANO = Decimal("1e-9")


def _written_format(text: str) -> str:
    stripped = text.strip()
    if stripped[-2:] in {suffix for suffix, _ in _BINARY}:
        return "binary"
    if "e" in stripped.lower().lstrip("+-0123456789."):
        return "exponent"
    return "decimal"


def _decimal_text(value: Decimal, exponent_form: bool) -> str:
    """Mantissa and the largest exponent (a multiple of 3, at most 18) that keeps it whole."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value).quantize(_NANO, rounding=ROUND_CEILING)
    exponent = -9
    while exponent < 18 and _whole(magnitude.scaleb(-(exponent + 3))):
        exponent += 3
    mantissa = int(magnitude.scaleb(-exponent))
    if exponent_form:
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{mantissa}{_DECIMAL[exponent]}"


def _whole(value: Decimal) -> bool:
    return value == value.to_integral_value()


def canonical_quantity(value: Any) -> str:
    """``value`` (a quantity string or JSON number) in Go's canonical form."""
    try:
        amount = parse_quantity(value)
    except QuantityError:
        return value if isinstance(value, str) else str(value)
    written = _written_format(value) if isinstance(value, str) else "decimal"
    if written == "binary" and abs(amount) >= 1024 and _whole(amount):
        whole = int(amount)
        for suffix, power in _BINARY:
            if whole % (1 << power) == 0:
                return f"{whole // (1 << power)}{suffix}"
        return str(whole)
    return _decimal_text(amount, written == "exponent")
