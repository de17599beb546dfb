"""``kubectl logs`` against the whole embedded cluster: the simulated kubelet's story of each
container (start, crash with its exit code, restart), ``--previous``, ``-f``, ``--timestamps``,
``--tail``, and upstream's refusals, with the oldest and the newest kubectl."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from kubectl_runner import KubectlBuild, KubectlRunner, kubectl_builds

from kubeloop.client import NAMESPACES, PODS, is_already_exists
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

_ALL = kubectl_builds()
BUILDS = [b for b in (min(_ALL, key=lambda b: b.minor), max(_ALL, key=lambda b: b.minor))] if _ALL else []
Obj = dict[str, Any]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedCluster]:
    config = ClusterConfig(data_dir=tmp_path_factory.mktemp("logs-cluster"), kubelet=quick_kubelet_config(nodes=1),
                           controllers=())
    async with EmbeddedCluster(config) as started:
        yield started


@pytest.fixture(params=BUILDS, ids=[b.version for b in BUILDS])
def build(request: pytest.FixtureRequest) -> KubectlBuild:
    found: KubectlBuild = request.param
    return found


@pytest_asyncio.fixture(loop_scope="module")
async def kubectl(build: KubectlBuild, cluster: EmbeddedCluster, tmp_path: Path) -> KubectlRunner:
    namespace = f"logs-k{build.minor}"
    try:
        await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": namespace}})
    except Exception as exc:
        if not is_already_exists(exc):
            raise
    home = tmp_path / "home"
    home.mkdir()
    return KubectlRunner(build, cluster.kubeconfig_path, home, namespace)


def pod(name: str, annotations: dict[str, str] | None = None, containers: tuple[str, ...] = ("app",)) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations or {}},
            "spec": {"containers": [{"name": c, "image": "nginx:1.26"} for c in containers],
                     "terminationGracePeriodSeconds": 0}}


async def status_of(cluster: EmbeddedCluster, ns: str, name: str, check: Any) -> Obj:
    found: list[Obj] = []

    async def matches() -> bool:
        current = await cluster.client.get(PODS, name, namespace=ns)
        statuses = current.get("status", {}).get("containerStatuses") or []
        if statuses and check(statuses[0]):
            found.append(current)
            return True
        return False

    await cluster.wait_until(matches)
    return found[-1]


async def test_a_running_container_logs_its_start(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    ns = kubectl.namespace
    await cluster.client.create(PODS, pod("web"), namespace=ns)
    await status_of(cluster, ns, "web", lambda s: "running" in s.get("state", {}))
    assert await kubectl.ok("logs", "web") == 'kubeloop: container "app" started (image "nginx:1.26")\n'
    stamped = await kubectl.ok("logs", "web", "--timestamps")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z kubeloop: container \"app\" started .*\n", stamped)
    assert await kubectl.ok("logs", "web", "--tail", "0") == ""
    err = await kubectl.fails("logs", "web", "--previous")
    assert 'previous terminated container "app" in pod "web" not found' in err


async def test_a_crashing_container_tells_its_exit_code(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    ns = kubectl.namespace
    await cluster.client.create(PODS, pod("crash", {"sim.kubeloop.io/crash-loop": "true"}), namespace=ns)
    await status_of(cluster, ns, "crash", lambda s: s.get("restartCount", 0) >= 1 and s.get("lastState"))
    previous = await kubectl.ok("logs", "crash", "--previous")
    assert previous.splitlines()[-1].startswith('kubeloop: container "app" exited with code 1')


async def test_refusals_as_upstream(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    ns = kubectl.namespace
    await cluster.client.create(PODS, pod("pull", {"sim.kubeloop.io/image-pull-error": "true"}), namespace=ns)
    await status_of(cluster, ns, "pull", lambda s: s.get("state", {}).get("waiting", {}).get("reason")
                    in ("ErrImagePull", "ImagePullBackOff"))
    err = await kubectl.fails("logs", "pull")
    assert re.search(r'container "app" in pod "pull" is waiting to start: (image can\'t be pulled|trying and '
                     r'failing to pull image)', err), err
    await cluster.client.create(PODS, pod("two", containers=("a", "b")), namespace=ns)
    err = await kubectl.fails("logs", "two", "-c", "nope")
    assert "container nope is not valid for pod two" in err


async def test_follow_streams_until_the_container_exits(kubectl: KubectlRunner, cluster: EmbeddedCluster) -> None:
    ns = kubectl.namespace
    await cluster.client.create(PODS, pod("follow"), namespace=ns)
    await status_of(cluster, ns, "follow", lambda s: "running" in s.get("state", {}))
    process = await kubectl.start("logs", "-f", "follow")
    assert process.stdout is not None
    first = await asyncio.wait_for(process.stdout.readline(), timeout=30)
    assert first.decode().startswith('kubeloop: container "app" started')
    # Still streaming: kubectl has not exited while the container runs.
    await asyncio.sleep(1.0)
    assert process.returncode is None
    await cluster.client.delete(PODS, "follow", namespace=ns)
    await asyncio.wait_for(process.wait(), timeout=30)
    assert process.returncode == 0
