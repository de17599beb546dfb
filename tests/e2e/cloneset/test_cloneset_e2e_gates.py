"""End-to-end CloneSet scenarios that depend on feature gates (kruise ``test/e2e/apps/cloneset.go``:
preparing-update counted as updated, volumeClaimTemplates changes, image pre-download, and a
partition raise under ``CloneSetPartitionRollback``), on the embedded
cluster under the invariant monitor.

The cluster runs with ``AllAlpha=true`` as upstream's e2e suite does (short hashes, partition
rollback, preparing-update-as-update, VCT recreate, ...); a test that needs other gates
parametrizes ``feature_gates``. Upstream's 10 s ``minReadySeconds`` and 120 s deadline are
shortened; the behaviour asserted is the same.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from cloneset_monitor import CloneSetMonitor
from test_cloneset_e2e import (
    NAME,
    NS,
    Obj,
    get,
    new_cloneset,
    pods,
    progressing,
    set_image,
    settled,
    state,
    update,
    wait_status,
)

from kubeloop.api import kruise
from kubeloop.api.meta import labels_of, name_of, uid_of
from kubeloop.api.pods import is_pod_ready
from kubeloop.client import (
    CONTROLLER_REVISIONS,
    PERSISTENT_VOLUME_CLAIMS,
    PODS,
    ApiClient,
    ApiException,
    is_not_found,
)
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.controllers.cloneset.imagepulljobs import IMAGE_PULL_JOBS
from kubeloop.controllers.cloneset.podstate import equal_to_revision
from kubeloop.controllers.cloneset.predownload import CREATED_LABEL, PARALLELISM_ANNOTATION
from kubeloop.testing.cluster import ClusterConfig, EmbeddedCluster

HOOK = "preparing-update-hook"
ROLLOUT_TIMEOUT = 90.0
DEADLINE_SECONDS = 3


@pytest.fixture
def feature_gates() -> dict[str, bool]:
    """The gates of upstream's e2e deployment."""
    return {"AllAlpha": True}


@pytest.fixture
def kubeloop_cluster_config(kubeloop_cluster_config: ClusterConfig, feature_gates: dict[str, bool]) -> ClusterConfig:
    return dataclasses.replace(kubeloop_cluster_config, feature_gates=feature_gates)


async def test_an_unknown_gate_fails_the_cluster_start_cleanly(tmp_path: Path) -> None:
    cluster = EmbeddedCluster(ClusterConfig(data_dir=tmp_path / "cluster", kubelet=None, controllers=["cloneset"],
                                            feature_gates={"CloneSetShortHash": True, "NoSuchGate": True}))
    with pytest.raises(ValueError, match="unrecognized feature gate: 'NoSuchGate'"):
        await cluster.start()
    assert not cluster.ready()
    with pytest.raises(RuntimeError, match="not running"):
        _ = cluster.client


def instance_id(obj: Obj) -> str:
    return str(labels_of(obj).get(kruise.INSTANCE_ID_LABEL, ""))


@dataclasses.dataclass
class Groups:
    """The live pods split as upstream's test does: by the update revision, and PreparingUpdate."""

    updated: list[Obj]
    current: list[Obj]
    preparing: list[Obj]

    def counts(self) -> tuple[int, int, int]:
        return len(self.updated), len(self.current), len(self.preparing)


async def groups(client: ApiClient) -> Groups:
    revision = str(((await get(client)).get("status") or {}).get("updateRevision") or "")
    live = await pods(client)
    updated = [p for p in live if equal_to_revision(p, revision)]
    current = [p for p in live if not equal_to_revision(p, revision)]
    preparing = [p for p in live if state(p) == kruise.STATE_PREPARING_UPDATE]
    return Groups(updated, current, preparing)


async def wait_groups(cluster: EmbeddedCluster, counts: tuple[int, int, int]) -> Groups:
    """Wait until (updated, current, preparing) are ``counts`` with the status observed."""
    found: list[Groups] = []

    async def reached() -> bool:
        cs = await get(cluster.client)
        if (cs.get("status") or {}).get("observedGeneration") != cs["metadata"].get("generation"):
            return False
        found[:] = [await groups(cluster.client)]
        return found[0].counts() == counts

    try:
        await cluster.wait_until(reached, ROLLOUT_TIMEOUT, f"(updated, current, preparing) == {counts}")
    except TimeoutError as exc:
        last = found[0].counts() if found else None
        raise AssertionError(f"{exc}; last seen {last}") from None
    return found[0]


