"""What a printer is: the column definitions of a kind and a function from an object to cells.

A :class:`Printer` mirrors one of kube-apiserver's table handlers: ``columns`` are sent as
``columnDefinitions``, ``cells(obj, now)`` gives one row (always every column, wide ones
included: kubectl hides ``priority`` > 0 columns unless ``-o wide``), and ``conditions``
optionally gives the row's conditions (pods report ``Completed`` for succeeded and failed pods).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Obj = Mapping[str, Any]
Cells = Callable[[Obj, datetime], list[Any]]
RowConditions = Callable[[Obj], list[dict[str, str]]]


@dataclass(frozen=True)
class Column:
    """One column definition (``metav1.TableColumnDefinition``)."""

    name: str
    type: str
    description: str
    format: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description,
                "priority": self.priority}


def _no_conditions(obj: Obj) -> list[dict[str, str]]:
    return []


@dataclass(frozen=True)
class Printer:
    """The table form of one kind."""

    columns: tuple[Column, ...]
    cells: Cells
    conditions: RowConditions = field(default=_no_conditions)


NAME_DESCRIPTION = "The object's name, unique within its namespace and kind."
AGE_DESCRIPTION = "Time since the object was created."

NAME = Column("Name", "string", NAME_DESCRIPTION, "name")
AGE = Column("Age", "string", AGE_DESCRIPTION)


def dig(obj: Any, *path: str) -> Any:
    """``obj[path[0]][path[1]]...``, ``None`` where anything along the way is missing."""
    current = obj
    for part in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list value (anything else is skipped)."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def integer(value: Any, default: int = 0) -> int:
    """An integer field (JSON numbers may arrive as floats); ``default`` when absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return int(value)


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def name_of(obj: Obj) -> str:
    return text(dig(obj, "metadata", "name"))


def created(obj: Obj) -> Any:
    return dig(obj, "metadata", "creationTimestamp")
