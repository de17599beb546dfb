"""The embedded cluster's controllers and kubelet as service accounts under RBAC (as ``kubeloop
up`` runs them): a Deployment and a CloneSet roll out with nothing but the rules the components
declare, and those identities may do nothing else."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kubeloop.api import kruise
from kubeloop.client import DEPLOYMENTS, SECRETS, ApiClient, Forbidden, load_kubeconfig
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, all_controllers, quick_kubelet_config
from kubeloop.testing.identities import CONTROLLERS_ACCOUNT, NAMESPACE, provision

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLONESETS = f"clonesets.{kruise.GROUP}"
Obj = dict[str, Any]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedCluster]:
    config = ClusterConfig(data_dir=tmp_path_factory.mktemp("identities"), kubelet=quick_kubelet_config(nodes=2),
                           component_identities=True)
    async with EmbeddedCluster(config) as started:
        await started.wait_ready()
        yield started


def workload(kind: str, image: str) -> Obj:
    labels = {"app": kind.lower()}
    template = {"metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": image}], "terminationGracePeriodSeconds": 0}}
    api_version = "apps/v1" if kind == "Deployment" else f"{kruise.GROUP}/{kruise.VERSION}"
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": kind.lower()},
            "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": template}}


def done(image: str) -> Any:
    def check(obj: Obj) -> bool:
        status = obj.get("status") or {}
        containers = obj["spec"]["template"]["spec"]["containers"]
        return (containers[0]["image"] == image and status.get("observedGeneration") == obj["metadata"]["generation"]
                and status.get("updatedReplicas") == status.get("availableReplicas") == 3)
    return check


async def test_rollouts_complete_with_only_the_declared_rules(cluster: EmbeddedCluster) -> None:
    client = cluster.client
    for resource, kind in ((DEPLOYMENTS, "Deployment"), (CLONESETS, "CloneSet")):
        await client.create(resource, workload(kind, "nginx:1.26"), namespace="default")
        await cluster.wait_for(resource, kind.lower(), done("nginx:1.26"), timeout=60)
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}
        await client.patch(resource, kind.lower(), patch, patch_type="merge", namespace="default")
        await cluster.wait_for(resource, kind.lower(), done("nginx:1.27"), timeout=60)


async def test_the_controllers_identity_may_do_nothing_else(cluster: EmbeddedCluster) -> None:
    # The same objects the cluster wrote at start (nothing changes): just a fresh token.
    controllers, _ = await provision(cluster.client, all_controllers(), kubelet=True)
    async with ApiClient(controllers) as as_controllers:
        whoami = await as_controllers.create("selfsubjectreviews.authentication.k8s.io", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
        assert whoami["status"]["userInfo"]["username"] == f"system:serviceaccount:{NAMESPACE}:{CONTROLLERS_ACCOUNT}"
        # No controller creates Secrets (the garbage collector may read and delete anything).
        with pytest.raises(Forbidden):
            await as_controllers.create(SECRETS, {"metadata": {"name": "s"}}, namespace="default")
    admin = load_kubeconfig(str(cluster.kubeconfig_path))
    assert admin.token != controllers.token
