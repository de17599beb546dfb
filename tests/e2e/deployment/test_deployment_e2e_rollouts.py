"""Rollout scenarios of upstream's ``test/e2e/apps/deployment.go`` (``test*`` names) and
``test/integration/deployment/deployment_test.go`` (``Test*`` names) on the whole embedded cluster.

Every test runs under a :class:`~kubeloop.testing.monitor.DeploymentMonitor` (fixture
``monitor_for``), which checks the rollout invariants at every watch event and fails
the test on any violation. Upstream's sizes and waits are scaled down (10 replicas instead of
20, a few seconds of ``minReadySeconds`` instead of 10); the behaviour asserted is the same.
"""

from __future__ import annotations

import pytest
from deployment_e2e_kit import (
    AGNHOST,
    HTTPD,
    NEVER_READY,
    NS,
    Obj,
    StartMonitor,
    deployment,
    get_deployment,
    image_of,
    owned_replica_sets,
    pods_matching,
    reason_of,
    replica_set,
    set_image,
    set_pod_annotations,
    status_counts,
    the_new_replica_set,
    update_deployment,
    wait_complete,
    wait_observed,
    wait_revision_and_image,
)

from kubeloop.client import DEPLOYMENTS, REPLICA_SETS
from kubeloop.testing.cluster import EmbeddedCluster
from kubeloop.testing.deployment_rules import (
    DESIRED_REPLICAS,
    POD_TEMPLATE_HASH,
    REVISION,
    spec_replicas,
)

pytestmark = pytest.mark.e2e


async def test_new_deployment_labels_its_replica_set_and_pods(kubeloop_cluster: EmbeddedCluster,
                                                              monitor_for: StartMonitor) -> None:
    """``TestNewDeployment``: annotations copied except last-applied; one pod-template-hash everywhere."""
    client = kubeloop_cluster.client
    await monitor_for("test-new-deployment")
    labels = {"name": "test-new"}
    body = deployment("test-new-deployment", 10, labels, minReadySeconds=1)
    body["metadata"]["annotations"] = {"test": "should-copy-to-replica-set",
                                       "kubectl.kubernetes.io/last-applied-configuration": "should-not-copy"}
    await client.create(DEPLOYMENTS, body, namespace=NS)
    await wait_revision_and_image(kubeloop_cluster, "test-new-deployment", 1, HTTPD)
    d = await wait_complete(kubeloop_cluster, "test-new-deployment")

    rs = await the_new_replica_set(client, d)
    annotations = rs["metadata"]["annotations"]
    assert annotations["test"] == "should-copy-to-replica-set"
    assert "kubectl.kubernetes.io/last-applied-configuration" not in annotations
    hash_value = rs["spec"]["selector"]["matchLabels"][POD_TEMPLATE_HASH]
    assert rs["metadata"]["labels"][POD_TEMPLATE_HASH] == hash_value
    assert rs["spec"]["template"]["metadata"]["labels"][POD_TEMPLATE_HASH] == hash_value
    pods = await pods_matching(client, labels)
    assert len(pods) == 10
    assert {p["metadata"]["labels"][POD_TEMPLATE_HASH] for p in pods} == {hash_value}


async def test_rolling_update_then_rollover_of_a_stuck_rollout(kubeloop_cluster: EmbeddedCluster,
                                                               monitor_for: StartMonitor) -> None:
    """``TestDeploymentRollingUpdate``: new image completes; a never-ready template is overtaken by a third one."""
    client = kubeloop_cluster.client
    await monitor_for("test-rolling")
    await client.create(DEPLOYMENTS, deployment("test-rolling", 10, {"name": "rolling"}, minReadySeconds=1),
                        namespace=NS)
    await wait_complete(kubeloop_cluster, "test-rolling", revision=1)

    await update_deployment(client, "test-rolling", set_image("new-image"))
    await wait_complete(kubeloop_cluster, "test-rolling", revision=2)

    def stuck(d: Obj) -> None:
        set_image("dont-finish")(d)
        set_pod_annotations(NEVER_READY)(d)

    await update_deployment(client, "test-rolling", stuck)
    await wait_revision_and_image(kubeloop_cluster, "test-rolling", 3, "dont-finish")

    def rollover(d: Obj) -> None:
        set_image("rollover")(d)
        set_pod_annotations(None)(d)

    await update_deployment(client, "test-rolling", rollover)
    d = await wait_complete(kubeloop_cluster, "test-rolling", revision=4)
    assert image_of(d) == "rollover"
    replica_sets = await owned_replica_sets(client, d)
    new = await the_new_replica_set(client, d)
    assert [spec_replicas(rs) for rs in replica_sets if rs["metadata"]["uid"] != new["metadata"]["uid"]] == [0, 0, 0]


