"""``kubectl expose`` and ``kubectl get svc,endpoints,endpointslices`` against the whole embedded
cluster (kubelet and every default controller, the endpoint controllers included), with each
kubectl build that speaks JSON (1.27-1.31). Each build works in its own namespace."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from kubectl_runner import KubectlBuild, KubectlRunner, kubectl_builds

from kubeloop.client import DEPLOYMENTS, ENDPOINTS, NAMESPACES
from kubeloop.controllers.endpointslice.controller import ENDPOINT_SLICES
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config
from kubeloop.testing.polling import eventually

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

BUILDS = [b for b in kubectl_builds() if 27 <= b.minor <= 31 and "dispatcher" not in b.version]
Obj = dict[str, Any]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedCluster]:
    config = ClusterConfig(data_dir=tmp_path_factory.mktemp("services-cluster"), kubelet=quick_kubelet_config(nodes=2))
    async with EmbeddedCluster(config) as started:
        yield started


@pytest.fixture(params=BUILDS, ids=[b.version for b in BUILDS])
def build(request: pytest.FixtureRequest) -> KubectlBuild:
    found: KubectlBuild = request.param
    return found


@pytest_asyncio.fixture(loop_scope="module")
async def kubectl(build: KubectlBuild, cluster: EmbeddedCluster, tmp_path: Path) -> KubectlRunner:
    namespace = f"svc-k{build.minor}"
    await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    home = tmp_path / "home"
    home.mkdir()
    return KubectlRunner(build, cluster.kubeconfig_path, home, namespace)


def web(replicas: int) -> Obj:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                                                           "ports": [{"containerPort": 80}]}],
                                           "terminationGracePeriodSeconds": 0}}}}


def ready_ips(endpoints: Obj) -> list[str]:
    return sorted(a["ip"] for s in endpoints.get("subsets") or [] for a in s.get("addresses") or [])


async def test_expose_lists_the_deployment_pods_as_endpoints(kubectl: KubectlRunner,
                                                              cluster: EmbeddedCluster) -> None:
    ns, client = kubectl.namespace, cluster.client
    await client.create(DEPLOYMENTS, web(3), namespace=ns)
    assert await kubectl.ok("expose", "deployment", "web", "--port", "80") == "service/web exposed\n"

    async def three_ready() -> bool:
        found = (await client.list(ENDPOINTS, namespace=ns))["items"]
        return len(found) == 1 and len(ready_ips(found[0])) == 3

    await cluster.wait_until(three_ready)

    async def three_in_slices() -> list[Obj] | None:
        # Endpoints and EndpointSlices are written by two controllers: each in its own time.
        found: list[Obj] = (await client.list(ENDPOINT_SLICES, namespace=ns))["items"]
        return found if [len(s.get("endpoints") or []) for s in found] == [3] else None

    slices = await eventually(three_in_slices, timeout=30, what="three endpoints in one EndpointSlice")
    assert [len(s["endpoints"]) for s in slices] == [3]
    assert all(e["conditions"] == {"ready": True, "serving": True, "terminating": False}
               for e in slices[0]["endpoints"])

    table = await kubectl.ok("get", "svc,endpoints,endpointslices")
    rows = {line.split()[0]: line.split() for line in table.splitlines() if line.strip()}
    assert rows["service/web"][1] == "ClusterIP" and rows["service/web"][4] == "80/TCP"
    [endpoints] = (await client.list(ENDPOINTS, namespace=ns))["items"]
    assert rows["endpoints/web"][1] == ",".join(f"{ip}:80" for ip in ready_ips(endpoints))
    slice_row = rows[f"endpointslice.discovery.k8s.io/{slices[0]['metadata']['name']}"]
    assert slice_row[1:3] == ["IPv4", "80"]

    assert await kubectl.ok("scale", "deployment", "web", "--replicas=1") == "deployment.apps/web scaled\n"

    async def one_left() -> bool:
        found = (await client.list(ENDPOINTS, namespace=ns))["items"]
        sliced = (await client.list(ENDPOINT_SLICES, namespace=ns))["items"]
        return len(ready_ips(found[0])) == 1 and sum(len(s["endpoints"] or []) for s in sliced) == 1

    await cluster.wait_until(one_left)
    assert "service \"web\" deleted" in await kubectl.ok("delete", "service", "web")

    async def gone() -> bool:
        return not (await client.list(ENDPOINTS, namespace=ns))["items"] and \
            not (await client.list(ENDPOINT_SLICES, namespace=ns))["items"]

    await cluster.wait_until(gone)
