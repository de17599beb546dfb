"""The ReplicaSet controller's scenarios of upstream's
``test/integration/replicaset/replicaset_test.go``, on the whole embedded
cluster (the simulated kubelet runs the pods), under a :class:`ReplicaSetMonitor`."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from deployment_e2e_kit import NS, Obj, pods_matching, replica_set

from kubeloop.client import PODS, REPLICA_SETS, ApiClient, is_invalid
from kubeloop.controllers import add_controllers
from kubeloop.runtime.manager import Manager, ManagerOptions
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster, quick_kubelet_config
from kubeloop.testing.replicaset_monitor import ReplicaSetMonitor

pytestmark = pytest.mark.e2e
LABELS = {"name": "rs-test"}


def bare_pod(name: str, labels: dict[str, str] = LABELS, owners: list[Obj] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": dict(labels), "ownerReferences": list(owners or [])},
            "spec": {"containers": [{"name": "httpd", "image": "httpd"}], "terminationGracePeriodSeconds": 0}}


def ref(owner: Obj, *, controller: bool | None = None, block: bool | None = None) -> Obj:
    result: Obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner["metadata"]["name"],
                   "uid": owner["metadata"]["uid"]}
    if controller is not None:
        result["controller"] = controller
    if block is not None:
        result["blockOwnerDeletion"] = block
    return result


def owned_by(pod: Obj, rs: Obj) -> bool:
    return any(r.get("controller") and r.get("uid") == rs["metadata"]["uid"]
               for r in pod["metadata"].get("ownerReferences") or ())


def controlled_by(rs: Obj) -> Callable[[Obj], bool]:
    return lambda pod: owned_by(pod, rs)


async def rs_pods(client: ApiClient, rs: Obj) -> list[Obj]:
    return [p for p in await pods_matching(client, rs["spec"]["selector"]["matchLabels"]) if owned_by(p, rs)]


async def wait_rs(cluster: EmbeddedCluster, name: str, replicas: int, *, ready: int | None = None) -> Obj:
    def done(rs: Obj) -> bool:
        status = rs.get("status") or {}
        return (status.get("observedGeneration") == rs["metadata"]["generation"]
                and status.get("replicas", 0) == replicas
                and (ready is None or status.get("readyReplicas", 0) == ready))
    return await cluster.wait_for(REPLICA_SETS, name, done)


async def test_adoption_of_existing_pods(tmp_path: Path) -> None:
    """``TestAdoption``, the pods made before the ReplicaSet controller starts: (a) a non-controller
    reference becomes the controller one, (b) a pod without references is adopted, (c) a
    controller reference is left alone, (d) a pod controlled by another owner stays with it."""
    config = ClusterConfig(data_dir=tmp_path / "cluster", kubelet=quick_kubelet_config(), controllers=())
    async with EmbeddedCluster(config) as cluster:
        await cluster.wait_ready()
        client = cluster.client
        monitor = ReplicaSetMonitor(client)
        await monitor.start()
        cases = ("a", "b", "c", "d")
        sets = {k: await client.create(REPLICA_SETS, replica_set(f"rs-{k}", 1, {"case": k}), namespace=NS)
                for k in cases}
        other = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "other", "uid": str(uuid.uuid4()),
                 "controller": True}
        pods = {"a": [ref(sets["a"], controller=False)], "b": [], "c": [ref(sets["c"], controller=True)],
                "d": [other, ref(sets["d"], controller=False)]}
        for k, owners in pods.items():
            await client.create(PODS, bare_pod(f"pod-{k}", {"case": k}, owners), namespace=NS)
        manager = Manager(client, ManagerOptions(name="late-replicaset"))
        await add_controllers(manager, ["replicaset"])
        await manager.start()
        try:
            for k in ("a", "b"):
                pod = await cluster.wait_for(PODS, f"pod-{k}", controlled_by(sets[k]))
                [reference] = pod["metadata"]["ownerReferences"]
                assert reference["controller"] is True and reference["blockOwnerDeletion"] is True
            for k in ("a", "b", "c"):
                await wait_rs(cluster, f"rs-{k}", 1)
                assert [p["metadata"]["name"] for p in await rs_pods(client, sets[k])] == [f"pod-{k}"]
            pod_c = await client.get(PODS, "pod-c", namespace=NS)
            assert pod_c["metadata"]["ownerReferences"] == [ref(sets["c"], controller=True)]
            # rs-d creates a pod of its own: pod-d belongs to another controller.
            await wait_rs(cluster, "rs-d", 1)
            pod_d = await client.get(PODS, "pod-d", namespace=NS)
            assert pod_d["metadata"]["ownerReferences"] == [other, ref(sets["d"], controller=False)]
            assert [p["metadata"]["name"] for p in await rs_pods(client, sets["d"])] != ["pod-d"]
        finally:
            await manager.stop()
            for informer in manager.factory.informers():
                await informer.stop()
            await monitor.stop()
        monitor.check()


async def test_selector_is_immutable(kubeloop_cluster: EmbeddedCluster) -> None:
    """``TestRSSelectorImmutability``."""
    client = kubeloop_cluster.client
    rs = await client.create(REPLICA_SETS, replica_set("immutable", 0, LABELS), namespace=NS)
    rs["spec"]["selector"] = {"matchLabels": {"other": "x"}}
    rs["spec"]["template"]["metadata"]["labels"] = {"other": "x"}
    with pytest.raises(Exception) as caught:
        await client.update(REPLICA_SETS, rs, namespace=NS)
    assert is_invalid(caught.value) and "field is immutable" in str(caught.value)


async def test_spec_replicas_changes_and_generation(kubeloop_cluster: EmbeddedCluster,
                                                    replica_set_monitor: ReplicaSetMonitor) -> None:
    """``TestSpecReplicasChange``: scale 3, 0, 2; a template annotation alone bumps the generation, observed."""
    client = kubeloop_cluster.client
    await client.create(REPLICA_SETS, replica_set("spec", 2, LABELS), namespace=NS)
    await wait_rs(kubeloop_cluster, "spec", 2)
    for replicas in (3, 0, 2):
        await client.patch(REPLICA_SETS, "spec", {"spec": {"replicas": replicas}}, namespace=NS)
        await wait_rs(kubeloop_cluster, "spec", replicas)
    rs = await client.patch(REPLICA_SETS, "spec", {"spec": {"template": {"metadata": {"annotations": {"a": "b"}}}}},
                            namespace=NS)
    assert rs["metadata"]["generation"] == 5
    await wait_rs(kubeloop_cluster, "spec", 2)


async def test_deleting_and_failed_pods_are_replaced(kubeloop_cluster: EmbeddedCluster,
                                                     replica_set_monitor: ReplicaSetMonitor) -> None:
    """``TestDeletingAndFailedPods``: a pod held in deletion by a finalizer and a Failed pod stop counting; two
    replacements are created and status.replicas counts the active two."""
    client = kubeloop_cluster.client
    rs = await client.create(REPLICA_SETS, replica_set("failing", 2, LABELS), namespace=NS)
    await wait_rs(kubeloop_cluster, "failing", 2, ready=2)
    first, second = await rs_pods(client, rs)
    await client.patch(PODS, first["metadata"]["name"],
                       {"metadata": {"finalizers": ["fake.example.com/blockDeletion"]}}, namespace=NS)
    await client.delete(PODS, first["metadata"]["name"], namespace=NS)
    failed = await client.get(PODS, second["metadata"]["name"], namespace=NS)
    failed["status"]["phase"] = "Failed"
    await client.update_status(PODS, failed, namespace=NS)

    async def replaced() -> bool:
        pods = await pods_matching(client, LABELS, active=False)
        active = [p for p in pods if not p["metadata"].get("deletionTimestamp") and p["status"].get("phase")
                  != "Failed"]
        return len(pods) == 4 and len(active) == 2

    await kubeloop_cluster.wait_until(replaced, message="two replacement pods")
    await wait_rs(kubeloop_cluster, "failing", 2)
    await client.patch(PODS, first["metadata"]["name"], {"metadata": {"finalizers": None}}, namespace=NS)


async def test_pod_deletion_cost_chooses_the_victim(kubeloop_cluster: EmbeddedCluster,
                                                    replica_set_monitor: ReplicaSetMonitor) -> None:
    """``TestPodDeletionCost``: scaled 2 -> 1, the pod with the higher deletion cost stays."""
    client = kubeloop_cluster.client
    rs = await client.create(REPLICA_SETS, replica_set("cost", 2, LABELS), namespace=NS)
    await wait_rs(kubeloop_cluster, "cost", 2, ready=2)
    keep, drop = await rs_pods(client, rs)
    for pod, cost in ((keep, "1000"), (drop, "100")):
        await client.patch(PODS, pod["metadata"]["name"],
                           {"metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": cost}}},
                           namespace=NS)
    await client.patch(REPLICA_SETS, "cost", {"spec": {"replicas": 1}}, namespace=NS)
    await wait_rs(kubeloop_cluster, "cost", 1)
    assert [p["metadata"]["name"] for p in await rs_pods(client, rs)] == [keep["metadata"]["name"]]


async def test_overlapping_replica_sets(kubeloop_cluster: EmbeddedCluster,
                                        replica_set_monitor: ReplicaSetMonitor) -> None:
    """``TestOverlappingRSs``: identical selectors, 1 and 2 replicas: 3 pods, each ReplicaSet counting its own."""
    client = kubeloop_cluster.client
    await client.create(REPLICA_SETS, replica_set("overlap-1", 1, LABELS), namespace=NS)
    await client.create(REPLICA_SETS, replica_set("overlap-2", 2, LABELS), namespace=NS)
    await wait_rs(kubeloop_cluster, "overlap-1", 1, ready=1)
    await wait_rs(kubeloop_cluster, "overlap-2", 2, ready=2)
    assert len(await pods_matching(client, LABELS)) == 3


async def test_pod_released_and_readopted_when_labels_change(kubeloop_cluster: EmbeddedCluster,
                                                             replica_set_monitor: ReplicaSetMonitor) -> None:
    """``TestPodOrphaningAndAdoptionWhenLabelsChange``: a relabelled pod is released and replaced;
    relabelled back, it is adopted again (or deleted as an extra), and the ReplicaSet ends with its
    replicas, all owned."""
    client = kubeloop_cluster.client
    rs = await client.create(REPLICA_SETS, replica_set("relabel", 1, LABELS), namespace=NS)
    await wait_rs(kubeloop_cluster, "relabel", 1, ready=1)
    [pod] = await rs_pods(client, rs)
    name = pod["metadata"]["name"]
    await client.patch(PODS, name, {"metadata": {"labels": {"name": "elsewhere"}}}, namespace=NS)
    await kubeloop_cluster.wait_for(PODS, name, lambda p: not owned_by(p, rs))

    async def replaced() -> bool:
        return len(await rs_pods(client, rs)) == 1 and (await rs_pods(client, rs))[0]["metadata"]["name"] != name

    await kubeloop_cluster.wait_until(replaced, message="a replacement pod")
    await client.patch(PODS, name, {"metadata": {"labels": dict(LABELS)}}, namespace=NS)

    async def settled() -> bool:
        pods = await pods_matching(client, LABELS)
        return len(pods) == 1 and owned_by(pods[0], rs)

    await kubeloop_cluster.wait_until(settled, message="one owned pod")


async def test_ready_and_available_with_min_ready_seconds(kubeloop_cluster: EmbeddedCluster,
                                                          replica_set_monitor: ReplicaSetMonitor) -> None:
    """``TestReadyAndAvailableReplicas``, with real readiness: ready pods are not available before minReadySeconds."""
    client = kubeloop_cluster.client
    body = replica_set("available", 3, LABELS)
    body["spec"]["minReadySeconds"] = 3600
    await client.create(REPLICA_SETS, body, namespace=NS)
    rs = await wait_rs(kubeloop_cluster, "available", 3, ready=3)
    assert rs["status"].get("availableReplicas", 0) == 0
    await client.patch(REPLICA_SETS, "available", {"spec": {"minReadySeconds": 0}}, namespace=NS)
    await kubeloop_cluster.wait_for(REPLICA_SETS, "available",
                                    lambda r: (r.get("status") or {}).get("availableReplicas") == 3)


async def test_extra_orphans_are_adopted_and_trimmed(kubeloop_cluster: EmbeddedCluster,
                                                     replica_set_monitor: ReplicaSetMonitor) -> None:
    """``TestExtraPodsAdoptionAndDeletion``: three matching orphans, a ReplicaSet of 2 adopts them and deletes one."""
    client = kubeloop_cluster.client
    for index in range(3):
        await client.create(PODS, bare_pod(f"orphan-{index}"), namespace=NS)
    rs = await client.create(REPLICA_SETS, replica_set("extra", 2, LABELS), namespace=NS)

    async def two_owned() -> bool:
        pods = await pods_matching(client, LABELS, active=False)
        return len(pods) == 2 and all(owned_by(p, rs) for p in pods)

    await kubeloop_cluster.wait_until(two_owned, message="two adopted pods")
    assert {p["metadata"]["name"] for p in await pods_matching(client, LABELS)} < {f"orphan-{i}" for i in range(3)}


async def test_fully_labeled_replicas(kubeloop_cluster: EmbeddedCluster,
                                      replica_set_monitor: ReplicaSetMonitor) -> None:
    """``TestFullyLabeledReplicas``: the template gains a label the selector lacks; one pod carries it."""
    client = kubeloop_cluster.client
    rs = await client.create(REPLICA_SETS, replica_set("labelled", 2, LABELS), namespace=NS)
    await wait_rs(kubeloop_cluster, "labelled", 2, ready=2)
    await client.patch(REPLICA_SETS, "labelled",
                       {"spec": {"template": {"metadata": {"labels": {"extraKey": "extraValue"}}}}}, namespace=NS)
    first = (await rs_pods(client, rs))[0]
    await client.patch(PODS, first["metadata"]["name"], {"metadata": {"labels": {"extraKey": "extraValue"}}},
                       namespace=NS)
    await kubeloop_cluster.wait_for(REPLICA_SETS, "labelled",
                                    lambda r: (r.get("status") or {}).get("fullyLabeledReplicas") == 1
                                    and r["status"].get("replicas") == 2)


async def test_apps_v1_delete_adds_no_orphan_finalizer(kubeloop_cluster: EmbeddedCluster) -> None:
    """``TestReplicaSetsAppsV1DefaultGCPolicy``: apps/v1 deletes in the background by default: no
    ``orphan`` finalizer appears."""
    client = kubeloop_cluster.client
    body = replica_set("finalized", 0, LABELS)
    body["metadata"]["finalizers"] = ["fake.example.com/hold"]
    await client.create(REPLICA_SETS, body, namespace=NS)
    answer = await client.delete(REPLICA_SETS, "finalized", namespace=NS)
    assert answer["metadata"]["finalizers"] == ["fake.example.com/hold"]
    await client.patch(REPLICA_SETS, "finalized", {"metadata": {"finalizers": None}}, namespace=NS)
    await kubeloop_cluster.wait_deleted(REPLICA_SETS, "finalized")
