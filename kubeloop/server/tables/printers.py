"""What a printer is: the column definitions of a kind and a function from an object to cells.

A :class:`Printer` mirrors one of kube-apiserver's table handlers: ``columns`` are sent as
``columnDefinitions``, ``cells(obj, now)`` gives one row (always every column, wide ones
included: kubectl hides ``priority`` > 0 columns unless ``-o wide``), and ``conditions``
optionally gives the row's conditions (pods report ``Completed`` for succeeded and failed pods),
and ``order`` optionally sorts a list's rows (upstream sorts FlowSchemas by precedence).

Column descriptions are plain text or a :class:`~kubeloop.server.tables.docs.FieldDoc`, the
documentation of the field the column shows, resolved when the definitions are sent.
The helpers below read fields of JSON objects the way Go reads a typed object: a missing or
mistyped field is the zero value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubeloop.server.tables.docs import FieldDoc, meta

Obj = Mapping[str, Any]
Cells = Callable[[Obj, datetime], list[Any]]
RowConditions = Callable[[Obj], list[dict[str, str]]]
SortKey = Callable[[Obj], Any]


@dataclass(frozen=True)
class Column:
    """One column definition (``metav1.TableColumnDefinition``)."""

    name: str
    type: str
    doc: str | FieldDoc
    format: str = ""
    priority: int = 0

    @property
    def description(self) -> str:
        return self.doc if isinstance(self.doc, str) else self.doc.text()

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
    order: SortKey | None = None


NAME_DESCRIPTION = meta("name")
AGE_DESCRIPTION = meta("creationTimestamp")

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


def or_none(value: str) -> str:
    """``value``, or ``<none>`` when empty (upstream's placeholder for an empty cell)."""
    return value or "<none>"


def format_labels(labels: Any) -> str:
    """apimachinery's ``labels.FormatLabels``: sorted ``key=value`` pairs, ``<none>`` when empty."""
    pairs = [f"{key}={value}" for key, value in sorted(mapping(labels).items())]
    return ",".join(pairs) or "<none>"


def go_bool(value: Any) -> bool:
    """A boolean field (absent is false)."""
    return value is True


def bool_pointer(value: Any) -> str:
    """Upstream's ``printBoolPtr``: ``True``/``False``, ``<unset>`` when the field is absent."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return "<unset>"


def container_cells(pod_spec: Any) -> tuple[str, str]:
    """Upstream's ``layoutContainerCells``: container names and images, comma-separated."""
    containers = items(dig(pod_spec, "containers"))
    return ",".join(text(c.get("name")) for c in containers), ",".join(text(c.get("image")) for c in containers)


def condition_status(conditions: Any, condition_type: str) -> str | None:
    """The status of the first condition of ``condition_type``, ``None`` without one."""
    for condition in items(conditions):
        if condition.get("type") == condition_type:
            return text(condition.get("status"))
    return None
