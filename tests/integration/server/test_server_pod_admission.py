"""Pods created over HTTP come out as kube-apiserver 1.33 stores them: API defaults plus the
ServiceAccount, Priority and DefaultTolerationSeconds admission plugins."""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException
from server_harness import Cluster

NS = "default"
KUBECTL = Path("/usr/lib/google-cloud-sdk/bin/kubectl.1.31")
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def token_volume(name: str) -> dict[str, Any]:
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                    "path": "namespace"}]}},
    ]}}


TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]


def expected_spec(container_name: str, volume: str) -> dict[str, Any]:
    """The spec kube-apiserver 1.33 stores for a pod of one container running nginx:1.25."""
    return {
        "containers": [{
            "name": container_name, "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent", "resources": {},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "volumeMounts": [{"name": volume, "readOnly": True, "mountPath": TOKEN_PATH}],
        }],
        "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {},
        "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "tolerations": TOLERATIONS, "volumes": [token_volume(volume)],
    }


def create_raw(cluster: Cluster, body: dict[str, Any], namespace: str = NS) -> tuple[int, dict[str, Any]]:
    status, _, raw = cluster.raw("POST", f"/api/v1/namespaces/{namespace}/pods",
                                 headers={"Content-Type": "application/json"}, body=json.dumps(body).encode())
    result: dict[str, Any] = json.loads(raw)
    return status, result


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}], **spec}}


def volume_name(spec: dict[str, Any]) -> str:
    [volume] = [v["name"] for v in spec["volumes"] if v["name"].startswith("kube-api-access-")]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume), volume
    return str(volume)


def test_a_created_pod_is_stored_as_kube_apiserver_stores_it(cluster: Cluster) -> None:
    status, created = create_raw(cluster, pod("web"))
    assert status == 201, created
    spec = created["spec"]
    assert spec == expected_spec("app", volume_name(spec))
    _, _, raw = cluster.raw("GET", f"/api/v1/namespaces/{NS}/pods/web")
    assert json.loads(raw)["spec"] == spec


def test_two_pods_get_distinct_token_volumes(cluster: Cluster) -> None:
    names = {volume_name(create_raw(cluster, pod(f"p{i}"))[1]["spec"]) for i in range(3)}
    assert len(names) == 3


