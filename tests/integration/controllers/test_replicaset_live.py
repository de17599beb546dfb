"""The ReplicaSet controller against the embedded API server (upstream
``test/integration/replicaset/replicaset_test.go``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from controller_kit import (
    NAMESPACE,
    ControllerRunner,
    list_pods,
    mark_ready,
    pod_template,
)

from kubeloop.api.meta import format_time
from kubeloop.client import EVENTS, PODS, REPLICA_SETS, ApiClient
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]
LABELS = {"name": "test"}


def replica_set(name: str, replicas: int, labels: dict[str, str] = LABELS, min_ready: int = 0) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"replicas": replicas, "minReadySeconds": min_ready, "selector": {"matchLabels": dict(labels)},
                     "template": pod_template(labels)}}


def bare_pod(name: str, labels: dict[str, str] = LABELS, owners: list[Obj] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": NAMESPACE, "labels": dict(labels)}
    if owners:
        meta["ownerReferences"] = owners
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "img"}]}}


async def owned_pods(client: ApiClient, rs: Obj) -> list[Obj]:
    uid = rs["metadata"]["uid"]
    return [p for p in await list_pods(client) if any(
        r.get("uid") == uid and r.get("controller") for r in p["metadata"].get("ownerReferences") or [])]


async def rs_status(client: ApiClient, name: str) -> Obj:
    rs = await client.get(REPLICA_SETS, name, namespace=NAMESPACE)
    return dict(rs.get("status") or {})


async def test_creates_and_deletes_pods_to_match_replicas(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start("replicaset")
    rs = await client.create(REPLICA_SETS, replica_set("rs", 3), namespace=NAMESPACE)

    async def three_pods() -> bool:
        return len(await owned_pods(client, rs)) == 3

    await eventually(three_pods)
    pods = await owned_pods(client, rs)
    for pod in pods:
        assert pod["metadata"]["generateName"] == "rs-"
        assert pod["metadata"]["labels"] == LABELS
        ref = pod["metadata"]["ownerReferences"][0]
        assert ref["kind"] == "ReplicaSet" and ref["blockOwnerDeletion"] is True and ref["controller"] is True
    for pod in pods[:2]:
        await mark_ready(client, pod)

    async def status_counts() -> bool:
        status = await rs_status(client, "rs")
        return (status.get("replicas"), status.get("readyReplicas"), status.get("availableReplicas"),
                status.get("fullyLabeledReplicas"), status.get("observedGeneration")) == (3, 2, 2, 3, 1)

    await eventually(status_counts)

    await client.patch(REPLICA_SETS, "rs", {"spec": {"replicas": 1}}, namespace=NAMESPACE)

    async def one_pod() -> list[Obj] | None:
        pods = await owned_pods(client, rs)
        return pods if len(pods) == 1 else None

    survivors = await eventually(one_pod)
    # Not-ready pods are deleted first: the survivor is one of the ready ones.
    assert survivors[0]["metadata"]["name"] in {p["metadata"]["name"] for p in pods[:2]}

    async def status_one() -> bool:
        status = await rs_status(client, "rs")
        return status.get("replicas") == 1 and status.get("observedGeneration") == 2

    await eventually(status_one)

    async def events_recorded() -> set[str]:
        items = (await client.list(EVENTS, namespace=NAMESPACE))["items"]
        reasons = {e["reason"] for e in items if e["involvedObject"].get("name") == "rs"}
        return reasons if {"SuccessfulCreate", "SuccessfulDelete"} <= reasons else set()

    await eventually(events_recorded)


async def test_adoption_and_release(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start("replicaset")
    await client.create(PODS, bare_pod("orphan-a"), namespace=NAMESPACE)
    await client.create(PODS, bare_pod("orphan-b"), namespace=NAMESPACE)
    await client.create(PODS, bare_pod("orphan-c"), namespace=NAMESPACE)
    rs = await client.create(REPLICA_SETS, replica_set("adopter", 2), namespace=NAMESPACE)

    async def two_adopted() -> bool:
        pods = await list_pods(client)
        owned = await owned_pods(client, rs)
        return len(pods) == 2 and len(owned) == 2 and all(p["metadata"]["name"].startswith("orphan-") for p in pods)

    await eventually(two_adopted, what="adoption of two orphans and deletion of the extra one")

    victim = (await owned_pods(client, rs))[0]["metadata"]["name"]
    await client.patch(PODS, victim, {"metadata": {"labels": {"name": "other"}}}, namespace=NAMESPACE)

    async def released_and_replaced() -> bool:
        released = await client.get(PODS, victim, namespace=NAMESPACE)
        refs = released["metadata"].get("ownerReferences") or []
        return not refs and len(await owned_pods(client, rs)) == 2

    await eventually(released_and_replaced, what="release of the relabelled pod and a replacement")


async def test_non_controller_reference_becomes_controller(client: ApiClient, runner: ControllerRunner) -> None:
    rs = await client.create(REPLICA_SETS, replica_set("rs", 1), namespace=NAMESPACE)
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": rs["metadata"]["uid"]}
    await client.create(PODS, bare_pod("p", owners=[ref]), namespace=NAMESPACE)
    await runner.start("replicaset")

    async def adopted() -> list[Obj] | None:
        pod = await client.get(PODS, "p", namespace=NAMESPACE)
        refs = pod["metadata"].get("ownerReferences") or []
        return refs if refs and refs[0].get("controller") else None

    refs = await eventually(adopted)
    assert len(refs) == 1 and refs[0]["blockOwnerDeletion"] is True
    assert len(await list_pods(client)) == 1


async def test_ready_and_available_with_min_ready_seconds(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start("replicaset")
    rs = await client.create(REPLICA_SETS, replica_set("slow", 3, min_ready=3600), namespace=NAMESPACE)

    async def three() -> list[Obj] | None:
        pods = await owned_pods(client, rs)
        return pods if len(pods) == 3 else None

    pods = await eventually(three)
    long_ago = format_time(datetime.now(UTC) - timedelta(hours=2))
    await mark_ready(client, pods[1])
    await mark_ready(client, pods[2], since=long_ago)

    async def counts() -> bool:
        status = await rs_status(client, "slow")
        return (status.get("replicas"), status.get("readyReplicas"), status.get("availableReplicas")) == (3, 2, 1)

    await eventually(counts)


@pytest.mark.parametrize("gate", [True, False], ids=["terminating-replicas-gate", "gate-off"])
async def test_terminating_and_failed_pods_are_replaced(client: ApiClient, runner: ControllerRunner,
                                                        gate: bool) -> None:
    # DeploymentReplicaSetTerminatingReplicas (alpha, off in 1.33) alone makes the status count them.
    await runner.start("replicaset", feature_gates={"DeploymentReplicaSetTerminatingReplicas": gate})
    rs = await client.create(REPLICA_SETS, replica_set("rs", 2), namespace=NAMESPACE)

    async def two() -> list[Obj] | None:
        pods = await owned_pods(client, rs)
        return pods if len(pods) == 2 else None

    first, second = await eventually(two)
    await client.patch(PODS, first["metadata"]["name"], {"metadata": {"finalizers": ["fake.example.com/block"]}},
                       namespace=NAMESPACE)
    await client.delete(PODS, first["metadata"]["name"], namespace=NAMESPACE)
    await client.patch(PODS, second["metadata"]["name"], {"status": {"phase": "Failed"}}, namespace=NAMESPACE,
                       subresource="status")

    async def replaced() -> bool:
        status = await rs_status(client, "rs")
        return len(await owned_pods(client, rs)) == 4 and status.get("replicas") == 2 \
            and status.get("terminatingReplicas") == (1 if gate else None) and "conditions" not in status

    await eventually(replaced)
    await client.patch(PODS, first["metadata"]["name"], {"metadata": {"finalizers": None}}, namespace=NAMESPACE)
