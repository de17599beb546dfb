"""ReplicationControllers, PodTemplates, LimitRanges, ResourceQuotas, PersistentVolumes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission import default_object, validate_create, validate_status_update, validate_update

CONTAINERS = [{"name": "c", "image": "busybox"}]


def obj(kind: str, namespaced: bool = True, **fields: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "o", "resourceVersion": "1"}
    if namespaced:
        meta["namespace"] = "default"
    return {"apiVersion": "v1", "kind": kind, "metadata": meta, **fields}


def created(kind: str, body: dict[str, Any], namespaced: bool = True) -> tuple[dict[str, Any], list[str]]:
    default_object("", "v1", kind, body)
    return body, [str(e) for e in validate_create("", "v1", kind, body, namespaced=namespaced)]


def updated(kind: str, old: dict[str, Any], change: Any, namespaced: bool = True) -> list[str]:
    new = copy.deepcopy(old)
    change(new)
    default_object("", "v1", kind, new)
    return [str(e) for e in validate_update("", "v1", kind, new, old, namespaced=namespaced)]


def rc(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": CONTAINERS}}}
    body.update(spec)
    return obj("ReplicationController", spec={k: v for k, v in body.items() if v is not None})


def test_replication_controller_defaults() -> None:
    body, errs = created("ReplicationController", rc())
    assert errs == []
    assert body["spec"]["selector"] == {"app": "x"}
    assert body["metadata"]["labels"] == {"app": "x"}
    assert body["spec"]["replicas"] == 1
    assert body["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    labelled = rc(selector={"app": "x"})
    labelled["metadata"]["labels"] = {"own": "y"}
    body, _ = created("ReplicationController", labelled)
    assert body["metadata"]["labels"] == {"own": "y"}


@pytest.mark.parametrize(("spec", "message"), [
    ({"template": None}, "spec.selector: Required value"),
    ({"template": None, "selector": {"app": "x"}}, "spec.template: Required value"),
    ({"selector": {"app": "y"}},
     'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match '
     "template `labels`"),
    ({"replicas": -1}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    ({"template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": CONTAINERS,
                                                                "restartPolicy": "OnFailure"}}},
     'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'),
    ({"template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": CONTAINERS,
                                                                "activeDeadlineSeconds": 3}}},
     "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not "
     "Supported"),
])
def test_replication_controller_rules(spec: dict[str, Any], message: str) -> None:
    assert message in created("ReplicationController", rc(**spec))[1]


def test_replication_controller_status() -> None:
    old, _ = created("ReplicationController", rc())
    new = copy.deepcopy(old)
    new["status"] = {"replicas": 1, "readyReplicas": 2}
    errs = [str(e) for e in validate_status_update("", "v1", "ReplicationController", new, old, namespaced=True)]
    assert errs == ["status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"]


def test_pod_template_defaults_and_rules() -> None:
    body, errs = created("PodTemplate", obj("PodTemplate", template={"spec": {"containers": CONTAINERS}}))
    assert errs == []
    assert body["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    _, errs = created("PodTemplate", obj("PodTemplate", template={"spec": {}}))
    assert "template.spec.containers: Required value" in errs
    assert updated("PodTemplate", body, lambda b: b["template"]["spec"].update(containers=[])) == [
        "template.spec.containers: Required value"]


def test_limit_range_defaults() -> None:
    item = {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}, "default": {"memory": "1Gi"}}
    body, errs = created("LimitRange", obj("LimitRange", spec={"limits": [item, {"type": "Pod", "max": {"cpu": "4"}}]}))
    assert errs == []
    container, pod = body["spec"]["limits"]
    assert container["default"] == {"memory": "1Gi", "cpu": "2"}
    assert container["defaultRequest"] == {"memory": "1Gi", "cpu": "2"}
    assert "default" not in pod and "defaultRequest" not in pod


@pytest.mark.parametrize(("item", "message"), [
    ({"type": "Node"}, 'spec.limits[0].type: Invalid value: "Node": must be a standard limit type or fully qualified'),
    ({"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
     'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1'),
    ({"type": "Container", "max": {"cpu": "1"}, "default": {"cpu": "2"}},
     'spec.limits[0].default[cpu]: Invalid value: "1": default value 2 is greater than max value 1'),
    ({"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}},
     'spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request value 2 is greater than default '
     "limit value 1"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}},
     'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1'),
    ({"type": "Pod", "default": {"cpu": "1"}},
     "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"),
    ({"type": "PersistentVolumeClaim"},
     "spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was "
     "provided"),
    ({"type": "Container", "max": {"gpu": "1"}},
     'spec.limits[0].max[gpu]: Invalid value: "gpu": must be a standard resource for containers'),
])
def test_limit_range_rules(item: dict[str, Any], message: str) -> None:
    assert message in created("LimitRange", obj("LimitRange", spec={"limits": [item]}))[1]


def test_limit_range_duplicate_types() -> None:
    limits = [{"type": "Container"}, {"type": "Container"}]
    assert 'spec.limits[1].type: Duplicate value: "Container"' in created(
        "LimitRange", obj("LimitRange", spec={"limits": limits}))[1]


@pytest.mark.parametrize(("spec", "message"), [
    ({"hard": {"pods": "-1"}}, 'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0'),
    ({"hard": {"pods": "1500m"}}, 'spec.hard[pods]: Invalid value: "1500m": must be an integer'),
    ({"hard": {"widgets": "1"}}, 'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota'),
    ({"hard": {"cpu": "lots"}}, "spec.hard[cpu]: Invalid value: \"lots\": quantities must match the regular "
     "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ({"scopes": ["Sometimes"]}, 'spec.scopes: Invalid value: []string{"Sometimes"}: unsupported scope'),
])
def test_resource_quota_rules(spec: dict[str, Any], message: str) -> None:
    assert message in created("ResourceQuota", obj("ResourceQuota", spec=spec))[1]


def test_resource_quota_accepts_extended_and_count_names() -> None:
    hard = {"pods": "10", "requests.cpu": "1", "count/deployments.apps": "2", "requests.nvidia.com/gpu": "1"}
    assert created("ResourceQuota", obj("ResourceQuota", spec={"hard": hard}))[1] == []


def test_resource_quota_status() -> None:
    old, _ = created("ResourceQuota", obj("ResourceQuota", spec={"hard": {"pods": "1"}}))
    new = copy.deepcopy(old)
    new["status"] = {"hard": {"pods": "1"}, "used": {"pods": "-1"}}
    errs = [str(e) for e in validate_status_update("", "v1", "ResourceQuota", new, old, namespaced=True)]
    assert errs == ['status.used[pods]: Invalid value: "-1": must be greater than or equal to 0']


def pv(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": "/data"}}
    body.update(spec)
    return obj("PersistentVolume", namespaced=False, spec={k: v for k, v in body.items() if v is not None})


def test_persistent_volume_defaults() -> None:
    body = pv()
    body["metadata"]["creationTimestamp"] = "2025-01-02T03:04:05Z"
    body["status"] = {"phase": "Bound"}  # a new volume starts Pending, whatever it was sent with
    body, errs = created("PersistentVolume", body, namespaced=False)
    assert errs == []
    assert body["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert body["spec"]["volumeMode"] == "Filesystem"
    assert body["spec"]["hostPath"] == {"path": "/data", "type": ""}
    assert body["status"] == {"phase": "Pending", "lastPhaseTransitionTime": "2025-01-02T03:04:05Z"}


@pytest.mark.parametrize(("spec", "message"), [
    ({"accessModes": None}, "spec.accessModes: Required value"),
    ({"accessModes": ["ReadSometimes"]}, 'spec.accessModes: Unsupported value: "ReadSometimes": supported values: '
     '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'),
    ({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]},
     "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"),
    ({"capacity": None}, "spec.capacity: Required value"),
    ({"capacity": {"storage": "0"}}, 'spec.capacity[storage]: Invalid value: "0": must be greater than zero'),
    ({"hostPath": None}, "spec: Required value: must specify a volume type"),
    ({"nfs": {"server": "s", "path": "/"}}, "spec.nfs: Forbidden: may not specify more than 1 volume type"),
    ({"persistentVolumeReclaimPolicy": "Keep"}, 'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": '
     'supported values: "Delete", "Recycle", "Retain"'),
    ({"hostPath": {"path": "/"}, "persistentVolumeReclaimPolicy": "Recycle"},
     "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"),
])
def test_persistent_volume_rules(spec: dict[str, Any], message: str) -> None:
    assert message in created("PersistentVolume", pv(**spec), namespaced=False)[1]


def test_persistent_volume_source_and_mode_are_immutable() -> None:
    old, _ = created("PersistentVolume", pv(), namespaced=False)
    errs = updated("PersistentVolume", old, lambda b: b["spec"]["hostPath"].update(path="/other"), namespaced=False)
    assert len(errs) == 1
    assert errs[0].startswith("spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable "
                              "after creation\n")
    assert '"/other"' in errs[0]
    assert updated("PersistentVolume", old, lambda b: b["spec"].update(volumeMode="Block"), namespaced=False) == [
        'volumeMode: Invalid value: "Block": field is immutable']
    assert updated("PersistentVolume", old, lambda b: b["spec"].update(capacity={"storage": "2Gi"}),
                   namespaced=False) == []
