"""DaemonSets and StatefulSets: upstream's defaults and validation rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission import default_object, validate_create, validate_status_update, validate_update

TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": "x"}}, "template": copy.deepcopy(TEMPLATE)}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": "w", "namespace": "default", "resourceVersion": "1"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def created(kind: str, obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    default_object("apps", "v1", kind, obj)
    return obj, [str(e) for e in validate_create("apps", "v1", kind, obj, namespaced=True)]


def test_daemon_set_defaults() -> None:
    obj, errs = created("DaemonSet", workload("DaemonSet"))
    assert errs == []
    assert obj["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                             "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert obj["spec"]["revisionHistoryLimit"] == 10
    assert obj["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    on_delete, _ = created("DaemonSet", workload("DaemonSet", updateStrategy={"type": "OnDelete"}))
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_stateful_set_defaults() -> None:
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                   "resources": {"requests": {"storage": "1Gi"}}}}
    obj, errs = created("StatefulSet", workload("StatefulSet", volumeClaimTemplates=[claim]))
    assert errs == []
    spec = obj["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["podManagementPolicy"]) == (1, 10, "OrderedReady")
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"
    assert spec["volumeClaimTemplates"][0]["status"] == {"phase": "Pending"}
    # A RollingUpdate type given without rollingUpdate stays without it, as upstream.
    explicit, _ = created("StatefulSet", workload("StatefulSet", updateStrategy={"type": "RollingUpdate"}))
    assert explicit["spec"]["updateStrategy"] == {"type": "RollingUpdate"}


@pytest.mark.parametrize(("spec", "message"), [
    ({"selector": None},
     'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match '
     "template `labels`"),
    ({"selector": {}}, "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
     "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset"),
    ({"template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": TEMPLATE["spec"]["containers"],
                                                                "restartPolicy": "Never"}}},
     'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'),
    ({"template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": TEMPLATE["spec"]["containers"],
                                                                "activeDeadlineSeconds": 5}}},
     "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"),
    ({"minReadySeconds": -1}, "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
    ({"updateStrategy": {"type": "Sideways"}},
     'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sideways", '
     'RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"'),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}},
     "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}},
     'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: '
     "may not be set when maxUnavailable is non-zero"),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "150%"}}},
     'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
     'StrVal:"150%"}: must not be greater than 100%'),
])
def test_daemon_set_rules(spec: dict[str, Any], message: str) -> None:
    _, errs = created("DaemonSet", workload("DaemonSet", **spec))
    assert message in errs


@pytest.mark.parametrize(("spec", "message"), [
    ({"selector": None}, "spec.selector: Required value"),
    ({"selector": {}}, "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
     "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset"),
    ({"selector": {"matchLabels": {"app": "y"}}},
     'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match '
     "template `labels`"),
    ({"replicas": -1}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    ({"podManagementPolicy": "Random"},
     "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"),
    ({"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
     "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{...}: only allowed "
     "for updateStrategy 'RollingUpdate'"),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}},
     "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"),
    ({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep"}},
     'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: '
     '"Delete", "Retain"'),
    ({"template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": TEMPLATE["spec"]["containers"],
                                                                "activeDeadlineSeconds": 5}}},
     "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"),
])
def test_stateful_set_rules(spec: dict[str, Any], message: str) -> None:
    _, errs = created("StatefulSet", workload("StatefulSet", **spec))
    assert message in errs


def test_stateful_set_names_are_dns_labels() -> None:
    obj = workload("StatefulSet")
    obj["metadata"]["name"] = "db.primary"
    _, errs = created("StatefulSet", obj)
    assert any(e.startswith('metadata.name: Invalid value: "db.primary": a lowercase RFC 1123 label') for e in errs)
    obj = workload("DaemonSet")
    obj["metadata"]["name"] = "agent.v1"
    assert created("DaemonSet", obj)[1] == []


def _update(kind: str, change: Any, **spec: Any) -> list[str]:
    old, errs = created(kind, workload(kind, **spec))
    assert errs == []
    new = copy.deepcopy(old)
    change(new["spec"])
    default_object("apps", "v1", kind, new)
    return [str(e) for e in validate_update("apps", "v1", kind, new, old, namespaced=True)]


STS_FORBIDDEN = (
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
    "are forbidden")


@pytest.mark.parametrize(("change", "allowed"), [
    (lambda s: s.update(replicas=5, minReadySeconds=3, revisionHistoryLimit=2), True),
    (lambda s: s["template"]["spec"]["containers"][0].update(image="nginx"), True),
    (lambda s: s.update(updateStrategy={"type": "OnDelete"}), True),
    (lambda s: s.update(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Retain"}),
     True),
    (lambda s: s.update(serviceName="other"), False),
    (lambda s: s.update(podManagementPolicy="Parallel"), False),
    (lambda s: s.update(volumeClaimTemplates=[{"metadata": {"name": "d"}, "spec": {}}]), False),
])
def test_stateful_set_update_rules(change: Any, allowed: bool) -> None:
    errs = _update("StatefulSet", change)
    assert errs == ([] if allowed else [STS_FORBIDDEN])


def test_daemon_set_selector_is_immutable() -> None:
    def change(spec: dict[str, Any]) -> None:
        spec["selector"] = {"matchLabels": {"app": "x", "tier": "a"}}
        spec["template"]["metadata"]["labels"]["tier"] = "a"

    assert _update("DaemonSet", change) == [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x", "tier":"a"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]
    assert _update("DaemonSet", lambda s: s.update(minReadySeconds=5)) == []


@pytest.mark.parametrize(("kind", "status", "message"), [
    ("DaemonSet", {"numberReady": -1}, "status.numberReady: Invalid value: -1: must be greater than or equal to 0"),
    ("StatefulSet", {"replicas": 1, "readyReplicas": 2},
     "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"),
    ("StatefulSet", {"replicas": -1}, "status.replicas: Invalid value: -1: must be greater than or equal to 0"),
])
def test_status_rules(kind: str, status: dict[str, Any], message: str) -> None:
    old, _ = created(kind, workload(kind))
    new = copy.deepcopy(old)
    new["status"] = status
    errs = [str(e) for e in validate_status_update("apps", "v1", kind, new, old, namespaced=True)]
    assert message in errs
