"""``kubectl create role|rolebinding|clusterrole|clusterrolebinding|priorityclass|ingress``.

With each kubectl from 1.27 to 1.33 found on the machine (1.32 and 1.33 send the objects as
protobuf), the objects are created, read back as JSON, and compared (all but metadata) with what
kube-apiserver 1.33 stores for the same commands.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from server_harness import Cluster

SDK = Path("/usr/lib/google-cloud-sdk/bin")
KUBECTLS = [str(SDK / f"kubectl.1.{minor}") for minor in range(27, 34) if (SDK / f"kubectl.1.{minor}").exists()]
RBAC = "rbac.authorization.k8s.io"

COMMANDS = [
    ["create", "role", "pod-reader", "--verb=get,list", "--resource=pods"],
    ["create", "rolebinding", "rb", "--role=pod-reader", "--user=alice", "--serviceaccount=default:sa"],
    ["create", "clusterrole", "cr", "--verb=get", "--non-resource-url=/logs/*"],
    ["create", "clusterrolebinding", "crb", "--clusterrole=cr", "--group=devs"],
    ["create", "priorityclass", "high", "--value=1000", "--description=hi"],
    ["create", "ingress", "web", "--rule=example.com/=svc:80"],
]

EXPECTED: dict[str, dict[str, Any]] = {
    "Role": {"apiVersion": f"{RBAC}/v1", "kind": "Role",
             "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]},
    "RoleBinding": {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
                    "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "pod-reader"},
                    "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "alice"},
                                 {"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]},
    "ClusterRole": {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
                    "rules": [{"nonResourceURLs": ["/logs/*"], "verbs": ["get"]}]},
    "ClusterRoleBinding": {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
                           "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cr"},
                           "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": "devs"}]},
    "PriorityClass": {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 1000,
                      "description": "hi", "preemptionPolicy": "PreemptLowerPriority"},
    "Ingress": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "spec": {"rules": [
        {"host": "example.com", "http": {"paths": [
            {"path": "/", "pathType": "Exact", "backend": {"service": {"name": "svc", "port": {"number": 80}}}}]}}]}},
}


def _kubectl(binary: str, cluster: Cluster, tmp_path: Path, *args: str) -> str:
    done = subprocess.run([binary, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path / "cache"),
                           *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.parametrize("binary", KUBECTLS, ids=[Path(k).name for k in KUBECTLS])
def test_kubectl_create_stores_upstream_defaults(cluster: Cluster, tmp_path: Path, binary: str) -> None:
    for command in COMMANDS:
        assert "created" in _kubectl(binary, cluster, tmp_path, *command)
    listed = orjson.loads(_kubectl(binary, cluster, tmp_path, "get", "role/pod-reader", "rolebinding/rb",
                                   "clusterrole/cr", "clusterrolebinding/crb", "priorityclass/high", "ingress/web",
                                   "-o", "json"))
    found = {item["kind"]: {k: v for k, v in item.items() if k not in ("metadata", "status")}
             for item in listed["items"]}
    assert found == EXPECTED


def test_kubectl_versions_are_present() -> None:
    # The case above must not silently run for no kubectl at all on the reference machine.
    assert len(KUBECTLS) == 7
