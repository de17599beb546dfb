"""HorizontalPodAutoscalers served at autoscaling/v2 (stored) and autoscaling/v1 (converted), over HTTP,
and kubectl autoscale with a v1 client (1.20) and v2 ones (1.31 in JSON, 1.33 in protobuf)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from server_harness import Cluster

from kubeloop.server.conversion.autoscaling import (
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    METRIC_SPECS_ANNOTATION,
    METRIC_STATUSES_ANNOTATION,
)

Obj = dict[str, Any]

V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
JSON = {"Content-Type": "application/json"}
REF = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}
PODS = {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}
EXTERNAL = {"type": "External", "external": {"metric": {"name": "queue"},
                                             "target": {"type": "Value", "value": "30"}}}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}


def _call(cluster: Cluster, method: str, path: str, body: Any = None, content_type: str = "application/json",
          expect: int = 200) -> Obj:
    status, _, raw = cluster.raw(method, path, headers={"Content-Type": content_type},
                                 body=None if body is None else json.dumps(body).encode())
    assert status == expect, (status, raw)
    result: Obj = json.loads(raw)
    return result


def _v1_hpa(name: str, cpu: int | None = 50, annotations: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5}
    if cpu is not None:
        spec["targetCPUUtilizationPercentage"] = cpu
    meta: Obj = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": meta, "spec": spec}


def test_discovery_lists_both_versions_with_v2_preferred(cluster: Cluster) -> None:
    group = _call(cluster, "GET", "/apis/autoscaling")
    assert group["preferredVersion"]["version"] == "v2"
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    resources = {r["name"]: r for r in _call(cluster, "GET", "/apis/autoscaling/v1")["resources"]}
    assert resources["horizontalpodautoscalers"]["shortNames"] == ["hpa"]
    assert resources["horizontalpodautoscalers"]["categories"] == ["all"]
    assert "horizontalpodautoscalers/status" in resources


def test_create_at_v1_read_at_v2_and_back(cluster: Cluster) -> None:
    created = _call(cluster, "POST", V1, _v1_hpa("web"), expect=201)
    assert created["apiVersion"] == "autoscaling/v1"
    assert created["spec"]["targetCPUUtilizationPercentage"] == 50
    assert created["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    at_v2 = _call(cluster, "GET", f"{V2}/web")
    assert at_v2["apiVersion"] == "autoscaling/v2"
    assert at_v2["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]
    assert "targetCPUUtilizationPercentage" not in at_v2["spec"]
    at_v1 = _call(cluster, "GET", f"{V1}/web")
    assert at_v1["spec"] == created["spec"]
    assert "annotations" not in at_v1["metadata"]
    listed = _call(cluster, "GET", V1)
    assert listed["apiVersion"] == "autoscaling/v1"
    assert [item["spec"].get("targetCPUUtilizationPercentage") for item in listed["items"]] == [50]


def test_create_at_v2_with_several_metrics_read_at_v1_with_annotations(cluster: Cluster) -> None:
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "multi"},
           "spec": {"scaleTargetRef": REF, "maxReplicas": 9, "metrics": [PODS, EXTERNAL, CPU],
                    "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}
    created = _call(cluster, "POST", V2, hpa, expect=201)
    # v2 defaulting fills the rest of the behavior (upstream's SetDefaults_HorizontalPodAutoscalerBehavior).
    assert created["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
    at_v1 = _call(cluster, "GET", f"{V1}/multi")
    assert at_v1["spec"]["targetCPUUtilizationPercentage"] == 60
    annotations = at_v1["metadata"]["annotations"]
    assert json.loads(annotations[METRIC_SPECS_ANNOTATION]) == [
        {"type": "Pods", "pods": {"metricName": "rps", "targetAverageValue": "10"}},
        {"type": "External", "external": {"metricName": "queue", "targetValue": "30"}}]
    assert json.loads(annotations[BEHAVIOR_ANNOTATION])["ScaleDown"]["StabilizationWindowSeconds"] == 60
    # Written back at v1 unchanged, the object is the same v2 object.
    _call(cluster, "PUT", f"{V1}/multi", at_v1)
    at_v2 = _call(cluster, "GET", f"{V2}/multi")
    assert at_v2["spec"]["metrics"] == [PODS, EXTERNAL, CPU]
    assert at_v2["spec"]["behavior"] == created["spec"]["behavior"]
    assert "annotations" not in at_v2["metadata"]


def test_status_written_at_v2_shows_at_v1_and_v1_status_writes_convert(cluster: Cluster) -> None:
    _call(cluster, "POST", V1, _v1_hpa("st"), expect=201)
    current = _call(cluster, "GET", f"{V2}/st")
    current["status"] = {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Resource",
         "resource": {"name": "cpu", "current": {"averageValue": "120m", "averageUtilization": 70}}}],
        "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z",
                        "reason": "ReadyForNewScale"}]}
    _call(cluster, "PUT", f"{V2}/st/status", current)
    at_v1 = _call(cluster, "GET", f"{V1}/st")
    assert at_v1["status"] == {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 70}
    assert json.loads(at_v1["metadata"]["annotations"][CONDITIONS_ANNOTATION])[0]["reason"] == "ReadyForNewScale"
    assert json.loads(at_v1["metadata"]["annotations"][METRIC_STATUSES_ANNOTATION])[0]["resource"][
        "currentAverageValue"] == "120m"
    at_v1["status"]["desiredReplicas"] = 4
    del at_v1["metadata"]["annotations"][CONDITIONS_ANNOTATION]
    _call(cluster, "PUT", f"{V1}/st/status", at_v1)
    at_v2 = _call(cluster, "GET", f"{V2}/st")
    assert at_v2["status"]["desiredReplicas"] == 4
    assert at_v2["status"]["currentMetrics"][0]["resource"]["current"] == {"averageValue": "120m",
                                                                          "averageUtilization": 70}
    assert "conditions" not in at_v2["status"]


@pytest.mark.parametrize("content_type", ["application/merge-patch+json", "application/strategic-merge-patch+json"])
def test_patch_at_v1_applies_to_the_v1_form(cluster: Cluster, content_type: str) -> None:
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "p"},
           "spec": {"scaleTargetRef": REF, "maxReplicas": 4, "metrics": [PODS, CPU]}}
    _call(cluster, "POST", V2, hpa, expect=201)
    patched = _call(cluster, "PATCH", f"{V1}/p", {"spec": {"targetCPUUtilizationPercentage": 35, "maxReplicas": 6}},
                    content_type=content_type)
    assert patched["apiVersion"] == "autoscaling/v1"
    assert patched["spec"]["targetCPUUtilizationPercentage"] == 35
    at_v2 = _call(cluster, "GET", f"{V2}/p")
    assert at_v2["spec"]["maxReplicas"] == 6
    assert at_v2["spec"]["metrics"] == [PODS, {"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 35}}}]


def test_json_patch_at_v1_sees_v1_paths(cluster: Cluster) -> None:
    _call(cluster, "POST", V1, _v1_hpa("jp"), expect=201)
    _call(cluster, "PATCH", f"{V1}/jp", [{"op": "replace", "path": "/spec/targetCPUUtilizationPercentage",
                                          "value": 90}], content_type="application/json-patch+json")
    at_v2 = _call(cluster, "GET", f"{V2}/jp")
    assert at_v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 90


def test_apply_at_v1_creates_and_updates_through_conversion(cluster: Cluster) -> None:
    body = _v1_hpa("ap", cpu=45)
    _call(cluster, "PATCH", f"{V1}/ap?fieldManager=test", body, content_type="application/apply-patch+yaml",
          expect=201)
    body["spec"]["targetCPUUtilizationPercentage"] = 65
    applied = _call(cluster, "PATCH", f"{V1}/ap?fieldManager=test", body,
                    content_type="application/apply-patch+yaml")
    assert applied["spec"]["targetCPUUtilizationPercentage"] == 65
    at_v2 = _call(cluster, "GET", f"{V2}/ap")
    assert at_v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 65


def test_apply_at_v1_keeps_the_metrics_v1_cannot_show(cluster: Cluster) -> None:
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "ap2"},
           "spec": {"scaleTargetRef": REF, "maxReplicas": 4, "metrics": [PODS, CPU]}}
    _call(cluster, "POST", V2, hpa, expect=201)
    config = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "ap2"},
              "spec": {"targetCPUUtilizationPercentage": 25}}
    _call(cluster, "PATCH", f"{V1}/ap2?fieldManager=test", config, content_type="application/apply-patch+yaml")
    at_v2 = _call(cluster, "GET", f"{V2}/ap2")
    assert at_v2["spec"]["metrics"] == [PODS, {"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 25}}}]


def test_watch_at_v1_sees_v1_objects(cluster: Cluster) -> None:
    start = _call(cluster, "GET", V1)["metadata"]["resourceVersion"]
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "w"},
           "spec": {"scaleTargetRef": REF, "maxReplicas": 4, "metrics": [PODS, CPU]}}
    _call(cluster, "POST", V2, hpa, expect=201)
    status, _, raw = cluster.raw("GET", f"{V1}?watch=1&resourceVersion={start}&timeoutSeconds=1")
    assert status == 200
    events = [json.loads(line) for line in raw.splitlines() if line.strip()]
    assert [e["type"] for e in events] == ["ADDED"]
    obj = events[0]["object"]
    assert obj["apiVersion"] == "autoscaling/v1"
    assert obj["spec"]["targetCPUUtilizationPercentage"] == 60
    assert METRIC_SPECS_ANNOTATION in obj["metadata"]["annotations"]


def test_table_at_v1_prints_targets_from_the_stored_metrics(cluster: Cluster) -> None:
    _call(cluster, "POST", V1, _v1_hpa("tb", cpu=40), expect=201)
    status, _, raw = cluster.raw("GET", f"{V1}/tb?includeObject=Object",
                                 headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert status == 200
    table = json.loads(raw)
    names = [c["name"] for c in table["columnDefinitions"]]
    row = dict(zip(names, table["rows"][0]["cells"], strict=True))
    assert row["Targets"] == "cpu: <unknown>/40%"
    assert table["rows"][0]["object"]["apiVersion"] == "autoscaling/v1"
    assert table["rows"][0]["object"]["spec"]["targetCPUUtilizationPercentage"] == 40


def test_v2_writes_drop_v1_round_trip_annotations(cluster: Cluster) -> None:
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "an", "annotations": {METRIC_SPECS_ANNOTATION: "[]", "team": "a"}},
           "spec": {"scaleTargetRef": REF, "maxReplicas": 4, "metrics": [CPU]}}
    created = _call(cluster, "POST", V2, hpa, expect=201)
    assert created["metadata"]["annotations"] == {"team": "a"}


KUBECTL_1_20 = next((p for p in ("/work/main/.tools/kubernetes-client/usr/bin/kubectl", "/usr/bin/kubectl")
                     if Path(p).exists() and "v1.20" in subprocess.run([p, "version", "--client", "--short"],
                                                                      capture_output=True, text=True).stdout), None)
KUBECTL_1_31 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.31"
KUBECTL_1_33 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"


def _kubectl(binary: str, cluster: Cluster, tmp_path: Path, *args: str) -> str:
    done = subprocess.run([binary, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path / "cache"),
                           *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}


@pytest.mark.e2e
@pytest.mark.parametrize("binary", [KUBECTL_1_20, KUBECTL_1_31, KUBECTL_1_33],
                         ids=["kubectl-1.20", "kubectl-1.31", "kubectl-1.33"])
def test_kubectl_autoscale(cluster: Cluster, tmp_path: Path, binary: str | None) -> None:
    assert binary is not None and Path(binary).exists(), "the kubectl binary is installed"
    _call(cluster, "POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOYMENT, expect=201)
    out = _kubectl(binary, cluster, tmp_path, "autoscale", "deployment", "web", "--min=2", "--max=7",
                   "--cpu-percent=65")
    assert "autoscaled" in out
    at_v2 = _call(cluster, "GET", f"{V2}/web")
    assert at_v2["spec"]["minReplicas"] == 2 and at_v2["spec"]["maxReplicas"] == 7
    assert at_v2["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 65}}}]
    assert _kubectl(binary, cluster, tmp_path, "get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o",
                    "jsonpath={.spec.targetCPUUtilizationPercentage}") == "65"
    table = _kubectl(binary, cluster, tmp_path, "get", "hpa")
    assert "Deployment/web" in table and "/65%" in table