async def monitor_caught_up(cluster: EmbeddedCluster, monitor: CloneSetMonitor, last: tuple[str, str]) -> None:
    """Wait until the monitor's watch has delivered the condition the API already shows."""
    await cluster.wait_until(lambda: bool(monitor.progress) and monitor.progress[-1] == last, ROLLOUT_TIMEOUT,
                             f"the monitor to see Progressing {last}")


def preparing_update_cloneset() -> Obj:
    """The preparing-update scenario's CloneSet: an inPlaceUpdate hook held by a template label, partition 99% of 2."""
    strategy = {"type": kruise.IN_PLACE_IF_POSSIBLE, "maxUnavailable": "50%", "partition": "99%"}
    body = new_cloneset(2, minReadySeconds=1, progressDeadlineSeconds=DEADLINE_SECONDS, updateStrategy=strategy,
                        lifecycle={"inPlaceUpdate": {"labelsHandler": {HOOK: "true"}}})
    body["spec"]["template"]["metadata"]["labels"][HOOK] = "true"
    return body


async def start_preparing_update(cluster: EmbeddedCluster) -> tuple[Groups, Obj]:
    """Create the preparing-update CloneSet, change its image: one pod held in PreparingUpdate. Then delete the
    other (current) pod; returns the groups once its replacement is ready, and the replacement."""
    client = cluster.client
    await client.create(CLONESETS, preparing_update_cloneset(), namespace=NS)
    await wait_status(cluster, lambda s: s.get("readyReplicas") == 2
                      and progressing(s) == ("True", kruise.REASON_AVAILABLE), timeout=ROLLOUT_TIMEOUT)
    await update(client, set_image("nginx:1.26"))
    held = await wait_groups(cluster, (0, 2, 1))
    other = next(p for p in held.current if state(p) != kruise.STATE_PREPARING_UPDATE)
    await client.delete(PODS, name_of(other), namespace=NS)

    async def replaced() -> bool:
        live = await pods(client)
        return (len(live) == 2 and name_of(other) not in {name_of(p) for p in live}
                and all(is_pod_ready(p) for p in live))

    await cluster.wait_until(replaced, ROLLOUT_TIMEOUT, "a ready replacement of the deleted pod")
    after = await groups(client)
    replacement = next(p for p in await pods(client) if name_of(p) != name_of(held.preparing[0]))
    return after, replacement


async def release(client: ApiClient, pod: Obj) -> None:
    await client.patch(PODS, name_of(pod), {"metadata": {"labels": {HOOK: None}}}, namespace=NS)


