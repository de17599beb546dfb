"""End-to-end acceptance scenarios on the update side (black-box replays of kruise's
``sync/cloneset_update_test.go`` and ``inplace_update_test.go`` rows) -- percent partitions, the
in-place grace period, revisionHistoryLimit, the inPlaceUpdate hook, priority and scatter order --
on the embedded cluster, each under the CloneSet invariant monitor. Durations are shortened (a
grace period of 2 s instead of 10 s); the behaviour asserted is upstream's.
Where a step cannot be observed end to end the test asserts the observable outcome and its
docstring says so; :class:`acceptance_kit.PodHistory` shows what happened between the waits.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import orjson
from acceptance_kit import ROLLOUT_TIMEOUT, PodHistory, condition, reconciled_again
from cloneset_monitor import CloneSetMonitor
from test_cloneset_e2e import NAME, NS, Obj, new_cloneset, pods, set_image, settled, state, update, wait_status

from kubeloop.api import kruise
from kubeloop.api.meta import controller_of, labels_of, name_of, parse_time, uid_of
from kubeloop.client import CONTROLLER_REVISIONS, PODS, ApiClient
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.controllers.cloneset.podstate import equal_to_revision
from kubeloop.testing.cluster import EmbeddedCluster

# -- helpers -------------------------------------------------------------------------------------

def image_of(pod: Obj) -> str:
    return str(pod["spec"]["containers"][0]["image"])


async def controller_sees(cluster: EmbeddedCluster, labelled: dict[str, dict[str, str]]) -> None:
    """Wait until the controllers' shared pod cache shows the labels the test set: nothing in the
    API tells when the controller's informer delivered a label patch."""
    informer = await cluster.manager.factory.informer_for(PODS)

    def seen() -> bool:
        for name, wanted in labelled.items():
            cached = informer.indexer.get(f"{NS}/{name}")
            if cached is None or any(labels_of(cached).get(k) != v for k, v in wanted.items()):
                return False
        return True

    await cluster.wait_until(seen, ROLLOUT_TIMEOUT, "the controller's cache to show the pod labels")


async def label_pods(cluster: EmbeddedCluster, labelled: dict[str, dict[str, str]]) -> None:
    for name, values in labelled.items():
        await cluster.client.patch(PODS, name, {"metadata": {"labels": values}}, namespace=NS)
    await controller_sees(cluster, labelled)


async def revisions(client: ApiClient) -> dict[str, int]:
    """The CloneSet's ControllerRevisions: name -> ``.revision``."""
    listed = await client.list(CONTROLLER_REVISIONS, namespace=NS)
    return {name_of(r): int(r.get("revision") or 0) for r in listed["items"]
            if (controller_of(r) or {}).get("name") == NAME}


# -- percent partition ---------------------------------------------------------------------------

