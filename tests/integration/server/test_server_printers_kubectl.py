"""kubectl get prints upstream's columns for kinds beyond workloads, against the embedded server.

Runs with the machine's kubectl and every JSON-speaking client found (1.27-1.31). Objects are
created over HTTP; the header line and a row are compared exactly, the AGE cell (seconds since
creation) by its form. Fields upstream defaults (a port's protocol, a CronJob's suspend) are
written out: this server does not default them yet.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from server_harness import Cluster

pytestmark = pytest.mark.e2e

SDK = "/usr/lib/google-cloud-sdk/bin/kubectl"
KUBECTLS = [path for path in ("/usr/bin/kubectl", *os.environ.get("KUBELOOP_KUBECTL", "").split(os.pathsep),
                              *(f"{SDK}.1.{minor}" for minor in range(27, 34)))
            if path and Path(path).exists()]
"""The machine's default kubectl (a dispatcher that picks a client by the server's version) and
1.27-1.33 (1.32+ send protobuf)."""
AGE = re.compile(r"^\d+s$")


def _create(cluster: Cluster, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    status, _, body = cluster.raw("POST", path, headers={"Content-Type": "application/json"},
                                  body=json.dumps(obj).encode())
    assert status == 201, body
    created: dict[str, Any] = json.loads(body)
    return created


def _get(kubectl: str, cluster: Cluster, tmp_path: Path, *args: str) -> list[list[str]]:
    done = subprocess.run([kubectl, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir",
                           str(tmp_path / "cache"), "get", *args], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, (args, done.stderr)
    return [re.split(r"\s{2,}", line.strip()) for line in done.stdout.strip().splitlines()]


def _without_age(row: list[str], index: int) -> list[str]:
    assert AGE.match(row[index]), row
    return row[:index] + row[index + 1:]


@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda path: Path(path).name)
def test_get_prints_upstream_columns(kubectl: str, cluster: Cluster, tmp_path: Path) -> None:
    service = _create(cluster, "/api/v1/namespaces/default/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"type": "NodePort", "selector": {"app": "web"},
                 "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30080, "protocol": "TCP"}]}})
    cluster_ip = service["spec"]["clusterIPs"][0] if service["spec"].get("clusterIPs") else "<none>"
    rows = _get(kubectl, cluster, tmp_path, "services", "web", "-o", "wide")
    assert rows[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert _without_age(rows[1], 5) == ["web", "NodePort", cluster_ip, "<none>", "80:30080/TCP", "app=web"]

    _create(cluster, "/apis/storage.k8s.io/v1/storageclasses", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "example.com/fast", "volumeBindingMode": "WaitForFirstConsumer"})
    rows = _get(kubectl, cluster, tmp_path, "sc")
    assert rows[0] == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]
    assert _without_age(rows[1], 5) == ["fast (default)", "example.com/fast", "Delete", "WaitForFirstConsumer",
                                        "false"]

    _create(cluster, "/apis/batch/v1/namespaces/default/cronjobs", {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "hello"},
        "spec": {"schedule": "*/5 * * * *", "suspend": False, "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "hello", "image": "busybox"}]}}}}}})
    rows = _get(kubectl, cluster, tmp_path, "cronjobs")
    assert rows[0] == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"]
    assert _without_age(rows[1], 6) == ["hello", "*/5 * * * *", "<none>", "False", "0", "<none>"]

    _create(cluster, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "readers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"},
                     {"kind": "ServiceAccount", "namespace": "default", "name": "bot"}]})
    rows = _get(kubectl, cluster, tmp_path, "rolebindings", "-o", "wide")
    assert rows[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert rows[1][:2] == ["readers", "ClusterRole/view"] and AGE.match(rows[1][2])
    assert rows[1][3:] == ["jane", "default/bot"]  # the empty GROUPS cell is only spaces

    rows = _get(kubectl, cluster, tmp_path, "componentstatuses")
    assert rows[0] == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    assert ["etcd-0", "Healthy", "ok"] in rows[1:]
