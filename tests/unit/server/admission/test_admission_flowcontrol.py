"""FlowSchemas and PriorityLevelConfigurations: defaults, rules, the mandatory objects."""

from __future__ import annotations

from typing import Any

import pytest
from kinds_b_helpers import create

from kubeloop.server.admission.flowcontrol import mandatory_objects

FC = "flowcontrol.apiserver.k8s.io"
RULES = [{"subjects": [{"kind": "Group", "group": {"name": "g"}}],
          "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]}]


def test_flow_schema_precedence_defaults_to_1000() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "f"}, "spec": {"priorityLevelConfiguration": {"name": "p"}}}
    assert create(FC, "FlowSchema", obj) == []
    assert obj["spec"]["matchingPrecedence"] == 1000


def test_priority_level_defaults() -> None:
    limited: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {"type": "Limited", "limited": {
        "limitResponse": {"type": "Queue", "queuing": {}}}}}
    assert create(FC, "PriorityLevelConfiguration", limited) == []
    assert limited["spec"]["limited"] == {"nominalConcurrencyShares": 30, "lendablePercent": 0, "limitResponse": {
        "type": "Queue", "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"matchingPrecedence": 10001, "priorityLevelConfiguration": {"name": "p"}, "rules": RULES},
         ["spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"]),
        ({"rules": RULES}, ["spec.priorityLevelConfiguration.name: Required value: must reference a priority level"]),
        ({"priorityLevelConfiguration": {"name": "p"}, "rules": [{"subjects": []}]},
         ["spec.rules[0].subjects: Required value: subjects must contain at least one value",
          "spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"]),
        ({"priorityLevelConfiguration": {"name": "p"}, "distinguisherMethod": {"type": "ByColor"}},
         ['spec.distinguisherMethod.type: Unsupported value: "ByColor": supported values: "ByNamespace", '
          '"ByUser"']),
    ],
)
def test_flow_schema_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert create(FC, "FlowSchema", {"metadata": {"name": "f"}, "spec": spec}) == expected


@pytest.mark.parametrize(
    ("name", "spec", "expected"),
    [
        ("p", {"type": "Exempt"}, ['spec.type: Invalid value: "Exempt": must be \'Exempt\' if and only if name is '
                                   "'exempt'"]),
        ("p", {"type": "Limited"}, ["spec.limited: Required value: must not be empty when type is Limited"]),
        ("p", {"type": "Limited", "limited": {"limitResponse": {"type": "Queue"}}},
         ["spec.limited.limitResponse.queuing: Required value: must not be empty if type is Queue"]),
        ("p", {"type": "Other"}, ['spec.type: Unsupported value: "Other": supported values: "Exempt", "Limited"']),
    ],
)
def test_priority_level_validation(name: str, spec: dict[str, Any], expected: list[str]) -> None:
    assert create(FC, "PriorityLevelConfiguration", {"metadata": {"name": name}, "spec": spec}) == expected


def test_mandatory_objects_are_valid() -> None:
    bodies = mandatory_objects()
    assert sorted((b["kind"], b["metadata"]["name"]) for b in bodies) == [
        ("FlowSchema", "catch-all"), ("FlowSchema", "exempt"),
        ("PriorityLevelConfiguration", "catch-all"), ("PriorityLevelConfiguration", "exempt")]
    for body in bodies:
        assert create(FC, body["kind"], body) == []