async def test_recreate_never_runs_old_and_new_pods_together(kubeloop_cluster: EmbeddedCluster,
                                                             monitor_for: StartMonitor) -> None:
    """``testRecreateDeployment``: the monitor's I8 checks every pod and status event; the rollout completes."""
    client = kubeloop_cluster.client
    await monitor_for("test-recreate")
    body = deployment("test-recreate", 3, {"name": "sample-pod-3"}, image=AGNHOST, strategy="Recreate",
                      pod_annotations={"sim.kubeloop.io/termination-delay": "0.3"})
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 1
    await client.create(DEPLOYMENTS, body, namespace=NS)
    await wait_complete(kubeloop_cluster, "test-recreate", revision=1)

    def change(d: Obj) -> None:
        container = d["spec"]["template"]["spec"]["containers"][0]
        container["name"], container["image"] = "httpd", HTTPD

    await update_deployment(client, "test-recreate", change)
    d = await wait_complete(kubeloop_cluster, "test-recreate", revision=2)
    assert status_counts(d)[:2] == (3, 3)


async def test_adopted_replica_set_sets_the_revision_base(kubeloop_cluster: EmbeddedCluster,
                                                          monitor_for: StartMonitor) -> None:
    """``testRollingUpdateDeployment``: the adopted ReplicaSet's revision 3546343826724305832 makes the
    new one ...833."""
    client = kubeloop_cluster.client
    labels = {"name": "sample-pod", "pod": "httpd"}
    await client.create(REPLICA_SETS, replica_set("test-rolling-update-controller", 1, labels,
                                                  annotations={REVISION: "3546343826724305832"}), namespace=NS)
    await kubeloop_cluster.wait_for(REPLICA_SETS, "test-rolling-update-controller",
                                    lambda rs: (rs.get("status") or {}).get("readyReplicas") == 1)
    await monitor_for("test-rolling-update-deployment")
    body = deployment("test-rolling-update-deployment", 1, {"name": "sample-pod"}, image=AGNHOST)
    await client.create(DEPLOYMENTS, body, namespace=NS)
    await wait_revision_and_image(kubeloop_cluster, "test-rolling-update-deployment", 3546343826724305833, AGNHOST)
    d = await wait_complete(kubeloop_cluster, "test-rolling-update-deployment")
    replica_sets = await owned_replica_sets(client, d)
    new = await the_new_replica_set(client, d)
    assert [rs["metadata"]["name"] for rs in replica_sets if rs["metadata"]["uid"] != new["metadata"]["uid"]] == \
        ["test-rolling-update-controller"]


async def test_revision_history_limit_zero_deletes_the_adopted_replica_set(kubeloop_cluster: EmbeddedCluster,
                                                                           monitor_for: StartMonitor) -> None:
    """``testDeploymentCleanUpPolicy``: adopting an old ReplicaSet creates no pods for it; exactly one
    new pod appears."""
    client = kubeloop_cluster.client
    labels = {"name": "cleanup-pod", "pod": "httpd"}
    await client.create(REPLICA_SETS, replica_set("test-cleanup-controller", 1, labels), namespace=NS)
    await kubeloop_cluster.wait_for(REPLICA_SETS, "test-cleanup-controller",
                                    lambda rs: (rs.get("status") or {}).get("readyReplicas") == 1)
    monitor = await monitor_for("test-cleanup-deployment")
    before = set(monitor.pods)
    body = deployment("test-cleanup-deployment", 1, {"name": "cleanup-pod"}, image=AGNHOST, revisionHistoryLimit=0)
    await client.create(DEPLOYMENTS, body, namespace=NS)
    d = await wait_complete(kubeloop_cluster, "test-cleanup-deployment")

    async def no_old_replica_sets() -> bool:
        return len(await owned_replica_sets(client, d)) == 1

    await kubeloop_cluster.wait_until(no_old_replica_sets, message="the adopted ReplicaSet to be deleted")
    await kubeloop_cluster.wait_deleted(REPLICA_SETS, "test-cleanup-controller")
    await monitor.settle()
    added = [name for name in monitor.pods_added if name not in before]
    assert len(added) == 1
    new = await the_new_replica_set(client, d)
    assert added[0].startswith(new["metadata"]["name"] + "-")


