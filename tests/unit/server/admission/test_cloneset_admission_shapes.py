"""CloneSet admission never raises on a field of the wrong type (issue #18 item 3).

Every path of a full CloneSet is replaced, in turn, by a value of each JSON type, in the new
object and in the stored one; defaulting, create and update validation must return field errors
(or none), never raise. Before the fix ``spec: "x"`` and ``spec.updateStrategy: "x"`` raised
``AttributeError`` on update and ``podsToDelete: 5`` raised ``TypeError``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from kubeloop.api import kruise
from kubeloop.server.admission.cloneset import cloneset_rules

WRONG = ["x", 5, 1.5, True, [], [1], {}, {"a": 1}]


def full_cloneset() -> dict[str, Any]:
    return {
        "apiVersion": kruise.API_VERSION, "kind": "CloneSet",
        "metadata": {"name": "c", "namespace": "default", "uid": "u", "resourceVersion": "1",
                     "labels": {"a": "b"}, "generation": 1},
        "spec": {
            "replicas": 2, "minReadySeconds": 1, "progressDeadlineSeconds": 60, "revisionHistoryLimit": 3,
            "selector": {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "a", "operator": "In",
                                                                           "values": ["b"]}]},
            "template": {"metadata": {"labels": {"a": "b"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always"}},
            "volumeClaimTemplates": [{"metadata": {"name": "v"}, "spec": {"accessModes": ["ReadWriteOnce"]}}],
            "scaleStrategy": {"podsToDelete": ["p"], "maxUnavailable": 1},
            "updateStrategy": {"type": "InPlaceOnly", "partition": 1, "maxUnavailable": "20%", "maxSurge": 0,
                               "priorityStrategy": {"weightPriority": [{"weight": 1, "matchSelector": {
                                   "matchLabels": {"a": "b"}}}]},
                               "scatterStrategy": [{"key": "a", "value": "b"}],
                               "inPlaceUpdateStrategy": {"gracePeriodSeconds": 1}},
            "lifecycle": {"preDelete": {"finalizersHandler": ["f"]}},
        },
    }


def paths(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from paths(item, (*prefix, index))


def replaced(path: tuple[str | int, ...], wrong: Any) -> dict[str, Any]:
    obj = full_cloneset()
    parent: Any = obj
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = copy.deepcopy(wrong)
    return obj


CASES = [(path, wrong) for path in paths(full_cloneset())
         if path[:2] not in (("metadata", "name"), ("metadata", "namespace")) for wrong in WRONG]


@pytest.mark.parametrize(("path", "wrong"), CASES, ids=[f"{'.'.join(map(str, p))}={w!r}" for p, w in CASES])
def test_admission_answers_field_errors_for_any_shape(path: tuple[str | int, ...], wrong: Any) -> None:
    rules = cloneset_rules(lambda namespace, name: None)
    good = full_cloneset()
    bad = replaced(path, wrong)
    rules.default(bad, good)
    rules.create(bad)
    rules.update(bad, good)
    rules.update(good, bad)
    rules.status_update(bad, good)
