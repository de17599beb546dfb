"""kubectl's rollout flows against the embedded cluster (kubectl
``pkg/cmd/rollout`` and ``pkg/polymorphichelpers``), with every kubectl found on the machine: Debian's 1.20 at
``/usr/bin/kubectl`` and the Cloud SDK's ``kubectl.1.NN`` builds. Each version runs the whole
flow on its own cluster under the invariant monitor; where kubectl prints fixed text, the
output is compared exactly.
"""

from __future__ import annotations

import asyncio
import glob
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from deployment_e2e_kit import NS, StartMonitor, get_deployment, owned_replica_sets, pods_matching, wait_complete

from kubeloop.client import DEPLOYMENTS, REPLICA_SETS
from kubeloop.testing.cluster import EmbeddedCluster
from kubeloop.testing.deployment_rules import revision_of, spec_replicas

pytestmark = pytest.mark.e2e


def kubectl_binaries() -> list[str]:
    """Every kubectl on the machine, one per version (the Cloud SDK's version dispatcher excluded)."""
    found = [path for path in (shutil.which("kubectl", path="/usr/bin"),) if path]
    found += sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
                    key=lambda p: int(p.rsplit(".", 1)[1]))
    return found


KUBECTLS = kubectl_binaries()


@dataclass
class Result:
    code: int
    out: str
    err: str


class Kubectl:
    """Runs one kubectl binary against the cluster, with its own HOME and discovery cache."""

    def __init__(self, binary: str, kubeconfig: Path, home: Path) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig
        self.env = {**os.environ, "HOME": str(home), "KUBECACHEDIR": str(home / "cache")}

    async def __call__(self, *args: str, check: bool = True) -> Result:
        process = await asyncio.create_subprocess_exec(
            self.binary, "--kubeconfig", str(self.kubeconfig), "--namespace", NS, *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=self.env)
        out, err = await asyncio.wait_for(process.communicate(), timeout=90)
        result = Result(process.returncode or 0, out.decode(), err.decode())
        if check and result.code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.code}): {result.err}{result.out}")
        return result

    async def fails(self, *args: str) -> str:
        result = await self(*args, check=False)
        assert result.code != 0, f"kubectl {' '.join(args)} should have failed: {result.out}"
        return result.err


def manifest(name: str, replicas: int, image: str) -> bytes:
    labels = {"app": name}
    return orjson.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "annotations": {"kubernetes.io/change-cause": "initial " + image}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "app", "image": image}],
                                       "terminationGracePeriodSeconds": 0}}}})


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def history_rows(text: str) -> list[tuple[str, str]]:
    lines = [line for line in text.splitlines() if line.strip()]
    header = next(i for i, line in enumerate(lines) if line.startswith("REVISION"))
    rows = []
    for line in lines[header + 1:]:
        revision, cause = re.split(r"\s+", line.strip(), maxsplit=1)
        rows.append((revision, cause))
    return rows


@pytest.fixture(params=KUBECTLS, ids=[Path(k).name for k in KUBECTLS])
def kubectl(request: pytest.FixtureRequest, kubeloop_cluster: EmbeddedCluster, tmp_path: Path) -> Kubectl:
    home = tmp_path / "home"
    home.mkdir()
    return Kubectl(str(request.param), kubeloop_cluster.kubeconfig_path, home)


def test_kubectl_binaries_found() -> None:
    """At least Debian's kubectl 1.20 is on the machine; the flows below run with every one found."""
    assert "/usr/bin/kubectl" in KUBECTLS


