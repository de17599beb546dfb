"""End-to-end CloneSet scenarios (kruise ``test/e2e/apps/cloneset.go``) on the embedded cluster: API server,
simulated kubelet (scheduling, readiness gates, in-place container restarts) and the CloneSet
controller. Every test runs under :class:`CloneSetMonitor`, which checks the CloneSet's invariants
at every watch event. Upstream's waits of 10-60 s are shortened (``minReadySeconds``,
``progressDeadlineSeconds``); the behaviour asserted is the same.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from cloneset_monitor import CloneSetMonitor

from kubeloop.api import kruise
from kubeloop.api.meta import controller_of, parse_time
from kubeloop.client import PERSISTENT_VOLUME_CLAIMS, PODS, ApiClient, is_conflict
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.testing.cluster import EmbeddedCluster

Obj = dict[str, Any]
NAME = "e2e"
NS = "default"
MAX_INT32 = 2**31 - 1


def new_cloneset(replicas: int, **spec: Any) -> Obj:
    """Upstream's e2e template: selector ``owner=<name>``, one ``nginx`` container with env and resources."""
    labels = {"owner": NAME}
    container = {"name": "nginx", "image": "nginx:1.25", "env": [{"name": "test", "value": "foo"}],
                 "resources": {"requests": {"cpu": "200m", "memory": "200Mi"},
                               "limits": {"cpu": "1", "memory": "1Gi"}}}
    body: Obj = {"apiVersion": kruise.API_VERSION, "kind": kruise.CLONESET_KIND,
                 "metadata": {"name": NAME, "namespace": NS},
                 "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                          "template": {"metadata": {"labels": dict(labels)},
                                       "spec": {"containers": [container], "terminationGracePeriodSeconds": 3}}}}
    body["spec"].update(spec)
    return body


async def get(client: ApiClient) -> Obj:
    result: Obj = await client.get(CLONESETS, NAME, namespace=NS)
    return result


async def update(client: ApiClient, change: Callable[[Obj], None]) -> Obj:
    for _ in range(10):
        body = await get(client)
        change(body)
        try:
            result: Obj = await client.update(CLONESETS, body, namespace=NS)
            return result
        except Exception as exc:
            if not is_conflict(exc):
                raise
    raise AssertionError("could not update the CloneSet")


async def pods(client: ApiClient) -> list[Obj]:
    """Pods controlled by the CloneSet, without terminating ones, sorted by name."""
    listed = await client.list(PODS, namespace=NS)
    found = [p for p in listed["items"] if (controller_of(p) or {}).get("name") == NAME
             and not p["metadata"].get("deletionTimestamp")]
    return sorted(found, key=lambda p: p["metadata"]["name"])


async def wait_status(cluster: EmbeddedCluster, check: Callable[[Obj], bool], timeout: float = 30.0) -> Obj:
    def full(cs: Obj) -> bool:
        status = cs.get("status") or {}
        return status.get("observedGeneration") == cs["metadata"].get("generation") and check(status)

    try:
        return await cluster.wait_for(CLONESETS, NAME, full, namespace=NS, timeout=timeout)
    except TimeoutError as exc:
        details = [(p["metadata"]["name"], p["metadata"].get("labels"), p["metadata"].get("annotations"),
                    p.get("status")) for p in await pods(cluster.client)]
        raise AssertionError(f"{exc}\npods: {details}") from None


def progressing(status: Obj) -> tuple[str, str] | None:
    for cond in status.get("conditions") or []:
        if cond.get("type") == kruise.CONDITION_PROGRESSING:
            return str(cond.get("status")), str(cond.get("reason"))
    return None


def settled(replicas: int) -> Callable[[Obj], bool]:
    def check(status: Obj) -> bool:
        return (status.get("replicas") == replicas and status.get("updatedAvailableReplicas") == replicas
                and status.get("availableReplicas") == replicas
                and status.get("currentRevision") == status.get("updateRevision"))
    return check


