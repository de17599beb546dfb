"""Admission of the newly served kinds never raises, whatever JSON reaches it.

Each case starts from a valid object of the kind and puts an arbitrary JSON value at one of
its paths (or at a new key under it): every rule must turn a wrong type into field errors.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.server.admission import default_object, validate_create, validate_status_update, validate_update

TEMPLATE = {"metadata": {"labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}
SELECTOR = {"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}
BASES: list[tuple[str, str, dict[str, Any]]] = [
    ("batch", "Job", {"spec": {"template": TEMPLATE, "podFailurePolicy": {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "X"}]}]}}}),
    ("batch", "CronJob", {"spec": {"schedule": "* * * * *", "timeZone": "UTC",
                                   "jobTemplate": {"spec": {"template": TEMPLATE}}}}),
    ("apps", "DaemonSet", {"spec": {"selector": SELECTOR, "template": TEMPLATE,
                                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}),
    ("apps", "StatefulSet", {"spec": {"selector": SELECTOR, "template": TEMPLATE, "ordinals": {"start": 1},
                                      "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
                                      "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                                          "partition": 1, "maxUnavailable": "10%"}},
                                      "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": {}}]}}),
    ("", "ReplicationController", {"spec": {"selector": {"app": "x"}, "template": TEMPLATE}}),
    ("", "PodTemplate", {"template": TEMPLATE}),
    ("", "LimitRange", {"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "1m"},
                                             "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"},
                                             "maxLimitRequestRatio": {"cpu": "2"}}]}}),
    ("", "ResourceQuota", {"spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"], "scopeSelector": {
        "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["a"]}]}},
        "status": {"hard": {"pods": "1"}, "used": {"pods": "0"}}}),
    ("", "PersistentVolume", {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                       "hostPath": {"path": "/x"}, "claimRef": {"name": "c"},
                                       "local": {"path": "/y"}, "nodeAffinity": {}}}),
    ("autoscaling", "HorizontalPodAutoscaler", {"spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 2,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                             "averageUtilization": 50}}},
                    {"type": "Object", "object": {"metric": {"name": "m"}, "describedObject": {"kind": "K",
                                                                                              "name": "n"},
                                                  "target": {"type": "Value", "value": "1"}}}],
        "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 1}]}}}}),
    ("policy", "PodDisruptionBudget", {"spec": {"minAvailable": "50%", "selector": SELECTOR,
                                                "unhealthyPodEvictionPolicy": "AlwaysAllow"}}),
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for name, item in value.items():
            found.extend(_paths(item, (*prefix, name)))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            found.extend(_paths(item, (*prefix, position)))
    return found


def _put(obj: dict[str, Any], path: tuple[Any, ...], value: Any, new_key: str | None) -> dict[str, Any]:
    if not path:
        return value if isinstance(value, dict) else {"spec": value}
    target: Any = obj
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    if new_key is not None and isinstance(target[path[-1]], dict):
        target[path[-1]][new_key] = copy.deepcopy(value)
    return obj


@settings(max_examples=600, deadline=None)
@given(case=st.integers(0, len(BASES) - 1), data=st.data(), value=json_values,
       new_key=st.none() | st.sampled_from(["spec", "template", "selector", "status", "metadata", "labels"]),
       old_value=json_values)
def test_new_kinds_never_raise(case: int, data: st.DataObject, value: Any, new_key: str | None,
                               old_value: Any) -> None:
    group, kind, base = BASES[case]
    version = "v2" if group == "autoscaling" else "v1"
    body = copy.deepcopy(base)
    body["metadata"] = {"name": "n", "namespace": "default", "uid": "u", "resourceVersion": "1"}
    obj = _put(body, data.draw(st.sampled_from(_paths(body))), value, new_key)
    old = _put(copy.deepcopy(base), data.draw(st.sampled_from(_paths(base))), old_value, None)
    default_object(group, version, kind, obj)
    for errors in (
        validate_create(group, version, kind, obj, namespaced=True),
        validate_update(group, version, kind, obj, old, namespaced=True),
        validate_status_update(group, version, kind, obj, old, namespaced=True),
    ):
        assert all(isinstance(e.field, str) and e.body() for e in errors)