async def test_e18_preparing_update_counts_as_updated_when_scaling(cluster: EmbeddedCluster,
                                                                   monitor: CloneSetMonitor) -> None:
    client = cluster.client
    after, replacement = await start_preparing_update(cluster)
    assert after.counts() == (0, 2, 1)
    update_revision = (await get(client))["status"]["updateRevision"]
    assert not equal_to_revision(replacement, update_revision)
    # CloneSetShortHash (an alpha gate) reached the controller: the label is the bare hash.
    labels = labels_of(replacement)
    assert labels[kruise.CONTROLLER_REVISION_HASH_LABEL] == labels[kruise.POD_TEMPLATE_HASH_LABEL]
    held = after.preparing[0]
    await wait_status(cluster, lambda s: progressing(s) == ("False", kruise.REASON_DEADLINE_EXCEEDED))

    await update(client, lambda b: b["spec"].update(replicas=3))
    await cluster.wait_until(lambda: _ready_replicas(client, 3), ROLLOUT_TIMEOUT, "3 ready pods")
    scaled = await groups(client)
    assert scaled.counts() == (0, 3, 1)
    assert [name_of(p) for p in scaled.preparing] == [name_of(held)]

    await release(client, held)
    await wait_groups(cluster, (1, 2, 0))
    updated = await cluster.wait_for(PODS, name_of(held), lambda p: state(p) == kruise.STATE_UPDATED,
                                     namespace=NS, timeout=ROLLOUT_TIMEOUT)
    assert uid_of(updated) == uid_of(held)
    assert updated["status"]["containerStatuses"][0]["restartCount"] == 1

    def no_partition(body: Obj) -> None:
        body["spec"]["updateStrategy"].pop("partition", None)
        body["spec"]["updateStrategy"]["maxUnavailable"] = "100%"

    await update(client, no_partition)
    both = await wait_groups(cluster, (1, 2, 2))
    for pod in both.current:
        await release(client, pod)
    await wait_groups(cluster, (3, 0, 0))

    async def all_updated() -> bool:
        return [state(p) for p in await pods(client)] == [kruise.STATE_UPDATED] * 3

    await cluster.wait_until(all_updated, ROLLOUT_TIMEOUT, "every pod in state Updated")
    # Released pods stay Updated (not available) until the hook label is back, so the deadline
    # verdict stands: ProgressDeadlineExceeded only gives way to Available, Paused or
    # PartitionAvailable, and none of them held since it was reached.
    status = (await wait_status(cluster, lambda s: s.get("updatedReadyReplicas") == 3))["status"]
    assert progressing(status) == ("False", kruise.REASON_DEADLINE_EXCEEDED)
    assert status["availableReplicas"] == 0
    exceeded = ("False", kruise.REASON_DEADLINE_EXCEEDED)
    await monitor_caught_up(cluster, monitor, exceeded)
    assert monitor.progress[monitor.progress.index(exceeded):] == [exceeded]

    for pod in await pods(client):
        await client.patch(PODS, name_of(pod), {"metadata": {"labels": {HOOK: "true"}}}, namespace=NS)
    available = ("True", kruise.REASON_AVAILABLE)
    await wait_status(cluster, lambda s: settled(3)(s) and progressing(s) == available, timeout=ROLLOUT_TIMEOUT)
    assert {state(p) for p in await pods(client)} == {kruise.STATE_NORMAL}
    await monitor_caught_up(cluster, monitor, available)
    assert monitor.progress[monitor.progress.index(exceeded):] == [exceeded, available]
    monitor.check()


@pytest.mark.parametrize("feature_gates", [{}])
async def test_e18_default_gates_replace_with_the_update_revision(cluster: EmbeddedCluster,
                                                                  monitor: CloneSetMonitor) -> None:
    after, replacement = await start_preparing_update(cluster)
    update_revision = (await get(cluster.client))["status"]["updateRevision"]
    # Without PreparingUpdateAsUpdate the held pod still counts as old when scaling.
    assert equal_to_revision(replacement, update_revision)
    labels = labels_of(replacement)
    assert labels[kruise.CONTROLLER_REVISION_HASH_LABEL] == f"{NAME}-{labels[kruise.POD_TEMPLATE_HASH_LABEL]}"
    assert [p for p in after.current if state(p) == kruise.STATE_PREPARING_UPDATE]
    monitor.check()


async def _ready_replicas(client: ApiClient, replicas: int) -> bool:
    cs = await get(client)
    status = cs.get("status") or {}
    return (status.get("observedGeneration") == cs["metadata"].get("generation")
            and status.get("replicas") == replicas and status.get("readyReplicas") == replicas
            and len(await pods(client)) == replicas)


# -- partition raise with CloneSetPartitionRollback ----------------------------------------------

async def test_a4_raising_the_partition_rolls_back_with_the_gate(cluster: EmbeddedCluster,
                                                                 monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(5, updateStrategy={"partition": 3, "maxUnavailable": 1}),
                        namespace=NS)
    old = (await wait_status(cluster, settled(5), timeout=ROLLOUT_TIMEOUT))["status"]["updateRevision"]
    monitor.min_old, monitor.min_available = (old, 3), 4
    await update(client, set_image("nginx:1.26"))
    await wait_status(cluster, lambda s: s.get("updatedAvailableReplicas") == 2 and s.get("availableReplicas") == 5,
                      timeout=ROLLOUT_TIMEOUT)
    # Default gates keep the two updated pods (test_a4_partition_with_recreate); the gate
    # recreates them on the current revision.
    await update(client, lambda b: b["spec"]["updateStrategy"].update(partition=5))
    status = (await wait_status(cluster, lambda s: s.get("updatedReplicas") == 0 and s.get("availableReplicas") == 5,
                                timeout=ROLLOUT_TIMEOUT))["status"]
    assert status["expectedUpdatedReplicas"] == 0
    assert all(equal_to_revision(p, old) for p in await pods(client))
    monitor.check()


