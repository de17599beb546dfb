"""Defaults and update rules of Jobs, CronJobs, DaemonSets, StatefulSets, RCs, PodTemplates,
LimitRanges, ResourceQuotas, PersistentVolumes, HPAs and PDBs over HTTP, and with kubectl.

Each minimal object is created with a POST and its stored ``spec`` (and status where the
strategy sets one) is compared with what kube-apiserver 1.33 returns for the same request;
then each immutability rule refuses one update with a 422. The expected objects were written
from upstream's defaulting functions and registry strategies (see the admission modules).
"""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from server_harness import Cluster

KUBECTLS = [f"/usr/lib/google-cloud-sdk/bin/kubectl.1.{minor}" for minor in range(27, 34)
            if Path(f"/usr/lib/google-cloud-sdk/bin/kubectl.1.{minor}").exists()]
JSON = {"Content-Type": "application/json"}
LABELS = {"app": "x"}
CONTAINER_IN = {"name": "c", "image": "busybox"}


def pod_spec_out(restart: str, name: str = "c") -> dict[str, Any]:
    """A defaulted pod spec as upstream stores it for one container without a tag."""
    return {"containers": [{"name": name, "image": "busybox", "imagePullPolicy": "Always", "resources": {},
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File"}],
            "dnsPolicy": "ClusterFirst", "restartPolicy": restart, "schedulerName": "default-scheduler",
            "securityContext": {}, "terminationGracePeriodSeconds": 30}


def template_in(restart: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [dict(CONTAINER_IN)]}
    if restart:
        spec["restartPolicy"] = restart
    return {"metadata": {"labels": dict(LABELS)}, "spec": spec}


def without_null_timestamps(value: Any) -> Any:
    """Templates' ``creationTimestamp: null`` is the codec's business, not defaulting's."""
    if isinstance(value, dict):
        return {k: without_null_timestamps(v) for k, v in value.items()
                if not (k == "creationTimestamp" and v is None)}
    if isinstance(value, list):
        return [without_null_timestamps(v) for v in value]
    return value


def post(cluster: Cluster, path: str, body: dict[str, Any]) -> dict[str, Any]:
    status, _, raw = cluster.raw("POST", path, headers=JSON, body=orjson.dumps(body))
    assert status == 201, raw
    created: dict[str, Any] = orjson.loads(raw)
    return created


def put(cluster: Cluster, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    status, _, raw = cluster.raw("PUT", path, headers=JSON, body=orjson.dumps(body))
    answer: dict[str, Any] = orjson.loads(raw)
    return status, answer


def get(cluster: Cluster, path: str) -> dict[str, Any]:
    status, _, raw = cluster.raw("GET", path)
    assert status == 200, raw
    found: dict[str, Any] = orjson.loads(raw)
    return found


NS = "/namespaces/default"
CASES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    (f"/apis/apps/v1{NS}/daemonsets", "ds",
     {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"selector": {"matchLabels": LABELS},
                                                            "template": template_in()}},
     {"spec": {"selector": {"matchLabels": LABELS}, "revisionHistoryLimit": 10,
               "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
               "template": {"metadata": {"labels": LABELS}, "spec": pod_spec_out("Always")}},
      "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                 "numberReady": 0}}),
    (f"/apis/apps/v1{NS}/statefulsets", "db",
     {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {
         "selector": {"matchLabels": LABELS}, "serviceName": "db", "template": template_in(),
         "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
             "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}},
     {"spec": {"selector": {"matchLabels": LABELS}, "serviceName": "db", "replicas": 1, "revisionHistoryLimit": 10,
               "podManagementPolicy": "OrderedReady",
               "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
               "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
               "template": {"metadata": {"labels": LABELS}, "spec": pod_spec_out("Always")},
               "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                   "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                   "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}]},
      "status": {"replicas": 0}}),
    (f"/apis/batch/v1{NS}/cronjobs", "tick",
     {"apiVersion": "batch/v1", "kind": "CronJob", "spec": {
         "schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template_in("OnFailure")}}}},
     {"spec": {"schedule": "*/5 * * * *", "concurrencyPolicy": "Allow", "suspend": False,
               "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
               "jobTemplate": {"spec": {"template": {"metadata": {"labels": LABELS},
                                                     "spec": pod_spec_out("OnFailure")}}}},
      "status": {}}),
    (f"/api/v1{NS}/replicationcontrollers", "rc",
     {"apiVersion": "v1", "kind": "ReplicationController", "spec": {"template": template_in()}},
     {"metadata": {"labels": LABELS},
      "spec": {"replicas": 1, "selector": LABELS,
               "template": {"metadata": {"labels": LABELS}, "spec": pod_spec_out("Always")}},
      "status": {"replicas": 0}}),
    (f"/api/v1{NS}/podtemplates", "pt",
     {"apiVersion": "v1", "kind": "PodTemplate", "template": template_in()},
     {"template": {"metadata": {"labels": LABELS}, "spec": pod_spec_out("Always")}}),
    (f"/api/v1{NS}/limitranges", "lr",
     {"apiVersion": "v1", "kind": "LimitRange", "spec": {"limits": [
         {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}]}},
     {"spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"},
                           "default": {"cpu": "2"}, "defaultRequest": {"cpu": "2", "memory": "64Mi"}}]}}),
    (f"/api/v1{NS}/resourcequotas", "rq",
     {"apiVersion": "v1", "kind": "ResourceQuota", "spec": {"hard": {"pods": "10", "requests.cpu": "1"}}},
     {"spec": {"hard": {"pods": "10", "requests.cpu": "1"}}, "status": {}}),
    ("/api/v1/persistentvolumes", "pv",
     {"apiVersion": "v1", "kind": "PersistentVolume", "spec": {
         "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/srv"}}},
     {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
               "hostPath": {"path": "/srv", "type": ""}, "persistentVolumeReclaimPolicy": "Retain",
               "volumeMode": "Filesystem"},
      "status": {"phase": "Pending"}}),
    (f"/apis/autoscaling/v2{NS}/horizontalpodautoscalers", "hpa",
     {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": {
         "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}},
     {"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3,
               "minReplicas": 1, "metrics": [{"type": "Resource", "resource": {
                   "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]},
      "status": {"desiredReplicas": 0}}),
    (f"/apis/policy/v1{NS}/poddisruptionbudgets", "pdb",
     {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "spec": {
         "minAvailable": 1, "selector": {"matchLabels": LABELS}}},
     {"spec": {"minAvailable": 1, "selector": {"matchLabels": LABELS}},
      "status": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}}),
]


@pytest.mark.parametrize(("path", "name", "body", "expected"), CASES, ids=[c[0].rsplit("/", 1)[1] for c in CASES])
def test_minimal_object_is_stored_with_upstream_defaults(cluster: Cluster, path: str, name: str,
                                                         body: dict[str, Any], expected: dict[str, Any]) -> None:
    sent = copy.deepcopy(body)
    sent["metadata"] = {"name": name}
    created = without_null_timestamps(post(cluster, path, sent))
    stored = without_null_timestamps(get(cluster, f"{path}/{name}"))
    for answer in (created, stored):
        for field_name, value in expected.items():
            if field_name == "metadata":
                assert {k: answer["metadata"].get(k) for k in value} == value
            elif field_name == "status" and "phase" in value:
                # A PersistentVolume's phase is stamped with its creation time.
                assert answer["status"] == {**value,
                                            "lastPhaseTransitionTime": answer["metadata"]["creationTimestamp"]}
            else:
                assert answer[field_name] == value, field_name


def test_job_gets_generated_selector_and_labels(cluster: Cluster) -> None:
    path = f"/apis/batch/v1{NS}/jobs"
    created = post(cluster, path, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
                                   "spec": {"template": {"spec": {"containers": [dict(CONTAINER_IN)],
                                                                  "restartPolicy": "Never"}}}})
    uid = created["metadata"]["uid"]
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
              "controller-uid": uid, "job-name": "pi"}
    expected = {"parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
                "suspend": False, "manualSelector": False, "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
                "template": {"metadata": {"labels": labels}, "spec": pod_spec_out("Never")}}
    stored = without_null_timestamps(get(cluster, f"{path}/pi"))
    for answer in (without_null_timestamps(created), stored):
        assert answer["spec"] == expected
        assert answer["metadata"]["labels"] == labels
        assert answer["status"] == {}


def _rejected(cluster: Cluster, path: str, change: Any) -> list[str]:
    current = get(cluster, path)
    change(current)
    status, answer = put(cluster, path, current)
    assert status == 422, answer
    assert answer["reason"] == "Invalid"
    return [f"{c['field']}: {c['message']}" for c in answer["details"]["causes"]]


def _job(cluster: Cluster, name: str, **spec: Any) -> str:
    path = f"/apis/batch/v1{NS}/jobs"
    post(cluster, path, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
                         "spec": {"template": {"spec": {"containers": [dict(CONTAINER_IN)], "restartPolicy": "Never"}},
                                  **spec}})
    return f"{path}/{name}"


@pytest.mark.parametrize(("change", "cause"), [
    (lambda j: j["spec"]["selector"]["matchLabels"].update(team="a"), "spec.selector: Invalid value: "),
    (lambda j: j["spec"]["template"]["spec"]["containers"][0].update(image="nginx"),
     "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"),
    (lambda j: j["spec"].update(completions=3), "spec.completions: Invalid value: 3: field is immutable"),
    (lambda j: j["spec"].update(completionMode="Indexed"),
     'spec.completionMode: Invalid value: "Indexed": field is immutable'),
    (lambda j: j["spec"].update(podFailurePolicy={"rules": []}), "spec.podFailurePolicy: Invalid value: "),
])
def test_job_immutable_fields(cluster: Cluster, change: Any, cause: str) -> None:
    causes = _rejected(cluster, _job(cluster, "pi"), change)
    assert any(c.startswith(cause) and c.endswith("field is immutable") for c in causes), causes


def test_job_mutable_fields_are_accepted(cluster: Cluster) -> None:
    path = _job(cluster, "pi")
    current = get(cluster, path)
    current["spec"].update(parallelism=2, activeDeadlineSeconds=100)
    status, answer = put(cluster, path, current)
    assert status == 200, answer
    assert answer["metadata"]["generation"] == 2


def test_daemon_set_selector_immutable_and_stateful_set_spec_frozen(cluster: Cluster) -> None:
    ds_path = f"/apis/apps/v1{NS}/daemonsets"
    post(cluster, ds_path, {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                            "spec": {"selector": {"matchLabels": LABELS}, "template": template_in()}})

    def reselect(ds: dict[str, Any]) -> None:
        ds["spec"]["selector"]["matchLabels"]["tier"] = "a"
        ds["spec"]["template"]["metadata"]["labels"]["tier"] = "a"

    assert _rejected(cluster, f"{ds_path}/agent", reselect) == [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x", "tier":"a"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]
    sts_path = f"/apis/apps/v1{NS}/statefulsets"
    post(cluster, sts_path, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                             "spec": {"selector": {"matchLabels": LABELS}, "serviceName": "db",
                                      "template": template_in()}})
    assert _rejected(cluster, f"{sts_path}/db", lambda s: s["spec"].update(serviceName="other")) == [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
        "are forbidden"]
    current = get(cluster, f"{sts_path}/db")
    current["spec"]["replicas"] = 3
    assert put(cluster, f"{sts_path}/db", current)[0] == 200


def test_persistent_volume_source_and_mode_immutable(cluster: Cluster) -> None:
    path = "/api/v1/persistentvolumes"
    post(cluster, path, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
                         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                  "hostPath": {"path": "/srv"}}})
    causes = _rejected(cluster, f"{path}/pv", lambda v: v["spec"]["hostPath"].update(path="/elsewhere"))
    assert len(causes) == 1
    assert causes[0].startswith("spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable "
                                "after creation")
    assert _rejected(cluster, f"{path}/pv", lambda v: v["spec"].update(volumeMode="Block")) == [
        'volumeMode: Invalid value: "Block": field is immutable']


