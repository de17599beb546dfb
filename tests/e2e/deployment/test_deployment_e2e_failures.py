"""Deployments whose pods misbehave (upstream e2e ``testIterativeDeployments``, integration
``TestFailedDeployment``, ``pkg/controller/deployment/progress.go`` ``syncRolloutStatus``): progress
deadlines, crash loops, image pull errors, pods deleted under a rollout, and the status and
scale endpoints (the conformance cases of ``test/e2e/apps/deployment.go``). Each runs under the invariant monitor."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest
from deployment_e2e_kit import (
    NS,
    Obj,
    StartMonitor,
    condition,
    deployment,
    get_deployment,
    pods_matching,
    reason_of,
    set_image,
    set_pod_annotations,
    status_counts,
    the_new_replica_set,
    update_deployment,
    wait_complete,
    wait_observed,
)

from kubeloop.client import DEPLOYMENTS, PODS, ApiClient, is_not_found
from kubeloop.testing.cluster import EmbeddedCluster
from kubeloop.testing.deployment_rules import spec_replicas

pytestmark = pytest.mark.e2e


def has_reason(type_: str, reason: str) -> Callable[[Obj], bool]:
    return lambda d: reason_of(d, type_) == reason


async def test_progress_deadline_exceeded_then_recovered(kubeloop_cluster: EmbeddedCluster,
                                                         monitor_for: StartMonitor) -> None:
    """``TestFailedDeployment``: pods slower than the deadline: ProgressDeadlineExceeded; once they turn ready the
    same ReplicaSet completes and Progressing says NewReplicaSetAvailable."""
    client = kubeloop_cluster.client
    await monitor_for("failed")
    body = deployment("failed", 1, {"name": "failed"}, progressDeadlineSeconds=2,
                      pod_annotations={"sim.kubeloop.io/ready-delay": "5"})
    await client.create(DEPLOYMENTS, body, namespace=NS)
    await wait_observed(kubeloop_cluster, "failed", lambda d: d["status"].get("updatedReplicas", 0) >= 1)
    d = await wait_observed(kubeloop_cluster, "failed", has_reason("Progressing", "ProgressDeadlineExceeded"))
    progressing = condition(d, "Progressing")
    assert progressing is not None and progressing["status"] == "False"
    assert progressing["message"] == 'ReplicaSet "' + (await the_new_replica_set(client, d))["metadata"]["name"] + \
        '" has timed out progressing.'
    d = await wait_complete(kubeloop_cluster, "failed")
    d = await wait_observed(kubeloop_cluster, "failed", has_reason("Progressing", "NewReplicaSetAvailable"))
    assert (condition(d, "Progressing") or {}).get("status") == "True"
    assert reason_of(d, "Available") == "MinimumReplicasAvailable"


async def test_never_ready_rollout_exceeds_its_deadline_and_keeps_old_pods(
        kubeloop_cluster: EmbeddedCluster, monitor_for: StartMonitor) -> None:
    """A template whose pods never turn ready: the rollout stalls at the surge and availability
    bounds (the monitor checks them), Progressing turns ProgressDeadlineExceeded."""
    client = kubeloop_cluster.client
    await monitor_for("stalled")
    await client.create(DEPLOYMENTS, deployment("stalled", 4, {"name": "stalled"}, progressDeadlineSeconds=2),
                        namespace=NS)
    await wait_complete(kubeloop_cluster, "stalled")

    def broken(d: Obj) -> None:
        set_image("broken")(d)
        set_pod_annotations({"sim.kubeloop.io/never-ready": "true"})(d)

    await update_deployment(client, "stalled", broken)
    d = await wait_observed(kubeloop_cluster, "stalled", has_reason("Progressing", "ProgressDeadlineExceeded"))
    replicas, updated, _ready, available, _unavailable = status_counts(d)
    assert available >= 3 and updated >= 1 and replicas <= 5
    assert reason_of(d, "Available") == "MinimumReplicasAvailable"


async def test_crash_looping_pods_never_become_available(kubeloop_cluster: EmbeddedCluster,
                                                         monitor_for: StartMonitor) -> None:
    """Crash-looping pods keep restarting; the rollout reports the deadline; a good template
    recovers it."""
    client = kubeloop_cluster.client
    await monitor_for("crashing")
    await client.create(DEPLOYMENTS, deployment("crashing", 3, {"name": "crashing"}, progressDeadlineSeconds=2,
                                                pod_annotations={"sim.kubeloop.io/crash-loop": "true"}),
                        namespace=NS)
    d = await wait_observed(kubeloop_cluster, "crashing", has_reason("Progressing", "ProgressDeadlineExceeded"))
    assert d["status"].get("availableReplicas", 0) == 0
    assert reason_of(d, "Available") == "MinimumReplicasUnavailable"

    async def restarting() -> bool:
        pods = await pods_matching(client, {"name": "crashing"})
        return any(cs.get("restartCount", 0) >= 1 for p in pods for cs in p["status"].get("containerStatuses") or ())

    await kubeloop_cluster.wait_until(restarting, message="a container restart")
    await update_deployment(client, "crashing", set_pod_annotations(None))
    await wait_complete(kubeloop_cluster, "crashing", revision=2)
    await wait_observed(kubeloop_cluster, "crashing", has_reason("Progressing", "NewReplicaSetAvailable"))


async def test_image_pull_errors_leave_pods_pending(kubeloop_cluster: EmbeddedCluster,
                                                    monitor_for: StartMonitor) -> None:
    """Pods that cannot pull their image stay Pending (ErrImagePull / ImagePullBackOff); the old
    ReplicaSet keeps its available pods within maxUnavailable."""
    client = kubeloop_cluster.client
    await monitor_for("pull")
    await client.create(DEPLOYMENTS, deployment("pull", 4, {"name": "pull"}, progressDeadlineSeconds=2),
                        namespace=NS)
    d = await wait_complete(kubeloop_cluster, "pull")
    first = await the_new_replica_set(client, d)

    def unpullable(d: Obj) -> None:
        set_image("registry.invalid/nothing:1")(d)
        set_pod_annotations({"sim.kubeloop.io/image-pull-error": "true"})(d)

    await update_deployment(client, "pull", unpullable)
    await wait_observed(kubeloop_cluster, "pull", has_reason("Progressing", "ProgressDeadlineExceeded"))
    pods = await pods_matching(client, {"name": "pull"})
    stuck = [p for p in pods if p["metadata"]["labels"]["pod-template-hash"] !=
             first["spec"]["selector"]["matchLabels"]["pod-template-hash"]]
    assert stuck and all(p["status"].get("phase") == "Pending" for p in stuck)
    waiting = {cs.get("state", {}).get("waiting", {}).get("reason")
               for p in stuck for cs in p["status"].get("containerStatuses") or ()}
    assert waiting & {"ErrImagePull", "ImagePullBackOff"}
    current = await client.get("replicasets", first["metadata"]["name"], namespace=NS)
    assert current["status"]["availableReplicas"] >= 3


async def test_deleted_pods_are_replaced(kubeloop_cluster: EmbeddedCluster, monitor_for: StartMonitor) -> None:
    """Pods deleted by hand are recreated by the ReplicaSet; the rollout completes again."""
    client = kubeloop_cluster.client
    monitor = await monitor_for("replaced")
    await client.create(DEPLOYMENTS, deployment("replaced", 3, {"name": "replaced"}), namespace=NS)
    await wait_complete(kubeloop_cluster, "replaced")
    old = await pods_matching(client, {"name": "replaced"})
    old_names = {p["metadata"]["name"] for p in old}
    async with monitor.allow_disruption():
        for pod in old:
            await client.delete(PODS, pod["metadata"]["name"], namespace=NS)
        await kubeloop_cluster.wait_until(lambda: _all_new(client, old_names, 3), message="three replacement pods")
        await wait_complete(kubeloop_cluster, "replaced")


async def _all_new(client: ApiClient, old_names: set[str], count: int) -> bool:
    pods = await pods_matching(client, {"name": "replaced"})
    ready = [p for p in pods if any(c.get("type") == "Ready" and c.get("status") == "True"
                                    for c in p["status"].get("conditions") or ())]
    return len(ready) == count and not ({p["metadata"]["name"] for p in ready} & old_names)


async def test_iterative_rollouts_eventually_progress(kubeloop_cluster: EmbeddedCluster,
                                                      monitor_for: StartMonitor) -> None:
    """``testIterativeDeployments``, shortened: random template changes, rollbacks, scaling, pausing and pod deletions
    in quick succession; afterwards the Deployment completes with NewReplicaSetAvailable."""
    client = kubeloop_cluster.client
    monitor = await monitor_for("iterative")
    rng = random.Random(20240601)
    await client.create(DEPLOYMENTS, deployment("iterative", 6, {"name": "iterative"}, progressDeadlineSeconds=300,
                                                revisionHistoryLimit=2), namespace=NS)
    await wait_complete(kubeloop_cluster, "iterative")
    async with monitor.allow_disruption():
        for i in range(12):
            # Random pauses between the changes, as upstream's test does: some land while
            # the previous change is still rolling out, some after it finished.
            await asyncio.sleep(rng.random() * 0.3)
            choice = rng.randrange(5)
            if choice == 0:
                def add_env(d: Obj, i: int = i) -> None:
                    container = d["spec"]["template"]["spec"]["containers"][0]
                    container.setdefault("env", []).append({"name": f"A{i}", "value": str(i)})
                    d["spec"]["replicas"] = max(1, d["spec"]["replicas"] + rng.choice((-1, 1)))
                await update_deployment(client, "iterative", add_env)
            elif choice == 1:
                await client.patch(DEPLOYMENTS, "iterative",
                                   {"metadata": {"annotations": {"deprecated.deployment.rollback.to": "0"}}},
                                   namespace=NS)
            elif choice == 2:
                d = await get_deployment(client, "iterative")
                replicas = max(1, spec_replicas(d) + rng.choice((-1, 1)))
                await client.patch(DEPLOYMENTS, "iterative", {"spec": {"replicas": replicas}}, namespace=NS)
            elif choice == 3:
                d = await get_deployment(client, "iterative")
                await client.patch(DEPLOYMENTS, "iterative", {"spec": {"paused": not d["spec"].get("paused")}},
                                   namespace=NS)
            else:
                for pod in await pods_matching(client, {"name": "iterative"}):
                    if rng.random() < 0.5:
                        try:
                            await client.delete(PODS, pod["metadata"]["name"], namespace=NS)
                        except Exception as exc:
                            if not is_not_found(exc):
                                raise
        await client.patch(DEPLOYMENTS, "iterative", {"spec": {"paused": False}}, namespace=NS)
        await wait_complete(kubeloop_cluster, "iterative", timeout=60)
    await wait_observed(kubeloop_cluster, "iterative", has_reason("Progressing", "NewReplicaSetAvailable"))