# -- volumeClaimTemplates changes -------------------------------------------------------------

def _storage(claim: Obj) -> str:
    return str(claim["spec"]["resources"]["requests"]["storage"])


def _set_storage(body: Obj, index: int, size: str) -> None:
    body["spec"]["volumeClaimTemplates"][index]["spec"]["resources"]["requests"]["storage"] = size


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """Instance ids of the live pods and the live PVCs by name."""

    ids: frozenset[str]
    claims: dict[str, Obj]


async def change_and_wait(cluster: EmbeddedCluster, change: Any, replicas: int = 4) -> Snapshot:
    """Apply ``change`` to the CloneSet, wait until every pod is updated and ready and every
    PVC belongs to a live pod; returns what is there then."""
    client = cluster.client
    await update(client, change)
    await wait_status(cluster, lambda s: settled(replicas)(s) and s.get("updatedReadyReplicas") == replicas,
                      timeout=ROLLOUT_TIMEOUT)
    found: list[Snapshot] = []

    async def consistent() -> bool:
        live = await pods(client)
        listed = await client.list(PERSISTENT_VOLUME_CLAIMS, namespace=NS)
        claims = {name_of(c): c for c in listed["items"] if not c["metadata"].get("deletionTimestamp")}
        ids = frozenset(instance_id(p) for p in live)
        found[:] = [Snapshot(ids, claims)]
        return len(live) == replicas and len(claims) == 2 * replicas and \
            {instance_id(c) for c in claims.values()} == ids

    await cluster.wait_until(consistent, ROLLOUT_TIMEOUT, "one pair of PVCs per live pod")
    return found[0]


def assert_recreated(before: Snapshot, after: Snapshot, recreated: bool) -> None:
    if recreated:
        assert not before.ids & after.ids, (before.ids, after.ids)
        assert not set(before.claims) & set(after.claims)
    else:
        assert before.ids == after.ids
        assert set(before.claims) == set(after.claims)


def sizes(snapshot: Snapshot) -> dict[str, set[str]]:
    """Template name -> the storage sizes its PVCs ask for."""
    by_template: dict[str, set[str]] = {}
    for name, claim in snapshot.claims.items():
        by_template.setdefault(name.split("-e2e-")[0], set()).add(_storage(claim))
    return by_template


