"""Status conditions: lists of ``{type, status, reason, message, ...}`` dicts
(:class:`~kubeloop.api.shapes.Condition`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from kubeloop.api.meta import is_mapping, is_shape
from kubeloop.api.shapes import Condition

C = TypeVar("C", bound=Mapping[str, Any])


def find_condition(conditions: Iterable[C] | None, type_: str) -> C | None:
    """The condition of the given type, or ``None``."""
    for condition in conditions or ():
        if condition.get("type") == type_:
            return condition
    return None


def status_conditions(obj: Mapping[str, Any]) -> list[Condition]:
    """``obj.status.conditions`` as a list (empty when missing or malformed)."""
    status = obj.get("status")
    if not is_mapping(status):
        return []
    conditions = status.get("conditions")
    return [c for c in conditions if is_shape(c)] if isinstance(conditions, list) else []


def condition_is_true(obj: Mapping[str, Any], type_: str) -> bool:
    condition = find_condition(status_conditions(obj), type_)
    return condition is not None and condition.get("status") == "True"
