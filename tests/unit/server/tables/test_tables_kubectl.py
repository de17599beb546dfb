"""kubectl get prints our Tables as it prints a real cluster's (kubectl 1.20 and any newer found)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.unit.server.openapi.kubectl_harness import FakeApiServer, Kubectl, find_kubectls, run_kubectl

pytestmark = pytest.mark.e2e

KUBECTLS = find_kubectls()
NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def _created(minutes: int) -> str:
    return (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _meta(name: str, minutes: int, namespace: str = "default", **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "7",
            "creationTimestamp": _created(minutes), **extra}


OBJECTS: dict[tuple[str, str, str], list[dict[str, Any]]] = {
    ("apps", "v1", "deployments"): [{
        "metadata": _meta("web", 5, labels={"tier": "front"}),
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.21"}]}}},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }],
    ("", "v1", "pods"): [{
        "metadata": _meta("web-1", 192),
        "spec": {"nodeName": "node-1", "containers": [{"name": "app"}, {"name": "side"}]},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.9"}], "containerStatuses": [
            {"name": "app", "ready": True, "restartCount": 2, "state": {"running": {}}},
            {"name": "side", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
        ]},
    }],
    ("apps.kruise.io", "v1alpha1", "clonesets"): [{
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": _meta("sample", 60 * 50, namespace="apps"),
        "spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "main", "image": "nginx:alpine"}]}}},
        "status": {"replicas": 4, "readyReplicas": 4, "updatedReplicas": 4, "updatedReadyReplicas": 3,
                   "updatedAvailableReplicas": 3, "labelSelector": "app=sample"},
    }],
}


@pytest.fixture
async def server() -> AsyncIterator[FakeApiServer]:
    fake = FakeApiServer(objects=OBJECTS, now=NOW)
    await fake.start()
    yield fake
    await fake.close()


def _rows(output: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in output.strip().splitlines()]


@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda k: k.version)
async def test_get_prints_upstream_columns(kubectl: Kubectl, server: FakeApiServer, tmp_path: Path) -> None:
    config = server.kubeconfig(tmp_path)

    deployments = await run_kubectl(kubectl, config, tmp_path, "get", "deployments")
    assert deployments.returncode == 0, deployments.stderr
    assert _rows(deployments.stdout) == [["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
                                         ["web", "2/3", "3", "2", "5m"]]

    wide = await run_kubectl(kubectl, config, tmp_path, "get", "deploy", "-o", "wide", "--show-labels")
    assert wide.returncode == 0, wide.stderr
    assert _rows(wide.stdout) == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR", "LABELS"],
        ["web", "2/3", "3", "2", "5m", "app", "nginx:1.21", "app=web", "tier=front"]]

    pods = await run_kubectl(kubectl, config, tmp_path, "get", "pods", "-o", "wide")
    assert pods.returncode == 0, pods.stderr
    assert _rows(pods.stdout) == [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"],
        ["web-1", "1/2", "CrashLoopBackOff", "2", "3h12m", "10.0.0.9", "node-1", "<none>", "<none>"]]

    clonesets = await run_kubectl(kubectl, config, tmp_path, "get", "clonesets", "-A")
    assert clonesets.returncode == 0, clonesets.stderr
    assert _rows(clonesets.stdout) == [
        ["NAMESPACE", "NAME", "DESIRED", "UPDATED", "UPDATED_READY", "UPDATED_AVAILABLE", "READY", "TOTAL", "AGE"],
        ["apps", "sample", "4", "4", "3", "3", "4", "4", "2d2h"]]

    single = await run_kubectl(kubectl, config, tmp_path, "get", "deployment", "web", "--no-headers")
    assert single.returncode == 0, single.stderr
    assert _rows(single.stdout) == [["web", "2/3", "3", "2", "5m"]]
    assert any("as=Table" in accept for _, _, accept in server.requests)
