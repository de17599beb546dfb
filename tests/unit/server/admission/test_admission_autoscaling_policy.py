"""HorizontalPodAutoscalers (autoscaling/v2) and PodDisruptionBudgets (policy/v1)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission import default_object, validate_create, validate_status_update, validate_update


def hpa(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                            "maxReplicas": 5}
    body.update(spec)
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "namespace": "default", "resourceVersion": "1"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def pdb(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}}}
    body.update(spec)
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "p", "namespace": "default", "resourceVersion": "1"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def created(group: str, kind: str, body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    version = "v2" if group == "autoscaling" else "v1"
    default_object(group, version, kind, body)
    return body, [str(e) for e in validate_create(group, version, kind, body, namespaced=True)]


def test_hpa_defaults() -> None:
    body, errs = created("autoscaling", "HorizontalPodAutoscaler", hpa())
    assert errs == []
    assert body["spec"]["minReplicas"] == 1
    assert body["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert "behavior" not in body["spec"]


def test_hpa_behavior_defaults_fill_unset_rules_only() -> None:
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    body, errs = created("autoscaling", "HorizontalPodAutoscaler", hpa(behavior=behavior))
    assert errs == []
    assert body["spec"]["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                 {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                      "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
    }


@pytest.mark.parametrize(("spec", "message"), [
    ({"minReplicas": 0}, "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"),
    ({"maxReplicas": 0}, "spec.maxReplicas: Invalid value: 0: must be greater than 0"),
    ({"minReplicas": 4, "maxReplicas": 2}, "spec.maxReplicas: Invalid value: 2: must be greater than or equal to "
     "`minReplicas`"),
    ({"scaleTargetRef": {"name": "web"}}, "spec.scaleTargetRef.kind: Required value"),
    ({"scaleTargetRef": {"kind": "Deployment", "name": "a/b"}},
     "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                              "averageUtilization": 0}}}]},
     "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}]},
     "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or "
     "a target utilization"),
    ({"metrics": [{"type": "Pods"}]},
     "spec.metrics[0].pods: Required value: must populate information for the given metric source"),
    ({"metrics": [{"type": "Magic"}]}, 'spec.metrics[0].type: Unsupported value: "Magic": supported values: '
     '"Object", "Pods", "Resource", "External", "ContainerResource"'),
    ({"behavior": {"scaleUp": {"stabilizationWindowSeconds": 4000}}},
     "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600"),
    ({"behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 15}]}}},
     "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero"),
])
def test_hpa_rules(spec: dict[str, Any], message: str) -> None:
    assert message in created("autoscaling", "HorizontalPodAutoscaler", hpa(**spec))[1]


def test_hpa_metrics_are_checked_only_with_a_valid_target() -> None:
    bad = hpa(scaleTargetRef={"name": "web"}, metrics=[{"type": "Magic"}])
    errs = created("autoscaling", "HorizontalPodAutoscaler", bad)[1]
    assert errs == ["spec.scaleTargetRef.kind: Required value"]


def test_hpa_update_and_status() -> None:
    old, _ = created("autoscaling", "HorizontalPodAutoscaler", hpa())
    new = copy.deepcopy(old)
    new["spec"]["maxReplicas"] = 0
    errs = [str(e) for e in validate_update("autoscaling", "v2", "HorizontalPodAutoscaler", new, old, namespaced=True)]
    assert "spec.maxReplicas: Invalid value: 0: must be greater than 0" in errs
    new = copy.deepcopy(old)
    new["status"] = {"desiredReplicas": -1}
    errs = [str(e) for e in validate_status_update("autoscaling", "v2", "HorizontalPodAutoscaler", new, old,
                                                   namespaced=True)]
    assert errs == ["status.desiredReplicas: Invalid value: -1: must be greater than or equal to 0"]


@pytest.mark.parametrize(("spec", "message"), [
    ({"minAvailable": 1, "maxUnavailable": 1},
     "spec: Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and maxUnavailable cannot be both set"),
    ({"minAvailable": -1}, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    ({"maxUnavailable": "120%"}, 'spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
     'StrVal:"120%"}: must not be greater than 100%'),
    ({"maxUnavailable": "half"}, 'spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, '
     "StrVal:\"half\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  "
     "or '93%', regex used for validation is '[0-9]+%')"),
    ({"unhealthyPodEvictionPolicy": "Never"}, 'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": '
     'supported values: "AlwaysAllow", "IfHealthyBudget"'),
    ({"selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}},
     'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'),
])
def test_pdb_rules(spec: dict[str, Any], message: str) -> None:
    assert message in created("policy", "PodDisruptionBudget", pdb(**spec))[1]


def test_pdb_spec_is_mutable_and_status_counters_nonnegative() -> None:
    old, errs = created("policy", "PodDisruptionBudget", pdb(minAvailable=1))
    assert errs == [] and set(old["spec"]) == {"selector", "minAvailable"}  # no API defaults
    new = copy.deepcopy(old)
    new["spec"] = {"selector": {"matchLabels": {"app": "other"}}, "maxUnavailable": "50%"}
    assert validate_update("policy", "v1", "PodDisruptionBudget", new, old, namespaced=True) == []
    new = copy.deepcopy(old)
    new["status"] = {"disruptionsAllowed": -1}
    errs2 = [str(e) for e in validate_status_update("policy", "v1", "PodDisruptionBudget", new, old,
                                                    namespaced=True)]
    assert errs2 == ["status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"]
