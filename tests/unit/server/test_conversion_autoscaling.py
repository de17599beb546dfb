"""HorizontalPodAutoscaler v1 <-> v2 conversion tables (upstream's pkg/apis/autoscaling/v1/conversion.go)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubeloop.server.conversion.autoscaling import (
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    METRIC_SPECS_ANNOTATION,
    METRIC_STATUSES_ANNOTATION,
    drop_round_trip_annotations,
    go_json,
    hpa_v1_to_v2,
    hpa_v2_to_v1,
)

Obj = dict[str, Any]

REF = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
SELECTOR = {"matchLabels": {"queue": "jobs"}}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}
MEMORY = {"type": "Resource",
          "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "500Mi"}}}
CONTAINER = {"type": "ContainerResource", "containerResource": {
    "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}, "container": "app"}}
PODS = {"type": "Pods", "pods": {"metric": {"name": "rps", "selector": SELECTOR},
                                 "target": {"type": "AverageValue", "averageValue": "10"}}}
OBJECT = {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "main",
                                                           "apiVersion": "networking.k8s.io/v1"},
                                       "target": {"type": "Value", "value": "2k"}, "metric": {"name": "hits"}}}
OBJECT_AVERAGE = {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "svc"},
                                               "target": {"type": "AverageValue", "value": "1", "averageValue": "3"},
                                               "metric": {"name": "hits", "selector": SELECTOR}}}
EXTERNAL = {"type": "External", "external": {"metric": {"name": "queue", "selector": SELECTOR},
                                             "target": {"type": "Value", "value": "30"}}}
EXTERNAL_AVERAGE = {"type": "External", "external": {"metric": {"name": "queue"},
                                                     "target": {"type": "AverageValue", "averageValue": "5"}}}
BEHAVIOR = {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                        "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                     {"type": "Percent", "value": 100, "periodSeconds": 15}]},
            "scaleDown": {"stabilizationWindowSeconds": 300,
                          "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}}
CURRENT_CPU = {"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "250m",
                                                                         "averageUtilization": 55}}}
CURRENT = [
    {"type": "Pods", "pods": {"metric": {"name": "rps"}, "current": {"averageValue": "9"}}},
    {"type": "Object", "object": {"metric": {"name": "hits"}, "current": {"value": "1500"},
                                  "describedObject": {"kind": "Ingress", "name": "main"}}},
    {"type": "External", "external": {"metric": {"name": "queue", "selector": SELECTOR},
                                      "current": {"value": "12", "averageValue": "4"}}},
    {"type": "ContainerResource", "containerResource": {"name": "cpu", "current": {
        "averageValue": "100m", "averageUtilization": 40}, "container": "app"}},
    CURRENT_CPU,
]
CONDITIONS = [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z",
               "reason": "SucceededRescale", "message": "the HPA controller was able to update the target scale"},
              {"type": "ScalingActive", "status": "False", "lastTransitionTime": "2025-01-01T00:00:10Z",
               "reason": "FailedGetResourceMetric"}]


def v2(metrics: list[Obj] | None = None, *, behavior: Obj | None = None, status: Obj | None = None,
       annotations: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": "web", "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    spec: Obj = {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 10}
    if metrics is not None:
        spec["metrics"] = metrics
    if behavior is not None:
        spec["behavior"] = behavior
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta, "spec": spec,
            "status": status if status is not None else {"desiredReplicas": 0}}


@pytest.mark.parametrize("obj", [
    pytest.param(v2([CPU]), id="cpu-only"),
    pytest.param(v2([MEMORY]), id="resource"),
    pytest.param(v2([CONTAINER, CPU]), id="container-resource"),
    pytest.param(v2([PODS]), id="pods"),
    pytest.param(v2([OBJECT, OBJECT_AVERAGE]), id="object"),
    pytest.param(v2([EXTERNAL, EXTERNAL_AVERAGE]), id="external"),
    pytest.param(v2([MEMORY, CONTAINER, PODS, OBJECT, EXTERNAL, CPU], behavior=BEHAVIOR), id="all-and-behavior"),
    pytest.param(v2([CPU], status={"currentReplicas": 3, "desiredReplicas": 4, "observedGeneration": 2,
                                   "lastScaleTime": "2025-01-01T00:00:00Z", "currentMetrics": CURRENT,
                                   "conditions": CONDITIONS}), id="status"),
    pytest.param(v2([CPU], annotations={"team": "a"}), id="other-annotations-kept"),
])
def test_v2_to_v1_to_v2_is_the_identity(obj: Obj) -> None:
    before = copy.deepcopy(obj)
    served = hpa_v2_to_v1(obj)
    assert obj == before, "conversion must not change its argument"
    assert served["apiVersion"] == "autoscaling/v1"
    assert "metrics" not in served["spec"] and "behavior" not in served["spec"]
    assert hpa_v1_to_v2(served) == obj


def _v1(spec: Obj, status: Obj, annotations: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": "web", "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": meta,
            "spec": {"scaleTargetRef": REF, "maxReplicas": 5, **spec}, "status": status}


@pytest.mark.parametrize("obj", [
    pytest.param(_v1({"targetCPUUtilizationPercentage": 50}, {"currentReplicas": 0, "desiredReplicas": 0}),
                 id="cpu"),
    pytest.param(_v1({"minReplicas": 2, "targetCPUUtilizationPercentage": 50},
                     {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 55},
                     {METRIC_STATUSES_ANNOTATION: go_json([{"type": "Resource", "resource": {
                         "name": "cpu", "currentAverageUtilization": 55, "currentAverageValue": "250m"}}])}),
                 id="cpu-status"),
    pytest.param(_v1({}, {"currentReplicas": 0, "desiredReplicas": 0},
                     {METRIC_SPECS_ANNOTATION: go_json([{"type": "Pods", "pods": {
                         "metricName": "rps", "targetAverageValue": "10"}}]), "team": "a"}),
                 id="pods-annotation"),
])
def test_v1_to_v2_to_v1_is_the_identity(obj: Obj) -> None:
    assert hpa_v2_to_v1(hpa_v1_to_v2(obj)) == obj


def test_cpu_utilization_is_the_v1_target_and_other_metrics_the_annotation() -> None:
    served = hpa_v2_to_v1(v2([PODS, CPU, EXTERNAL_AVERAGE]))
    assert served["spec"]["targetCPUUtilizationPercentage"] == 60
    annotations = served["metadata"]["annotations"]
    assert list(annotations) == [METRIC_SPECS_ANNOTATION]
    # v1's metric format, in Go's field order and encoding.
    assert annotations[METRIC_SPECS_ANNOTATION] == (
        '[{"type":"Pods","pods":{"metricName":"rps","targetAverageValue":"10",'
        '"selector":{"matchLabels":{"queue":"jobs"}}}},'
        '{"type":"External","external":{"metricName":"queue","targetAverageValue":"5"}}]')


@pytest.mark.parametrize(("metric", "v1_form"), [
    (MEMORY, {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "500Mi"}}),
    (CONTAINER, {"type": "ContainerResource", "containerResource": {
        "name": "cpu", "targetAverageUtilization": 70, "container": "app"}}),
    (OBJECT, {"type": "Object", "object": {"target": {"kind": "Ingress", "name": "main",
                                                      "apiVersion": "networking.k8s.io/v1"},
                                           "metricName": "hits", "targetValue": "2k"}}),
    (OBJECT_AVERAGE, {"type": "Object", "object": {"target": {"kind": "Service", "name": "svc"}, "metricName": "hits",
                                                   "targetValue": "1", "selector": SELECTOR, "averageValue": "3"}}),
    (EXTERNAL, {"type": "External", "external": {"metricName": "queue", "metricSelector": SELECTOR,
                                                 "targetValue": "30"}}),
])
def test_each_metric_type_in_v1_format(metric: Obj, v1_form: Obj) -> None:
    annotation = hpa_v2_to_v1(v2([metric]))["metadata"]["annotations"][METRIC_SPECS_ANNOTATION]
    assert annotation == json.dumps([v1_form], separators=(",", ":"))


def test_cpu_metric_goes_last_on_the_way_back() -> None:
    """Upstream appends the target CPU metric after the annotation's metrics."""
    back = hpa_v1_to_v2(hpa_v2_to_v1(v2([CPU, PODS])))
    assert back["spec"]["metrics"] == [PODS, CPU]