async def test_a5_percent_partition(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    """R=5, in place: partition "100%" keeps every pod old, "99%" updates exactly one (99% of 5
    rounds up to all 5, and a percentage other than "100%" that keeps every pod keeps one
    fewer), "0%" updates all. The monitor's partition floor checks at every event
    that no more pods than allowed left the old revision; a barrier reconcile after each step
    shows the controller does not go further later."""
    client = cluster.client
    strategy = {"type": kruise.IN_PLACE_IF_POSSIBLE, "partition": "100%"}
    await client.create(CLONESETS, new_cloneset(5, updateStrategy=strategy), namespace=NS)
    old = (await wait_status(cluster, settled(5)))["status"]["updateRevision"]

    monitor.min_old = (old, 5)
    await update(client, set_image("nginx:1.26"))
    status = (await wait_status(cluster, lambda s: s.get("updateRevision") != old))["status"]
    assert status["expectedUpdatedReplicas"] == 0
    status = (await reconciled_again(cluster))["status"]
    assert status["updatedReplicas"] == 0 and status["currentRevision"] == old

    monitor.min_old = (old, 4)
    await update(client, lambda b: b["spec"]["updateStrategy"].update(partition="99%"))
    status = (await wait_status(cluster, lambda s: s.get("updatedAvailableReplicas") == 1))["status"]
    assert status["expectedUpdatedReplicas"] == 1
    status = (await reconciled_again(cluster))["status"]
    assert status["updatedReplicas"] == 1
    assert sum(not equal_to_revision(p, old) for p in await pods(client)) == 1

    monitor.min_old = None
    await update(client, lambda b: b["spec"]["updateStrategy"].update(partition="0%"))
    status = (await wait_status(cluster, lambda s: settled(5)(s) and s.get("updatedAvailableReplicas") == 5,
                                timeout=ROLLOUT_TIMEOUT))["status"]
    assert status["expectedUpdatedReplicas"] == 5 and status["currentRevision"] != old
    monitor.check()


# -- gracePeriodSeconds --------------------------------------------------------------------------

async def test_a8_in_place_grace_period_delays_the_image(cluster: EmbeddedCluster, monitor: CloneSetMonitor,
                                                         history: PodHistory) -> None:
    """inPlaceUpdateStrategy.gracePeriodSeconds=2 (upstream's scenario uses 10): the pod first
    gets the new revision label, state Updating, the grace annotation and InPlaceUpdateReady
    False with its image unchanged; only after the grace period is the image patched.

    The wait itself is asserted from the controller's own timestamps (the in-place state's
    ``updateTimestamp`` against the batch record and the container's new start), which load can
    only lengthen; every recorded event with the grace annotation still has the old image."""
    client = cluster.client
    grace = 2
    strategy = {"type": kruise.IN_PLACE_IF_POSSIBLE, "inPlaceUpdateStrategy": {"gracePeriodSeconds": grace}}
    await client.create(CLONESETS, new_cloneset(1, updateStrategy=strategy), namespace=NS)
    await wait_status(cluster, settled(1))
    before = (await pods(client))[0]
    await update(client, set_image("nginx:1.26"))
    new_revision = (await wait_status(cluster, lambda s: s.get("updatedReplicas") == 1))["status"]["updateRevision"]

    def in_grace() -> list[Obj]:
        return [p for p in history.pods_of(name_of(before))
                if kruise.INPLACE_UPDATE_GRACE_ANNOTATION in p["metadata"].get("annotations", {})]

    await cluster.wait_until(lambda: bool(in_grace()), ROLLOUT_TIMEOUT, "the pod with the grace annotation")
    held = in_grace()[0]
    assert equal_to_revision(held, new_revision) and state(held) == kruise.STATE_UPDATING
    assert image_of(held) == "nginx:1.25"
    assert condition(held, kruise.INPLACE_UPDATE_READY) == "False"

    await wait_status(cluster, lambda s: settled(1)(s) and s.get("updatedReadyReplicas") == 1)
    await history.caught_up(cluster)
    after = (await pods(client))[0]
    assert uid_of(after) == uid_of(before) and image_of(after) == "nginx:1.26"
    assert kruise.INPLACE_UPDATE_GRACE_ANNOTATION not in after["metadata"]["annotations"]
    assert after["status"]["containerStatuses"][0]["restartCount"] == 1
    assert all(image_of(p) == "nginx:1.25" for p in in_grace())

    in_place = orjson.loads(after["metadata"]["annotations"][kruise.INPLACE_UPDATE_STATE_ANNOTATION])
    started = parse_time(in_place["updateTimestamp"])
    patched = parse_time(in_place["containerBatchesRecord"][0]["timestamp"])
    restarted = parse_time(after["status"]["containerStatuses"][0]["state"]["running"]["startedAt"])
    assert started is not None and patched is not None and restarted is not None
    assert patched - started >= timedelta(seconds=grace), (started, patched)
    assert restarted - started >= timedelta(seconds=grace), (started, restarted)
    monitor.check()


# -- revisionHistoryLimit ------------------------------------------------------------------------

async def test_a10_revision_history_limit(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    """revisionHistoryLimit=2 and five template changes, each rolled out: after every rollout at
    most two revisions besides the live one remain, and in the end exactly the live revision
    and the two most recent before it (the oldest are deleted first)."""
    client = cluster.client
    await client.create(CLONESETS, new_cloneset(1, revisionHistoryLimit=2,
                                                updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE}), namespace=NS)
    seen = [(await wait_status(cluster, settled(1)))["status"]["updateRevision"]]
    for tag in ("1.26", "1.27", "1.28", "1.29", "1.30"):
        await update(client, set_image(f"nginx:{tag}"))
        status = (await wait_status(cluster, lambda s: settled(1)(s) and s.get("updateRevision") not in seen,
                                    timeout=ROLLOUT_TIMEOUT))["status"]
        seen.append(status["updateRevision"])

        async def truncated(live: str = status["updateRevision"]) -> bool:
            found = await revisions(client)
            return live in found and len(set(found) - {live}) <= 2

        await cluster.wait_until(truncated, ROLLOUT_TIMEOUT, "the revision history within its limit")

    found = await revisions(client)
    assert set(found) == set(seen[-3:]), (found, seen)
    assert sorted(found, key=found.__getitem__) == seen[-3:]
    monitor.check()


# -- inPlaceUpdate hook --------------------------------------------------------------------------

async def test_a13_in_place_update_hook(cluster: EmbeddedCluster, monitor: CloneSetMonitor,
                                        history: PodHistory) -> None:
    """inPlaceUpdate labelsHandler: the pod waits in PreparingUpdate with its image untouched;
    removing the label lets it go Updating -> Updated (the hook is not all present); adding it
    back moves it to Normal. Same pod throughout, restarted once."""
    client = cluster.client
    body = new_cloneset(1, updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE},
                        lifecycle={"inPlaceUpdate": {"labelsHandler": {"upgrade-hook": "true"}}})
    body["spec"]["template"]["metadata"]["labels"]["upgrade-hook"] = "true"
    await client.create(CLONESETS, body, namespace=NS)
    await wait_status(cluster, settled(1))
    pod = (await pods(client))[0]
    await update(client, set_image("nginx:1.26"))
    await cluster.wait_for(PODS, name_of(pod), lambda p: state(p) == kruise.STATE_PREPARING_UPDATE, namespace=NS,
                           timeout=ROLLOUT_TIMEOUT)
    status = (await reconciled_again(cluster))["status"]
    held = await client.get(PODS, name_of(pod), namespace=NS)
    assert state(held) == kruise.STATE_PREPARING_UPDATE and image_of(held) == "nginx:1.25"
    assert status["updatedReplicas"] == 0

    await client.patch(PODS, name_of(pod), {"metadata": {"labels": {"upgrade-hook": None}}}, namespace=NS)
    updated = await cluster.wait_for(PODS, name_of(pod), lambda p: state(p) == kruise.STATE_UPDATED, namespace=NS,
                                     timeout=ROLLOUT_TIMEOUT)
    assert image_of(updated) == "nginx:1.26"
    await client.patch(PODS, name_of(pod), {"metadata": {"labels": {"upgrade-hook": "true"}}}, namespace=NS)
    await cluster.wait_for(PODS, name_of(pod), lambda p: state(p) == kruise.STATE_NORMAL, namespace=NS,
                           timeout=ROLLOUT_TIMEOUT)
    await wait_status(cluster, lambda s: settled(1)(s) and s.get("updatedReadyReplicas") == 1)
    await history.caught_up(cluster)
    final = (await pods(client))[0]
    assert uid_of(final) == uid_of(pod) and final["status"]["containerStatuses"][0]["restartCount"] == 1
    states = history.states(name_of(pod))
    expected = [kruise.STATE_NORMAL, kruise.STATE_PREPARING_UPDATE, kruise.STATE_UPDATING, kruise.STATE_UPDATED,
                kruise.STATE_NORMAL]
    assert states[-5:] == expected, states
    monitor.check()


