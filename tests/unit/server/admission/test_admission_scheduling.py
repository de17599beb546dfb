"""PriorityClasses (reserved names, ranges, immutable value) and RuntimeClasses."""

from __future__ import annotations

from typing import Any

import pytest
from kinds_b_helpers import create, stored, update

from kubeloop.server.admission.scheduling import system_priority_classes

SCHED = "scheduling.k8s.io"


def test_preemption_policy_defaults_to_preempt_lower_priority() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "high"}, "value": 1000}
    assert create(SCHED, "PriorityClass", obj) == []
    assert obj["preemptionPolicy"] == "PreemptLowerPriority"
    kept: dict[str, Any] = {"metadata": {"name": "high"}, "value": 1, "preemptionPolicy": "Never"}
    assert create(SCHED, "PriorityClass", kept) == []
    assert kept["preemptionPolicy"] == "Never"


@pytest.mark.parametrize(
    ("name", "value", "extra", "expected"),
    [
        ("user", 1_000_000_000, {}, []),
        ("user", 1_000_000_001, {},
         ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]),
        ("system-mine", 5, {},
         ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
          "error: system-mine is not a known system priority class"]),
        ("system-node-critical", 5, {},
         ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
          "error: value of system-node-critical PriorityClass must be 2000001000"]),
        ("system-cluster-critical", 2_000_000_000, {"globalDefault": True},
         ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
          "error: globalDefault of system-cluster-critical PriorityClass must be false"]),
        ("system-cluster-critical", 2_000_000_000, {}, []),
        ("user", 1, {"preemptionPolicy": "Sometimes"},
         ['preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", "PreemptLowerPriority"']),
    ],
)
def test_priority_class_validation(name: str, value: int, extra: dict[str, Any], expected: list[str]) -> None:
    assert create(SCHED, "PriorityClass", {"metadata": {"name": name}, "value": value, **extra}) == expected


def test_system_priority_classes_are_valid_and_named_as_upstream() -> None:
    classes = system_priority_classes()
    assert {c["metadata"]["name"]: c["value"] for c in classes} == {
        "system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
    for body in classes:
        assert create(SCHED, "PriorityClass", body) == []


def test_priority_class_value_and_policy_are_immutable() -> None:
    old = stored(SCHED, "PriorityClass", {"metadata": {"name": "p"}, "value": 10})

    def revalue(new: dict[str, Any]) -> None:
        new["value"] = 11

    def repolicy(new: dict[str, Any]) -> None:
        new["preemptionPolicy"] = "Never"

    def describe(new: dict[str, Any]) -> None:
        new["description"] = "now described"

    assert update(SCHED, "PriorityClass", old, revalue) == ["value: Forbidden: may not be changed in an update."]
    assert update(SCHED, "PriorityClass", old, repolicy) == [
        'preemptionPolicy: Invalid value: "Never": field is immutable']
    assert update(SCHED, "PriorityClass", old, describe) == []


def test_runtime_class_handler_is_a_dns_label_and_immutable() -> None:
    assert create("node.k8s.io", "RuntimeClass", {"metadata": {"name": "gvisor"}, "handler": "Run_sc"}) == [
        'handler: Invalid value: "Run_sc": a lowercase RFC 1123 label must consist of lower case alphanumeric '
        "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]
    old = stored("node.k8s.io", "RuntimeClass", {"metadata": {"name": "gvisor"}, "handler": "runsc"})

    def rehandle(new: dict[str, Any]) -> None:
        new["handler"] = "kata"

    assert update("node.k8s.io", "RuntimeClass", old, rehandle) == [
        'handler: Invalid value: "kata": field is immutable']