async def test_rollover_from_a_never_ready_template(kubeloop_cluster: EmbeddedCluster,
                                                    monitor_for: StartMonitor) -> None:
    """``testRolloverDeployment``: maxUnavailable 0 / maxSurge 1 keeps the adopted pod while the new one never
    turns ready; a second template rolls over both."""
    client = kubeloop_cluster.client
    labels = {"name": "rollover-pod", "pod": "httpd"}
    await client.create(REPLICA_SETS, replica_set("test-rollover-controller", 1, labels), namespace=NS)
    await kubeloop_cluster.wait_for(REPLICA_SETS, "test-rollover-controller",
                                    lambda rs: (rs.get("status") or {}).get("readyReplicas") == 1)
    await monitor_for("test-rollover-deployment")
    body = deployment("test-rollover-deployment", 1, {"name": "rollover-pod"},
                      image="gcr.io/google_samples/gb-redisslave:nonexistent", pod_annotations=NEVER_READY,
                      rolling={"maxUnavailable": 0, "maxSurge": 1}, minReadySeconds=2)
    await client.create(DEPLOYMENTS, body, namespace=NS)
    await wait_observed(kubeloop_cluster, "test-rollover-deployment",
                        lambda d: (d.get("status") or {}).get("updatedReplicas", 0) >= 1)
    d = await wait_revision_and_image(kubeloop_cluster, "test-rollover-deployment", 1,
                                      "gcr.io/google_samples/gb-redisslave:nonexistent")
    first_new = await the_new_replica_set(client, d)

    async def both_at_one() -> bool:
        old = await client.get(REPLICA_SETS, "test-rollover-controller", namespace=NS)
        new = await client.get(REPLICA_SETS, first_new["metadata"]["name"], namespace=NS)
        return all(spec_replicas(rs) == 1 and (rs.get("status") or {}).get("replicas") == 1 for rs in (old, new))

    await kubeloop_cluster.wait_until(both_at_one, message="old and new ReplicaSets at one replica each")

    def rollover(d: Obj) -> None:
        set_image(AGNHOST)(d)
        set_pod_annotations(None)(d)

    await update_deployment(client, "test-rollover-deployment", rollover)
    await wait_revision_and_image(kubeloop_cluster, "test-rollover-deployment", 2, AGNHOST)
    await wait_complete(kubeloop_cluster, "test-rollover-deployment")

    async def drained() -> bool:
        for name in ("test-rollover-controller", first_new["metadata"]["name"]):
            rs = await client.get(REPLICA_SETS, name, namespace=NS)
            if spec_replicas(rs) != 0 or (rs.get("status") or {}).get("replicas") != 0:
                return False
        return True

    await kubeloop_cluster.wait_until(drained, message="both old ReplicaSets at 0")


async def test_proportional_scaling_mid_rollout(kubeloop_cluster: EmbeddedCluster,
                                                monitor_for: StartMonitor) -> None:
    """``testProportionalScalingDeployment``: 10 replicas, surge 3, unavailable 2, a never-ready
    template: 8 + 5; scaled to 30 the ReplicaSets become 20 + 13."""
    client = kubeloop_cluster.client
    await monitor_for("webserver")
    body = deployment("webserver", 10, {"name": "proportional"}, rolling={"maxSurge": 3, "maxUnavailable": 2})
    await client.create(DEPLOYMENTS, body, namespace=NS)
    d = await wait_complete(kubeloop_cluster, "webserver")
    first = await the_new_replica_set(client, d)

    def broken(d: Obj) -> None:
        set_image("webserver:404")(d)
        set_pod_annotations(NEVER_READY)(d)

    await update_deployment(client, "webserver", broken)
    d = await wait_revision_and_image(kubeloop_cluster, "webserver", 2, "webserver:404")
    second = await the_new_replica_set(client, d)

    async def sizes_are(expected_first: int, expected_second: int) -> bool:
        a = await client.get(REPLICA_SETS, first["metadata"]["name"], namespace=NS)
        b = await client.get(REPLICA_SETS, second["metadata"]["name"], namespace=NS)
        return (spec_replicas(a), spec_replicas(b)) == (expected_first, expected_second) and \
            (a.get("status") or {}).get("availableReplicas") == expected_first and \
            (b.get("status") or {}).get("replicas") == expected_second

    await kubeloop_cluster.wait_until(lambda: sizes_are(8, 5), message="ReplicaSets at 8 and 5")
    d = await get_deployment(client, "webserver")
    assert d["status"]["availableReplicas"] >= 8

    await client.patch(DEPLOYMENTS, "webserver", {"spec": {"replicas": 30}}, namespace=NS)
    await kubeloop_cluster.wait_until(lambda: sizes_are(20, 13), message="ReplicaSets at 20 and 13")


