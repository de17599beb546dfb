"""Int-or-percent values (``IntOrString`` in the Kubernetes API).

Fields such as ``maxSurge``, ``maxUnavailable`` and CloneSet ``partition`` hold either an
integer or a string ``"<n>%"``. Controllers resolve them against a total with an explicit
rounding direction; the resolution follows upstream's floating-point formula exactly
(``ceil(v * total / 100)`` or ``floor(...)``) so that the same inputs give the same counts.
"""

from __future__ import annotations

import math
import re

IntOrString = int | str

_PERCENT = re.compile(r"^([+-]?[0-9]+)%$")
_INT_STRING = re.compile(r"^[+-]?[0-9]+$")


class IntOrPercentError(ValueError):
    """A value that is neither an int nor a ``"<n>%"`` string."""


def int_or_percent_value(value: IntOrString | None) -> tuple[int, bool]:
    """Return ``(number, is_percent)`` for an int or a ``"<n>%"`` string.

    Raises :class:`IntOrPercentError` for anything else, as upstream does: a string must be
    a percentage (a bare numeric string is rejected) and its number must parse as an integer.
    """
    if isinstance(value, bool) or value is None:
        raise IntOrPercentError("invalid type: neither int nor percentage")
    if isinstance(value, int):
        return value, False
    if isinstance(value, str):
        if not value.endswith("%"):
            raise IntOrPercentError("invalid type: string is not a percentage")
        match = _PERCENT.match(value)
        if match is None:
            raise IntOrPercentError(f'invalid value "{value}": not an integer percentage')
        return int(match.group(1)), True
    raise IntOrPercentError("invalid type: neither int nor percentage")


def scaled_value(value: IntOrString | None, total: int, round_up: bool) -> int:
    """Resolve an int-or-percent against ``total``.

    Ints are returned unchanged. Percentages become ``ceil(p * total / 100)`` when
    ``round_up`` else ``floor(p * total / 100)``, computed in floating point as upstream does.
    """
    number, is_percent = int_or_percent_value(value)
    if not is_percent:
        return number
    scaled = float(number) * float(total) / 100.0
    return math.ceil(scaled) if round_up else math.floor(scaled)


def is_int_string(value: str) -> bool:
    """True for a string holding a plain decimal integer (``IntOrString`` parsed from YAML)."""
    return _INT_STRING.match(value) is not None