# -- update order --------------------------------------------------------------------------------

async def rollout_order(cluster: EmbeddedCluster, monitor: CloneSetMonitor, history: PodHistory, replicas: int,
                        strategy: Obj, labels_for: Callable[[list[str]], dict[str, dict[str, str]]]
                        ) -> tuple[list[str], Obj]:
    """Create an in-place CloneSet updating one pod at a time (maxUnavailable 1) with ``strategy``
    merged into its update strategy, label its pods as ``labels_for(pod names)`` says, change the
    image and return the order in which pods received the new revision, and the labels set.
    During the rollout the monitor checks that all pods but one stay available."""
    client = cluster.client
    body = new_cloneset(replicas, updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE, "maxUnavailable": 1,
                                                  **strategy})
    await client.create(CLONESETS, body, namespace=NS)
    await wait_status(cluster, settled(replicas))
    labelled = labels_for([name_of(p) for p in await pods(client)])
    await label_pods(cluster, labelled)
    monitor.min_available = replicas - 1
    await update(client, set_image("nginx:1.26"))
    status = (await wait_status(cluster, lambda s: settled(replicas)(s) and s.get("observedGeneration") == 2,
                                timeout=ROLLOUT_TIMEOUT))["status"]
    await history.caught_up(cluster)
    order = history.first_on(status["updateRevision"])
    assert sorted(order) == sorted(labelled)
    return order, labelled


