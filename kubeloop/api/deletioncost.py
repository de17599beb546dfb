"""The ``controller.kubernetes.io/pod-deletion-cost`` annotation, read as upstream reads it.

One parse serves the scale-down orders of the ReplicaSet and CloneSet controllers and the
server's pod validation, as upstream's ``GetDeletionCostFromPodAnnotations``
(pkg/apis/core/helper/helpers.go) serves ``ActivePodsWithRanks`` (pkg/controller/
controller_utils.go) and ``ValidatePodSpecificAnnotations`` (pkg/apis/core/validation/
validation.go).

A valid value is a base-10 int32 (Go's ``strconv.ParseInt(s, 10, 32)``: an optional sign, ASCII
digits only, no spaces or underscores) whose first character is ``-``, a digit 1-9, or the
whole value is ``"0"``. So ``"+10"`` and ``"008"`` are invalid, while ``"-0"`` and ``"-08"``
are valid (upstream checks only the first character). An invalid value counts as cost 0 in
the controllers' orders, and the server refuses it on pods (422, ``must be a 32bit integer``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubeloop.api.meta import annotations_of

POD_DELETION_COST_ANNOTATION: Final = "controller.kubernetes.io/pod-deletion-cost"
INVALID_DELETION_COST_MESSAGE: Final = "must be a 32bit integer"

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_ASCII_DIGITS = frozenset("0123456789")


def parse_deletion_cost(text: str) -> int | None:
    """The cost ``text`` spells, or ``None`` when upstream refuses it."""
    if not text or not (text[0] == "-" or text == "0" or "1" <= text[0] <= "9"):
        return None
    digits = text[1:] if text[0] == "-" else text
    # Python's int() would also take spaces, underscores and non-ASCII digits; Go's does not.
    if not digits or not _ASCII_DIGITS.issuperset(digits):
        return None
    value = int(text)
    return value if _INT32_MIN <= value <= _INT32_MAX else None


def deletion_cost(obj: Mapping[str, Any]) -> int:
    """The object's deletion cost: 0 when the annotation is absent or invalid."""
    text = annotations_of(obj).get(POD_DELETION_COST_ANNOTATION)
    if not isinstance(text, str):
        return 0
    value = parse_deletion_cost(text)
    return 0 if value is None else value


def has_invalid_deletion_cost(annotations: Mapping[str, Any]) -> bool:
    """The annotation is present and invalid (what upstream's pod validation refuses)."""
    text = annotations.get(POD_DELETION_COST_ANNOTATION)
    return text is not None and (not isinstance(text, str) or parse_deletion_cost(text) is None)
