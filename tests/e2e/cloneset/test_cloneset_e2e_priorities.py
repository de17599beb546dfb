"""End-to-end in-place updates of env read from metadata and of containers with launch
priorities (kruise ``test/e2e/apps/cloneset.go``, the in-place env and
container-priority cases) on the embedded cluster, under the invariant
monitor.

The simulated kubelet plays kruise-daemon's part: it restarts a container whose env read from
a label changed and reports ``runtime-containers-meta``; it holds a container's first start
behind its launch-priority barrier. Upstream's ``postStart: sleep 10`` is declared to the
simulated kubelet as ``sim.kubeloop.io/post-start-delay`` (shortened to 2 s), and the image
that fails to start is named in ``sim.kubeloop.io/missing-images``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from cloneset_monitor import CloneSetMonitor
from test_cloneset_e2e import NS, Obj, get, new_cloneset, pods, progressing, update, wait_status

from kubeloop.api import kruise
from kubeloop.api.meta import parse_time
from kubeloop.client import PODS, InternalError
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.testing.cluster import EmbeddedCluster

POST_START_SECONDS = 2
MISSING_IMAGE = "redis:does-not-exist"


def statuses(pod: Obj) -> dict[str, Obj]:
    return {s["name"]: s for s in pod["status"]["containerStatuses"]}


def in_place_state(pod: Obj) -> Obj:
    state: Obj = orjson.loads(pod["metadata"]["annotations"][kruise.INPLACE_UPDATE_STATE_ANNOTATION])
    return state


def available(status: Obj) -> bool:
    return progressing(status) == ("True", kruise.REASON_AVAILABLE)


def finished(status: Obj) -> bool:
    return (status.get("updatedReadyReplicas") == 1 and status.get("updateRevision") == status.get("currentRevision")
            and available(status))


def with_redis(annotations: dict[str, str]) -> Obj:
    """Upstream's two-container template: ``redis`` asks to start first and has a slow postStart."""
    spec = new_cloneset(1, minReadySeconds=1, progressDeadlineSeconds=600,
                        updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE})
    template = spec["spec"]["template"]
    template["metadata"]["annotations"] = annotations
    template["spec"]["containers"].append({
        "name": "redis", "image": "redis:7",
        "env": [{"name": kruise.CONTAINER_PRIORITY_ENV, "value": "10"}],
        "lifecycle": {"postStart": {"exec": {"command": ["sleep", str(POST_START_SECONDS)]}}},
    })
    return spec


def set_images(nginx: str, redis: str) -> Any:
    def change(body: Obj) -> None:
        for container in body["spec"]["template"]["spec"]["containers"]:
            container["image"] = {"nginx": nginx, "redis": redis}[container["name"]]
    return change


async def test_e12_in_place_image_and_env_from_label(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    spec = new_cloneset(1, minReadySeconds=1, progressDeadlineSeconds=600,
                        updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE})
    template = spec["spec"]["template"]
    template["metadata"]["labels"]["test-env"] = "foo"
    template["spec"]["containers"][0]["env"].append(
        {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}})
    await client.create(CLONESETS, spec, namespace=NS)
    await wait_status(cluster, available)
    before = (await pods(client))[0]

    def change(body: Obj) -> None:
        body["spec"]["template"]["metadata"]["labels"]["test-env"] = "bar"
        body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"

    await update(client, change)
    await wait_status(cluster, finished)
    after = (await pods(client))[0]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["metadata"]["labels"]["test-env"] == "bar"
    old, new = statuses(before)["nginx"], statuses(after)["nginx"]
    assert new["containerID"] != old["containerID"]
    assert (old["restartCount"], new["restartCount"]) == (0, 1)
    assert in_place_state(after)["updateEnvFromMetadata"] is True
    report = orjson.loads(after["metadata"]["annotations"][kruise.RUNTIME_CONTAINERS_META_ANNOTATION])
    assert [(c["name"], c["containerID"]) for c in report["containers"]] == [("nginx", new["containerID"])]
    monitor.check()


