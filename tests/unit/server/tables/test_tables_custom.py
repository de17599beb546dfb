"""Custom resource rows from CRD printer columns (the CloneSet CRD and hand-made columns), and
the JSONPath subset the columns use."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.tables import custom_printer, printer_for, printer_for_columns
from kubeloop.server.tables.jsonpath import JSONPathError, parse_jsonpath

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)

CLONESET = {
    "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
    "metadata": {"name": "sample", "namespace": "default", "creationTimestamp": "2024-05-01T09:00:00Z"},
    "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "main", "image": "nginx:alpine"},
                                                                  {"name": "log", "image": "busybox"}]}}},
    "status": {"replicas": 5, "readyReplicas": 4, "updatedReplicas": 3, "updatedReadyReplicas": 2,
               "labelSelector": "app=sample"},
}


def test_cloneset_columns_follow_its_crd() -> None:
    printer = printer_for("apps.kruise.io", "v1alpha1", "CloneSet", CLONESET_CRD)
    assert [(c.name, c.type, c.priority) for c in printer.columns] == [
        ("Name", "string", 0), ("DESIRED", "integer", 0), ("UPDATED", "integer", 0), ("UPDATED_READY", "integer", 0),
        ("UPDATED_AVAILABLE", "integer", 0), ("READY", "integer", 0), ("TOTAL", "integer", 0), ("AGE", "date", 0),
        ("CONTAINERS", "string", 1), ("IMAGES", "string", 1), ("SELECTOR", "string", 1)]
    assert printer.columns[0].format == "name"
    assert printer.columns[1].description == "Pods wanted."
    # A missing field gives a null cell; list paths show their first match, as upstream does.
    assert printer.cells(CLONESET, NOW) == ["sample", 5, 3, 2, None, 4, 5, "3h", "main", "nginx:alpine",
                                            "app=sample"]


def test_unknown_version_and_version_without_columns_get_an_age_column() -> None:
    for printer in (custom_printer(CLONESET_CRD, "v9"),
                    custom_printer({"spec": {"versions": [{"name": "v1"}]}}, "v1")):
        assert [(c.name, c.type) for c in printer.columns] == [("Name", "string"), ("Age", "date")]
        assert printer.cells(CLONESET, NOW) == ["sample", "3h"]


def _cell(column_type: str, value: Any) -> Any:
    printer = printer_for_columns([{"name": "V", "type": column_type, "jsonPath": ".v"}])
    return printer.cells({"metadata": {"name": "n"}, "v": value}, NOW)[1]


@pytest.mark.parametrize(("column_type", "value", "expected"), [
    ("integer", 3, 3), ("integer", 2.9, 2), ("integer", "3", None), ("integer", True, None),
    ("number", 3, 3.0), ("number", 1.5, 1.5), ("number", "1.5", None),
    ("boolean", False, False), ("boolean", "true", None),
    ("string", "x", "x"), ("string", 3, "3"), ("string", 1.5, "1.5"), ("string", 2.0, "2"), ("string", True, "true"),
    ("string", {"a": [1, "b"]}, '{"a":[1,"b"]}'),
    ("date", "2024-05-01T11:58:00Z", "2m"), ("date", "not a date", "<invalid>"), ("date", 5, None),
    ("integer", None, None), ("weird", 1, None),
])
def test_cell_types(column_type: str, value: Any, expected: Any) -> None:
    assert _cell(column_type, value) == expected


def test_column_details_and_unreadable_paths() -> None:
    printer = printer_for_columns([
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
         "priority": 1, "format": "text"},
        {"name": "Broken", "type": "string", "jsonPath": ".a..b"},
    ])
    assert [(c.name, c.priority, c.format) for c in printer.columns] == [("Name", 0, "name"), ("Ready", 1, "text"),
                                                                         ("Broken", 0, "")]
    assert printer.columns[2].description == "A custom resource column (JSONPath .a..b)."
    obj = {"metadata": {"name": "n"}, "status": {"conditions": [{"type": "Synced", "status": "False"},
                                                                {"type": "Ready", "status": "True"}]}}
    assert printer.cells(obj, NOW) == ["n", "True", None]


DOCUMENT = {
    "metadata": {"name": "n", "labels": {"app.kubernetes.io/name": "web"}},
    "spec": {"replicas": 3, "items": [{"k": "a", "n": 1}, {"k": "b", "n": 2}, {"k": "c", "n": 3}]},
}


@pytest.mark.parametrize(("path", "expected"), [
    (".spec.replicas", [3]),
    ("{.spec.replicas}", [3]),
    ("spec.replicas", [3]),
    ("$.spec.replicas", [3]),
    (".spec.missing", []),
    (".spec.replicas.deeper", []),
    (".spec.items[0].k", ["a"]),
    (".spec.items[-1].k", ["c"]),
    (".spec.items[7].k", []),
    (".spec.items[*].k", ["a", "b", "c"]),
    (".spec.items.*.n", [1, 2, 3]),
    (".metadata.labels['app.kubernetes.io/name']", ["web"]),
    ('.metadata.labels["app.kubernetes.io/name"]', ["web"]),
    ('.spec.items[?(@.k=="b")].n', [2]),
    (".spec.items[?(@.k != 'b')].n", [1, 3]),
    (".spec.items[?(@.n > 1)].k", ["b", "c"]),
    (".spec.items[?(@.n <= 1.5)].k", ["a"]),
    (".spec.items[?(@.k)].n", [1, 2, 3]),
    (".spec.items[?(@.k > 1)].n", []),
])
def test_jsonpath(path: str, expected: list[Any]) -> None:
    assert parse_jsonpath(path).find(DOCUMENT) == expected


@pytest.mark.parametrize("path", ["..spec", ".spec[", ".spec.items[?(@.k ~ 1)]", ".spec!", ". spec"])
def test_jsonpath_outside_the_subset_is_rejected(path: str) -> None:
    with pytest.raises(JSONPathError):
        parse_jsonpath(path)
