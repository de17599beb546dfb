"""CloneSet revisions, lifecycle hooks and the Progressing condition against the embedded API
server (kruise ``revision/cloneset_revision.go``,
``pkg/util/lifecycle``, ``cloneset_status.go``; the creating and scaling cases of ``test/e2e/apps/cloneset.go``)."""

from __future__ import annotations

import asyncio
from typing import Any

from cloneset_kit import (
    NAMESPACE,
    StartController,
    StatusDriver,
    cloneset,
    condition,
    get_cloneset,
    labels,
    names,
    owned_pods,
    revisions_of,
    set_image,
    state_of,
    update_cloneset,
    wait_ready,
)

from kubeloop.api import kruise
from kubeloop.client import CONTROLLER_REVISIONS, PODS, ApiClient
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.controllers.cloneset.revisions import new_revision
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]


async def status_of(client: ApiClient, name: str) -> Obj:
    return dict((await get_cloneset(client, name)).get("status") or {})


async def test_template_rollback_reuses_the_old_revision(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    await client.create(CLONESETS, cloneset("web", 2, updateStrategy={"paused": True}), namespace=NAMESPACE)
    first = (await wait_ready(client, "web", 2))["status"]["updateRevision"]
    await update_cloneset(client, "web", set_image("nginx:2"))

    async def second_revision() -> str | None:
        revision = (await status_of(client, "web")).get("updateRevision")
        return revision if revision != first else None

    second = await eventually(second_revision, what="a second revision")
    await update_cloneset(client, "web", set_image("nginx:1"))

    async def back() -> bool:
        status = await status_of(client, "web")
        return bool(status.get("updateRevision") == first and status.get("updatedReplicas") == 2)

    await eventually(back, what="the first revision in use again")
    revisions = {r["metadata"]["name"]: r["revision"] for r in await revisions_of(client, "web")}
    assert set(revisions) == {first, second}
    assert revisions[first] == 3 and revisions[second] == 2


async def test_revision_history_limit_deletes_old_revisions(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    spec = cloneset("web", 1, updateStrategy={"paused": True}, revisionHistoryLimit=1)
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    first = (await wait_ready(client, "web", 1))["status"]["updateRevision"]
    for tag in ("2", "3", "4", "5"):
        await update_cloneset(client, "web", set_image(f"nginx:{tag}"))

        async def seen(tag: str = tag) -> bool:
            revisions = await revisions_of(client, "web")
            status = await status_of(client, "web")
            return any(r["metadata"]["name"] == status.get("updateRevision")
                       and f"nginx:{tag}" in str(r["data"]) for r in revisions)

        await eventually(seen, what=f"revision for nginx:{tag}")

    async def truncated() -> list[str] | None:
        found = names(await revisions_of(client, "web"))
        return found if len(found) == 3 else None

    found = await eventually(truncated, what="history truncated to current, update and one more")
    status = await status_of(client, "web")
    assert first in found and status["updateRevision"] in found and status["currentRevision"] == first


async def test_revision_name_collision_bumps_collision_count(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    await client.create(CLONESETS, cloneset("web", 1), namespace=NAMESPACE)
    await wait_ready(client, "web", 1)
    current = await get_cloneset(client, "web")
    set_image("nginx:2")(current)
    defaulted = await client.update(CLONESETS, current, namespace=NAMESPACE, dry_run=True)
    taken = new_revision(defaulted, 2, 0)
    squatter = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": taken["metadata"]["name"], "namespace": NAMESPACE},
                "data": {"something": "else"}, "revision": 1}
    await client.create(CONTROLLER_REVISIONS, squatter, namespace=NAMESPACE)
    await update_cloneset(client, "web", set_image("nginx:2"))

    async def collided() -> Obj | None:
        status = await status_of(client, "web")
        return status if status.get("collisionCount") == 1 and status.get("updatedReplicas") == 1 else None

    status = await eventually(collided, what="collisionCount 1 and the pod updated")
    assert status["updateRevision"] != taken["metadata"]["name"]
    assert status["updateRevision"] == new_revision(defaulted, 2, 1)["metadata"]["name"]


async def test_pre_delete_hook_holds_pod_until_released(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    spec = cloneset("web", 3, lifecycle={"preDelete": {"labelsHandler": {"hook": "true"}}})
    spec["spec"]["template"]["metadata"]["labels"]["hook"] = "true"
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    await wait_ready(client, "web", 3)
    target = (await owned_pods(client, "web"))[0]["metadata"]["name"]
    await client.patch(PODS, target, {"metadata": {"labels": {kruise.SPECIFIED_DELETE_LABEL: "true"}}},
                       namespace=NAMESPACE)

    async def preparing() -> bool:
        pod = await client.get(PODS, target, namespace=NAMESPACE)
        return state_of(pod) == kruise.STATE_PREPARING_DELETE

    await eventually(preparing, what="PreparingDelete")
    await asyncio.sleep(0.5)
    assert len(await owned_pods(client, "web")) == 3
    assert (await status_of(client, "web"))["replicas"] == 3

    await client.patch(PODS, target, {"metadata": {"labels": {"hook": None}}}, namespace=NAMESPACE)

    async def replaced() -> bool:
        current = names(await owned_pods(client, "web"))
        return target not in current and len(current) == 3

    await eventually(replaced, what="the released pod deleted and replaced")


async def test_pre_delete_victim_revives_when_scaled_back_up(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    spec = cloneset("web", 3, lifecycle={"preDelete": {"finalizersHandler": ["example.com/hold"]}})
    spec["spec"]["template"]["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    await wait_ready(client, "web", 3)
    before = names(await owned_pods(client, "web"))
    await update_cloneset(client, "web", lambda b: b["spec"].update(replicas=2))

    async def one_preparing() -> str | None:
        held = [p for p in await owned_pods(client, "web") if state_of(p) == kruise.STATE_PREPARING_DELETE]
        return held[0]["metadata"]["name"] if len(held) == 1 else None

    victim = await eventually(one_preparing, what="a victim in PreparingDelete")
    await update_cloneset(client, "web", lambda b: b["spec"].update(replicas=3))

    async def revived() -> bool:
        pod = await client.get(PODS, victim, namespace=NAMESPACE)
        return state_of(pod) == kruise.STATE_NORMAL

    await eventually(revived, what="the victim back to Normal")
    assert names(await owned_pods(client, "web")) == before
    for name in before:
        await client.patch(PODS, name, {"metadata": {"finalizers": None}}, namespace=NAMESPACE)


async def test_pre_normal_finalizer_holds_availability_and_deadline_exceeds(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    spec = cloneset("web", 1, progressDeadlineSeconds=1,
                    lifecycle={"preNormal": {"finalizersHandler": ["example.com/ready"]}})
    await client.create(CLONESETS, spec, namespace=NAMESPACE)

    async def ready_not_available() -> Obj | None:
        status = await status_of(client, "web")
        return status if status.get("readyReplicas") == 1 and status.get("availableReplicas") == 0 else None

    await eventually(ready_not_available, what="ready but not available")

    async def exceeded() -> bool:
        progressing = condition({"status": await status_of(client, "web")}, kruise.CONDITION_PROGRESSING)
        return progressing is not None and progressing["reason"] == kruise.REASON_DEADLINE_EXCEEDED \
            and progressing["status"] == "False"

    await eventually(exceeded, what="ProgressDeadlineExceeded")
    pod = (await owned_pods(client, "web"))[0]
    assert state_of(pod) == kruise.STATE_PREPARING_NORMAL
    await client.patch(PODS, pod["metadata"]["name"], {"metadata": {"finalizers": ["example.com/ready"]}},
                       namespace=NAMESPACE)

    async def normal() -> bool:
        return state_of((await owned_pods(client, "web"))[0]) == kruise.STATE_NORMAL

    await eventually(normal, what="Normal once the finalizer is present")
    await client.patch(PODS, pod["metadata"]["name"], {"metadata": {"finalizers": None}}, namespace=NAMESPACE)

    async def available() -> bool:
        progressing = condition({"status": await status_of(client, "web")}, kruise.CONDITION_PROGRESSING)
        return progressing is not None and progressing["reason"] == kruise.REASON_AVAILABLE

    await eventually(available, what="Progressing Available")
    assert state_of((await owned_pods(client, "web"))[0]) == kruise.STATE_NORMAL


async def test_in_place_update_hook_holds_pod_in_preparing_update(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    spec = cloneset("web", 1, updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE},
                    lifecycle={"inPlaceUpdate": {"labelsHandler": {"upgrade-hook": "true"}}})
    spec["spec"]["template"]["metadata"]["labels"]["upgrade-hook"] = "true"
    await client.create(CLONESETS, spec, namespace=NAMESPACE)
    await wait_ready(client, "web", 1)
    await update_cloneset(client, "web", set_image("nginx:2"))

    async def preparing() -> Obj | None:
        pods = await owned_pods(client, "web")
        return pods[0] if pods and state_of(pods[0]) == kruise.STATE_PREPARING_UPDATE else None

    pod = await eventually(preparing, what="PreparingUpdate")
    await asyncio.sleep(0.5)
    held = (await owned_pods(client, "web"))[0]
    assert held["spec"]["containers"][0]["image"] == "nginx:1"
    assert state_of(held) == kruise.STATE_PREPARING_UPDATE

    await client.patch(PODS, pod["metadata"]["name"], {"metadata": {"labels": {"upgrade-hook": None}}},
                       namespace=NAMESPACE)

    async def updated() -> Obj | None:
        current = (await owned_pods(client, "web"))[0]
        ok = current["spec"]["containers"][0]["image"] == "nginx:2" and state_of(current) == kruise.STATE_UPDATED
        return current if ok else None

    current = await eventually(updated, what="updated in place and held in Updated")
    assert current["metadata"]["uid"] == pod["metadata"]["uid"]
    await client.patch(PODS, pod["metadata"]["name"], {"metadata": {"labels": {"upgrade-hook": "true"}}},
                       namespace=NAMESPACE)

    async def normal() -> bool:
        return state_of((await owned_pods(client, "web"))[0]) == kruise.STATE_NORMAL

    await eventually(normal, what="Normal once the hook is back")
    assert labels((await owned_pods(client, "web"))[0])[kruise.CONTROLLER_REVISION_HASH_LABEL] == \
        (await status_of(client, "web"))["updateRevision"]