async def test_scaled_rollouts_record_desired_replicas(kubeloop_cluster: EmbeddedCluster,
                                                       monitor_for: StartMonitor) -> None:
    """``TestScaledRolloutDeployment``: a scale and a template change at once, in the middle of a stuck rollout; every
    ReplicaSet ends with ``desired-replicas`` equal to the new size."""
    client = kubeloop_cluster.client
    await monitor_for("scaled")
    await client.create(DEPLOYMENTS, deployment("scaled", 10, {"name": "scaled"},
                                                rolling={"maxSurge": 3, "maxUnavailable": 2}), namespace=NS)
    await wait_complete(kubeloop_cluster, "scaled", revision=1)
    for step, (replicas, image) in enumerate(((20, "fakeimage3"), (5, "fakeimage5"))):
        def stuck(d: Obj, stuck_image: str = f"stuck-{step}") -> None:
            set_image(stuck_image)(d)
            set_pod_annotations(NEVER_READY)(d)

        await update_deployment(client, "scaled", stuck)
        await wait_observed(kubeloop_cluster, "scaled",
                            lambda d: d["status"].get("availableReplicas", 0) >= 8
                            and d["status"].get("updatedReplicas", 0) > 0)

        def scale_and_fix(d: Obj, replicas: int = replicas, image: str = image) -> None:
            d["spec"]["replicas"] = replicas
            set_image(image)(d)
            set_pod_annotations(None)(d)

        await update_deployment(client, "scaled", scale_and_fix)
        d = await wait_complete(kubeloop_cluster, "scaled", revision=3 + 2 * step)
        recent = (await owned_replica_sets(client, d))[-3:]
        assert [rs["metadata"]["annotations"][DESIRED_REPLICAS] for rs in recent] == [str(replicas)] * 3


async def test_paused_deployment_creates_nothing_until_resumed(kubeloop_cluster: EmbeddedCluster,
                                                               monitor_for: StartMonitor) -> None:
    """``TestPausedDeployment`` and ``TestScalePausedDeployment``: no ReplicaSet while paused; a
    template change while paused makes no new ReplicaSet; scaling while paused resizes the existing
    one."""
    client = kubeloop_cluster.client
    await monitor_for("paused")
    body = deployment("paused", 1, {"name": "paused"}, paused=True)
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 1
    created = await client.create(DEPLOYMENTS, body, namespace=NS)
    await wait_observed(kubeloop_cluster, "paused")
    assert await owned_replica_sets(client, created) == []

    await client.patch(DEPLOYMENTS, "paused", {"spec": {"paused": False}}, namespace=NS)
    d = await wait_complete(kubeloop_cluster, "paused", revision=1)
    assert len(await owned_replica_sets(client, d)) == 1

    await client.patch(DEPLOYMENTS, "paused", {"spec": {"paused": True}}, namespace=NS)
    await wait_observed(kubeloop_cluster, "paused")

    def new_grace(d: Obj) -> None:
        d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0

    await update_deployment(client, "paused", new_grace)
    d = await wait_observed(kubeloop_cluster, "paused")
    replica_sets = await owned_replica_sets(client, d)
    assert len(replica_sets) == 1
    assert replica_sets[0]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 1
    assert reason_of(d, "Progressing") == "DeploymentPaused"

    await client.patch(DEPLOYMENTS, "paused", {"spec": {"replicas": 5}}, namespace=NS)
    d = await wait_observed(kubeloop_cluster, "paused")
    await kubeloop_cluster.wait_for(REPLICA_SETS, replica_sets[0]["metadata"]["name"],
                                    lambda rs: spec_replicas(rs) == 5
                                    and (rs.get("status") or {}).get("availableReplicas") == 5)
    assert len(await owned_replica_sets(client, d)) == 1

    await client.patch(DEPLOYMENTS, "paused", {"spec": {"paused": False}}, namespace=NS)
    d = await wait_complete(kubeloop_cluster, "paused", revision=2)
    assert d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 0
    assert reason_of(d, "Progressing") == "NewReplicaSetAvailable"


