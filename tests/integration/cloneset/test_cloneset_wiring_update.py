"""CloneSet updates against the embedded API server: ReCreate, in place (with and without a grace
period), partition, pausing, maxSurge, minReadySeconds (kruise ``sync/cloneset_update.go`` ``Update``,
``pkg/util/inplaceupdate``; the updating cases of ``test/e2e/apps/cloneset.go``)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from cloneset_kit import (
    NAMESPACE,
    StartController,
    StatusDriver,
    cloneset,
    condition,
    events_of,
    get_cloneset,
    labels,
    owned_pods,
    set_image,
    update_cloneset,
    wait_ready,
)

from kubeloop.api import kruise
from kubeloop.api.meta import parse_time
from kubeloop.client import ApiClient
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]


def uids(pods: list[Obj]) -> set[str]:
    return {p["metadata"]["uid"] for p in pods}


async def wait_rolled_out(client: ApiClient, name: str, replicas: int, old_revision: str) -> Obj:
    async def done() -> Obj | None:
        cs = await wait_ready(client, name, replicas)
        status = cs["status"]
        if status["updateRevision"] != old_revision and status["updatedAvailableReplicas"] == replicas \
                and status["currentRevision"] == status["updateRevision"]:
            return cs
        return None

    result: Obj = await eventually(done, timeout=30, what=f"{name} rolled out")
    return result


async def test_recreate_update_replaces_every_pod(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    await client.create(CLONESETS, cloneset("web", 3), namespace=NAMESPACE)
    before = await wait_ready(client, "web", 3)
    old_uids = uids(await owned_pods(client, "web"))
    await update_cloneset(client, "web", set_image("nginx:2"))
    after = await wait_rolled_out(client, "web", 3, before["status"]["updateRevision"])
    pods = await owned_pods(client, "web")
    assert not uids(pods) & old_uids
    assert all(p["spec"]["containers"][0]["image"] == "nginx:2" for p in pods)
    assert all(labels(p)[kruise.CONTROLLER_REVISION_HASH_LABEL] == after["status"]["updateRevision"] for p in pods)
    reasons = {e["reason"] for e in await events_of(client, "web")}
    assert {"SuccessfulUpdatePodReCreate", "SuccessfulDelete"} <= reasons


async def test_in_place_update_keeps_pods_and_flips_readiness_gate(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    spec = cloneset("web", 3, updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE, "maxUnavailable": 1})
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    before = await wait_ready(client, "web", 3)
    old = await owned_pods(client, "web")
    seen_not_ready: set[str] = set()

    async def watch_gate() -> None:
        while True:
            for pod in await owned_pods(client, "web"):
                gate = condition(pod, kruise.INPLACE_UPDATE_READY)
                if gate is not None and gate["status"] == "False":
                    seen_not_ready.add(pod["metadata"]["name"])
                    assert (condition(pod, "Ready") or {}).get("status") != "True"
            await asyncio.sleep(0.01)

    watcher = asyncio.get_running_loop().create_task(watch_gate())
    try:
        await update_cloneset(client, "web", set_image("nginx:2"))
        after = await wait_rolled_out(client, "web", 3, before["status"]["updateRevision"])
    finally:
        watcher.cancel()
    pods = await owned_pods(client, "web")
    assert uids(pods) == uids(old)
    for pod in pods:
        assert pod["spec"]["containers"][0]["image"] == "nginx:2"
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 1
        assert (condition(pod, kruise.INPLACE_UPDATE_READY) or {}).get("status") == "True"
        assert labels(pod)[kruise.CONTROLLER_REVISION_HASH_LABEL] == after["status"]["updateRevision"]
        assert labels(pod)[kruise.LIFECYCLE_STATE_LABEL] == kruise.STATE_NORMAL
        assert kruise.INPLACE_UPDATE_STATE_ANNOTATION in pod["metadata"]["annotations"]
    assert seen_not_ready, "no pod was seen with InPlaceUpdateReady False"
    assert any(e["reason"] == "SuccessfulUpdatePodInPlace" for e in await events_of(client, "web"))


async def test_in_place_if_possible_recreates_when_more_than_images_change(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    spec = cloneset("web", 2, updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE})
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    before = await wait_ready(client, "web", 2)
    old_uids = uids(await owned_pods(client, "web"))

    def add_env(body: Obj) -> None:
        body["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "MODE", "value": "x"}]

    await update_cloneset(client, "web", add_env)
    await wait_rolled_out(client, "web", 2, before["status"]["updateRevision"])
    assert not uids(await owned_pods(client, "web")) & old_uids


async def test_grace_period_delays_the_image_patch(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    strategy = {"type": kruise.IN_PLACE_IF_POSSIBLE, "inPlaceUpdateStrategy": {"gracePeriodSeconds": 2}}
    await client.create(CLONESETS, cloneset("web", 1, updateStrategy=strategy), namespace=NAMESPACE)
    before = await wait_ready(client, "web", 1)
    await update_cloneset(client, "web", set_image("nginx:2"))

    async def in_grace() -> Obj | None:
        pods = await owned_pods(client, "web")
        pod = pods[0] if pods else None
        if pod is not None and kruise.INPLACE_UPDATE_GRACE_ANNOTATION in pod["metadata"].get("annotations", {}):
            return pod
        return None

    pod = await eventually(in_grace, what="the grace annotation")
    assert pod["spec"]["containers"][0]["image"] == "nginx:1"
    assert labels(pod)[kruise.LIFECYCLE_STATE_LABEL] == kruise.STATE_UPDATING
    assert (condition(pod, kruise.INPLACE_UPDATE_READY) or {}).get("status") == "False"
    started = datetime.now(UTC)
    await wait_rolled_out(client, "web", 1, before["status"]["updateRevision"])
    assert datetime.now(UTC) - started >= timedelta(seconds=1)
    final = (await owned_pods(client, "web"))[0]
    assert final["metadata"]["uid"] == pod["metadata"]["uid"]
    assert kruise.INPLACE_UPDATE_GRACE_ANNOTATION not in final["metadata"]["annotations"]


async def test_partition_keeps_old_pods_and_percent_partition(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    strategy = {"partition": 3, "maxUnavailable": 1}
    await client.create(CLONESETS, cloneset("web", 5, updateStrategy=strategy), namespace=NAMESPACE)
    before = await wait_ready(client, "web", 5)
    old_revision = before["status"]["updateRevision"]
    await update_cloneset(client, "web", set_image("nginx:2"))

    async def partitioned() -> Obj | None:
        cs = await get_cloneset(client, "web")
        status = cs["status"]
        done = status["updatedAvailableReplicas"] == 2 and status["updatedReplicas"] == 2
        return cs if done and status["availableReplicas"] == 5 else None

    cs = await eventually(partitioned, what="two pods updated")
    assert cs["status"]["expectedUpdatedReplicas"] == 2
    assert cs["status"]["currentRevision"] == old_revision
    await asyncio.sleep(0.5)
    on_old = [p for p in await owned_pods(client, "web")
              if labels(p)[kruise.CONTROLLER_REVISION_HASH_LABEL] == old_revision]
    assert len(on_old) == 3

    # Raising the partition does not roll back (CloneSetPartitionRollback off by default).
    await update_cloneset(client, "web", lambda b: b["spec"]["updateStrategy"].update(partition="99%"))
    await asyncio.sleep(0.5)
    assert (await get_cloneset(client, "web"))["status"]["updatedReplicas"] == 2

    await update_cloneset(client, "web", lambda b: b["spec"]["updateStrategy"].update(partition=0))
    await wait_rolled_out(client, "web", 5, old_revision)


async def test_paused_update_changes_nothing_but_scaling_goes_on(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    await client.create(CLONESETS, cloneset("web", 2, updateStrategy={"paused": True}), namespace=NAMESPACE)
    before = await wait_ready(client, "web", 2)

    def change(body: Obj) -> None:
        set_image("nginx:2")(body)
        body["spec"]["replicas"] = 3

    await update_cloneset(client, "web", change)
    cs = await wait_ready(client, "web", 3, updated=1)
    await asyncio.sleep(0.5)
    pods = await owned_pods(client, "web")
    images = sorted(p["spec"]["containers"][0]["image"] for p in pods)
    # The new pod follows the update revision; the paused update leaves the others alone.
    assert images == ["nginx:1", "nginx:1", "nginx:2"]
    assert cs["status"]["updateRevision"] != before["status"]["updateRevision"]
    await update_cloneset(client, "web", lambda b: b["spec"]["updateStrategy"].update(paused=False))
    await wait_rolled_out(client, "web", 3, before["status"]["updateRevision"])


async def test_max_surge_keeps_availability_during_recreate(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    strategy = {"maxSurge": 1, "maxUnavailable": 0}
    await client.create(CLONESETS, cloneset("web", 3, updateStrategy=strategy), namespace=NAMESPACE)
    before = await wait_ready(client, "web", 3)
    violations: list[str] = []

    async def monitor() -> None:
        while True:
            pods = await owned_pods(client, "web")
            if len(pods) > 4:
                violations.append(f"{len(pods)} pods")
            available = [p for p in pods if (condition(p, "Ready") or {}).get("status") == "True"
                         and labels(p).get(kruise.LIFECYCLE_STATE_LABEL) == kruise.STATE_NORMAL]
            if len(available) < 3:
                violations.append(f"{len(available)} available")
            await asyncio.sleep(0.01)

    task = asyncio.get_running_loop().create_task(monitor())
    try:
        await update_cloneset(client, "web", set_image("nginx:2"))
        await wait_rolled_out(client, "web", 3, before["status"]["updateRevision"])
    finally:
        task.cancel()
    assert not violations, violations[:5]


async def test_min_ready_seconds_paces_creation_with_scale_max_unavailable(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    spec = cloneset("web", 2, minReadySeconds=1, scaleStrategy={"maxUnavailable": 1})
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    await wait_ready(client, "web", 2)
    pods = sorted(await owned_pods(client, "web"), key=lambda p: p["metadata"]["creationTimestamp"])
    first_ready = parse_time((condition(pods[0], "Ready") or {})["lastTransitionTime"])
    second_created = parse_time(pods[1]["metadata"]["creationTimestamp"])
    assert first_ready is not None and second_created is not None
    # The second pod waits for the first to be available (Ready for more than a second).
    assert second_created - first_ready >= timedelta(seconds=1)