async def test_e19_volume_claim_template_changes(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    vcts = [{"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                   "resources": {"requests": {"storage": "1Gi"}}}}
            for name in ("data-vol1", "data-vol2")]
    await client.create(CLONESETS, new_cloneset(4, volumeClaimTemplates=vcts,
                                                updateStrategy={"type": kruise.RECREATE}), namespace=NS)
    first = await change_and_wait(cluster, lambda body: None)

    def in_place_if_possible(body: Obj) -> None:
        body["spec"]["updateStrategy"] = {"type": kruise.IN_PLACE_IF_POSSIBLE}

    def image_and_first_vct(body: Obj) -> None:
        set_image("nginx:1.26")(body)
        _set_storage(body, 0, "2Gi")
        in_place_if_possible(body)

    # (a) a new image with a new VCT cannot be applied in place: pods and PVCs are recreated.
    second = await change_and_wait(cluster, image_and_first_vct)
    assert_recreated(first, second, recreated=True)
    assert sizes(second) == {"data-vol1": {"2Gi"}, "data-vol2": {"1Gi"}}

    # (b) a VCT change alone makes no new revision: nothing is recreated.
    revision = (await get(client))["status"]["updateRevision"]

    def second_vct(body: Obj) -> None:
        _set_storage(body, 1, "2Gi")
        in_place_if_possible(body)

    third = await change_and_wait(cluster, second_vct)
    await asyncio.sleep(1)
    assert (await get(client))["status"]["updateRevision"] == revision
    assert_recreated(second, third, recreated=False)
    assert sizes(third) == sizes(second)

    # (c) an image change now carries the VCT change of (b) with it: recreated again.
    def image_only(body: Obj) -> None:
        set_image("redis:7")(body)
        in_place_if_possible(body)

    fourth = await change_and_wait(cluster, image_only)
    assert_recreated(third, fourth, recreated=True)
    assert sizes(fourth) == {"data-vol1": {"2Gi"}, "data-vol2": {"2Gi"}}

    # (d) InPlaceOnly ignores the VCT hash: an image change is applied in place.
    uids = {uid_of(p) for p in await pods(client)}

    def in_place_only_image(image: str) -> Any:
        def change(body: Obj) -> None:
            set_image(image)(body)
            body["spec"]["updateStrategy"] = {"type": kruise.IN_PLACE_ONLY}
        return change

    fifth = await change_and_wait(cluster, in_place_only_image("httpd:2.4"))
    assert_recreated(fourth, fifth, recreated=False)
    assert {uid_of(p) for p in await pods(client)} == uids

    # (e) InPlaceOnly with new VCTs: still in place, existing PVCs untouched.
    def in_place_only_image_and_vcts(body: Obj) -> None:
        in_place_only_image("redis:7")(body)
        _set_storage(body, 0, "3Gi")
        _set_storage(body, 1, "3Gi")

    sixth = await change_and_wait(cluster, in_place_only_image_and_vcts)
    assert_recreated(fifth, sixth, recreated=False)
    assert {uid_of(p) for p in await pods(client)} == uids
    assert sizes(sixth) == {"data-vol1": {"2Gi"}, "data-vol2": {"2Gi"}}
    monitor.check()


# -- image pre-download -----------------------------------------------------------------------

@pytest.fixture
async def image_pull_jobs_api(cluster: EmbeddedCluster) -> None:
    """The ImagePullJob API, which the server installs at start (a built-in CRD)."""

    async def served() -> bool:
        try:
            await cluster.client.list(IMAGE_PULL_JOBS, namespace=NS)
        except ApiException as exc:
            if is_not_found(exc):
                return False
            raise
        return True

    await cluster.wait_until(served, ROLLOUT_TIMEOUT, "the ImagePullJob API")


async def image_pull_jobs(client: ApiClient) -> list[Obj]:
    listed = await client.list(IMAGE_PULL_JOBS, namespace=NS)
    return list(listed["items"])


@pytest.mark.usefixtures("image_pull_jobs_api")
async def test_e21_image_pre_download(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    strategy = {"type": kruise.IN_PLACE_IF_POSSIBLE, "partition": 1}
    created = await client.create(CLONESETS, new_cloneset(5, progressDeadlineSeconds=600, updateStrategy=strategy),
                                  namespace=NS)
    assert created["spec"]["updateStrategy"]["maxUnavailable"] == "20%"
    await wait_status(cluster, lambda s: s.get("replicas") == 5)

    def new_image_predownloaded_two_at_a_time(body: Obj) -> None:
        body["metadata"].setdefault("annotations", {})[PARALLELISM_ANNOTATION] = "2"
        set_image("nginx:1.26")(body)

    await update(client, new_image_predownloaded_two_at_a_time)

    async def one_job() -> bool:
        return len(await image_pull_jobs(client)) == 1

    await cluster.wait_until(one_job, ROLLOUT_TIMEOUT, "one ImagePullJob")
    job = (await image_pull_jobs(client))[0]
    cs = await get(client)
    assert job["spec"]["image"] == "nginx:1.26"
    assert job["spec"]["parallelism"] == 2
    owner = job["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (kruise.CLONESET_KIND, uid_of(cs), True)
    status = (await wait_status(cluster, lambda s: progressing(s) == ("True", kruise.REASON_PARTITION_AVAILABLE),
                                timeout=ROLLOUT_TIMEOUT))["status"]
    assert job["metadata"]["name"] == f"{status['updateRevision']}-nginx"
    revision = await client.get(CONTROLLER_REVISIONS, status["updateRevision"], namespace=NS)
    assert labels_of(revision).get(CREATED_LABEL) == "true"
    assert status["updatedReplicas"] == 4 and status["expectedUpdatedReplicas"] == 4

    # Once every pod is on the new revision, the CloneSet's jobs are deleted.
    await update(client, lambda b: b["spec"]["updateStrategy"].update(partition=0))
    await wait_status(cluster, settled(5), timeout=ROLLOUT_TIMEOUT)

    async def no_jobs() -> bool:
        return not await image_pull_jobs(client)

    await cluster.wait_until(no_jobs, ROLLOUT_TIMEOUT, "the ImagePullJob to be deleted")
    monitor.check()