def test_a_service_account_that_turns_automount_off_is_honoured(cluster: Cluster) -> None:
    cluster.core.create_namespaced_service_account(NS, {
        "metadata": {"name": "quiet"}, "automountServiceAccountToken": False,
        "imagePullSecrets": [{"name": "registry"}]})
    _, quiet = create_raw(cluster, pod("quiet", serviceAccountName="quiet"))
    assert "volumes" not in quiet["spec"] and "volumeMounts" not in quiet["spec"]["containers"][0]
    assert quiet["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    assert (quiet["spec"]["serviceAccountName"], quiet["spec"]["serviceAccount"]) == ("quiet", "quiet")
    # The pod's own choice wins over the ServiceAccount's.
    _, loud = create_raw(cluster, pod("loud", serviceAccountName="quiet", automountServiceAccountToken=True))
    assert volume_name(loud["spec"])


def test_a_pod_whose_service_account_is_missing_is_refused(cluster: Cluster) -> None:
    status, refused = create_raw(cluster, pod("ghost", serviceAccountName="nobody"))
    assert (status, refused["message"]) == (403, 'pods "ghost" is forbidden: error looking up service account '
                                                 'default/nobody: serviceaccount "nobody" not found')


def test_an_invalid_deletion_cost_is_refused_as_kube_apiserver_refuses_it(cluster: Cluster) -> None:
    body = pod("costly")
    body["metadata"]["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": "+10"}
    status, refused = create_raw(cluster, body)
    field = "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]"
    assert (status, refused["reason"], refused["message"]) == (
        422, "Invalid", f'Pod "costly" is invalid: {field}: Invalid value: "+10": must be a 32bit integer')
    assert refused["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "+10": must be a 32bit integer', "field": field}]


def test_system_priority_classes_and_an_unknown_class(cluster: Cluster) -> None:
    _, node_critical = create_raw(cluster, pod("critical", priorityClassName="system-node-critical"))
    assert (node_critical["spec"]["priority"], node_critical["spec"]["preemptionPolicy"]) == (
        2000001000, "PreemptLowerPriority")
    _, cluster_critical = create_raw(cluster, pod("important", priorityClassName="system-cluster-critical"))
    assert cluster_critical["spec"]["priority"] == 2000000000
    status, refused = create_raw(cluster, pod("odd", priorityClassName="gold"))
    assert (status, refused["reason"], refused["message"]) == (
        403, "Forbidden", 'pods "odd" is forbidden: no PriorityClass with name gold was found')
    status, refused = create_raw(cluster, pod("pushy", priority=10))
    assert (status, refused["reason"]) == (403, "Forbidden")
    assert refused["message"] == ('pods "pushy" is forbidden: the integer value of priority (10) must not be provided '
                                  "in pod spec; priority admission controller computed 0 from the given PriorityClass "
                                  "name")


def test_updates_keep_admission_fields_that_the_request_leaves_out(cluster: Cluster) -> None:
    _, created = create_raw(cluster, pod("kept"))
    body = json.loads(json.dumps(created))
    for field_name in ("priority", "preemptionPolicy", "tolerations"):
        del body["spec"][field_name]
    body["metadata"]["labels"] = {"touched": "yes"}
    status, _, raw = cluster.raw("PUT", f"/api/v1/namespaces/{NS}/pods/kept",
                                 headers={"Content-Type": "application/json"}, body=json.dumps(body).encode())
    updated = json.loads(raw)
    assert status == 200, updated
    assert updated["metadata"]["labels"] == {"touched": "yes"}
    assert updated["spec"] == created["spec"]
    # Adding a toleration is allowed; the defaults stay after it.
    extra = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
    patched = cluster.core.patch_namespaced_pod("kept", NS, {"spec": {"tolerations": [extra]}})
    assert [t.key for t in patched.spec.tolerations] == [
        "gpu", "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]


def test_the_typed_client_sees_the_admitted_pod(cluster: Cluster) -> None:
    created = cluster.core.create_namespaced_pod(NS, pod("typed"))
    assert created.spec.service_account_name == "default" and created.spec.priority == 0
    [mount] = created.spec.containers[0].volume_mounts
    assert (mount.mount_path, mount.read_only) == (TOKEN_PATH, True)
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_pod(NS, pod("bad", priorityClassName="missing"))
    assert caught.value.status == 403


@pytest.mark.e2e
def test_kubectl_run_creates_the_same_pod(cluster: Cluster, tmp_path: Path) -> None:
    def kubectl(*args: str) -> str:
        done = subprocess.run([str(KUBECTL), "--kubeconfig", str(cluster.kubeconfig), "--cache-dir",
                               str(tmp_path / "cache"), *args], capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    kubectl("run", "cli", "--image=nginx:1.25", "--restart=Always")
    stored = json.loads(kubectl("get", "pod", "cli", "-o", "json"))
    assert stored["spec"] == expected_spec("cli", volume_name(stored["spec"]))


# ------------------------------------------------------------- Secret bytes read as Go reads them

CERT = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n" + bytes(range(256)) * 2 + b"\n-----END CERTIFICATE-----\n")


def wrapped(encoded: bytes) -> str:
    text = encoded.decode()
    return "\n".join(text[i:i + 68] for i in range(0, len(text), 68)) + "\n"


def test_a_tls_secret_wrapped_over_lines_is_stored_on_one_line(cluster: Cluster) -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
            "data": {"tls.crt": wrapped(CERT), "tls.key": wrapped(CERT)}}
    status, _, raw = cluster.raw("POST", f"/api/v1/namespaces/{NS}/secrets",
                                 headers={"Content-Type": "application/json"}, body=json.dumps(body).encode())
    assert status == 201, raw
    assert json.loads(raw)["data"] == {"tls.crt": CERT.decode(), "tls.key": CERT.decode()}
    assert cluster.core.read_namespaced_secret("tls", NS).data["tls.crt"] == CERT.decode()
    broken = {**body, "metadata": {"name": "broken"}, "data": {"tls.crt": "LS0t\nLS0t!", "tls.key": "LS0t"}}
    status, _, raw = cluster.raw("POST", f"/api/v1/namespaces/{NS}/secrets",
                                 headers={"Content-Type": "application/json"}, body=json.dumps(broken).encode())
    refused = json.loads(raw)
    assert (status, refused["reason"], refused["message"]) == (
        400, "BadRequest", 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 9')
    # A merge patch with a wrapped value is read the same way.
    patched = cluster.core.patch_namespaced_secret("tls", NS, {"data": {"extra": "aGVs\nbG8=\n"}})
    assert patched.data["extra"] == "aGVsbG8="


@pytest.mark.e2e
def test_kubectl_creates_the_documented_tls_secret(cluster: Cluster, tmp_path: Path) -> None:
    lines = "\n".join("    " + line for line in wrapped(CERT).splitlines())
    manifest = tmp_path / "tls.yaml"
    manifest.write_text("apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret-tls\ntype: kubernetes.io/tls\n"
                        f"data:\n  tls.crt: |\n{lines}\n  tls.key: |\n{lines}\n")
    base = [str(KUBECTL), "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path / "cache")]
    done = subprocess.run([*base, "create", "-f", str(manifest)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run([*base, "get", "secret", "secret-tls", "-o", "jsonpath={.data.tls\\.crt}"],
                           capture_output=True, text=True, timeout=120, check=True).stdout
    assert shown == CERT.decode()
