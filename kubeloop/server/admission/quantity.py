"""Resource quantities (``resource.Quantity``): ``500m``, ``1Gi``, ``2``, ``1e3``.

Validation needs to compare quantities (requests against limits, storage > 0) and to check
that integer resources carry no fraction; exact decimal arithmetic does both.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
QUANTITY_FORMAT_ERROR = f"quantities must match the regular expression '{QUANTITY_PATTERN}'"

_NUMBER = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
    "P": Decimal("1e15"), "E": Decimal("1e18"),
}
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")


class QuantityError(ValueError):
    """Text that is not a quantity; the message is upstream's parse error."""


def parse_quantity(value: Any) -> Decimal:
    """The exact value of a quantity given as JSON (a string, or a plain number)."""
    if isinstance(value, bool):
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    match = _NUMBER.match(value.strip())
    if match is None:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    number_text, suffix = match.groups()
    try:
        number = Decimal(number_text)
    except InvalidOperation as exc:
        raise QuantityError(QUANTITY_FORMAT_ERROR) from exc
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    exponent = _EXPONENT.match(suffix)
    if exponent is not None:
        return number.scaleb(int(exponent.group(1)))
    raise QuantityError("unable to parse quantity's suffix")


def quantity_text(value: Any) -> str:
    """How a quantity reads in an error message (as the client wrote it)."""
    return value if isinstance(value, str) else str(value)
