"""Deletion with each propagation policy, orphaning and adoption (upstream e2e
``test/e2e/apps/deployment.go`` and ``test/e2e/apimachinery/garbage_collector.go``, integration
``test/integration/deployment`` and ``test/integration/garbagecollector``), on the
whole embedded cluster, each Deployment under the invariant monitor."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from deployment_e2e_kit import (
    NS,
    Obj,
    StartMonitor,
    deployment,
    owned_replica_sets,
    pods_matching,
    replica_set,
    selector_of,
    the_new_replica_set,
    wait_complete,
)

from kubeloop.client import DEPLOYMENTS, PODS, REPLICA_SETS, STATEFUL_SETS, ApiClient
from kubeloop.testing.cluster import EmbeddedCluster
from kubeloop.testing.deployment_rules import spec_replicas

pytestmark = pytest.mark.e2e


def controller_ref(obj: Obj) -> Obj | None:
    return next((r for r in obj["metadata"].get("ownerReferences") or () if r.get("controller")), None)


async def replica_sets_matching(client: ApiClient, labels: dict[str, str]) -> list[Obj]:
    items: list[Obj] = (await client.list(REPLICA_SETS, namespace=NS, label_selector=selector_of(labels)))["items"]
    return items


async def test_background_deletion_reaps_replica_sets_and_pods(kubeloop_cluster: EmbeddedCluster,
                                                               monitor_for: StartMonitor) -> None:
    """``testDeleteDeployment`` and GC "should delete RS created by deployment when not orphaning":
    DELETE with Background (and a UID precondition) removes everything."""
    client = kubeloop_cluster.client
    await monitor_for("reap")
    labels = {"name": "reap"}
    await client.create(DEPLOYMENTS, deployment("reap", 2, labels), namespace=NS)
    d = await wait_complete(kubeloop_cluster, "reap")
    await client.delete(DEPLOYMENTS, "reap", namespace=NS, propagation_policy="Background",
                        preconditions={"uid": d["metadata"]["uid"]})
    await kubeloop_cluster.wait_deleted(DEPLOYMENTS, "reap")

    async def nothing_left() -> bool:
        return not await replica_sets_matching(client, labels) and not await pods_matching(client, labels,
                                                                                           active=False)

    await kubeloop_cluster.wait_until(nothing_left, message="ReplicaSets and pods to be collected")


async def test_foreground_deletion_waits_for_dependents(kubeloop_cluster: EmbeddedCluster,
                                                        monitor_for: StartMonitor) -> None:
    """Foreground: the Deployment stays, marked with the foregroundDeletion finalizer, until its
    ReplicaSets and their pods are gone (their pods terminate slowly here)."""
    client = kubeloop_cluster.client
    await monitor_for("fore")
    labels = {"name": "fore"}
    body = deployment("fore", 2, labels, pod_annotations={"sim.kubeloop.io/termination-delay": "1"})
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 5
    await client.create(DEPLOYMENTS, body, namespace=NS)
    await wait_complete(kubeloop_cluster, "fore")
    answer = await client.delete(DEPLOYMENTS, "fore", namespace=NS, propagation_policy="Foreground")
    assert answer["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in answer["metadata"]["finalizers"]

    async def pods_terminating_while_owner_waits() -> bool:
        d = await client.get(DEPLOYMENTS, "fore", namespace=NS)
        pods = await pods_matching(client, labels, active=False)
        return bool(d["metadata"].get("deletionTimestamp")) and bool(pods) and all(
            p["metadata"].get("deletionTimestamp") for p in pods)

    await kubeloop_cluster.wait_until(pods_terminating_while_owner_waits,
                                      message="pods terminating while the Deployment waits")
    await kubeloop_cluster.wait_deleted(DEPLOYMENTS, "fore")
    assert await replica_sets_matching(client, labels) == []
    assert await pods_matching(client, labels, active=False) == []


async def test_orphan_deletion_keeps_replica_set_and_pods(kubeloop_cluster: EmbeddedCluster,
                                                          monitor_for: StartMonitor) -> None:
    """GC "should orphan RS created by deployment when deleteOptions.PropagationPolicy is Orphan":
    Orphan leaves one ReplicaSet without a controller and its two pods running."""
    client = kubeloop_cluster.client
    await monitor_for("orphan")
    labels = {"name": "orphan"}
    await client.create(DEPLOYMENTS, deployment("orphan", 2, labels), namespace=NS)
    await wait_complete(kubeloop_cluster, "orphan")
    await client.delete(DEPLOYMENTS, "orphan", namespace=NS, propagation_policy="Orphan")
    await kubeloop_cluster.wait_deleted(DEPLOYMENTS, "orphan")

    async def released() -> bool:
        found = await replica_sets_matching(client, labels)
        return len(found) == 1 and not found[0]["metadata"].get("ownerReferences")

    await kubeloop_cluster.wait_until(released, message="the ReplicaSet to lose its owner reference")
    rs = (await replica_sets_matching(client, labels))[0]
    pods = await pods_matching(client, labels)
    assert len(pods) == 2
    assert {(controller_ref(p) or {}).get("uid") for p in pods} == {rs["metadata"]["uid"]}


async def test_orphaned_replica_set_is_adopted_by_a_new_deployment(kubeloop_cluster: EmbeddedCluster,
                                                                   monitor_for: StartMonitor) -> None:
    """``testDeploymentsControllerRef``: orphan (orphanDependents-style, with a UID precondition), then
    a Deployment with the same selector and template adopts the very same ReplicaSet."""
    client = kubeloop_cluster.client
    await monitor_for("test-orphan-deployment")
    await monitor_for("test-adopt-deployment")
    labels = {"name": "adopt"}
    await client.create(DEPLOYMENTS, deployment("test-orphan-deployment", 1, labels), namespace=NS)
    first = await wait_complete(kubeloop_cluster, "test-orphan-deployment")
    [rs] = await owned_replica_sets(client, first)
    await client.delete(DEPLOYMENTS, "test-orphan-deployment", namespace=NS, propagation_policy="Orphan",
                        preconditions={"uid": first["metadata"]["uid"]})
    await kubeloop_cluster.wait_for(REPLICA_SETS, rs["metadata"]["name"], lambda r: controller_ref(r) is None)

    await client.create(DEPLOYMENTS, deployment("test-adopt-deployment", 1, labels), namespace=NS)
    second = await wait_complete(kubeloop_cluster, "test-adopt-deployment")
    adopted = await owned_replica_sets(client, second)
    assert [r["metadata"]["uid"] for r in adopted] == [rs["metadata"]["uid"]]
    assert len(await replica_sets_matching(client, labels)) == 1


async def test_overlapping_deployments_keep_their_own_replica_sets(kubeloop_cluster: EmbeddedCluster,
                                                                    monitor_for: StartMonitor) -> None:
    """``TestOverlappingDeployments``: identical selectors and templates; each Deployment sizes only its
    own ReplicaSet."""
    client = kubeloop_cluster.client
    labels = {"name": "overlap"}
    for name in ("first-deployment", "second-deployment"):
        await monitor_for(name)
        await client.create(DEPLOYMENTS, deployment(name, 1, labels), namespace=NS)
    first = await wait_complete(kubeloop_cluster, "first-deployment")
    second = await wait_complete(kubeloop_cluster, "second-deployment")
    rs1, rs2 = await the_new_replica_set(client, first), await the_new_replica_set(client, second)
    assert rs1["metadata"]["uid"] != rs2["metadata"]["uid"]
    await client.patch(DEPLOYMENTS, "first-deployment", {"spec": {"replicas": 2}}, namespace=NS)
    first = await wait_complete(kubeloop_cluster, "first-deployment")
    assert spec_replicas(await the_new_replica_set(client, first)) == 2
    assert spec_replicas(await the_new_replica_set(client, second)) == 1


async def test_replica_set_with_foreign_references_is_adopted(kubeloop_cluster: EmbeddedCluster,
                                                              monitor_for: StartMonitor) -> None:
    """``TestGeneralReplicaSetAdoption``: a non-controller reference to something else is kept beside the new controller
    reference; a non-controller reference to the Deployment becomes the controller reference."""
    client = kubeloop_cluster.client
    monitor = await monitor_for("general")
    await client.create(DEPLOYMENTS, deployment("general", 1, {"name": "general"}), namespace=NS)
    d = await wait_complete(kubeloop_cluster, "general")
    rs = await the_new_replica_set(client, d)
    name = rs["metadata"]["name"]
    # A real owner: the garbage collector removes (or acts on) references to owners that do not
    # exist, now that StatefulSets are served.
    other = await client.create(STATEFUL_SETS, {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "other"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "other"}},
                 "template": {"metadata": {"labels": {"app": "other"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}, namespace=NS)
    foreign = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "other", "uid": other["metadata"]["uid"],
               "controller": False}

    def adopted_beside(refs_count: int) -> Callable[[Obj], bool]:
        return lambda r: len(r["metadata"].get("ownerReferences") or ()) == refs_count and \
            (controller_ref(r) or {}).get("uid") == d["metadata"]["uid"]

    # Taking the controller reference away releases the pods from the Deployment's view for
    # a moment: the availability floor does not apply to that.
    async with monitor.allow_disruption():
        await client.patch(REPLICA_SETS, name, {"metadata": {"ownerReferences": [foreign]}}, namespace=NS)
        await kubeloop_cluster.wait_for(REPLICA_SETS, name, adopted_beside(2))
        weak = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "general", "uid": d["metadata"]["uid"],
                "controller": False}
        await client.patch(REPLICA_SETS, name, {"metadata": {"ownerReferences": [weak]}}, namespace=NS)
        await kubeloop_cluster.wait_for(REPLICA_SETS, name, adopted_beside(1))
        await wait_complete(kubeloop_cluster, "general")


async def test_replica_set_released_and_readopted_when_labels_change(kubeloop_cluster: EmbeddedCluster,
                                                                     monitor_for: StartMonitor) -> None:
    """``TestReplicaSetOrphaningAndAdoptionWhenLabelsChange``: relabelled, the ReplicaSet is released
    and a new one (another UID, a bumped collisionCount) replaces it; labels restored, the old one is
    adopted again."""
    client = kubeloop_cluster.client
    monitor = await monitor_for("relabel")
    await client.create(DEPLOYMENTS, deployment("relabel", 1, {"name": "relabel"}), namespace=NS)
    d = await wait_complete(kubeloop_cluster, "relabel")
    rs = await the_new_replica_set(client, d)
    name = rs["metadata"]["name"]

    async def replaced() -> bool:
        owned = await owned_replica_sets(client, d)
        return len(owned) == 1 and owned[0]["metadata"]["uid"] != rs["metadata"]["uid"]

    # A released ReplicaSet's pods no longer count for the Deployment: no availability floor
    # until its replacement is up.
    async with monitor.allow_disruption():
        await client.patch(REPLICA_SETS, name, [{"op": "replace", "path": "/metadata/labels",
                                                 "value": {"new-name": "new-test"}}], patch_type="json",
                           namespace=NS)
        await kubeloop_cluster.wait_for(REPLICA_SETS, name, lambda r: controller_ref(r) is None)
        await kubeloop_cluster.wait_until(replaced, message="a replacement ReplicaSet")
        d = await wait_complete(kubeloop_cluster, "relabel")
    assert d["status"].get("collisionCount", 0) >= 1

    async with monitor.allow_disruption():
        await client.patch(REPLICA_SETS, name, [{"op": "replace", "path": "/metadata/labels",
                                                 "value": {"name": "relabel"}}], patch_type="json", namespace=NS)
        await kubeloop_cluster.wait_for(REPLICA_SETS, name,
                                        lambda r: (controller_ref(r) or {}).get("uid") == d["metadata"]["uid"])
        await wait_complete(kubeloop_cluster, "relabel")


async def test_garbage_collector_keeps_dependents_with_a_surviving_owner(kubeloop_cluster: EmbeddedCluster) -> None:
    """Integration ``TestCascadingDeletion`` / ``TestCreateWithNonExistentOwner``: a pod owned by a deleted
    ReplicaSet and a live one loses only the dead reference; a pod whose only owner never
    existed is collected."""
    client = kubeloop_cluster.client
    a = await client.create(REPLICA_SETS, replica_set("owner-a", 0, {"name": "owner-a"}), namespace=NS)
    b = await client.create(REPLICA_SETS, replica_set("owner-b", 0, {"name": "owner-b"}), namespace=NS)

    def ref(owner: Obj) -> Obj:
        return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"]}

    def pod(name: str, owners: list[Obj]) -> Obj:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": {"gc": "test"}, "ownerReferences": owners},
                "spec": {"containers": [{"name": "c", "image": "busybox"}], "terminationGracePeriodSeconds": 0}}

    await client.create(PODS, pod("shared", [ref(a), ref(b)]), namespace=NS)
    ghost = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "ghost", "uid": str(uuid.uuid4())}
    await client.create(PODS, pod("dangling", [ghost]), namespace=NS)
    await client.delete(REPLICA_SETS, "owner-a", namespace=NS, propagation_policy="Background")
    await kubeloop_cluster.wait_deleted(PODS, "dangling")
    shared = await kubeloop_cluster.wait_for(PODS, "shared",
                                             lambda p: len(p["metadata"].get("ownerReferences") or ()) == 1)
    assert shared["metadata"]["ownerReferences"][0]["uid"] == b["metadata"]["uid"]
