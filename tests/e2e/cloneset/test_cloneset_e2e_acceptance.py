"""End-to-end acceptance scenarios on the scale side (black-box replays of kruise's
``sync/cloneset_scale_test.go`` and ``cloneset_sync_utils_test.go`` rows) -- basic scale, the
scale-up unavailability cap, podsToDelete, orphans, the preDelete hook, PVC reuse, the scale
subresource -- on the embedded cluster (API server with the CloneSet admission,
simulated kubelet, CloneSet controller, garbage collector), each under the CloneSet invariant
monitor (release-aware here, for the orphan scenario). The update-side scenarios are in
``test_cloneset_e2e_acceptance_update.py``.

Where a step cannot be observed end to end the test asserts the observable outcome and its
docstring says so; :class:`acceptance_kit.PodHistory` shows what happened between the waits.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from acceptance_kit import (
    ROLLOUT_TIMEOUT,
    PodHistory,
    condition,
    instance_id,
    reconciled_again,
)
from cloneset_monitor import CloneSetMonitor
from test_cloneset_e2e import NAME, NS, Obj, get, new_cloneset, pods, settled, state, update, wait_status

from kubeloop.api import kruise
from kubeloop.api.meta import controller_of, labels_of, name_of, uid_of
from kubeloop.client import EVENTS, PERSISTENT_VOLUME_CLAIMS, PODS, ApiClient, ApiException
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.controllers.cloneset.podstate import is_cloneset_pod_available
from kubeloop.testing.cluster import EmbeddedCluster

INSTANCE_ID = re.compile(r"^[bcdfghjklmnpqrstvwxz2456789]{5}$")
NEVER_READY = "sim.kubeloop.io/never-ready"


# -- helpers -------------------------------------------------------------------------------------

def data_volume() -> list[Obj]:
    return [{"metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]


async def claims(client: ApiClient) -> dict[str, str]:
    """Live (non-terminating) CloneSet-owned PVCs: name -> uid."""
    listed = await client.list(PERSISTENT_VOLUME_CLAIMS, namespace=NS)
    return {name_of(c): uid_of(c) for c in listed["items"]
            if not c["metadata"].get("deletionTimestamp") and (controller_of(c) or {}).get("name") == NAME}


def pods_to_delete(names: list[str]) -> Callable[[Obj], None]:
    def change(body: Obj) -> None:
        body["spec"].setdefault("scaleStrategy", {})["podsToDelete"] = names
    return change


# -- basic scale ---------------------------------------------------------------------------------

async def test_a1_basic_scale_names_labels_and_victims(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    """R 0 -> 5 -> 2 -> 5. Pods are ``<cs>-<id>`` with upstream's alphabet, labelled and owned as
    kruise's ``newVersionedPods`` makes them; on 5 -> 2 the two pods made unready first are among
    the victims (``choosePodsToDelete``: the least available go first)."""
    client = cluster.client
    created = await client.create(CLONESETS, new_cloneset(0), namespace=NS)
    await wait_status(cluster, lambda s: s.get("replicas") == 0)
    await update(client, lambda b: b["spec"].update(replicas=5))
    status = (await wait_status(cluster, lambda s: settled(5)(s) and s.get("updatedReadyReplicas") == 5
                                and s.get("readyReplicas") == 5))["status"]
    assert status["expectedUpdatedReplicas"] == 5 and status["labelSelector"] == f"owner={NAME}"
    live = await pods(client)
    assert len(live) == 5
    for pod in live:
        labels = labels_of(pod)
        assert INSTANCE_ID.match(instance_id(pod)) and name_of(pod) == f"{NAME}-{instance_id(pod)}"
        assert labels[kruise.CONTROLLER_REVISION_HASH_LABEL] == status["updateRevision"]
        assert labels[kruise.POD_TEMPLATE_HASH_LABEL] == status["updateRevision"].rsplit("-", 1)[-1]
        assert labels[kruise.LIFECYCLE_STATE_LABEL] == kruise.STATE_NORMAL and labels["owner"] == NAME
        assert kruise.LIFECYCLE_TIMESTAMP_ANNOTATION in pod["metadata"]["annotations"]
        assert {"conditionType": kruise.INPLACE_UPDATE_READY} in pod["spec"]["readinessGates"]
        assert condition(pod, kruise.INPLACE_UPDATE_READY) == "True"
        ref = controller_of(pod) or {}
        assert ref == {"apiVersion": kruise.API_VERSION, "kind": kruise.CLONESET_KIND, "name": NAME,
                       "uid": uid_of(created), "controller": True, "blockOwnerDeletion": True}

    oldest = sorted(live, key=lambda p: (p["metadata"]["creationTimestamp"], name_of(p)))
    doomed = {name_of(p) for p in oldest[:2]}
    for name in doomed:
        await client.patch(PODS, name, {"metadata": {"annotations": {NEVER_READY: "true"}}}, namespace=NS)
    await wait_status(cluster, lambda s: s.get("readyReplicas") == 3)
    await update(client, lambda b: b["spec"].update(replicas=2))
    await wait_status(cluster, lambda s: settled(2)(s) and s.get("readyReplicas") == 2)
    survivors = {name_of(p) for p in await pods(client)}
    assert len(survivors) == 2 and not survivors & doomed

    await update(client, lambda b: b["spec"].update(replicas=5))
    await wait_status(cluster, lambda s: settled(5)(s) and s.get("readyReplicas") == 5)
    final = await pods(client)
    assert survivors < {name_of(p) for p in final}
    assert len({instance_id(p) for p in final}) == 5
    monitor.check()


# -- scaleStrategy.maxUnavailable ----------------------------------------------------------------

async def test_a2_scale_max_unavailable_caps_unavailable_pods(cluster: EmbeddedCluster, monitor: CloneSetMonitor,
                                                              history: PodHistory) -> None:
    """scaleStrategy.maxUnavailable=2, R 0 -> 5 (row D53 of ``test_cloneset_diffs.py``): at no pod
    event do more than 2 of the CloneSet's pods exist unavailable (``minReadySeconds`` 1 keeps new
    pods unavailable for a while), and a Warning ``ScaleUpLimited`` event names the limit."""
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(0, minReadySeconds=1, scaleStrategy={"maxUnavailable": 2}),
                        namespace=NS)
    await wait_status(cluster, lambda s: s.get("replicas") == 0)
    await update(client, lambda b: b["spec"].update(replicas=5))
    await wait_status(cluster, lambda s: settled(5)(s), timeout=ROLLOUT_TIMEOUT)
    await history.caught_up(cluster)
    worst = 0
    for seen, view in history.timeline():
        live = [p for p in view.values() if not p["metadata"].get("deletionTimestamp")]
        worst = max(worst, sum(not is_cloneset_pod_available(p, 1, seen) for p in live))
    assert worst == 2, f"at most {worst} pods were unavailable at once; the cap is 2"
    assert len(history.names()) == 5

    listed = await client.list(EVENTS, namespace=NS)
    limited = [e for e in listed["items"] if e.get("reason") == "ScaleUpLimited"
               and e["involvedObject"].get("name") == NAME]
    assert limited and all(e["type"] == "Warning" for e in limited)
    assert any("limit: 2" in str(e.get("message")) for e in limited)
    monitor.check()


# -- podsToDelete --------------------------------------------------------------------------------

async def test_a3_pods_to_delete_replaces_the_pod_and_its_claims(cluster: EmbeddedCluster,
                                                                  monitor: CloneSetMonitor) -> None:
    """Naming a pod in podsToDelete (rows D04-D06 of ``test_cloneset_diffs.py``) deletes it and its
    PVC, creates a replacement with a new instance id, and the controller then drops the name from
    the spec (a new generation). A name that is not a pod is rejected by the admission with 422
    Invalid."""
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(3, volumeClaimTemplates=data_volume()), namespace=NS)
    await wait_status(cluster, settled(3))
    before = await pods(client)
    target = before[0]
    target_claim = f"data-{NAME}-{instance_id(target)}"
    assert target_claim in await claims(client)
    named = await update(client, pods_to_delete([name_of(target)]))

    await cluster.wait_deleted(PODS, name_of(target), namespace=NS, timeout=ROLLOUT_TIMEOUT)

    async def replaced() -> bool:
        live = await pods(client)
        cs = await get(client)
        return (len(live) == 3 and instance_id(target) not in {instance_id(p) for p in live}
                and not (cs["spec"].get("scaleStrategy") or {}).get("podsToDelete")
                and target_claim not in await claims(client))

    await cluster.wait_until(replaced, ROLLOUT_TIMEOUT, "a replacement, the claim deleted, podsToDelete emptied")
    assert (await get(client))["metadata"]["generation"] > named["metadata"]["generation"]
    await wait_status(cluster, settled(3))
    live = await pods(client)
    assert {name_of(p) for p in before[1:]} < {name_of(p) for p in live}
    assert set(await claims(client)) == {f"data-{NAME}-{instance_id(p)}" for p in live}

    with pytest.raises(ApiException) as rejected:
        await update(client, pods_to_delete([f"{NAME}-absent"]))
    assert rejected.value.code == 422 and rejected.value.reason == "Invalid"
    causes = (rejected.value.details or {}).get("causes") or []
    assert any(c.get("field") == "spec.scaleStrategy.podsToDelete" for c in causes), causes
    assert not ((await get(client))["spec"].get("scaleStrategy") or {}).get("podsToDelete")
    monitor.check()


# -- orphans and release -------------------------------------------------------------------------

async def test_a11_orphan_ignored_and_released_pod_replaced(cluster: EmbeddedCluster,
                                                            monitor: CloneSetMonitor) -> None:
    """A matching pod without owner is not adopted (v1alpha1 CloneSets never adopt) and does not
    count; removing the selector label from an owned pod releases it (owner reference removed)
    and a replacement is created."""
    client = cluster.client
    stray = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "labels": {"owner": NAME}},
             "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}}
    await client.create(PODS, stray, namespace=NS)
    await client.create(CLONESETS, new_cloneset(2), namespace=NS)
    await wait_status(cluster, settled(2))
    status = (await reconciled_again(cluster))["status"]
    assert status["replicas"] == 2 and len(await pods(client)) == 2
    assert not (await client.get(PODS, "stray", namespace=NS))["metadata"].get("ownerReferences")

    released = (await pods(client))[0]
    await client.patch(PODS, name_of(released), {"metadata": {"labels": {"owner": "someone-else"}}}, namespace=NS)
    await cluster.wait_for(PODS, name_of(released), lambda p: controller_of(p) is None, namespace=NS,
                           timeout=ROLLOUT_TIMEOUT)

    async def replaced() -> bool:
        live = await pods(client)
        return len(live) == 2 and name_of(released) not in {name_of(p) for p in live}

    await cluster.wait_until(replaced, ROLLOUT_TIMEOUT, "a replacement of the released pod")
    await wait_status(cluster, settled(2))
    kept = await client.get(PODS, name_of(released), namespace=NS)
    assert uid_of(kept) == uid_of(released) and not kept["metadata"].get("deletionTimestamp")
    assert not (await client.get(PODS, "stray", namespace=NS))["metadata"].get("ownerReferences")
    monitor.check()


# -- preDelete hook ------------------------------------------------------------------------------

async def test_a12_pre_delete_victim_revives_on_scale_up(cluster: EmbeddedCluster, monitor: CloneSetMonitor,
                                                         history: PodHistory) -> None:
    """preDelete finalizersHandler: on scale-in the victim goes PreparingDelete and is neither
    deleted (the monitor checks at every event) nor uncounted; scaling back up before the hook
    is removed brings it back through PreparingNormal to Normal and creates no new pod."""
    client = cluster.client
    hook = "example.com/hold"
    body = new_cloneset(3, lifecycle={"preDelete": {"finalizersHandler": [hook]}})
    body["spec"]["template"]["metadata"]["finalizers"] = [hook]
    await client.create(CLONESETS, body, namespace=NS)
    await wait_status(cluster, settled(3))
    original = {name_of(p) for p in await pods(client)}

    await update(client, lambda b: b["spec"].update(replicas=2))
    held: list[str] = []

    async def one_preparing_delete() -> bool:
        held[:] = [name_of(p) for p in await pods(client) if state(p) == kruise.STATE_PREPARING_DELETE]
        return len(held) == 1

    await cluster.wait_until(one_preparing_delete, ROLLOUT_TIMEOUT, "one victim in PreparingDelete")
    victim = held[0]
    status = (await reconciled_again(cluster))["status"]
    assert status["replicas"] == 3
    assert {name_of(p) for p in await pods(client)} == original

    await update(client, lambda b: b["spec"].update(replicas=3))
    await cluster.wait_for(PODS, victim, lambda p: state(p) == kruise.STATE_NORMAL, namespace=NS,
                           timeout=ROLLOUT_TIMEOUT)
    await wait_status(cluster, settled(3))
    await reconciled_again(cluster)
    await history.caught_up(cluster)
    assert {name_of(p) for p in await pods(client)} == original
    assert history.names() == original
    states = history.states(victim)
    assert states[-3:] == [kruise.STATE_PREPARING_DELETE, kruise.STATE_PREPARING_NORMAL, kruise.STATE_NORMAL], states
    monitor.check()


# -- PVC reuse -----------------------------------------------------------------------------------

async def test_a15_claims_reused_after_external_delete_and_removed_on_scale_in(
        cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    """A pod deleted by the user comes back with the same name, instance id and PVC (a new UID);
    a pod the controller scales in takes its PVC with it."""
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(2, volumeClaimTemplates=data_volume()), namespace=NS)
    await wait_status(cluster, settled(2))
    before = await pods(client)
    first_claims = await claims(client)
    assert set(first_claims) == {f"data-{NAME}-{instance_id(p)}" for p in before}
    victim = before[0]
    volume = next(v for v in victim["spec"]["volumes"] if v["name"] == "data")
    assert volume["persistentVolumeClaim"]["claimName"] == f"data-{NAME}-{instance_id(victim)}"

    await client.delete(PODS, name_of(victim), namespace=NS)

    async def back() -> bool:
        live = {name_of(p): p for p in await pods(client)}
        again = live.get(name_of(victim))
        return len(live) == 2 and again is not None and uid_of(again) != uid_of(victim)

    await cluster.wait_until(back, ROLLOUT_TIMEOUT, "the deleted pod back under its name")
    await wait_status(cluster, settled(2))
    again = next(p for p in await pods(client) if name_of(p) == name_of(victim))
    assert instance_id(again) == instance_id(victim)
    assert await claims(client) == first_claims

    await update(client, lambda b: b["spec"].update(replicas=1))
    await wait_status(cluster, settled(1))
    survivor = (await pods(client))[0]

    async def one_claim() -> bool:
        return set(await claims(client)) == {f"data-{NAME}-{instance_id(survivor)}"}

    await cluster.wait_until(one_claim, ROLLOUT_TIMEOUT, "the scaled-in pod's PVC deleted")
    assert (await claims(client))[f"data-{NAME}-{instance_id(survivor)}"] == \
        first_claims[f"data-{NAME}-{instance_id(survivor)}"]
    monitor.check()


# -- scale subresource ---------------------------------------------------------------------------

async def test_a16_scale_subresource(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    """GET .../clonesets/e2e/scale shows spec and status replicas and the status label selector;
    PUT of that Scale with new replicas changes spec.replicas, and the CloneSet follows."""
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(2), namespace=NS)
    status = (await wait_status(cluster, settled(2)))["status"]
    assert status["labelSelector"] == f"owner={NAME}"
    scale = await client.get_scale(CLONESETS, NAME, namespace=NS)
    assert (scale["apiVersion"], scale["kind"]) == ("autoscaling/v1", "Scale")
    assert scale["spec"]["replicas"] == 2
    assert scale["status"] == {"replicas": 2, "selector": f"owner={NAME}"}

    scale["spec"]["replicas"] = 4
    written = await client.update_scale(CLONESETS, NAME, scale, namespace=NS)
    assert written["spec"]["replicas"] == 4
    assert (await get(client))["spec"]["replicas"] == 4
    await wait_status(cluster, settled(4))
    scale = await client.get_scale(CLONESETS, NAME, namespace=NS)
    assert scale["spec"]["replicas"] == 4 and scale["status"]["replicas"] == 4
    monitor.check()