def test_status_goes_to_annotations_and_current_cpu() -> None:
    served = hpa_v2_to_v1(v2([CPU], status={"currentReplicas": 3, "desiredReplicas": 4, "currentMetrics": CURRENT,
                                            "conditions": CONDITIONS}))
    assert served["status"] == {"currentReplicas": 3, "desiredReplicas": 4, "currentCPUUtilizationPercentage": 55}
    annotations = served["metadata"]["annotations"]
    assert json.loads(annotations[METRIC_STATUSES_ANNOTATION])[-1] == {
        "type": "Resource", "resource": {"name": "cpu", "currentAverageUtilization": 55,
                                         "currentAverageValue": "250m"}}
    assert json.loads(annotations[CONDITIONS_ANNOTATION])[1] == {
        "type": "ScalingActive", "status": "False", "lastTransitionTime": "2025-01-01T00:00:10Z",
        "reason": "FailedGetResourceMetric"}


def test_behavior_annotation_is_the_internal_type_encoding() -> None:
    served = hpa_v2_to_v1(v2([CPU], behavior={"scaleDown": {"policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 60}]}}))
    assert served["metadata"]["annotations"][BEHAVIOR_ANNOTATION] == (
        '{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":null,'
        '"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}],"Tolerance":null}}')


def test_behavior_annotation_fields_match_case_insensitively() -> None:
    """``json.Unmarshal`` into the (untagged) internal struct ignores the case of field names."""
    back = hpa_v1_to_v2(_v1({}, {"currentReplicas": 0, "desiredReplicas": 0}, {
        BEHAVIOR_ANNOTATION: '{"scaleUp":{"stabilizationWindowSeconds":30,"selectPolicy":"Min"}}'}))
    assert back["spec"]["behavior"] == {"scaleUp": {"stabilizationWindowSeconds": 30, "selectPolicy": "Min"}}
    assert "annotations" not in back["metadata"]


def test_v1_without_target_gets_the_explicit_default_cpu_metric() -> None:
    back = hpa_v1_to_v2(_v1({}, {"currentReplicas": 0, "desiredReplicas": 0}))
    assert back["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]


def test_current_cpu_percentage_becomes_a_current_metric_unless_the_annotation_says_more() -> None:
    bare = hpa_v1_to_v2(_v1({"targetCPUUtilizationPercentage": 50},
                            {"currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 42}))
    assert bare["status"]["currentMetrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}}]
    annotated = hpa_v1_to_v2(_v1({"targetCPUUtilizationPercentage": 50},
                                 {"currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 42},
                                 {METRIC_STATUSES_ANNOTATION: go_json(
                                     [{"type": "Pods", "pods": {"metricName": "rps", "currentAverageValue": "3"}}])}))
    assert annotated["status"]["currentMetrics"] == [
        {"type": "Pods", "pods": {"metric": {"name": "rps"}, "current": {"averageValue": "3"}}}]


@pytest.mark.parametrize("raw", ["not json", '{"type":"Pods"}', '[{"type":7}]', '[{"type":"Pods","pods":[]}]'])
def test_malformed_metrics_annotation_is_ignored_and_dropped(raw: str) -> None:
    back = hpa_v1_to_v2(_v1({"targetCPUUtilizationPercentage": 50}, {"currentReplicas": 0, "desiredReplicas": 0},
                            {METRIC_SPECS_ANNOTATION: raw}))
    assert back["spec"]["metrics"] == [CPU | {"resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50}}}]
    assert "annotations" not in back["metadata"]


def test_stale_round_trip_annotations_are_replaced_by_converted_ones() -> None:
    stale = {METRIC_SPECS_ANNOTATION: "[]", CONDITIONS_ANNOTATION: "[]", "keep": "me"}
    served = hpa_v2_to_v1(v2([CPU], annotations=stale))
    assert served["metadata"]["annotations"] == {"keep": "me"}


def test_v2_drops_round_trip_annotations() -> None:
    obj = v2([CPU], annotations={METRIC_SPECS_ANNOTATION: "[]", BEHAVIOR_ANNOTATION: "{}"})
    assert "annotations" not in drop_round_trip_annotations(obj)["metadata"]
    assert obj["metadata"]["annotations"], "the argument is not changed"
    plain = v2([CPU])
    assert drop_round_trip_annotations(plain) is plain


def test_go_json_escapes_as_go() -> None:
    assert go_json({"a": "<&>", "b": "é"}) == '{"a":"\\u003c\\u0026\\u003e","b":"é"}'
