"""CloneSet scaling against the embedded API server: creation, naming, status, scale-in, PVCs,
podsToDelete and the specified-delete label, scale expectations (kruise
``sync/cloneset_scale.go`` ``Scale``)."""

from __future__ import annotations

import re

from cloneset_kit import (
    NAMESPACE,
    StartController,
    StatusDriver,
    cloneset,
    events_of,
    get_cloneset,
    labels,
    names,
    owned_pods,
    owned_pvcs,
    state_of,
    update_cloneset,
    wait_ready,
)

from kubeloop.api import kruise
from kubeloop.client import PODS, ApiClient
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.testing.polling import eventually

ID = re.compile(r"^[bcdfghjklmnpqrstvwxz2456789]{5}$")


async def test_scale_up_creates_named_labelled_pods_and_status(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    created = await client.create(CLONESETS, cloneset("web", 3), namespace=NAMESPACE)
    cs = await wait_ready(client, "web", 3)

    pods = await owned_pods(client, "web")
    for pod in pods:
        pod_labels = labels(pod)
        instance_id = pod_labels[kruise.INSTANCE_ID_LABEL]
        assert ID.match(instance_id)
        assert pod["metadata"]["name"] == f"web-{instance_id}"
        assert pod_labels[kruise.CONTROLLER_REVISION_HASH_LABEL] == cs["status"]["updateRevision"]
        assert pod_labels[kruise.POD_TEMPLATE_HASH_LABEL] == cs["status"]["updateRevision"].rsplit("-", 1)[1]
        assert state_of(pod) == kruise.STATE_NORMAL
        assert {"conditionType": kruise.INPLACE_UPDATE_READY} in pod["spec"]["readinessGates"]
        ref = pod["metadata"]["ownerReferences"][0]
        assert ref["uid"] == created["metadata"]["uid"] and ref["controller"] and ref["blockOwnerDeletion"]
    status = cs["status"]
    assert status["currentRevision"] == status["updateRevision"]
    assert status["updatedReadyReplicas"] == status["updatedAvailableReplicas"] == 3
    assert status["expectedUpdatedReplicas"] == 3
    assert status["labelSelector"] == "app=web"
    assert status["collisionCount"] == 0

    scale = await client.get_scale(CLONESETS, "web", namespace=NAMESPACE)
    assert scale["spec"]["replicas"] == 3 and scale["status"]["selector"] == "app=web"
    assert any(e["reason"] == "SuccessfulCreate" for e in await events_of(client, "web"))


async def test_scale_in_prefers_unready_pods_and_scale_subresource(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    await client.create(CLONESETS, cloneset("web", 5), namespace=NAMESPACE)
    await wait_ready(client, "web", 5)
    pods = await owned_pods(client, "web")
    doomed = {pods[1]["metadata"]["name"], pods[3]["metadata"]["name"]}
    kubelet.unhealthy = lambda pod: pod["metadata"]["name"] in doomed

    async def unready() -> bool:
        cs = await get_cloneset(client, "web")
        return bool((cs.get("status") or {}).get("readyReplicas") == 3)

    await eventually(unready, what="two pods unready")
    await client.patch_scale(CLONESETS, "web", {"spec": {"replicas": 3}}, namespace=NAMESPACE)
    await wait_ready(client, "web", 3)
    assert not doomed & set(names(await owned_pods(client, "web")))


async def test_volume_claim_templates_create_pvcs_and_reuse_them(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    vct = {"metadata": {"name": "data"},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    await client.create(CLONESETS, cloneset("db", 2, volumeClaimTemplates=[vct]), namespace=NAMESPACE)
    await wait_ready(client, "db", 2)
    pods = await owned_pods(client, "db")
    pvcs = await owned_pvcs(client, "db")
    ids = sorted(labels(p)[kruise.INSTANCE_ID_LABEL] for p in pods)
    assert names(pvcs) == sorted(f"data-db-{i}" for i in ids)
    for pod in pods:
        instance_id = labels(pod)[kruise.INSTANCE_ID_LABEL]
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "data")
        assert volume["persistentVolumeClaim"]["claimName"] == f"data-db-{instance_id}"

    # A pod deleted behind the controller's back comes back with the same name and PVC.
    victim = pods[0]["metadata"]["name"]
    await client.delete(PODS, victim, namespace=NAMESPACE)

    async def replaced() -> bool:
        current = await owned_pods(client, "db")
        return names(current) == names(pods) and all(
            p["metadata"]["uid"] != pods[0]["metadata"]["uid"] for p in current)

    await eventually(replaced, what="replacement with the same name")
    assert names(await owned_pvcs(client, "db")) == names(pvcs)

    # Scale-in by the controller deletes the victim's PVCs too.
    await update_cloneset(client, "db", lambda body: body["spec"].update(replicas=1))
    await wait_ready(client, "db", 1)

    async def one_pvc() -> bool:
        return len(await owned_pvcs(client, "db")) == 1

    await eventually(one_pvc, what="the scaled-in pod's PVC deleted")
    remaining = await owned_pods(client, "db")
    assert names(await owned_pvcs(client, "db")) == [f"data-db-{labels(remaining[0])[kruise.INSTANCE_ID_LABEL]}"]


async def test_pods_to_delete_replaces_pod_and_truncates_list(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    await client.create(CLONESETS, cloneset("web", 3), namespace=NAMESPACE)
    await wait_ready(client, "web", 3)
    before = await owned_pods(client, "web")
    target = before[0]["metadata"]["name"]
    generation = (await get_cloneset(client, "web"))["metadata"]["generation"]
    await update_cloneset(client, "web", lambda body: body["spec"].setdefault("scaleStrategy", {}).update(
        podsToDelete=[target]))

    async def replaced() -> bool:
        current = names(await owned_pods(client, "web"))
        return target not in current and len(current) == 3

    await eventually(replaced, what="the named pod replaced")

    async def truncated() -> bool:
        cs = await get_cloneset(client, "web")
        return not (cs["spec"].get("scaleStrategy") or {}).get("podsToDelete")

    await eventually(truncated, what="podsToDelete truncated")
    assert (await get_cloneset(client, "web"))["metadata"]["generation"] > generation + 1


async def test_specified_delete_label_removes_pod_with_any_value(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    await client.create(CLONESETS, cloneset("web", 2), namespace=NAMESPACE)
    await wait_ready(client, "web", 2)
    target = (await owned_pods(client, "web"))[0]["metadata"]["name"]
    await client.patch(PODS, target, {"metadata": {"labels": {kruise.SPECIFIED_DELETE_LABEL: "false"}}},
                       namespace=NAMESPACE)

    async def replaced() -> bool:
        current = names(await owned_pods(client, "web"))
        return target not in current and len(current) == 2

    await eventually(replaced, what="the labelled pod replaced")
    await wait_ready(client, "web", 2)


async def test_scale_strategy_max_unavailable_limits_creation(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    kubelet.enabled = False
    await client.create(CLONESETS, cloneset("web", 5, scaleStrategy={"maxUnavailable": 2}), namespace=NAMESPACE)

    async def two() -> bool:
        return len(await owned_pods(client, "web")) == 2

    await eventually(two, what="the first two pods")
    assert len(await owned_pods(client, "web")) == 2

    async def limited() -> bool:
        return any(e["reason"] == "ScaleUpLimited" and e["type"] == "Warning" for e in await events_of(client, "web"))

    await eventually(limited, what="a ScaleUpLimited event")
    kubelet.enabled = True
    await wait_ready(client, "web", 5)


async def test_orphan_pods_are_not_adopted_and_released_pods_are_replaced(
    client: ApiClient, start_controller: StartController, kubelet: StatusDriver
) -> None:
    await start_controller()
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "labels": {"app": "web"}},
              "spec": {"containers": [{"name": "main", "image": "nginx:1"}]}}
    await client.create(PODS, orphan, namespace=NAMESPACE)
    await client.create(CLONESETS, cloneset("web", 2), namespace=NAMESPACE)
    await wait_ready(client, "web", 2)
    stray = await client.get(PODS, "stray", namespace=NAMESPACE)
    assert not stray["metadata"].get("ownerReferences")

    released = (await owned_pods(client, "web"))[0]["metadata"]["name"]
    await client.patch(PODS, released, {"metadata": {"labels": {"app": "other"}}}, namespace=NAMESPACE)

    async def replaced() -> bool:
        pod = await client.get(PODS, released, namespace=NAMESPACE)
        current = names(await owned_pods(client, "web"))
        return not pod["metadata"].get("ownerReferences") and released not in current and len(current) == 2

    await eventually(replaced, what="the relabelled pod released and replaced")
