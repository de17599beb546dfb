"""Deployments, ReplicaSets, ControllerRevisions and Scale: defaults and validation."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.api.status import invalid_error
from kubeloop.server.admission import default_object, validate_create, validate_status_update, validate_update

PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
    "regex used for validation is '[0-9]+%')"
)


def deployment(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
        },
    }
    body.update(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def replica_set(**spec: Any) -> dict[str, Any]:
    obj = deployment(**spec)
    obj["kind"] = "ReplicaSet"
    return obj


def errors_of(kind: str, obj: dict[str, Any]) -> list[str]:
    default_object("apps", "v1", kind, obj)
    return [str(e) for e in validate_create("apps", "v1", kind, obj, namespaced=True)]


def test_deployment_defaults() -> None:
    obj = deployment()
    default_object("apps", "v1", "Deployment", obj)
    spec = obj["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert spec["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "enableServiceLinks" not in spec["template"]["spec"]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ({"type": "Recreate"}, {"type": "Recreate"}),
        (
            {"rollingUpdate": {"maxSurge": 0}},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "25%"}},
        ),
        (
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2, "maxSurge": "25%"}},
        ),
    ],
)
def test_strategy_defaults(strategy: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = deployment(strategy=strategy, replicas=0, revisionHistoryLimit=0, progressDeadlineSeconds=5)
    default_object("apps", "v1", "Deployment", obj)
    assert obj["spec"]["strategy"] == expected
    assert (obj["spec"]["replicas"], obj["spec"]["revisionHistoryLimit"], obj["spec"]["progressDeadlineSeconds"]) == (
        0,
        0,
        5,
    )


def test_replica_set_defaults() -> None:
    obj = replica_set()
    default_object("apps", "v1", "ReplicaSet", obj)
    assert obj["spec"]["replicas"] == 1
    assert "strategy" not in obj["spec"]


def test_defaulting_twice_changes_nothing() -> None:
    once = deployment()
    default_object("apps", "v1", "Deployment", once)
    twice = copy.deepcopy(once)
    default_object("apps", "v1", "Deployment", twice)
    assert once == twice


def test_valid_deployment_and_replica_set() -> None:
    assert errors_of("Deployment", deployment()) == []
    assert errors_of("ReplicaSet", replica_set()) == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"replicas": -1}, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
        ({"minReadySeconds": -1}, ["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"]),
        (
            {"revisionHistoryLimit": -1},
            ["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"minReadySeconds": 600},
            ["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
        ),
        (
            {"progressDeadlineSeconds": -5},
            [
                "spec.progressDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0",
                "spec.progressDeadlineSeconds: Invalid value: -5: must be greater than minReadySeconds",
            ],
        ),
        (
            {"selector": None},
            [
                "spec.selector: Required value",
                'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
                "`selector` does not match template `labels`",
            ],
        ),
        (
            {"selector": {}},
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
                "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
            ],
        ),
        (
            {"selector": {"matchLabels": {"app": "other"}}},
            [
                'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
                "`selector` does not match template `labels`",
            ],
        ),
        ({"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}}, []),
        (
            {"selector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}},
            [
                'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
                "`selector` does not match template `labels`",
            ],
        ),
        (
            {"selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}},
            [
                'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
                'MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", '
                'Operator:"Near", '
                "Values:[]string(nil)}}}: invalid label selector",
            ],
        ),
    ],
)
def test_deployment_spec_rules(spec: dict[str, Any], expected: list[str]) -> None:
    assert errors_of("Deployment", deployment(**spec)) == expected


def test_template_without_labels() -> None:
    obj = deployment()
    del obj["spec"]["template"]["metadata"]
    assert errors_of("Deployment", obj) == [
        "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match "
        "template `labels`"
    ]


def test_template_rules() -> None:
    obj = deployment()
    obj["spec"]["template"]["spec"].update(restartPolicy="OnFailure", activeDeadlineSeconds=10)
    assert errors_of("Deployment", obj) == [
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
    ]
    obj["spec"]["template"]["spec"] = {"containers": [{"name": "web"}], "restartPolicy": "Always"}
    assert errors_of("Deployment", obj) == ["spec.template.spec.containers[0].image: Required value"]


def test_upstream_kubectl_message_for_mismatched_labels() -> None:
    obj = deployment()
    obj["metadata"]["name"] = "x"
    obj["spec"]["template"]["metadata"]["labels"] = {"app": "b"}
    default_object("apps", "v1", "Deployment", obj)
    errors = validate_create("apps", "v1", "Deployment", obj, namespaced=True)
    assert invalid_error("Deployment", "apps", "x", errors).message == (
        'Deployment.apps "x" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"b"}: `selector` does not match template `labels`'
    )


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (
            {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}},
            ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
        ),
        (
            {"type": "BlueGreen"},
            [
                'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", '
                'RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"'
            ],
        ),
        (
            {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}},
            [
                'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, '
                'StrVal:""}: '
                "may not be 0 when `maxSurge` is 0"
            ],
        ),
        (
            {"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 0}},
            [
                'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, '
                'StrVal:""}: '
                "may not be 0 when `maxSurge` is 0"
            ],
        ),
        (
            {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "101%"}},
            [
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, "
                'StrVal:"101%"}: must not be greater than 100%'
            ],
        ),
        ({"rollingUpdate": {"maxSurge": "200%", "maxUnavailable": "100%"}}, []),
        (
            {"rollingUpdate": {"maxSurge": -1, "maxUnavailable": 1}},
            ["spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"rollingUpdate": {"maxSurge": "5", "maxUnavailable": "x%"}},
            [
                f"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, "
                f'StrVal:"x%"}}: {PERCENT_MSG}',
                f'spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, '
                f'StrVal:"5"}}: '
                f"{PERCENT_MSG}",
            ],
        ),
    ],
)
def test_strategy_rules(strategy: dict[str, Any], expected: list[str]) -> None:
    assert errors_of("Deployment", deployment(strategy=strategy)) == expected


def test_rollback_annotation() -> None:
    obj = deployment()
    obj["metadata"]["annotations"] = {"deprecated.deployment.rollback.to": "-1"}
    assert errors_of("Deployment", obj) == [
        "spec.rollback.version: Invalid value: -1: must be greater than or equal to 0"
    ]


def stored(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    default_object("apps", "v1", kind, obj)
    obj["metadata"].update(
        {"uid": "u", "resourceVersion": "7", "generation": 1, "creationTimestamp": "2024-01-01T00:00:00Z"}
    )
    return obj


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet"])
def test_selector_is_immutable(kind: str) -> None:
    old = stored(deployment() if kind == "Deployment" else replica_set(), kind)
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    errors = [str(e) for e in validate_update("apps", "v1", kind, new, old, namespaced=True)]
    assert errors == [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
    ]


def test_update_revalidates_the_spec() -> None:
    old = stored(deployment(), "Deployment")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = -3
    new["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    assert [str(e) for e in validate_update("apps", "v1", "Deployment", new, old, namespaced=True)] == [
        "spec.replicas: Invalid value: -3: must be greater than or equal to 0"
    ]


@pytest.mark.parametrize(
    ("status", "old_status", "expected"),
    [
        ({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 2}, {}, []),
        (
            {"replicas": -1},
            {},
            [
                "status.replicas: Invalid value: -1: must be greater than or equal to 0",
                # As upstream, the zero counters then also exceed the negative replica count.
                "status.updatedReplicas: Invalid value: 0: cannot be greater than status.replicas",
                "status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas",
            ],
        ),
        (
            {"replicas": 1, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2},
            {},
            [
                "status.updatedReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas",
            ],
        ),
        (
            {"replicas": 3, "readyReplicas": 1, "availableReplicas": 2},
            {},
            ["status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas"],
        ),
        (
            {"collisionCount": 1},
            {"collisionCount": 2},
            ["status.collisionCount: Invalid value: 1: cannot be decremented"],
        ),
        ({}, {"collisionCount": 2}, ["status.collisionCount: Invalid value: 0: cannot be decremented"]),
    ],
)
def test_deployment_status_rules(status: dict[str, Any], old_status: dict[str, Any], expected: list[str]) -> None:
    old = stored(deployment(), "Deployment")
    old["status"] = old_status
    new = copy.deepcopy(old)
    new["status"] = status
    assert [str(e) for e in validate_status_update("apps", "v1", "Deployment", new, old, namespaced=True)] == expected


def test_replica_set_status_rules() -> None:
    old = stored(replica_set(), "ReplicaSet")
    new = copy.deepcopy(old)
    new["status"] = {"replicas": 1, "fullyLabeledReplicas": 2, "readyReplicas": 1, "availableReplicas": 1}
    assert [str(e) for e in validate_status_update("apps", "v1", "ReplicaSet", new, old, namespaced=True)] == [
        "status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas"
    ]


def revision(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "web-1", "namespace": "default"},
        "data": {"a": 1},
        "revision": 1,
    }
    obj.update(fields)
    return {k: v for k, v in obj.items() if v is not None}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, []),
        ({"revision": 0}, []),
        ({"data": None}, ["data: Required value: data is mandatory"]),
        ({"revision": -1}, ["revision: Invalid value: -1: must be greater than or equal to 0"]),
    ],
)
def test_controller_revision_rules(fields: dict[str, Any], expected: list[str]) -> None:
    assert [
        str(e) for e in validate_create("apps", "v1", "ControllerRevision", revision(**fields), namespaced=True)
    ] == expected


def test_controller_revision_data_is_immutable() -> None:
    old = revision()
    old["metadata"].update({"uid": "u", "resourceVersion": "1"})
    new = copy.deepcopy(old)
    new["data"] = {}
    assert [str(e) for e in validate_update("apps", "v1", "ControllerRevision", new, old, namespaced=True)] == [
        "data: Invalid value: runtime.RawExtension{Raw:[]uint8{0x7b, 0x7d}, Object:runtime.Object(nil)}: "
        "field is immutable"
    ]


@pytest.mark.parametrize(
    ("replicas", "expected"),
    [(0, []), (5, []), (-1, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"])],
)
def test_scale_rules(replicas: int, expected: list[str]) -> None:
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "3"},
        "spec": {"replicas": replicas},
    }
    assert [str(e) for e in validate_update("autoscaling", "v1", "Scale", scale, scale, namespaced=True)] == expected
    assert [str(e) for e in validate_create("autoscaling", "v1", "Scale", scale, namespaced=True)] == expected


@pytest.mark.parametrize("junk", [None, 3, "x", [1], {"replicas": "two", "strategy": [], "template": 5}])
def test_wrong_types_in_spec_never_raise(junk: Any) -> None:
    obj = {"metadata": {"name": "w", "namespace": "default"}, "spec": junk}
    default_object("apps", "v1", "Deployment", obj)
    errors = validate_create("apps", "v1", "Deployment", obj, namespaced=True)
    assert errors