def test_invalid_objects_are_refused_with_upstream_causes(cluster: Cluster) -> None:
    status, _, raw = cluster.raw("POST", f"/apis/batch/v1{NS}/cronjobs", headers=JSON, body=orjson.dumps({
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "bad"},
        "spec": {"schedule": "every minute", "jobTemplate": {"spec": {"template": template_in("Never")}}}}))
    assert status == 422
    answer = orjson.loads(raw)
    assert answer["message"] == ('CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "every minute": '
                                 "expected exactly 5 fields, found 2: [every minute]")


def _kubectl(binary: str, cluster: Cluster, tmp_path: Path, *args: str) -> str:
    done = subprocess.run([binary, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path / "cache"),
                           *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_create_stores_upstream_defaults(cluster: Cluster, tmp_path: Path, binary: str) -> None:
    _kubectl(binary, cluster, tmp_path, "create", "job", "pi", "--image=busybox")
    job = get(cluster, f"/apis/batch/v1{NS}/jobs/pi")
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert {k: job["spec"][k] for k in ("parallelism", "completions", "backoffLimit", "completionMode", "suspend",
                                        "manualSelector", "podReplacementPolicy")} == {
        "parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": False,
        "manualSelector": False, "podReplacementPolicy": "TerminatingOrFailed"}
    assert job["spec"]["template"]["spec"] == pod_spec_out("Never", name="pi")
    assert job["metadata"]["labels"]["job-name"] == "pi"

    _kubectl(binary, cluster, tmp_path, "create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *")
    cron = get(cluster, f"/apis/batch/v1{NS}/cronjobs/tick")
    assert {k: cron["spec"][k] for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit",
                                         "failedJobsHistoryLimit", "schedule")} == {
        "concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1, "schedule": "*/5 * * * *"}
    assert cron["spec"]["jobTemplate"]["spec"]["template"]["spec"] == pod_spec_out("OnFailure", name="tick")

    _kubectl(binary, cluster, tmp_path, "create", "quota", "q", "--hard=pods=2,requests.cpu=1")
    quota = get(cluster, f"/api/v1{NS}/resourcequotas/q")
    assert quota["spec"] == {"hard": {"pods": "2", "requests.cpu": "1"}}
    assert quota["status"] == {}

    _kubectl(binary, cluster, tmp_path, "create", "poddisruptionbudget", "budget", "--selector=app=x",
             "--min-available=1")
    budget = get(cluster, f"/apis/policy/v1{NS}/poddisruptionbudgets/budget")
    assert budget["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}
    assert budget["status"] == {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}


JOB_MANIFEST = """apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  template:
    spec:
      containers: [{name: c, image: busybox}]
      restartPolicy: Never
"""


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS[-1:])
def test_job_survives_server_side_apply_migration(cluster: Cluster, tmp_path: Path, binary: str) -> None:
    """The generated selector and labels belong to no field manager (upstream's field manager
    records the defaulted request, before the strategy), so moving from client-side to
    server-side apply, which re-applies without them, keeps them."""
    manifest = tmp_path / "job.yaml"
    manifest.write_text(JOB_MANIFEST)
    _kubectl(binary, cluster, tmp_path, "apply", "-f", str(manifest))
    created = get(cluster, f"/apis/batch/v1{NS}/jobs/pi")
    owned = orjson.dumps(created["metadata"]["managedFields"]).decode()
    assert "controller-uid" not in owned and "f:selector" not in owned
    assert "f:backoffLimit" in owned  # defaults are the request's
    done = subprocess.run([binary, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path / "cache"),
                           "apply", "--server-side", "-f", str(manifest)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0 and "failed to re-apply" not in done.stderr, done.stderr
    after = get(cluster, f"/apis/batch/v1{NS}/jobs/pi")
    assert after["spec"]["selector"] == created["spec"]["selector"]
    assert after["spec"]["template"]["metadata"]["labels"] == created["spec"]["template"]["metadata"]["labels"]
