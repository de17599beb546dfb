"""The Deployment's API surface as upstream's conformance tests drive it
(``test/e2e/apps/deployment.go`` and ``test/integration/deployment/deployment_test.go``): the scale
subresource, the lifecycle of patches, updates, status writes and collection deletes, the status
endpoints, and selector immutability; each Deployment under the invariant monitor where the controllers
act on it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from deployment_e2e_kit import (
    AGNHOST,
    HTTPD,
    NS,
    Obj,
    StartMonitor,
    condition,
    deployment,
    get_deployment,
    image_of,
    update_deployment,
    wait_complete,
    wait_observed,
    wait_revision_and_image,
)

from kubeloop.client import DEPLOYMENTS, ApiClient, is_conflict, is_invalid
from kubeloop.testing.cluster import EmbeddedCluster

pytestmark = pytest.mark.e2e


async def test_scale_subresource(kubeloop_cluster: EmbeddedCluster, monitor_for: StartMonitor) -> None:
    """``testDeploymentSubresources`` / ``TestDeploymentScaleSubresource``: GET, PUT (no
    resourceVersion) and strategic PATCH of ``/scale``."""
    client = kubeloop_cluster.client
    await monitor_for("test-new-deployment")
    await client.create(DEPLOYMENTS, deployment("test-new-deployment", 1, {"name": "httpd"}), namespace=NS)
    await wait_complete(kubeloop_cluster, "test-new-deployment")
    scale = await client.get_scale(DEPLOYMENTS, "test-new-deployment", namespace=NS)
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1 and scale["status"]["replicas"] == 1
    answer = await client.update_scale(DEPLOYMENTS, "test-new-deployment", 2, namespace=NS)
    assert answer["spec"]["replicas"] == 2
    assert (await get_deployment(client, "test-new-deployment"))["spec"]["replicas"] == 2
    await client.patch_scale(DEPLOYMENTS, "test-new-deployment", {"spec": {"replicas": 4}}, patch_type="strategic",
                             namespace=NS)
    d = await wait_complete(kubeloop_cluster, "test-new-deployment")
    assert d["spec"]["replicas"] == 4
    await client.update_scale(DEPLOYMENTS, "test-new-deployment", 0, namespace=NS)
    d = await wait_complete(kubeloop_cluster, "test-new-deployment")
    assert d["status"].get("replicas", 0) == 0


async def test_deployment_lifecycle(kubeloop_cluster: EmbeddedCluster, monitor_for: StartMonitor) -> None:
    """Conformance "should run the lifecycle of a Deployment": strategic patch (containers merged by name), full
    update, a status patch the controller overwrites, delete-collection by label."""
    client = kubeloop_cluster.client
    monitor = await monitor_for("test-deployment")
    labels = {"test-deployment-static": "true"}
    body = deployment("test-deployment", 2, labels, image=AGNHOST)
    body["spec"]["template"]["spec"]["containers"][0]["name"] = "test-deployment"
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 1
    await client.create(DEPLOYMENTS, body, namespace=NS)
    await kubeloop_cluster.wait_for(DEPLOYMENTS, "test-deployment",
                                    lambda d: (d.get("status") or {}).get("readyReplicas") == 2)

    patch = {"metadata": {"labels": {"test-deployment": "patched"}},
             "spec": {"replicas": 1, "template": {"spec": {"terminationGracePeriodSeconds": 2,
                                                            "containers": [{"name": "test-deployment",
                                                                            "image": "pause:3.9"}]}}}}
    await client.patch(DEPLOYMENTS, "test-deployment", patch, patch_type="strategic", namespace=NS)

    def counts(ready: int) -> Callable[[Obj], bool]:
        def check(d: Obj) -> bool:
            status = d.get("status") or {}
            return (status.get("readyReplicas") == ready and status.get("updatedReplicas") == ready
                    and not status.get("unavailableReplicas"))
        return check

    d = await wait_observed(kubeloop_cluster, "test-deployment", counts(1))
    assert image_of(d) == "pause:3.9"
    listed = await client.list(DEPLOYMENTS, label_selector="test-deployment-static=true")
    assert [item["metadata"]["name"] for item in listed["items"]] == ["test-deployment"]

    def full_update(current: Obj) -> None:
        current["metadata"]["labels"]["test-deployment"] = "updated"
        current["spec"]["template"]["spec"]["containers"][0]["image"] = HTTPD
        current["spec"]["replicas"] = 2

    await update_deployment(client, "test-deployment", full_update)
    status = await client.get(DEPLOYMENTS, "test-deployment", namespace=NS, subresource="status")
    assert image_of(status) == HTTPD and status["metadata"]["labels"]["test-deployment"] == "updated"
    await wait_observed(kubeloop_cluster, "test-deployment", counts(2))

    # A status written by hand contradicts the pods; the monitor would rightly flag it, so it
    # stops watching here, and the controller must restore the truth.
    await monitor.stop()
    monitor.check()
    await client.patch(DEPLOYMENTS, "test-deployment", {"status": {"readyReplicas": 0, "availableReplicas": 0}},
                       subresource="status", namespace=NS)
    await wait_observed(kubeloop_cluster, "test-deployment", counts(2))

    await client.delete_collection(DEPLOYMENTS, namespace=NS, label_selector="test-deployment-static=true",
                                   grace_period_seconds=1)
    await kubeloop_cluster.wait_deleted(DEPLOYMENTS, "test-deployment")


async def _update_status(client: ApiClient, name: str, new_condition: Obj) -> None:
    for _ in range(20):
        d = await client.get(DEPLOYMENTS, name, namespace=NS, subresource="status")
        d["status"].setdefault("conditions", []).append(new_condition)
        try:
            await client.update_status(DEPLOYMENTS, d, namespace=NS)
            return
        except Exception as exc:
            if not is_conflict(exc):
                raise
    raise AssertionError("could not update the status")


async def test_status_endpoints_keep_foreign_conditions(kubeloop_cluster: EmbeddedCluster,
                                                        monitor_for: StartMonitor) -> None:
    """Conformance "should validate Deployment Status endpoints": conditions of unknown types written through
    ``/status`` (update and merge patch) survive the controller's own status writes."""
    client = kubeloop_cluster.client
    await monitor_for("status-test")
    await client.create(DEPLOYMENTS, deployment("status-test", 1, {"name": "httpd", "e2e": "testing"}),
                        namespace=NS)
    await wait_revision_and_image(kubeloop_cluster, "status-test", 1, HTTPD)
    await _update_status(client, "status-test", {"type": "StatusUpdate", "status": "True", "reason": "E2E",
                                                 "message": "Set from e2e test"})
    await kubeloop_cluster.wait_for(DEPLOYMENTS, "status-test", lambda d: condition(d, "StatusUpdate") is not None)
    await client.patch(DEPLOYMENTS, "status-test",
                       {"status": {"conditions": [{"type": "StatusPatched", "status": "True"}]}},
                       subresource="status", namespace=NS)
    await kubeloop_cluster.wait_for(DEPLOYMENTS, "status-test", lambda d: condition(d, "StatusPatched") is not None)
    # The controller writes status again on a scale; the foreign condition stays.
    await client.patch(DEPLOYMENTS, "status-test", {"spec": {"replicas": 2}}, namespace=NS)
    d = await wait_complete(kubeloop_cluster, "status-test")
    assert condition(d, "StatusPatched") is not None


async def test_selector_is_immutable(kubeloop_cluster: EmbeddedCluster) -> None:
    """``TestDeploymentSelectorImmutability``: apps/v1 rejects a selector change with "field is immutable"."""
    client = kubeloop_cluster.client
    await client.create(DEPLOYMENTS, deployment("immutable", 1, {"name": "test"}), namespace=NS)
    d = await get_deployment(client, "immutable")
    new_labels = {"name_apps_v1": "test_apps_v1"}
    d["spec"]["selector"] = {"matchLabels": new_labels}
    d["spec"]["template"]["metadata"]["labels"] = new_labels
    with pytest.raises(Exception) as caught:
        await client.update(DEPLOYMENTS, d, namespace=NS)
    assert is_invalid(caught.value)
    assert "Invalid value" in str(caught.value) and "field is immutable" in str(caught.value)
