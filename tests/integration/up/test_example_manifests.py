"""The sample manifests of examples/manifests are valid and do what their comments promise.

Run with every controller (the fixture's default), as ``kubeloop up`` would run them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubeloop.client import CUSTOM_RESOURCE_DEFINITIONS, DEPLOYMENTS, PODS, ApiClient
from kubeloop.testing.cluster import EmbeddedCluster, has_condition

MANIFESTS = Path(__file__).resolve().parents[3] / "examples" / "manifests"
CLONESETS = "clonesets.apps.kruise.io"


def container_status(pod: dict[str, Any]) -> dict[str, Any]:
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return dict(statuses[0])


async def test_example_manifests_apply_and_behave(kubeloop_cluster: EmbeddedCluster) -> None:
    client = kubeloop_cluster.client
    files = sorted(MANIFESTS.glob("*.yaml"))
    assert [f.name for f in files] == ["cloneset.yaml", "crash-loop.yaml", "deployment.yaml",
                                       "image-pull-error-pod.yaml", "readiness-gate-pod.yaml"]
    await allow_object_meta_in_cloneset_crd(kubeloop_cluster)
    for manifest in (m for path in files for m in yaml.safe_load_all(path.read_text())):
        await client.create(await client.resource(manifest["kind"]), manifest, namespace="default")

    web = await kubeloop_cluster.wait_for(DEPLOYMENTS, "web",
                                          lambda d: (d.get("status") or {}).get("readyReplicas") == 3)
    assert has_condition(web, "Available")

    gated = await kubeloop_cluster.wait_for_condition(PODS, "gated", "ContainersReady")
    assert has_condition(gated, "Ready", "False")

    await kubeloop_cluster.wait_for(
        PODS, "unpullable", lambda p: container_status(p).get("state", {}).get("waiting", {}).get("reason")
        == "ImagePullBackOff")

    async def crashing() -> bool:
        pods = (await client.list(PODS, namespace="default", label_selector="app=crasher"))["items"]
        return len(pods) == 2 and all(container_status(p).get("restartCount", 0) >= 1 for p in pods)

    await kubeloop_cluster.wait_until(crashing, message="crash-looping pods")

    # The CloneSet updates in place: same pods, containers restarted with the new image.
    await kubeloop_cluster.wait_for(CLONESETS, "sample", lambda c: (c.get("status") or {}).get("readyReplicas") == 4)
    before = {p["metadata"]["uid"] for p in await pods_of(client, "app=sample")}
    image = {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}
    await client.patch(CLONESETS, "sample", image, namespace="default")
    await kubeloop_cluster.wait_for(CLONESETS, "sample", updated_in_place)
    after = await pods_of(client, "app=sample")
    assert {p["metadata"]["uid"] for p in after} == before
    assert {(container_status(p)["image"], container_status(p)["restartCount"]) for p in after} == {("nginx:1.27", 1)}


async def pods_of(client: ApiClient, selector: str) -> list[dict[str, Any]]:
    return list((await client.list(PODS, namespace="default", label_selector=selector))["items"])


def updated_in_place(cloneset: dict[str, Any]) -> bool:
    status = cloneset.get("status") or {}
    return (status.get("observedGeneration") == cloneset["metadata"]["generation"] == 2
            and status.get("updateRevision") == status.get("currentRevision")
            and status.get("updatedReadyReplicas") == 4)


async def allow_object_meta_in_cloneset_crd(cluster: EmbeddedCluster) -> None:
    """Drop the CRD's root ``metadata`` schema, which the embedded server would prune names by.

    Same workaround as tests/e2e/cloneset; a no-op once the shipped CRD declares none.
    """
    crd = await cluster.client.get(CUSTOM_RESOURCE_DEFINITIONS, "clonesets.apps.kruise.io")
    changed = False
    for version in crd["spec"]["versions"]:
        properties = ((version.get("schema") or {}).get("openAPIV3Schema") or {}).get("properties") or {}
        changed = properties.pop("metadata", None) is not None or changed
    if changed:
        await cluster.client.update(CUSTOM_RESOURCE_DEFINITIONS, crd)