async def test_e12_env_from_label_alone_restarts_in_place(cluster: EmbeddedCluster, monitor: CloneSetMonitor) -> None:
    client = cluster.client
    spec = new_cloneset(1, minReadySeconds=1, progressDeadlineSeconds=600,
                        updateStrategy={"type": kruise.IN_PLACE_IF_POSSIBLE})
    template = spec["spec"]["template"]
    template["metadata"]["labels"]["test-env"] = "foo"
    template["spec"]["containers"][0]["env"].append(
        {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}})
    await client.create(CLONESETS, spec, namespace=NS)
    await wait_status(cluster, available)
    before = (await pods(client))[0]

    def relabel(body: Obj) -> None:
        body["spec"]["template"]["metadata"]["labels"]["test-env"] = "bar"

    await update(client, relabel)
    await wait_status(cluster, finished)
    after = (await pods(client))[0]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert statuses(after)["nginx"]["restartCount"] == 1
    assert statuses(after)["nginx"]["image"] == statuses(before)["nginx"]["image"]
    monitor.check()


async def test_e13_two_containers_update_in_priority_batches(cluster: EmbeddedCluster,
                                                             monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, with_redis({"sim.kubeloop.io/post-start-delay": str(POST_START_SECONDS)}),
                        namespace=NS)
    await wait_status(cluster, available, timeout=60)
    before = (await pods(client))[0]
    # The pod was created with the barrier env the pod webhook injects: nginx was held until
    # redis was ready, i.e. until its postStart hook finished.
    first = statuses(before)
    nginx_first = parse_time(first["nginx"]["state"]["running"]["startedAt"])
    redis_first = parse_time(first["redis"]["state"]["running"]["startedAt"])
    assert nginx_first is not None and redis_first is not None
    assert (nginx_first - redis_first).total_seconds() >= POST_START_SECONDS
    await update(client, set_images("nginx:1.26", "redis:7.2"))
    await wait_status(cluster, finished, timeout=60)
    after = (await pods(client))[0]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    now = statuses(after)
    assert (now["nginx"]["restartCount"], now["redis"]["restartCount"]) == (1, 1)
    redis_started = parse_time(now["redis"]["state"]["running"]["startedAt"])
    nginx_stopped = parse_time(now["nginx"]["lastState"]["terminated"]["finishedAt"])
    assert redis_started is not None and nginx_stopped is not None
    assert (nginx_stopped - redis_started).total_seconds() >= POST_START_SECONDS
    batches = [batch["containers"] for batch in in_place_state(after)["containerBatchesRecord"]]
    assert batches == [["redis"], ["nginx"]]
    monitor.check()


async def test_e14_first_batch_fails_so_the_next_never_starts(cluster: EmbeddedCluster,
                                                              monitor: CloneSetMonitor) -> None:
    client = cluster.client
    await client.create(CLONESETS, with_redis({"sim.kubeloop.io/post-start-delay": str(POST_START_SECONDS),
                                                "sim.kubeloop.io/missing-images": MISSING_IMAGE}), namespace=NS)
    await wait_status(cluster, available, timeout=60)
    await update(client, set_images("nginx:1.26", MISSING_IMAGE))

    def redis_waiting(pod: Obj) -> bool:
        redis = statuses(pod)["redis"] if pod.get("status", {}).get("containerStatuses") else {}
        return "waiting" in (redis.get("state") or {}) and redis.get("restartCount") == 0

    pod = (await pods(client))[0]
    pod = await cluster.wait_for(PODS, pod["metadata"]["name"], redis_waiting, namespace=NS, timeout=30)
    # Upstream watches the condition for 30 s; a few seconds of polling show the same standstill.
    for _ in range(4):
        await asyncio.sleep(1)
        status = (await get(client))["status"]
        assert progressing(status) == ("True", kruise.REASON_UPDATED)
        assert status.get("updatedReadyReplicas", 0) == 0
    pod = (await pods(client))[0]
    assert statuses(pod)["nginx"]["restartCount"] == 0
    assert pod["spec"]["containers"][0]["image"] != "nginx:1.26"
    state = in_place_state(pod)
    assert [batch["containers"] for batch in state["containerBatchesRecord"]] == [["redis"]]
    assert state["nextContainerImages"] == {"nginx": "nginx:1.26"}
    monitor.check()


