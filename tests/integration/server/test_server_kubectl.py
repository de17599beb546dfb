"""kubectl against the embedded server: discovery, OpenAPI (apply), Tables (get), scale, delete.

Runs with every kubectl found on the machine (none found: no cases).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from server_harness import Cluster

KUBECTLS = sorted({path for path in ("/usr/bin/kubectl", "/usr/local/bin/kubectl", shutil.which("kubectl"),
                                      *os.environ.get("KUBELOOP_KUBECTL", "").split(os.pathsep))
                   if path and Path(path).exists()})

MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.19
"""


def _kubectl(binary: str, cluster: Cluster, tmp_path: Path, *args: str) -> str:
    done = subprocess.run([binary, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path / "cache"),
                           *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_workflow(cluster: Cluster, tmp_path: Path, binary: str) -> None:
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(MANIFEST)
    namespaces = _kubectl(binary, cluster, tmp_path, "get", "ns")
    assert namespaces.split("\n")[0].split() == ["NAME", "STATUS", "AGE"]
    assert "kube-system" in namespaces
    assert "created" in _kubectl(binary, cluster, tmp_path, "apply", "-f", str(manifest))
    assert "unchanged" in _kubectl(binary, cluster, tmp_path, "apply", "-f", str(manifest))
    table = _kubectl(binary, cluster, tmp_path, "get", "deploy")
    assert table.split("\n")[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert "scaled" in _kubectl(binary, cluster, tmp_path, "scale", "deploy/web", "--replicas=3")
    assert _kubectl(binary, cluster, tmp_path, "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}") == "3"
    assert "deleted" in _kubectl(binary, cluster, tmp_path, "delete", "deploy", "web")
    resources = _kubectl(binary, cluster, tmp_path, "api-resources")
    assert "clonesets" in resources and "deployments" in resources
