"""``kubeloop controllers`` beside kube-controller-manager: with its leader Lease
(``kube-system/kube-controller-manager``) held, the replicaset, deployment and garbagecollector
controllers do not start unless ``--force``; the install's one-Lease Role is enough to see it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import pytest_asyncio
import yaml
from async_process import Kubeloop, run

from kubeloop.client import LEASES
from kubeloop.install.rbac import kcm_lease_reader_role
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster

pytestmark = pytest.mark.asyncio(loop_scope="module")

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
HOLDER = "control-plane-1_0d4c6bb8"
RUNNING = "kubeloop controllers running"


def micro_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedCluster]:
    config = ClusterConfig(data_dir=tmp_path_factory.mktemp("kcm-guard"), kubelet=None, controllers=())
    async with EmbeddedCluster(config) as started:
        await started.wait_ready()
        await started.client.create(LEASES, {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "kube-controller-manager", "namespace": "kube-system"},
            "spec": {"holderIdentity": HOLDER, "leaseDurationSeconds": 3600,
                     "acquireTime": micro_time(datetime.now(UTC)), "renewTime": micro_time(datetime.now(UTC))}},
            namespace="kube-system")
        yield started


async def controllers(cluster: EmbeddedCluster, log: Path, *args: str, kubeconfig: Path | None = None) -> Kubeloop:
    return await Kubeloop.start(log, "controllers", *args, "--kubeconfig", str(kubeconfig or cluster.kubeconfig_path))


async def test_refuses_beside_a_held_lease_and_says_why(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    process = await controllers(cluster, tmp_path / "refused.log", "--controllers", "cloneset,deployment")
    assert await process.exit_code() == 1
    out = process.output()
    assert "kube-controller-manager runs in this cluster" in out
    assert "kube-system/kube-controller-manager" in out and HOLDER in out
    assert "deployment controller" in out and "--force" in out
    assert RUNNING not in out


async def test_force_or_no_clash_starts_anyway(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    started = [await controllers(cluster, tmp_path / "forced.log", "--controllers", "replicaset", "--force"),
               await controllers(cluster, tmp_path / "cloneset.log", "--controllers", "cloneset")]
    try:
        for process in started:
            await process.wait_for_output(RUNNING)
    finally:
        for process in started:
            await process.stop()


async def test_an_expired_lease_is_no_obstacle(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    client = cluster.client
    lease = await client.get(LEASES, "kube-controller-manager", namespace="kube-system")
    fresh = lease["spec"]["renewTime"]
    lease["spec"]["renewTime"] = micro_time(datetime.now(UTC) - timedelta(hours=2))
    lease = await client.update(LEASES, lease, namespace="kube-system")
    process = await controllers(cluster, tmp_path / "expired.log", "--controllers", "garbagecollector")
    try:
        await process.wait_for_output(RUNNING)
    finally:
        await process.stop()
        lease["spec"]["renewTime"] = fresh
        await client.update(LEASES, lease, namespace="kube-system")


async def test_the_installs_lease_reader_role_is_enough_to_see_it(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    client, admin = cluster.client, str(cluster.kubeconfig_path)
    await client.create("serviceaccounts", {"metadata": {"name": "manager"}}, namespace="default")
    token = (await run(KUBECTL, "--kubeconfig", admin, "create", "token", "manager", "-n", "default")).strip()
    kubeconfig = yaml.safe_load(cluster.kubeconfig_path.read_text())
    kubeconfig["users"][0]["user"] = {"token": token}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    # Without a grant the Lease cannot be read: a warning, and the command goes on.
    blind = await controllers(cluster, tmp_path / "blind.log", "--controllers", "deployment", kubeconfig=path)
    try:
        await blind.wait_for_output("cannot tell whether kube-controller-manager runs here")
    finally:
        await blind.stop()
    role = kcm_lease_reader_role()
    await client.create("roles.rbac.authorization.k8s.io", role, namespace="kube-system")
    await client.create("rolebindings.rbac.authorization.k8s.io", {
        "metadata": {"name": "manager-reads-kcm-lease", "namespace": "kube-system"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"]},
        "subjects": [{"kind": "ServiceAccount", "name": "manager", "namespace": "default"}]}, namespace="kube-system")
    seeing = await controllers(cluster, tmp_path / "seeing.log", "--controllers", "deployment", kubeconfig=path)
    assert await seeing.exit_code() == 1
    assert "kube-controller-manager runs in this cluster" in seeing.output()
