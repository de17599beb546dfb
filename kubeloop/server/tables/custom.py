"""Rows of custom resources, from their CRD version's ``additionalPrinterColumns``.

As apiextensions-apiserver does it: a Name column, then one column per printer column (a CRD
version declaring none gets an Age column on ``.metadata.creationTimestamp``). Each cell is the
first match of the column's JSONPath, or ``null`` when nothing matches. ``string`` columns print
the value (strings as they are, other values as compact JSON, booleans as ``true``/``false``);
``integer``, ``number`` and ``boolean`` cells keep the value when it has that JSON type (an
integer column truncates a float); ``date`` cells show the age of an RFC 3339 string
(``<invalid>`` when unreadable); any other mismatch gives ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson

from kubeloop.server.tables.ages import age, parse_timestamp
from kubeloop.server.tables.jsonpath import JSONPath, JSONPathError, parse_jsonpath
from kubeloop.server.tables.printers import NAME, Column, Obj, Printer, items, mapping, name_of

DEFAULT_COLUMNS = ({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
                    "description": "Time since the object was created."},)


def columns_of(crd: Obj, version: str) -> list[Mapping[str, Any]]:
    """The printer columns of ``version`` of ``crd`` (the default Age column when it declares none)."""
    for entry in items(mapping(crd.get("spec")).get("versions")):
        if entry.get("name") == version:
            declared = items(entry.get("additionalPrinterColumns"))
            return declared or list(DEFAULT_COLUMNS)
    return list(DEFAULT_COLUMNS)


def _string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    return orjson.dumps(value).decode()


def typed_cell(column_type: str, value: Any, now: datetime) -> Any:
    """The cell of a non-string column for a found ``value`` (upstream's ``cellForJSONValue``)."""
    if value is None:
        return None
    if column_type == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value) if math.isfinite(value) else None
    if column_type == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if column_type == "boolean" and isinstance(value, bool):
        return value
    if column_type == "string" and isinstance(value, str):
        return value
    if column_type == "date" and isinstance(value, str):
        return age(value, now) if parse_timestamp(value) is not None else "<invalid>"
    return None


def custom_printer(crd: Obj, version: str) -> Printer:
    """The printer of one served version of a CRD."""
    return printer_for_columns(columns_of(crd, version))


def printer_for_columns(columns: list[Mapping[str, Any]]) -> Printer:
    """The printer of a list of ``additionalPrinterColumns``. Columns whose JSONPath we cannot
    read are kept (their cells are ``null``) so the table still lines up with the declaration."""
    definitions: list[Column] = [NAME]
    paths: list[tuple[str, JSONPath | None]] = []
    for column in columns:
        path_text = str(column.get("jsonPath") or "")
        try:
            path: JSONPath | None = parse_jsonpath(path_text)
        except JSONPathError:
            path = None
        column_type = str(column.get("type") or "string")
        description = str(column.get("description") or
                          f"A custom resource column (JSONPath {path_text}).")
        priority = column.get("priority")
        definitions.append(Column(str(column.get("name") or ""), column_type, description,
                                  str(column.get("format") or ""),
                                  priority if isinstance(priority, int) and not isinstance(priority, bool) else 0))
        paths.append((column_type, path))

    def cells(obj: Obj, now: datetime) -> list[Any]:
        row: list[Any] = [name_of(obj)]
        for column_type, path in paths:
            found = path.find(obj) if path is not None else []
            if not found:
                row.append(None)
            elif column_type == "string":
                row.append(_string(found[0]))
            else:
                row.append(typed_cell(column_type, found[0], now))
        return row

    return Printer(tuple(definitions), cells)