async def test_e15_image_and_env_from_annotation_in_priority_batches(cluster: EmbeddedCluster,
                                                                     monitor: CloneSetMonitor) -> None:
    # Upstream's scenario changes the nginx image and the ``config`` annotation that redis reads:
    # redis restarts first (its env changed), nginx after redis is ready again.
    client = cluster.client
    spec = with_redis({"sim.kubeloop.io/post-start-delay": str(POST_START_SECONDS), "config": "foo"})
    redis = spec["spec"]["template"]["spec"]["containers"][1]
    redis["env"].append({"name": "CONFIG", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['config']"}}})
    await client.create(CLONESETS, spec, namespace=NS)
    await wait_status(cluster, available, timeout=60)
    before = (await pods(client))[0]
    # The API server's pod admission gave every container its barrier.
    barriers = [c["env"][-1]["valueFrom"]["configMapKeyRef"]["key"] for c in before["spec"]["containers"]]
    assert barriers == ["p_0", "p_10"]

    def change(body: Obj) -> None:
        body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
        body["spec"]["template"]["metadata"]["annotations"]["config"] = "bar"

    await update(client, change)
    await wait_status(cluster, finished, timeout=60)
    after = (await pods(client))[0]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["metadata"]["annotations"]["config"] == "bar"
    assert {c["name"]: c["image"] for c in after["spec"]["containers"]} == {"nginx": "nginx:1.26", "redis": "redis:7"}
    now = statuses(after)
    assert (now["nginx"]["restartCount"], now["redis"]["restartCount"]) == (1, 1)
    redis_started = parse_time(now["redis"]["state"]["running"]["startedAt"])
    nginx_stopped = parse_time(now["nginx"]["lastState"]["terminated"]["finishedAt"])
    assert redis_started is not None and nginx_stopped is not None
    assert (nginx_stopped - redis_started).total_seconds() >= POST_START_SECONDS
    state = in_place_state(after)
    assert state["updateEnvFromMetadata"] is True
    assert [batch["containers"] for batch in state["containerBatchesRecord"]] == [["redis"], ["nginx"]]
    monitor.check()


async def test_pods_created_by_any_client_get_barriers(cluster: EmbeddedCluster) -> None:
    # The barrier is the API server's pod admission (upstream: kruise's pod webhook), so a pod
    # created without any controller gets it too, and its containers start in priority order.
    client = cluster.client
    containers = [{"name": "first", "image": "redis:7",
                   "lifecycle": {"postStart": {"exec": {"command": ["sleep", str(POST_START_SECONDS)]}}}},
                  {"name": "second", "image": "nginx:1.25"}]
    pod: Obj = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": "ordered-", "namespace": NS,
                             "annotations": {"apps.kruise.io/container-launch-priority": "Ordered",
                                             "sim.kubeloop.io/post-start-delay": str(POST_START_SECONDS)}},
                "spec": {"containers": containers, "terminationGracePeriodSeconds": 1}}
    created = await client.create(PODS, pod, namespace=NS)
    name = created["metadata"]["name"]
    barriers = [c["env"][-1]["valueFrom"]["configMapKeyRef"] for c in created["spec"]["containers"]]
    assert barriers == [{"name": f"{name}-barrier", "key": "p_0"}, {"name": f"{name}-barrier", "key": "p_-1"}]

    def both_running(p: Obj) -> bool:
        found = p.get("status", {}).get("containerStatuses") or []
        return len(found) == 2 and all("running" in (s.get("state") or {}) for s in found)

    running = await cluster.wait_for(PODS, name, both_running, namespace=NS, timeout=60)
    first = parse_time(statuses(running)["first"]["state"]["running"]["startedAt"])
    second = parse_time(statuses(running)["second"]["state"]["running"]["startedAt"])
    # The second container was held until the first was ready, i.e. its postStart finished.
    assert first is not None and second is not None
    assert (second - first).total_seconds() >= POST_START_SECONDS

    bad = {**pod, "metadata": {"name": "bad-priority", "namespace": NS},
           "spec": {"containers": [{**containers[0], "env": [{"name": kruise.CONTAINER_PRIORITY_ENV, "value": "x"}]},
                                   containers[1]]}}
    with pytest.raises(InternalError) as refused:
        await client.create(PODS, bad, namespace=NS)
    assert refused.value.message == ('Internal error occurred: admission webhook "mpod.kb.io" denied the request: '
                                     'strconv.Atoi: parsing "x": invalid syntax')