async def test_a14_weight_priority_orders_the_update(cluster: EmbeddedCluster, monitor: CloneSetMonitor,
                                                     history: PodHistory) -> None:
    """priorityStrategy.weightPriority: the heaviest matching pod updates first, then the next."""
    weights = [{"weight": 100, "matchSelector": {"matchLabels": {"tier": "gold"}}},
               {"weight": 40, "matchSelector": {"matchLabels": {"tier": "silver"}}}]

    def tiers(names: list[str]) -> dict[str, dict[str, str]]:
        return {names[3]: {"tier": "gold"}, names[1]: {"tier": "silver"}, names[0]: {"tier": "bronze"},
                names[2]: {"tier": "bronze"}}

    strategy = {"priorityStrategy": {"weightPriority": weights}}
    order, labelled = await rollout_order(cluster, monitor, history, 4, strategy, tiers)
    assert [labelled[n]["tier"] for n in order[:2]] == ["gold", "silver"], order
    monitor.check()


async def test_a14_order_priority_orders_the_update(cluster: EmbeddedCluster, monitor: CloneSetMonitor,
                                                    history: PodHistory) -> None:
    """priorityStrategy.orderPriority on key ``rank``: a pod without the key goes first (upstream's
    code, contrary to its API comment), then higher trailing integers first."""

    def ranks(names: list[str]) -> dict[str, dict[str, str]]:
        return {names[0]: {"rank": "r-1"}, names[1]: {"rank": "r-7"}, names[2]: {"other": "x"},
                names[3]: {"rank": "r-3"}}

    order, labelled = await rollout_order(cluster, monitor, history, 4, {"priorityStrategy": {"orderPriority": [
        {"orderedKey": "rank"}]}}, ranks)
    assert [labelled[n].get("rank", "-") for n in order] == ["-", "r-7", "r-3", "r-1"], order
    monitor.check()


async def test_a14_scatter_spreads_matching_pods(cluster: EmbeddedCluster, monitor: CloneSetMonitor,
                                                 history: PodHistory) -> None:
    """scatterStrategy zone=a over 3 matching and 3 other pods. A weight priority puts the other pods
    first, so without scattering the order would be O O O M M M. Recomputed each round over the
    remaining candidates (kruise ``pkg/util/updatesort/scatter_sort.go``: the last matching candidate
    held back, groups of one matching and two others, the unmatched remainder first), the order is M O M
    O O M."""
    strategy = {"priorityStrategy": {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {
        "first": "yes"}}}]}, "scatterStrategy": [{"key": "zone", "value": "a"}]}

    def zones(names: list[str]) -> dict[str, dict[str, str]]:
        return {name: ({"zone": "a"} if i % 2 == 0 else {"zone": "b", "first": "yes"}) for i, name in enumerate(names)}

    order, labelled = await rollout_order(cluster, monitor, history, 6, strategy, zones)
    assert "".join("M" if labelled[n]["zone"] == "a" else "O" for n in order) == "MOMOOM", order
    monitor.check()
