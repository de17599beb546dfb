"""Status conditions: lists of ``{type, status, reason, message, ...}`` dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubeloop.api.meta import is_mapping


def find_condition(conditions: Sequence[Mapping[str, Any]] | None, type_: str) -> Mapping[str, Any] | None:
    """The condition of the given type, or ``None``."""
    for condition in conditions or ():
        if condition.get("type") == type_:
            return condition
    return None


def status_conditions(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``obj.status.conditions`` as a list (empty when missing or malformed)."""
    status = obj.get("status")
    if not is_mapping(status):
        return []
    conditions = status.get("conditions")
    return [c for c in conditions if is_mapping(c)] if isinstance(conditions, list) else []


def condition_is_true(obj: Mapping[str, Any], type_: str) -> bool:
    condition = find_condition(status_conditions(obj), type_)
    return condition is not None and condition.get("status") == "True"
