"""Accept-header negotiation, includeObject, and Table responses for objects, lists and watches."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.tables import (
    TableRequest,
    include_object,
    list_table,
    object_table,
    printer_for,
    table_converter,
    table_request,
    watch_event_table,
)

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
KUBECTL_120 = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
               "application/json")


@pytest.mark.parametrize(("accept", "version"), [
    (KUBECTL_120, "v1"),
    ("application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json", "v1beta1"),
    ("application/json; as=Table; g=meta.k8s.io; v=v1", "v1"),
    ("application/json;as=Table;v=v2;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io", "v1beta1"),
    # PartialObjectMetadataList is served, so it wins over the Table written after it.
    ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;"
     "g=meta.k8s.io", None),
    ("application/json;as=Foo;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io", "v1"),
    ("application/json, application/json;as=Table;v=v1;g=meta.k8s.io", None),
    ("application/json;q=0.5, application/json;as=Table;v=v1;g=meta.k8s.io", "v1"),
    ("*/*, application/json;as=Table;v=v1beta1;g=meta.k8s.io", "v1beta1"),
    ("application/json;as=Table;v=v1;g=meta.k8s.io;q=bad, application/json", None),
    ("*/*", None),
    ("application/json;as=Table;v=v1;g=example.com", None),
    ("application/yaml;as=Table;v=v1;g=meta.k8s.io", "v1"),
    ("", None),
    (None, None),
])
def test_table_request(accept: str | None, version: str | None) -> None:
    found = table_request(accept)
    assert (found.version if found else None) == version


@pytest.mark.parametrize(("value", "expected"), [(None, "Metadata"), ("", "Metadata"), ("None", "None"),
                                                 ("Object", "Object"), ("Metadata", "Metadata")])
def test_include_object(value: str | None, expected: str) -> None:
    assert include_object(value) == expected


def test_include_object_rejects_other_values_with_a_bad_request() -> None:
    with pytest.raises(ApiError) as raised:
        include_object("object")
    status = raised.value.status()
    assert status["code"] == 400 and status["reason"] == "BadRequest"
    assert status["message"] == ("Unable to convert to Table as requested: includeObject: Invalid value: \"object\": "
                                 "must be 'Metadata', 'Object', 'None', or empty")


def deployment(name: str, rv: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": rv,
                         "creationTimestamp": "2024-05-01T11:55:00Z", "labels": {"app": name}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}},
            "status": {"readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1}}


PRINTER = printer_for("apps", "v1", "Deployment")
V1 = TableRequest("v1")


def test_list_table_keeps_paging_metadata_and_partial_metadata_rows() -> None:
    listed = {"kind": "DeploymentList", "apiVersion": "apps/v1",
              "metadata": {"resourceVersion": "77", "continue": "token", "remainingItemCount": 3},
              "items": [deployment("a", "70"), deployment("b", "71")]}
    before = copy.deepcopy(listed)
    table = list_table(PRINTER, listed, request=V1, include="Metadata", api_version="apps/v1", kind="Deployment",
                       now=NOW)
    assert listed == before
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "77", "continue": "token", "remainingItemCount": 3}
    assert table["columnDefinitions"][0] == {"name": "Name", "type": "string", "format": "name",
                                             "description": PRINTER.columns[0].description, "priority": 0}
    assert [row["cells"][:5] for row in table["rows"]] == [["a", "1/1", 1, 1, "5m"], ["b", "1/1", 1, 1, "5m"]]
    assert table["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                          "metadata": deployment("a", "70")["metadata"]}


def test_empty_list_has_headers_and_no_rows() -> None:
    table = list_table(PRINTER, {"metadata": {"resourceVersion": "5"}, "items": []}, request=TableRequest("v1beta1"),
                       include="Metadata", api_version="apps/v1", kind="Deployment", now=NOW)
    assert table["apiVersion"] == "meta.k8s.io/v1beta1"
    assert table["rows"] == [] and len(table["columnDefinitions"]) == 8
    assert table["metadata"] == {"resourceVersion": "5"}


def test_object_table_with_whole_object_or_none() -> None:
    stored = deployment("web", "12")
    table = object_table(PRINTER, stored, request=V1, include="Object", api_version="apps/v1", kind="Deployment",
                         now=NOW)
    assert table["metadata"] == {"resourceVersion": "12"}
    assert table["rows"][0]["object"] == {"kind": "Deployment", "apiVersion": "apps/v1", **stored}
    assert "kind" not in stored
    bare = object_table(PRINTER, stored, request=V1, include="None", api_version="apps/v1", kind="Deployment", now=NOW)
    assert bare["rows"][0]["object"] is None


def test_pod_rows_carry_conditions_of_finished_pods() -> None:
    pod = {"metadata": {"name": "job-1", "resourceVersion": "3"}, "spec": {"containers": [{"name": "c"}]},
           "status": {"phase": "Succeeded"}}
    table = object_table(printer_for("", "v1", "Pod"), pod, request=V1, include="Metadata", api_version="v1",
                         kind="Pod", now=NOW)
    assert table["rows"][0]["conditions"][0]["reason"] == "Succeeded"


def test_watch_events_only_the_first_has_headers_and_bookmarks_pass_through() -> None:
    event = {"type": "ADDED", "object": deployment("a", "80")}
    first = watch_event_table(PRINTER, event, request=V1, include="Metadata", api_version="apps/v1",
                              kind="Deployment", now=NOW, first=True)
    later = watch_event_table(PRINTER, {"type": "DELETED", "object": deployment("a", "81")}, request=V1,
                              include="Metadata", api_version="apps/v1", kind="Deployment", now=NOW, first=False)
    assert first["type"] == "ADDED" and first["object"]["kind"] == "Table"
    assert len(first["object"]["columnDefinitions"]) == 8
    assert later["object"]["columnDefinitions"] is None
    assert later["object"]["metadata"] == {"resourceVersion": "81"}
    assert later["object"]["rows"][0]["cells"][0] == "a"
    bookmark = {"type": "BOOKMARK", "object": {"kind": "Deployment", "metadata": {"resourceVersion": "90"}}}
    assert watch_event_table(PRINTER, bookmark, request=V1, include="Metadata", api_version="apps/v1",
                             kind="Deployment", now=NOW, first=True) == bookmark
    error = {"type": "ERROR", "object": {"kind": "Status", "code": 410}}
    assert watch_event_table(PRINTER, error, request=V1, include="Metadata", api_version="apps/v1",
                             kind="Deployment", now=NOW, first=True) == error


def test_table_converter_only_for_table_requests_and_headers_once_per_watch() -> None:
    assert table_converter("application/json", "bogus", "apps", "v1", "Deployment", NOW) is None
    with pytest.raises(ApiError):
        table_converter(KUBECTL_120, "bogus", "apps", "v1", "Deployment", NOW)
    converter = table_converter(KUBECTL_120, None, "apps", "v1", "Deployment", NOW)
    assert converter is not None and converter.include == "Metadata"
    listed = converter.list({"metadata": {"resourceVersion": "1"}, "items": [deployment("a", "1")]})
    assert listed["rows"][0]["cells"][0] == "a"
    assert converter.object(deployment("b", "2"))["rows"][0]["cells"][0] == "b"
    bookmark = converter.watch_event({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "3"}}})
    assert bookmark["object"] == {"metadata": {"resourceVersion": "3"}}
    first = converter.watch_event({"type": "ADDED", "object": deployment("a", "4")})
    second = converter.watch_event({"type": "MODIFIED", "object": deployment("a", "5")},
                                   now=datetime(2024, 5, 1, 13, 0, 0, tzinfo=UTC))
    assert first["object"]["columnDefinitions"] and second["object"]["columnDefinitions"] is None
    assert second["object"]["rows"][0]["cells"][4] == "65m"


def test_table_converter_for_custom_resources_uses_the_crd() -> None:
    converter = table_converter(KUBECTL_120, "Object", "apps.kruise.io", "v1alpha1", "CloneSet", NOW, CLONESET_CRD)
    assert converter is not None
    table = converter.object({"metadata": {"name": "cs", "resourceVersion": "9"}, "spec": {"replicas": 2}})
    assert [c["name"] for c in table["columnDefinitions"]][:3] == ["Name", "DESIRED", "UPDATED"]
    assert table["rows"][0]["object"]["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert table["rows"][0]["cells"][:2] == ["cs", 2]


def test_watch_lines_are_converted_in_place() -> None:
    converter = table_converter(KUBECTL_120, None, "apps", "v1", "Deployment", NOW)
    assert converter is not None
    line = orjson.dumps({"type": "MODIFIED", "object": deployment("a", "6")}) + b"\n"
    converted = converter.watch_line(line)
    assert converted.endswith(b"\n") and converted.count(b"\n") == 1
    event = orjson.loads(converted)
    assert event["type"] == "MODIFIED" and event["object"]["rows"][0]["cells"][0] == "a"
    assert event["object"]["columnDefinitions"]
    assert orjson.loads(converter.watch_line(line))["object"]["columnDefinitions"] is None
