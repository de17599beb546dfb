"""The Deployment and ReplicaSet controllers together against the embedded API server
(upstream
``test/integration/deployment/deployment_test.go``); tests mark pods ready themselves, there is no kubelet."""

from __future__ import annotations

from controller_kit import NAMESPACE, ControllerRunner, list_pods, mark_pods_ready
from deployment_kit import (
    LABELS,
    RolloutWatcher,
    condition,
    condition_reason,
    deployment,
    get_deployment,
    image_of,
    new_replica_set,
    owned_replica_sets,
    set_image,
)

from kubeloop.client import DEPLOYMENTS, EVENTS, ApiClient
from kubeloop.controllers.deployment.annotations import (
    DESIRED_REPLICAS,
    LAST_APPLIED_CONFIGURATION,
    MAX_REPLICAS,
    REVISION,
    ROLLBACK_TO,
)
from kubeloop.controllers.deployment.templates import POD_TEMPLATE_HASH
from kubeloop.testing.polling import eventually

CONTROLLERS = ("replicaset", "deployment")


async def test_new_deployment_creates_a_labelled_replica_set(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    body = deployment("web", 5, minReadySeconds=0)
    body["metadata"]["annotations"] = {"test": "should-copy-to-replica-set", LAST_APPLIED_CONFIGURATION: "no"}
    d = await client.create(DEPLOYMENTS, body, namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "web")
    done = await eventually(lambda: watcher.complete(revision="1", check_rolling=False), what="completion")
    rs = await new_replica_set(client, d)
    assert rs is not None
    hash_label = rs["metadata"]["labels"][POD_TEMPLATE_HASH]
    assert rs["metadata"]["name"] == f"web-{hash_label}"
    assert rs["spec"]["selector"]["matchLabels"][POD_TEMPLATE_HASH] == hash_label
    assert rs["spec"]["template"]["metadata"]["labels"][POD_TEMPLATE_HASH] == hash_label
    annotations = rs["metadata"]["annotations"]
    assert annotations["test"] == "should-copy-to-replica-set"
    assert LAST_APPLIED_CONFIGURATION not in annotations
    assert annotations[REVISION] == "1" and annotations[DESIRED_REPLICAS] == "5" and annotations[MAX_REPLICAS] == "7"
    pods = await list_pods(client, LABELS)
    assert len(pods) == 5 and all(p["metadata"]["labels"][POD_TEMPLATE_HASH] == hash_label for p in pods)
    assert condition_reason(done, "Available") == "MinimumReplicasAvailable"
    assert condition_reason(done, "Progressing") == "NewReplicaSetAvailable"

    async def scaling_event() -> bool:
        items = (await client.list(EVENTS, namespace=NAMESPACE))["items"]
        wanted = f"Scaled up replica set {rs['metadata']['name']} to 5"
        return any(e["reason"] == "ScalingReplicaSet" and e["message"] == wanted for e in items)

    await eventually(scaling_event)


async def test_rolling_update_respects_surge_and_unavailability(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("roll", 10, rolling={"maxSurge": 3, "maxUnavailable": 2}),
                        namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "roll")
    await eventually(lambda: watcher.complete(revision="1", check_rolling=False), what="first rollout")
    await set_image(client, "roll", "new-image")
    done = await eventually(lambda: watcher.complete(revision="2"), timeout=40, what="second rollout")
    assert watcher.violations == []
    assert image_of(done) == "new-image"
    status = done["status"]
    assert (status["replicas"], status["updatedReplicas"], status["availableReplicas"]) == (10, 10, 10)
    assert status.get("unavailableReplicas", 0) == 0
    replica_sets = await owned_replica_sets(client, done)
    assert len(replica_sets) == 2
    old = [rs for rs in replica_sets if rs["metadata"]["annotations"][REVISION] == "1"]
    assert old and old[0]["spec"]["replicas"] == 0
    assert len(await list_pods(client, LABELS)) == 10


async def test_rollover_while_stuck(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("over", 4), namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "over")
    await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    await set_image(client, "over", "dont-finish")

    async def revision_two_started() -> bool:
        d = await get_deployment(client, "over")
        rs = await new_replica_set(client, d)
        return rs is not None and rs["spec"]["replicas"] > 0 and d["metadata"]["annotations"].get(REVISION) == "2"

    await eventually(revision_two_started)
    await set_image(client, "over", "rollover")
    done = await eventually(lambda: watcher.complete(revision="3"), timeout=40)
    assert watcher.violations == []
    for rs in await owned_replica_sets(client, done):
        if rs["metadata"]["annotations"][REVISION] != "3":
            assert rs["spec"]["replicas"] == 0


async def test_recreate_never_overlaps_old_and_new_pods(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("re", 3, strategy="Recreate"), namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "re")
    await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    await set_image(client, "re", "v2")
    overlaps: list[str] = []

    async def complete_without_overlap() -> object:
        d = await get_deployment(client, "re")
        status = d.get("status") or {}
        if status.get("updatedReplicas", 0) > 0 and status.get("replicas") != status.get("updatedReplicas"):
            overlaps.append(str(status))
        pods = await list_pods(client, LABELS)
        images = {p["spec"]["containers"][0]["image"] for p in pods if not p["metadata"].get("deletionTimestamp")}
        if len(images) > 1:
            overlaps.append(f"pods of both templates: {images}")
        return await watcher.complete(revision="2", check_rolling=False)

    await eventually(complete_without_overlap, timeout=30)
    assert overlaps == []


async def test_proportional_scaling_mid_rollout(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("prop", 10, rolling={"maxSurge": 3, "maxUnavailable": 2}),
                        namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "prop")
    first = await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    first_rs = await new_replica_set(client, first)
    assert first_rs is not None
    await set_image(client, "prop", "webserver:404")

    async def stuck_at_8_and_5() -> object:
        d = await get_deployment(client, "prop")
        second = await new_replica_set(client, d)
        old = await client.get("replicasets", first_rs["metadata"]["name"], namespace=NAMESPACE)
        return second is not None and second["spec"]["replicas"] == 5 and old["spec"]["replicas"] == 8 \
            and old["status"].get("availableReplicas") == 8

    await eventually(stuck_at_8_and_5)
    await client.patch(DEPLOYMENTS, "prop", {"spec": {"replicas": 30}}, namespace=NAMESPACE)

    async def spread() -> object:
        d = await get_deployment(client, "prop")
        sizes = sorted(rs["spec"]["replicas"] for rs in await owned_replica_sets(client, d))
        return sizes == [13, 20] and all(rs["metadata"]["annotations"].get(DESIRED_REPLICAS) == "30"
                                         for rs in await owned_replica_sets(client, d))

    await eventually(spread)


async def test_pause_and_resume(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    d = await client.create(DEPLOYMENTS, deployment("paused", 1, paused=True), namespace=NAMESPACE)

    async def observed() -> object:
        current = await get_deployment(client, "paused")
        progressing = condition(current, "Progressing")
        return current.get("status", {}).get("observedGeneration") == current["metadata"]["generation"] \
            and progressing is not None and progressing["reason"] == "DeploymentPaused"

    await eventually(observed)
    assert await owned_replica_sets(client, d) == []
    await client.patch(DEPLOYMENTS, "paused", {"spec": {"paused": False}}, namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "paused")
    await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    await client.patch(DEPLOYMENTS, "paused", {"spec": {"paused": True}}, namespace=NAMESPACE)
    await eventually(observed)
    await set_image(client, "paused", "other")
    await client.patch(DEPLOYMENTS, "paused", {"spec": {"replicas": 3}}, namespace=NAMESPACE)

    async def scaled_without_rollout() -> object:
        replica_sets = await owned_replica_sets(client, d)
        return len(replica_sets) == 1 and replica_sets[0]["spec"]["replicas"] == 3 \
            and image_of(replica_sets[0]) == "fakeimage"

    await eventually(scaled_without_rollout)
    await client.patch(DEPLOYMENTS, "paused", {"spec": {"paused": False}}, namespace=NAMESPACE)
    done = await eventually(lambda: watcher.complete(revision="2"), timeout=30)
    assert image_of(done) == "other"


async def test_rollback_through_the_annotation(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("back", 2), namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "back")
    await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    await set_image(client, "back", "v2")
    await eventually(lambda: watcher.complete(revision="2"))
    await client.patch(DEPLOYMENTS, "back", {"metadata": {"annotations": {ROLLBACK_TO: "0"}}}, namespace=NAMESPACE)
    done = await eventually(lambda: watcher.complete(revision="3"), timeout=30)
    assert image_of(done) == "fakeimage"
    assert ROLLBACK_TO not in done["metadata"]["annotations"]
    rs = await new_replica_set(client, done)
    assert rs is not None and rs["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"

    async def rollback_event() -> bool:
        items = (await client.list(EVENTS, namespace=NAMESPACE))["items"]
        return any(e["reason"] == "DeploymentRollback" and e["message"] == 'Rolled back deployment "back" to revision 1'
                   for e in items)

    await eventually(rollback_event)


async def test_revision_history_limit_cleans_up_old_replica_sets(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("hist", 1, revisionHistoryLimit=1), namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "hist")
    await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    for revision, image in (("2", "v2"), ("3", "v3"), ("4", "v4")):
        await set_image(client, "hist", image)
        await eventually(lambda r=revision: watcher.complete(revision=r), timeout=30)  # type: ignore[misc]

    async def one_old_left() -> object:
        d = await get_deployment(client, "hist")
        revisions = sorted(rs["metadata"]["annotations"][REVISION] for rs in await owned_replica_sets(client, d))
        return revisions == ["3", "4"]

    await eventually(one_old_left)


async def test_hash_collision_bumps_collision_count(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    d = await client.create(DEPLOYMENTS, deployment("coll", 1), namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "coll")
    await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    rs = await new_replica_set(client, d)
    assert rs is not None
    await client.patch("replicasets", rs["metadata"]["name"],
                       {"spec": {"template": {"spec": {"terminationGracePeriodSeconds": 5}}}}, namespace=NAMESPACE)

    async def collided() -> object:
        current = await get_deployment(client, "coll")
        return current["status"].get("collisionCount") == 1 and await watcher.complete(revision="2")

    await eventually(collided, timeout=30)
    assert len(await owned_replica_sets(client, d)) == 2


async def test_restarted_controllers_finish_the_rollout(client: ApiClient, runner: ControllerRunner) -> None:
    manager = await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("kill", 8, rolling={"maxSurge": 2, "maxUnavailable": 1}),
                        namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "kill")
    await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    await set_image(client, "kill", "v2")

    async def mid_rollout() -> object:
        d = await get_deployment(client, "kill")
        rs = await new_replica_set(client, d)
        if rs is None or rs["spec"]["replicas"] == 0:
            return False
        hash_label = rs["metadata"]["labels"][POD_TEMPLATE_HASH]
        await mark_pods_ready(client, {**LABELS, POD_TEMPLATE_HASH: hash_label}, limit=2)
        await watcher.check(d)
        return (rs.get("status") or {}).get("availableReplicas", 0) == 2

    await eventually(mid_rollout)
    await runner.stop(manager)
    await runner.start(*CONTROLLERS)
    done = await eventually(lambda: watcher.complete(revision="2"), timeout=40)
    assert watcher.violations == []
    assert done["status"]["updatedReplicas"] == 8


async def test_progress_deadline_is_reported_and_recovered_from(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("late", 1, progressDeadlineSeconds=2), namespace=NAMESPACE)

    async def timed_out() -> object:
        d = await get_deployment(client, "late")
        progressing = condition(d, "Progressing")
        return progressing is not None and progressing["reason"] == "ProgressDeadlineExceeded" \
            and progressing["status"] == "False"

    # Nothing happens after the first sync: only the deadline requeue can notice the timeout.
    await eventually(timed_out, timeout=20)
    watcher = RolloutWatcher(client, "late")
    done = await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
    await eventually(lambda: _progressing_reason(client, "late", "NewReplicaSetAvailable"))
    assert done["status"]["availableReplicas"] == 1


async def _progressing_reason(client: ApiClient, name: str, reason: str) -> bool:
    progressing = condition(await get_deployment(client, name), "Progressing")
    return progressing is not None and progressing["reason"] == reason


async def test_min_ready_seconds_change_reaches_the_replica_set(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("avail", 3, minReadySeconds=3600, progressDeadlineSeconds=7200),
                        namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "avail")

    async def ready_not_available() -> bool:
        await watcher.complete(check_rolling=False)
        return await _status_is(client, "avail", (3, 3, 3, 0, 3))

    await eventually(ready_not_available)
    d = await get_deployment(client, "avail")
    assert condition_reason(d, "Available") == "MinimumReplicasUnavailable"
    await client.patch(DEPLOYMENTS, "avail", {"spec": {"minReadySeconds": 1}}, namespace=NAMESPACE)
    await eventually(lambda: _status_is(client, "avail", (3, 3, 3, 3, 0)), what="available after the change")
    d = await get_deployment(client, "avail")
    assert condition_reason(d, "Available") == "MinimumReplicasAvailable"
    rs = await new_replica_set(client, d)
    assert rs is not None and rs["spec"]["minReadySeconds"] == 1


async def _status_is(client: ApiClient, name: str, counts: tuple[int, int, int, int, int]) -> bool:
    status = (await get_deployment(client, name)).get("status") or {}
    found = tuple(status.get(k, 0) for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                                              "unavailableReplicas"))
    return found == counts


async def test_generation_is_observed_without_replica_changes(client: ApiClient, runner: ControllerRunner) -> None:
    await runner.start(*CONTROLLERS)
    await client.create(DEPLOYMENTS, deployment("gen", 1, strategy="Recreate"), namespace=NAMESPACE)
    watcher = RolloutWatcher(client, "gen")
    for replicas in (2, 0, 1):
        await client.patch(DEPLOYMENTS, "gen", {"spec": {"replicas": replicas}}, namespace=NAMESPACE)
        await eventually(lambda: watcher.complete(revision="1", check_rolling=False))
        rs = await new_replica_set(client, await get_deployment(client, "gen"))
        assert rs is not None and rs["spec"]["replicas"] == replicas
    updated = await client.patch(DEPLOYMENTS, "gen", {"spec": {"revisionHistoryLimit": 4}}, namespace=NAMESPACE)

    async def observed() -> bool:
        d = await get_deployment(client, "gen")
        return d["status"].get("observedGeneration") == updated["metadata"]["generation"]

    await eventually(observed)