def state(pod: Obj) -> str:
    return str((pod["metadata"].get("labels") or {}).get(kruise.LIFECYCLE_STATE_LABEL) or "")


def set_image(image: str) -> Callable[[Obj], None]:
    def change(body: Obj) -> None:
        body["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return change


# -- creating ----------------------------------------------------------------------------------

async def test_e2_pre_normal_finalizer(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    hook = "finalizers.sigs.k8s.io/test"
    await client.create(CLONESETS, new_cloneset(1, progressDeadlineSeconds=2,
                                                lifecycle={"preNormal": {"finalizersHandler": [hook]}}), namespace=NS)
    await wait_status(cluster, lambda s: s.get("readyReplicas") == 1 and s.get("availableReplicas") == 0)
    assert state((await pods(client))[0]) == kruise.STATE_PREPARING_NORMAL
    await wait_status(cluster, lambda s: progressing(s) == ("False", kruise.REASON_DEADLINE_EXCEEDED))
    pod = (await pods(client))[0]
    await client.patch(PODS, pod["metadata"]["name"], {"metadata": {"finalizers": [hook]}}, namespace=NS)
    await cluster.wait_for(PODS, pod["metadata"]["name"], lambda p: state(p) == kruise.STATE_NORMAL, namespace=NS)
    await client.patch(PODS, pod["metadata"]["name"], {"metadata": {"finalizers": None}}, namespace=NS)
    await wait_status(cluster, lambda s: s.get("availableReplicas") == 1
                      and progressing(s) == ("True", kruise.REASON_AVAILABLE))
    assert state((await pods(client))[0]) == kruise.STATE_NORMAL
    monitor.check()


async def test_e4_no_progressing_condition_without_deadline(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(1, progressDeadlineSeconds=MAX_INT32), namespace=NS)
    status = (await wait_status(cluster, lambda s: s.get("readyReplicas") == 1))["status"]
    assert progressing(status) is None
    await update(client, lambda b: b["spec"].update(progressDeadlineSeconds=600))
    await wait_status(cluster, lambda s: progressing(s) == ("True", kruise.REASON_AVAILABLE))
    monitor.check()


async def test_e3_unschedulable_pod_then_fixed_template(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    body = new_cloneset(1, progressDeadlineSeconds=2)
    body["spec"]["template"]["spec"]["schedulerName"] = "unschedulable"
    await client.create(CLONESETS, body, namespace=NS)
    await wait_status(cluster, lambda s: s.get("replicas") == 1
                      and progressing(s) == ("False", kruise.REASON_DEADLINE_EXCEEDED))
    pod = (await pods(client))[0]
    assert pod["status"].get("phase", "Pending") == "Pending"
    # v1.8 moves a pod without preNormal hook to Normal at once (later releases wait for a node).
    assert state(pod) == kruise.STATE_NORMAL

    def schedulable(body: Obj) -> None:
        body["spec"]["template"]["spec"]["schedulerName"] = ""

    await update(client, schedulable)
    await wait_status(cluster, lambda s: s.get("readyReplicas") == 1
                      and progressing(s) == ("True", kruise.REASON_AVAILABLE))
    replacement = (await pods(client))[0]
    assert replacement["metadata"]["uid"] != pod["metadata"]["uid"]
    assert state(replacement) == kruise.STATE_NORMAL
    monitor.check()


async def test_e5_max_int32_min_ready_and_deadline(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(1, minReadySeconds=MAX_INT32, progressDeadlineSeconds=MAX_INT32),
                        namespace=NS)
    status = (await wait_status(cluster, lambda s: s.get("readyReplicas") == 1))["status"]
    assert progressing(status) is None and status["availableReplicas"] == 0

    def relax(body: Obj) -> None:
        body["spec"]["minReadySeconds"] = 10
        body["spec"].pop("progressDeadlineSeconds", None)

    await update(client, relax)
    status = (await wait_status(cluster, lambda s: s.get("readyReplicas") == 1))["status"]
    assert progressing(status) is None
    monitor.check()


# -- scaling -----------------------------------------------------------------------------------

async def test_e6_scales_with_defaults(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    created = await client.create(CLONESETS, new_cloneset(3, progressDeadlineSeconds=600), namespace=NS)
    assert created["spec"]["updateStrategy"]["type"] == kruise.RECREATE
    assert created["spec"]["updateStrategy"]["maxUnavailable"] == "20%"
    await wait_status(cluster, lambda s: s.get("replicas") == 3)
    await wait_status(cluster, lambda s: s.get("readyReplicas") == 3
                      and progressing(s) == ("True", kruise.REASON_AVAILABLE))
    await update(client, lambda b: b["spec"].update(replicas=1))
    await wait_status(cluster, settled(1))
    await update(client, lambda b: b["spec"].update(replicas=4))
    await wait_status(cluster, settled(4))
    assert len(await pods(client)) == 4
    monitor.check()


async def test_e7_min_ready_seconds_paces_scale_up(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    spec = new_cloneset(3, minReadySeconds=2, scaleStrategy={"maxUnavailable": 1}, progressDeadlineSeconds=600)
    await client.create(CLONESETS, spec, namespace=NS)
    await wait_status(cluster, lambda s: progressing(s) == ("True", kruise.REASON_UPDATED))
    await wait_status(cluster, lambda s: s.get("availableReplicas") == 3
                      and progressing(s) == ("True", kruise.REASON_AVAILABLE), timeout=40)
    created = sorted(await pods(client), key=lambda p: p["metadata"]["creationTimestamp"])
    for previous, pod in itertools.pairwise(created):
        ready = next(c for c in previous["status"]["conditions"] if c["type"] == "Ready")
        ready_since = parse_time(ready["lastTransitionTime"])
        created_at = parse_time(pod["metadata"]["creationTimestamp"])
        assert ready_since is not None and created_at is not None
        gap = created_at - ready_since
        assert gap.total_seconds() >= 2, f"{pod['metadata']['name']} created {gap} after the previous became ready"
    monitor.check()


async def test_e8_paused_does_not_block_scaling(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    spec = new_cloneset(3, minReadySeconds=60, progressDeadlineSeconds=600,
                        updateStrategy={"type": kruise.RECREATE, "paused": True})
    await client.create(CLONESETS, spec, namespace=NS)
    await wait_status(cluster, lambda s: s.get("replicas") == 3)
    await wait_status(cluster, lambda s: s.get("readyReplicas") == 3
                      and progressing(s) == ("True", kruise.REASON_PAUSED))
    monitor.check()


def hooked_cloneset(**extra: Any) -> Obj:
    body = new_cloneset(3, progressDeadlineSeconds=600,
                        lifecycle={"preDelete": {"labelsHandler": {"lifecycle-hook": "true"}}}, **extra)
    body["spec"]["template"]["metadata"]["labels"]["lifecycle-hook"] = "true"
    return body


async def test_e9_specified_delete_waits_for_pre_delete_hook(cluster: EmbeddedCluster,
                                                             monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, hooked_cloneset(), namespace=NS)
    await wait_status(cluster, lambda s: progressing(s) == ("True", kruise.REASON_AVAILABLE))
    original = [p["metadata"]["name"] for p in await pods(client)]
    target = original[0]
    await client.patch(PODS, target, {"metadata": {"labels": {kruise.SPECIFIED_DELETE_LABEL: "true"}}}, namespace=NS)
    await cluster.wait_for(PODS, target, lambda p: state(p) == kruise.STATE_PREPARING_DELETE, namespace=NS)
    await asyncio.sleep(1)
    status = (await get(client))["status"]
    assert status["replicas"] == 3 and len(await pods(client)) == 3
    assert progressing(status) == ("True", kruise.REASON_UPDATED)
    await client.patch(PODS, target, {"metadata": {"labels": {"lifecycle-hook": None}}}, namespace=NS)
    await cluster.wait_deleted(PODS, target, namespace=NS)
    await wait_status(cluster, lambda s: s.get("replicas") == 3 and progressing(s) == ("True", kruise.REASON_AVAILABLE))
    assert len(set(original) & {p["metadata"]["name"] for p in await pods(client)}) == 2
    monitor.check()


async def test_e10_pods_to_delete_with_exclude_preparing_delete(cluster: EmbeddedCluster,
                                                                monitor: CloneSetMonitor) -> None:
    client = cluster.client
    body = hooked_cloneset()
    body["metadata"]["labels"] = {kruise.SCALING_EXCLUDE_PREPARING_DELETE_LABEL: "true"}
    await client.create(CLONESETS, body, namespace=NS)
    await wait_status(cluster, lambda s: progressing(s) == ("True", kruise.REASON_AVAILABLE))
    original = [p["metadata"]["name"] for p in await pods(client)]
    target = original[0]

    def scale_in_with_named_victim(body: Obj) -> None:
        body["spec"]["replicas"] = 2
        body["spec"].setdefault("scaleStrategy", {})["podsToDelete"] = [target]

    await update(client, scale_in_with_named_victim)
    await cluster.wait_for(PODS, target, lambda p: state(p) == kruise.STATE_PREPARING_DELETE, namespace=NS)
    status = (await wait_status(cluster, lambda s: s.get("replicas") == 3))["status"]
    assert progressing(status) == ("True", kruise.REASON_UPDATED)
    await update(client, lambda b: b["spec"].update(replicas=3))
    await wait_status(cluster, lambda s: s.get("replicas") == 4)
    assert state(await client.get(PODS, target, namespace=NS)) == kruise.STATE_PREPARING_DELETE
    await client.patch(PODS, target, {"metadata": {"labels": {"lifecycle-hook": None}}}, namespace=NS)
    await cluster.wait_deleted(PODS, target, namespace=NS)
    await wait_status(cluster, lambda s: s.get("replicas") == 3 and progressing(s) == ("True", kruise.REASON_AVAILABLE))
    assert len(set(original) & {p["metadata"]["name"] for p in await pods(client)}) == 2
    monitor.check()


# -- updating ----------------------------------------------------------------------------------

async def test_e11_in_place_update_restarts_the_container(cluster: EmbeddedCluster,
                                                          monitor: CloneSetMonitor) -> None:
    client = cluster.client
    spec = new_cloneset(1, minReadySeconds=1, progressDeadlineSeconds=600,
                        updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE})
    await client.create(CLONESETS, spec, namespace=NS)
    await wait_status(cluster, lambda s: progressing(s) == ("True", kruise.REASON_AVAILABLE))
    before = (await pods(client))[0]
    await update(client, set_image("nginx:1.26"))
    await wait_status(cluster, lambda s: s.get("updatedReadyReplicas") == 1 and s.get("updateRevision")
                      == s.get("currentRevision") and progressing(s) == ("True", kruise.REASON_AVAILABLE))
    after = (await pods(client))[0]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    old_status, new_status = before["status"]["containerStatuses"][0], after["status"]["containerStatuses"][0]
    assert new_status["containerID"] != old_status["containerID"]
    assert new_status["restartCount"] == old_status["restartCount"] + 1
    assert after["spec"]["containers"][0]["image"] == "nginx:1.26"
    monitor.check()


async def test_e16_percent_partition_updates_one_pod(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    strategy = {"type": kruise.IN_PLACE_IF_POSSIBLE, "maxUnavailable": "50%", "partition": "99%"}
    await client.create(CLONESETS, new_cloneset(4, minReadySeconds=1, progressDeadlineSeconds=600,
                                                updateStrategy=strategy), namespace=NS)
    old = (await wait_status(cluster, lambda s: progressing(s) == ("True", kruise.REASON_AVAILABLE)))["status"]
    monitor.min_old = (old["updateRevision"], 3)
    await update(client, set_image("nginx:1.26"))
    status = (await wait_status(cluster, lambda s: s.get("updatedReplicas") == 1 and s.get("updatedReadyReplicas") == 1
                                and progressing(s) == ("True", kruise.REASON_PARTITION_AVAILABLE)))["status"]
    assert status["expectedUpdatedReplicas"] == 1
    await asyncio.sleep(2)
    assert (await get(client))["status"]["updatedReplicas"] == 1
    monitor.check()


async def delete_and_await_replacements(cluster: EmbeddedCluster, replicas: int) -> None:
    """Delete every pod of the CloneSet and wait until ``replicas`` others, none terminating, replace them.

    The CloneSet's status is no barrier here: it still shows the settled state from before the
    deletions until the controller has observed them, and a pod it re-creates after the caller
    has moved on would escape the caller's next step.
    """
    client = cluster.client
    deleted: set[str] = set()
    for pod in await pods(client):
        deleted.add(pod["metadata"]["uid"])
        await client.delete(PODS, pod["metadata"]["name"], namespace=NS)

    async def replaced() -> bool:
        listed = (await client.list(PODS, namespace=NS))["items"]
        owned = [p for p in listed if (controller_of(p) or {}).get("name") == NAME]
        return len(owned) == replicas and not any(
            p["metadata"]["uid"] in deleted or p["metadata"].get("deletionTimestamp") for p in owned)

    await cluster.wait_until(replaced, 30, f"{replicas} pods replacing the deleted ones")


async def test_e17_pvc_reuse_then_disable(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    vcts = [{"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                   "resources": {"requests": {"storage": "1Gi"}}}}
            for name in ("data-vol1", "data-vol2")]
    await client.create(CLONESETS, new_cloneset(4, progressDeadlineSeconds=600, volumeClaimTemplates=vcts),
                        namespace=NS)
    await wait_status(cluster, settled(4))

    async def claims() -> list[Obj]:
        listed = await client.list(PERSISTENT_VOLUME_CLAIMS, namespace=NS)
        return sorted((c for c in listed["items"] if not c["metadata"].get("deletionTimestamp")),
                      key=lambda c: c["metadata"]["name"])

    first = await claims()
    assert len(first) == 8
    ids = {(p["metadata"].get("labels") or {})[kruise.INSTANCE_ID_LABEL] for p in await pods(client)}
    assert {(c["metadata"].get("labels") or {})[kruise.INSTANCE_ID_LABEL] for c in first} == ids
    assert all((controller_of(c) or {}).get("kind") == kruise.CLONESET_KIND for c in first)

    await delete_and_await_replacements(cluster, 4)
    await wait_status(cluster, lambda s: settled(4)(s) and progressing(s) == ("True", kruise.REASON_AVAILABLE))
    assert {(p["metadata"].get("labels") or {})[kruise.INSTANCE_ID_LABEL] for p in await pods(client)} == ids
    assert [c["metadata"]["name"] for c in await claims()] == [c["metadata"]["name"] for c in first]

    await update(client, lambda b: b["spec"].setdefault("scaleStrategy", {}).update(disablePVCReuse=True))
    # Only a CloneSet whose new generation the controller has observed is sure to see the pod
    # deletions below with disablePVCReuse set (its pods and CloneSets come from separate
    # watches); before that it may legitimately re-create a pod with its old id and claims.
    await wait_status(cluster, lambda s: True)
    for pod in await pods(client):
        await client.delete(PODS, pod["metadata"]["name"], namespace=NS)

    async def renewed() -> bool:
        current = await pods(client)
        names = {c["metadata"]["name"] for c in await claims()}
        live_ids = {(p["metadata"].get("labels") or {})[kruise.INSTANCE_ID_LABEL] for p in current}
        return (len(current) == 4 and len(names) == 8 and not names & {c["metadata"]["name"] for c in first}
                and {n.rsplit("-", 1)[-1] for n in names} == live_ids)

    await cluster.wait_until(renewed, 30, "new pods with new PVCs only")
    monitor.check()


async def test_e20_resources_change_recreates(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(1, updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE}),
                        namespace=NS)
    await wait_status(cluster, settled(1))
    before = (await pods(client))[0]

    def more_cpu(body: Obj) -> None:
        body["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "300m"

    await update(client, more_cpu)
    await wait_status(cluster, lambda s: settled(1)(s) and s.get("updatedReadyReplicas") == 1)
    assert (await pods(client))[0]["metadata"]["uid"] != before["metadata"]["uid"]
    monitor.check()


# -- acceptance scenarios ------------------------------------------------------------------------

async def test_a9_template_rollback_counts_old_pods_as_updated(cluster: EmbeddedCluster,
                                                               monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(3, updateStrategy={"partition": 2}), namespace=NS)
    first = (await wait_status(cluster, settled(3)))["status"]["updateRevision"]
    await update(client, set_image("nginx:1.26"))
    await wait_status(cluster, lambda s: s.get("updatedAvailableReplicas") == 1 and s.get("replicas") == 3)
    await update(client, set_image("nginx:1.25"))
    status = (await wait_status(cluster, lambda s: s.get("updateRevision") == first
                                and s.get("updatedReplicas") == 2 and s.get("replicas") == 3))["status"]
    assert status["expectedUpdatedReplicas"] == 1
    monitor.check()


async def test_a4_partition_with_recreate(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(5, updateStrategy={"partition": 3, "maxUnavailable": 1}),
                        namespace=NS)
    old = (await wait_status(cluster, settled(5)))["status"]
    monitor.min_old, monitor.min_available = (old["updateRevision"], 3), 4
    await update(client, set_image("nginx:1.26"))
    status = (await wait_status(cluster, lambda s: s.get("updatedAvailableReplicas") == 2
                                and s.get("availableReplicas") == 5))["status"]
    assert status["expectedUpdatedReplicas"] == 2 and status["updatedReplicas"] == 2
    await update(client, lambda b: b["spec"]["updateStrategy"].update(partition=5))
    await asyncio.sleep(1)
    assert (await get(client))["status"]["updatedReplicas"] == 2
    monitor.min_old = None
    await update(client, lambda b: b["spec"]["updateStrategy"].update(partition=0))
    await wait_status(cluster, settled(5))
    monitor.check()


async def test_a6_max_surge_keeps_every_pod_available(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(4, updateStrategy={"maxSurge": 1, "maxUnavailable": 0}),
                        namespace=NS)
    await wait_status(cluster, settled(4))
    monitor.min_available = 4
    await update(client, set_image("nginx:1.26"))
    await wait_status(cluster, lambda s: settled(4)(s) and s.get("updatedAvailableReplicas") == 4, timeout=60)
    monitor.check()


async def test_a7_in_place_update_of_several_pods(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    strategy = {"type": kruise.IN_PLACE_ONLY, "maxUnavailable": 2}
    await client.create(CLONESETS, new_cloneset(5, updateStrategy=strategy), namespace=NS)
    await wait_status(cluster, settled(5))
    uids = {p["metadata"]["uid"] for p in await pods(client)}
    monitor.min_available = 3
    await update(client, set_image("nginx:1.26"))
    await wait_status(cluster, lambda s: settled(5)(s) and s.get("observedGeneration") == 2, timeout=60)
    after = await pods(client)
    assert {p["metadata"]["uid"] for p in after} == uids
    assert all(p["status"]["containerStatuses"][0]["restartCount"] == 1 for p in after)
    monitor.check()