async def test_rollout_flows(kubectl: Kubectl, kubeloop_cluster: EmbeddedCluster, monitor_for: StartMonitor,
                             tmp_path: Path) -> None:
    client = kubeloop_cluster.client
    await monitor_for("web")
    path = tmp_path / "web.json"
    path.write_bytes(manifest("web", 3, "nginx:1.25"))
    assert (await kubectl("create", "-f", str(path))).out == "deployment.apps/web created\n"
    status = await kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert last_line(status.out) == 'deployment "web" successfully rolled out'

    # set image, rollout status, history
    assert (await kubectl("set", "image", "deployment/web", "app=nginx:1.26")).out == \
        "deployment.apps/web image updated\n"
    status = await kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert last_line(status.out) == 'deployment "web" successfully rolled out'
    d = await wait_complete(kubeloop_cluster, "web", revision=2)
    history = await kubectl("rollout", "history", "deployment/web")
    assert history.out.startswith("deployment.apps/web \n") or history.out.startswith("deployment.apps/web\n")
    assert history_rows(history.out) == [("1", "initial nginx:1.25"), ("2", "initial nginx:1.25")]
    one = await kubectl("rollout", "history", "deployment/web", "--revision=1")
    assert "nginx:1.25" in one.out and "nginx:1.26" not in one.out
    assert "unable to find the specified revision" in await kubectl.fails("rollout", "history", "deployment/web",
                                                                          "--revision=7")

    # undo to the previous revision, then errors
    assert (await kubectl("rollout", "undo", "deployment/web")).out == "deployment.apps/web rolled back\n"
    d = await wait_complete(kubeloop_cluster, "web", revision=3)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert "unable to find specified revision 99 in history" in await kubectl.fails(
        "rollout", "undo", "deployment/web", "--to-revision=99")
    skipped = await kubectl("rollout", "undo", "deployment/web", "--to-revision=3")
    assert skipped.out == "deployment.apps/web skipped rollback (current template already matches revision 3)\n"
    assert (await kubectl("rollout", "undo", "deployment/web", "--to-revision=2")).out == \
        "deployment.apps/web rolled back\n"
    d = await wait_complete(kubeloop_cluster, "web", revision=4)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"

    # pause: template changes wait, undo and restart refuse
    assert (await kubectl("rollout", "pause", "deployment/web")).out == "deployment.apps/web paused\n"
    assert "already paused" in await kubectl.fails("rollout", "pause", "deployment/web")
    await kubectl("set", "image", "deployment/web", "app=nginx:1.27")
    before = len(await owned_replica_sets(client, d))
    assert "you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume" in \
        await kubectl.fails("rollout", "undo", "deployment/web")
    assert "can't restart paused deployment (run rollout resume first)" in \
        await kubectl.fails("rollout", "restart", "deployment/web")
    d = await kubeloop_cluster.wait_for(DEPLOYMENTS, "web", lambda d: (d.get("status") or {}).get("observedGeneration")
                                        == d["metadata"]["generation"])
    assert len(await owned_replica_sets(client, d)) == before
    assert (await kubectl("rollout", "resume", "deployment/web")).out == "deployment.apps/web resumed\n"
    assert "is not paused" in await kubectl.fails("rollout", "resume", "deployment/web")
    status = await kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert last_line(status.out) == 'deployment "web" successfully rolled out'
    await wait_complete(kubeloop_cluster, "web", revision=5)

    # restart: a new template annotation, a new ReplicaSet
    assert (await kubectl("rollout", "restart", "deployment/web")).out == "deployment.apps/web restarted\n"
    d = await wait_complete(kubeloop_cluster, "web", revision=6)
    assert "kubectl.kubernetes.io/restartedAt" in d["spec"]["template"]["metadata"]["annotations"]

    # scale
    assert (await kubectl("scale", "deployment/web", "--replicas=5")).out == "deployment.apps/web scaled\n"
    d = await wait_complete(kubeloop_cluster, "web")
    assert spec_replicas(d) == 5 and len(await pods_matching(client, {"app": "web"})) == 5
    assert revision_of(await get_deployment(client, "web")) == 6


@pytest.mark.parametrize("cascade", ["background", "foreground", "orphan"])
async def test_delete_cascade(cascade: str, kubectl: Kubectl, kubeloop_cluster: EmbeddedCluster,
                              monitor_for: StartMonitor, tmp_path: Path) -> None:
    client = kubeloop_cluster.client
    name = f"del-{cascade}"
    await monitor_for(name)
    path = tmp_path / "d.json"
    path.write_bytes(manifest(name, 2, "nginx:1.25"))
    await kubectl("create", "-f", str(path))
    d = await wait_complete(kubeloop_cluster, name)
    [rs] = await owned_replica_sets(client, d)
    deleted = await kubectl("delete", "deployment", name, f"--cascade={cascade}")
    assert deleted.out == f'deployment.apps "{name}" deleted\n'
    await kubeloop_cluster.wait_deleted(DEPLOYMENTS, name)
    if cascade == "orphan":
        orphan = await kubeloop_cluster.wait_for(REPLICA_SETS, rs["metadata"]["name"],
                                                 lambda r: not r["metadata"].get("ownerReferences"))
        assert spec_replicas(orphan) == 2
        assert len(await pods_matching(client, {"app": name})) == 2
    else:
        if cascade == "foreground":
            # kubectl waited for the Deployment to disappear, which foreground deletion allows
            # only once its ReplicaSet (and that one's pods) are gone.
            assert (await client.list(REPLICA_SETS, namespace=NS))["items"] == []
        await kubeloop_cluster.wait_deleted(REPLICA_SETS, rs["metadata"]["name"])

        async def no_pods() -> bool:
            return not await pods_matching(client, {"app": name}, active=False)

        await kubeloop_cluster.wait_until(no_pods, message="pods to be collected")
