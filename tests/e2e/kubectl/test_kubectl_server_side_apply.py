"""``kubectl apply --server-side`` against the embedded cluster (issue 4 item 3): managedFields,
field ownership, conflicts as kubectl prints them, ``--force-conflicts`` and removal of fields
the applier stops applying, with every kubectl build found on the machine."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
from kubectl_runner import KubectlBuild, KubectlRunner, kubectl_builds

from kubeloop.client import DEPLOYMENTS, NAMESPACES
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

BUILDS = kubectl_builds()
Obj = dict[str, Any]


def deployment(name: str, replicas: int, labels: dict[str, str]) -> Obj:
    selector = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": selector},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}


def cloneset(name: str, replicas: int, partition: int | None = None) -> Obj:
    selector = {"app": name}
    spec: Obj = {"replicas": replicas, "selector": {"matchLabels": selector},
                 "template": {"metadata": {"labels": selector},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}
    if partition is not None:
        spec["updateStrategy"] = {"partition": partition}
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": name}, "spec": spec}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedCluster]:
    # No kubelet and no controllers: only kubectl writes, so every managedFields entry is its own.
    config = ClusterConfig(data_dir=tmp_path_factory.mktemp("ssa-cluster"), kubelet=None, controllers=())
    async with EmbeddedCluster(config) as started:
        yield started


@pytest.fixture(scope="module", params=BUILDS, ids=[b.version for b in BUILDS])
def build(request: pytest.FixtureRequest) -> KubectlBuild:
    found: KubectlBuild = request.param
    print(f"kubectl {found.version} at {found.path}")
    return found


@pytest_asyncio.fixture(loop_scope="module")
async def kubectl(build: KubectlBuild, cluster: EmbeddedCluster, tmp_path: Path,
                  record_property: Callable[[str, object], None]) -> KubectlRunner:
    record_property("kubectl", f"{build.version} {build.path}")
    namespace = f"ssa{build.minor}-{tmp_path.name.lower().replace('_', '-')[-30:].strip('-')}"
    await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    home = tmp_path / "home"
    home.mkdir()
    return KubectlRunner(build, cluster.kubeconfig_path, home, namespace)


def write(directory: Path, obj: Obj, name: str = "manifest.json") -> str:
    path = directory / name
    path.write_bytes(orjson.dumps(obj))
    return str(path)


def entries(obj: Obj) -> dict[tuple[str, str], Obj]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"].get("managedFields", [])}


async def test_apply_creates_updates_and_removes(kubectl: KubectlRunner, cluster: EmbeddedCluster,
                                                 tmp_path: Path) -> None:
    ns = kubectl.namespace
    path = write(tmp_path, deployment("web", 1, {"tier": "front", "team": "a"}))
    assert await kubectl.ok("apply", "--server-side", "-f", path) == "deployment.apps/web serverside-applied\n"
    live = await cluster.client.get(DEPLOYMENTS, "web", namespace=ns)
    applied = entries(live)[("kubectl", "Apply")]
    assert applied["apiVersion"] == "apps/v1" and applied["fieldsType"] == "FieldsV1"
    fields = applied["fieldsV1"]
    assert fields["f:spec"]["f:replicas"] == {}
    assert fields["f:metadata"]["f:labels"] == {"f:team": {}, "f:tier": {}}
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert container == {".": {}, "f:image": {}, "f:name": {}}

    # A changed manifest updates the object; a label left out of it is removed.
    path = write(tmp_path, deployment("web", 3, {"tier": "front"}))
    await kubectl.ok("apply", "--server-side", "-f", path)
    live = await cluster.client.get(DEPLOYMENTS, "web", namespace=ns)
    assert live["spec"]["replicas"] == 3
    assert live["metadata"]["labels"] == {"tier": "front"}
    assert "f:team" not in entries(live)[("kubectl", "Apply")]["fieldsV1"]["f:metadata"]["f:labels"]
    # Applying the same manifest again changes nothing, not even the resourceVersion.
    await kubectl.ok("apply", "--server-side", "-f", path)
    again = await cluster.client.get(DEPLOYMENTS, "web", namespace=ns)
    assert again["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]


async def test_conflict_after_scale_and_force(kubectl: KubectlRunner, cluster: EmbeddedCluster,
                                              tmp_path: Path) -> None:
    ns = kubectl.namespace
    path = write(tmp_path, deployment("api", 2, {"tier": "back"}))
    await kubectl.ok("apply", "--server-side", "-f", path)
    await kubectl.ok("scale", "deployment/api", "--replicas=5")
    live = await cluster.client.get(DEPLOYMENTS, "api", namespace=ns)
    scaler = next(e for e in live["metadata"]["managedFields"] if e["operation"] == "Update")
    assert scaler["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in entries(live)[("kubectl", "Apply")]["fieldsV1"]["f:spec"]

    result = await kubectl.run("apply", "--server-side", "-f", path)
    assert result.code == 1, result
    owner = f'"{scaler["manager"]}" with subresource "scale" using apps/v1'
    assert result.err.startswith(f"error: Apply failed with 1 conflict: conflict with {owner}: .spec.replicas\n"), \
        result.err
    assert "--force-conflicts" in result.err
    assert (await cluster.client.get(DEPLOYMENTS, "api", namespace=ns))["spec"]["replicas"] == 5

    # Re-applying the live value is no conflict: both managers own it.
    same = write(tmp_path, deployment("api", 5, {"tier": "back"}), "same.json")
    await kubectl.ok("apply", "--server-side", "-f", same)
    await kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", path)
    live = await cluster.client.get(DEPLOYMENTS, "api", namespace=ns)
    assert live["spec"]["replicas"] == 2
    assert [e["operation"] for e in live["metadata"]["managedFields"]] == ["Apply"]
    assert "f:replicas" in entries(live)[("kubectl", "Apply")]["fieldsV1"]["f:spec"]


async def test_cloneset(kubectl: KubectlRunner, cluster: EmbeddedCluster, tmp_path: Path) -> None:
    ns = kubectl.namespace
    path = write(tmp_path, cloneset("cs", 2, partition=1))
    assert await kubectl.ok("apply", "--server-side", "-f", path) == \
        "cloneset.apps.kruise.io/cs serverside-applied\n"
    live = await cluster.client.get(CLONESETS, "cs", namespace=ns)
    applied = entries(live)[("kubectl", "Apply")]
    assert applied["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert applied["fieldsV1"]["f:spec"]["f:updateStrategy"] == {"f:partition": {}}
    await kubectl.ok("patch", "cloneset", "cs", "--type", "merge", "-p", '{"spec":{"replicas":4}}')
    result = await kubectl.run("apply", "--server-side", "-f", path)
    assert result.code == 1 and "Apply failed with 1 conflict: conflict with" in result.err, result
    assert ": .spec.replicas\n" in result.err

    path = write(tmp_path, cloneset("cs", 3))
    await kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", path)
    live = await cluster.client.get(CLONESETS, "cs", namespace=ns)
    assert live["spec"]["replicas"] == 3
    # The partition left the manifest, so it left the object (and defaulting filled in 0).
    assert live["spec"]["updateStrategy"]["partition"] == 0
    assert "f:updateStrategy" not in entries(live)[("kubectl", "Apply")]["fieldsV1"]["f:spec"]
