"""core/v1 and events.k8s.io/v1 Events, shaped as client-go recorders and kopf send them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission import validate_create, validate_update


def core_event(namespace: str = "default", **fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.17a", "namespace": namespace},
        "involvedObject": {"kind": "Deployment", "namespace": namespace, "name": "web", "uid": "u"},
        "reason": "ScalingReplicaSet",
        "message": "Scaled up",
        "type": "Normal",
        "source": {"component": "deployment-controller"},
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:00:00Z",
        "count": 1,
    }
    obj.update(fields)
    return obj


def new_event(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web.17a", "namespace": "default"},
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "Started",
        "note": "started",
        "type": "Normal",
        "action": "Start",
        "eventTime": "2024-01-01T00:00:00.000001Z",
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
    }
    obj.update(fields)
    return {k: v for k, v in obj.items() if v is not None}


def core_errors(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_create("", "v1", "Event", obj, namespaced=True)]


def new_errors(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_create("events.k8s.io", "v1", "Event", obj, namespaced=True)]


def test_recorder_events_are_valid() -> None:
    assert core_errors(core_event()) == []


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        # A cluster-scoped involved object may be reported in "default" (kopf does this).
        (core_event(involvedObject={"kind": "Node", "name": "n1"}), []),
        (
            core_event(namespace="team", involvedObject={"kind": "Node", "name": "n1"}),
            ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
        ),
        (
            core_event(involvedObject={"kind": "Pod", "namespace": "other", "name": "p"}),
            ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
        ),
        (
            core_event(
                eventTime="2024-01-01T00:00:00.000000Z",
                reportingComponent="kubelet",
                reportingInstance="n1",
                action="Pull",
                reason="x" * 129,
            ),
            ['reason: Invalid value: "": can have at most 128 characters'],
        ),
    ],
)
def test_core_event_rules(event: dict[str, Any], expected: list[str]) -> None:
    assert core_errors(event) == expected


# The name syntax of an empty qualified name adds a regex message after "must be non-empty";
# only the part of the list that does not depend on that wording is pinned here.
@pytest.mark.parametrize(
    ("event", "group", "field"),
    [
        (core_event(eventTime="2024-01-01T00:00:00.000000Z"), "", "reportingComponent"),
        (new_event(reportingController=None), "events.k8s.io", "reportingController"),
    ],
)
def test_reporting_controller_required_with_event_time(event: dict[str, Any], group: str, field: str) -> None:
    errors = [str(e) for e in validate_create(group, "v1", "Event", event, namespaced=True)]
    assert errors[:2] == [f"{field}: Required value", f'{field}: Invalid value: "": name part must be non-empty']
    if group == "":
        assert errors[-2:] == ["reportingInstance: Required value", "action: Required value"]


def test_core_event_updates_only_get_legacy_checks() -> None:
    old = core_event()
    old["metadata"].update({"uid": "u", "resourceVersion": "4"})
    new = copy.deepcopy(old)
    new.update(count=2, lastTimestamp="2024-01-01T00:01:00Z", message="changed")
    assert [str(e) for e in validate_update("", "v1", "Event", new, old, namespaced=True)] == []


def test_events_v1_valid() -> None:
    assert new_errors(new_event()) == []


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"eventTime": None}, ["eventTime: Required value"]),
        ({"type": "Odd"}, ['type: Invalid value: "": has invalid value: Odd']),
        ({"deprecatedCount": 3}, ['count: Invalid value: "": needs to be unset']),
        ({"deprecatedSource": {"component": "x"}}, ['source: Invalid value: "": needs to be unset']),
        (
            {"series": {"count": 1}},
            ['series.count: Invalid value: "": should be at least 2', "series.lastObservedTime: Required value"],
        ),
        ({"note": "n" * 1025}, ['message: Invalid value: "": can have at most 1024 characters']),
    ],
)
def test_events_v1_rules(fields: dict[str, Any], expected: list[str]) -> None:
    assert new_errors(new_event(**fields)) == expected


def test_events_v1_names_are_checked() -> None:
    event = new_event()
    event["metadata"]["name"] = "Bad_Name"
    assert new_errors(event)[0].startswith('metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')


def test_events_v1_update_immutability() -> None:
    old = new_event()
    old["metadata"].update({"uid": "u", "resourceVersion": "4"})
    new = copy.deepcopy(old)
    new["series"] = {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"}
    assert [str(e) for e in validate_update("events.k8s.io", "v1", "Event", new, old, namespaced=True)] == []
    new["note"] = "other"
    new["regarding"] = {"kind": "Pod", "namespace": "default", "name": "q"}
    assert [str(e) for e in validate_update("events.k8s.io", "v1", "Event", new, old, namespaced=True)] == [
        'involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", Name:"q", UID:"", '
        'APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
        'message: Invalid value: "other": field is immutable',
    ]