async def test_rollback_through_the_annotation(kubeloop_cluster: EmbeddedCluster,
                                               monitor_for: StartMonitor) -> None:
    """Rollback to the previous revision: the old ReplicaSet becomes new again with revision 3."""
    client = kubeloop_cluster.client
    await monitor_for("rollback")
    await client.create(DEPLOYMENTS, deployment("rollback", 3, {"name": "rollback"}), namespace=NS)
    d = await wait_complete(kubeloop_cluster, "rollback", revision=1)
    first = await the_new_replica_set(client, d)
    await update_deployment(client, "rollback", set_image("httpd:2.4.39-alpine"))
    await wait_complete(kubeloop_cluster, "rollback", revision=2)

    await client.patch(DEPLOYMENTS, "rollback",
                       {"metadata": {"annotations": {"deprecated.deployment.rollback.to": "0"}}}, namespace=NS)
    d = await wait_complete(kubeloop_cluster, "rollback", revision=3)
    assert image_of(d) == HTTPD
    assert "deprecated.deployment.rollback.to" not in (d["metadata"].get("annotations") or {})
    new = await the_new_replica_set(client, d)
    assert new["metadata"]["uid"] == first["metadata"]["uid"]
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"


async def test_hash_collision_bumps_the_collision_count(kubeloop_cluster: EmbeddedCluster,
                                                        monitor_for: StartMonitor) -> None:
    """``TestDeploymentHashCollision``: a ReplicaSet whose template no longer matches makes the
    controller pick another name."""
    client = kubeloop_cluster.client
    await monitor_for("collision")
    await client.create(DEPLOYMENTS, deployment("collision", 1, {"name": "collision"}), namespace=NS)
    d = await wait_complete(kubeloop_cluster, "collision", revision=1)
    rs = await the_new_replica_set(client, d)
    rs["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 5
    await client.update(REPLICA_SETS, rs, namespace=NS)

    d = await wait_complete(kubeloop_cluster, "collision", revision=2)
    assert d["status"]["collisionCount"] == 1
    new = await the_new_replica_set(client, d)
    assert new["metadata"]["name"] != rs["metadata"]["name"]


async def test_spec_replicas_changes_under_recreate(kubeloop_cluster: EmbeddedCluster,
                                                    monitor_for: StartMonitor) -> None:
    """``TestSpecReplicasChange``: scale 2, 0, 1; a change of revisionHistoryLimit alone is observed too."""
    client = kubeloop_cluster.client
    await monitor_for("spec-replicas")
    await client.create(DEPLOYMENTS, deployment("spec-replicas", 1, {"name": "spec"}, strategy="Recreate"),
                        namespace=NS)
    await wait_complete(kubeloop_cluster, "spec-replicas")
    for replicas in (2, 0, 1):
        await client.patch(DEPLOYMENTS, "spec-replicas", {"spec": {"replicas": replicas}}, namespace=NS)
        d = await wait_complete(kubeloop_cluster, "spec-replicas")
        assert spec_replicas(await the_new_replica_set(client, d)) == replicas
    before = await get_deployment(client, "spec-replicas")
    after = await client.patch(DEPLOYMENTS, "spec-replicas", {"spec": {"revisionHistoryLimit": 4}}, namespace=NS)
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    await wait_observed(kubeloop_cluster, "spec-replicas")


async def test_min_ready_seconds_gates_availability(kubeloop_cluster: EmbeddedCluster,
                                                    monitor_for: StartMonitor) -> None:
    """``TestDeploymentAvailableCondition``: ready but not yet available pods; lowering minReadySeconds
    makes them available."""
    client = kubeloop_cluster.client
    await monitor_for("available")
    await client.create(DEPLOYMENTS, deployment("available", 4, {"name": "available"}, minReadySeconds=3600,
                                                progressDeadlineSeconds=7200), namespace=NS)
    d = await wait_observed(kubeloop_cluster, "available", lambda d: status_counts(d) == (4, 4, 4, 0, 4))
    assert reason_of(d, "Available") == "MinimumReplicasUnavailable"
    await client.patch(DEPLOYMENTS, "available", {"spec": {"minReadySeconds": 1}}, namespace=NS)
    d = await wait_observed(kubeloop_cluster, "available", lambda d: status_counts(d) == (4, 4, 4, 4, 0))
    assert reason_of(d, "Available") == "MinimumReplicasAvailable"
    rs = await the_new_replica_set(client, d)
    assert rs["spec"]["minReadySeconds"] == 1
