"""Feature gates and release-dependent behaviours of the CloneSet controller, each setting
tested (kruise ``pkg/features/kruise_features.go``,
``sync/cloneset_sync_utils.go`` ``calculateDiffsWithExpectation``), and the InPlaceOnly failure condition."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from cloneset_kit import (
    NAMESPACE,
    StartController,
    StatusDriver,
    cloneset,
    get_cloneset,
    labels,
    owned_pods,
    set_image,
    state_of,
    update_cloneset,
    wait_ready,
)

from kubeloop.api import kruise
from kubeloop.client import PODS, ApiClient
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.controllers.cloneset.controller import CloneSetControllerOptions
from kubeloop.controllers.cloneset.options import CloneSetBehaviour, CloneSetFeatureGates
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]


def revision_of(pod: Obj) -> str:
    return labels(pod)[kruise.CONTROLLER_REVISION_HASH_LABEL]


@pytest.mark.parametrize("rollback", [False, True])
async def test_partition_rollback_gate(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver, rollback: bool
) -> None:
    await start_controller(CloneSetControllerOptions(gates=CloneSetFeatureGates(partition_rollback=rollback)))
    await client.create(CLONESETS, cloneset("web", 4, updateStrategy={"partition": 2, "maxUnavailable": 1}),
                        namespace=NAMESPACE)
    first = (await wait_ready(client, "web", 4))["status"]["updateRevision"]
    await update_cloneset(client, "web", set_image("nginx:2"))
    await wait_ready(client, "web", 4, updated=2)
    await update_cloneset(client, "web", lambda b: b["spec"]["updateStrategy"].update(partition=4))
    if rollback:
        await wait_ready(client, "web", 4, updated=0)
        assert all(revision_of(p) == first for p in await owned_pods(client, "web"))
    else:
        await asyncio.sleep(1)
        status = (await wait_ready(client, "web", 4, updated=2))["status"]
        assert status["expectedUpdatedReplicas"] == 0


@pytest.mark.parametrize("short", [False, True])
async def test_short_hash_gate(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver, short: bool
) -> None:
    await start_controller(CloneSetControllerOptions(gates=CloneSetFeatureGates(short_hash=short)))
    await client.create(CLONESETS, cloneset("web", 2), namespace=NAMESPACE)
    revision = (await wait_ready(client, "web", 2))["status"]["updateRevision"]
    expected = revision.rsplit("-", 1)[1] if short else revision
    for pod in await owned_pods(client, "web"):
        assert revision_of(pod) == expected
        assert labels(pod)[kruise.POD_TEMPLATE_HASH_LABEL] == revision.rsplit("-", 1)[1]


@pytest.mark.parametrize("requires_node", [False, True])
async def test_normal_state_waits_for_scheduling_when_asked(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver, requires_node: bool
) -> None:
    behaviour = CloneSetBehaviour(normal_requires_scheduling=requires_node)
    await start_controller(CloneSetControllerOptions(behaviour=behaviour))
    await client.create(CLONESETS, cloneset("web", 1), namespace=NAMESPACE)

    async def ready() -> Obj | None:
        status = (await get_cloneset(client, "web")).get("status") or {}
        return status if status.get("readyReplicas") == 1 else None

    status = await eventually(ready, what="the pod ready")
    await asyncio.sleep(0.5)
    # The stand-in kubelet never binds pods to a node.
    pod = (await owned_pods(client, "web"))[0]
    if requires_node:
        assert state_of(pod) == kruise.STATE_PREPARING_NORMAL
        assert (await get_cloneset(client, "web"))["status"]["availableReplicas"] == 0
    else:
        assert state_of(pod) == kruise.STATE_NORMAL
        assert status["readyReplicas"] == 1


@pytest.mark.parametrize("as_update", [False, True])
async def test_preparing_update_as_update_gate_picks_the_replacement_revision(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver, as_update: bool
) -> None:
    await start_controller(CloneSetControllerOptions(
        gates=CloneSetFeatureGates(preparing_update_as_update=as_update)))
    spec = cloneset("web", 2, updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE, "maxUnavailable": "50%",
                                              "partition": "99%"},
                    lifecycle={"inPlaceUpdate": {"labelsHandler": {"preparing-update-hook": "true"}}})
    spec["spec"]["template"]["metadata"]["labels"]["preparing-update-hook"] = "true"
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    current = (await wait_ready(client, "web", 2))["status"]["updateRevision"]
    await update_cloneset(client, "web", set_image("nginx:2"))

    async def one_preparing() -> list[Obj] | None:
        pods = await owned_pods(client, "web")
        preparing = [p for p in pods if state_of(p) == kruise.STATE_PREPARING_UPDATE]
        return pods if len(preparing) == 1 else None

    pods = await eventually(one_preparing, what="one pod in PreparingUpdate")
    other = next(p for p in pods if state_of(p) != kruise.STATE_PREPARING_UPDATE)
    await client.delete(PODS, other["metadata"]["name"], namespace=NAMESPACE)

    async def replaced() -> Obj | None:
        fresh = [p for p in await owned_pods(client, "web") if p["metadata"]["uid"] != other["metadata"]["uid"]
                 and state_of(p) != kruise.STATE_PREPARING_UPDATE]
        return fresh[0] if len(fresh) == 1 else None

    replacement = await eventually(replaced, what="a replacement pod")
    update = (await get_cloneset(client, "web"))["status"]["updateRevision"]
    assert revision_of(replacement) == (current if as_update else update)


async def test_in_place_only_that_cannot_update_reports_failed_update(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    strategy = {"type": kruise.IN_PLACE_IF_POSSIBLE, "paused": True}
    await client.create(CLONESETS, cloneset("web", 1, updateStrategy=strategy), namespace=NAMESPACE)
    await wait_ready(client, "web", 1)

    def add_env(body: Obj) -> None:
        body["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "MODE", "value": "x"}]

    await update_cloneset(client, "web", add_env)
    await wait_ready(client, "web", 1, updated=0)
    await update_cloneset(client, "web", lambda b: b["spec"]["updateStrategy"].update(
        type=kruise.IN_PLACE_ONLY, paused=False))

    async def failed() -> Obj | None:
        conditions = ((await get_cloneset(client, "web")).get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == kruise.CONDITION_FAILED_UPDATE), None)

    condition = await eventually(failed, what="a FailedUpdate condition")
    pod = (await owned_pods(client, "web"))[0]
    assert condition["status"] == "True"
    assert condition["message"] == (f"find Pod {pod['metadata']['name']} update strategy is InPlaceOnly "
                                    "but can not update in-place")
    assert "env" not in pod["spec"]["containers"][0]


@pytest.mark.parametrize("readiness_gate", [False, True])
async def test_mark_pod_not_ready_needs_the_kruise_pod_ready_gate(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver, readiness_gate: bool
) -> None:
    await start_controller(CloneSetControllerOptions(
        gates=CloneSetFeatureGates(kruise_pod_readiness_gate=readiness_gate)))
    hook = {"finalizersHandler": ["example.com/drain"], "markPodNotReady": True}
    spec = cloneset("web", 2, lifecycle={"preDelete": hook})
    spec["spec"]["template"]["metadata"]["finalizers"] = ["example.com/drain"]
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    await wait_ready(client, "web", 2)
    pods = await owned_pods(client, "web")
    gates = [g["conditionType"] for g in pods[0]["spec"]["readinessGates"]]
    assert (kruise.KRUISE_POD_READY in gates) == readiness_gate
    target = pods[0]["metadata"]["name"]
    await client.patch(PODS, target, {"metadata": {"labels": {kruise.SPECIFIED_DELETE_LABEL: "true"}}},
                       namespace=NAMESPACE)

    async def preparing() -> Obj | None:
        pod = await client.get(PODS, target, namespace=NAMESPACE)
        return pod if state_of(pod) == kruise.STATE_PREPARING_DELETE else None

    await eventually(preparing, what="PreparingDelete")

    async def readiness() -> Obj | None:
        pod = await client.get(PODS, target, namespace=NAMESPACE)
        ready: Obj = next((c for c in pod["status"]["conditions"] if c["type"] == "Ready"), {})
        wanted = "False" if readiness_gate else "True"
        return pod if ready.get("status") == wanted else None

    pod = await eventually(readiness, what="the held pod's readiness")
    if readiness_gate:
        kruise_ready = next(c for c in pod["status"]["conditions"] if c["type"] == kruise.KRUISE_POD_READY)
        assert kruise_ready["status"] == "False" and "preDeleteHook" in kruise_ready["message"]
    for name in (p["metadata"]["name"] for p in pods):
        await client.patch(PODS, name, {"metadata": {"finalizers": None}}, namespace=NAMESPACE)
