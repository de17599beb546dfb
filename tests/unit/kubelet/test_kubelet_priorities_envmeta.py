"""Env read from pod metadata (in-place restart, runtime report), launch priority barriers,
postStart time and images that never pull, stepped with explicit clock readings."""

import itertools
from typing import Any

import orjson
import pytest

from kubeloop.api import kruise
from kubeloop.kubelet.behaviour import BehaviourDefaults, PodBehaviour, pod_behaviour
from kubeloop.kubelet.containers import BackOff, RunState
from kubeloop.kubelet.envmeta import (
    env_from_metadata,
    env_metadata_hash,
    reads_metadata,
    runtime_containers_meta,
    runtime_meta_patch,
)
from kubeloop.kubelet.launchpriority import barrier_opens, barrier_priority
from kubeloop.kubelet.podstate import PodMemo, advance_pod, memo_from_status, new_pod_memo
from kubeloop.kubelet.podstatus import render_status

PLAIN = PodBehaviour(start_delay=1.0, ready_delay=0.0, termination_delay=1.0)
LABEL_ENV = {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}
ANNOTATION_ENV = {"name": "CONFIG", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['config']"}}}


def barrier(priority: int) -> dict[str, Any]:
    return {"name": kruise.CONTAINER_BARRIER_ENV,
            "valueFrom": {"configMapKeyRef": {"name": "p-barrier", "key": f"p_{priority}"}}}


def make_pod(containers: list[dict[str, Any]], labels: dict[str, str] | None = None,
             annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1", "labels": labels or {},
                         "annotations": annotations or {}},
            "spec": {"containers": containers, "nodeName": "node-1"}, "status": {}}


class Kubelet:
    """Steps one pod with a deterministic id source."""

    def __init__(self, pod: dict[str, Any], behaviour: PodBehaviour = PLAIN) -> None:
        self.ids = itertools.count(1)
        self.behaviour = behaviour
        self.memo: PodMemo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.0.2", 0.0)

    def step(self, pod: dict[str, Any], now: float) -> tuple[dict[str, Any], float | None]:
        self.memo, due = advance_pod(pod, self.memo, self.behaviour, now, lambda: f"containerd://{next(self.ids)}",
                                     BackOff())
        return render_status(pod, self.memo, self.behaviour, now), due


def statuses(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in status["containerStatuses"]}


# -- env from metadata -------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("env", "labels", "annotations", "values"),
    [
        ([LABEL_ENV], {"test-env": "foo"}, {}, (("TEST_ENV", "foo"),)),
        ([LABEL_ENV], {}, {}, (("TEST_ENV", ""),)),
        ([ANNOTATION_ENV, {"name": "plain", "value": "x"}], {}, {"config": "c"}, (("CONFIG", "c"),)),
        ([{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}], {}, {}, ()),
        ([{"name": "BAD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['']"}}}], {"": "x"}, {}, ()),
    ],
)
def test_env_from_metadata_resolves_label_and_annotation_references(
        env: list[dict[str, Any]], labels: dict[str, str], annotations: dict[str, str],
        values: tuple[tuple[str, str], ...]) -> None:
    container = {"name": "c", "image": "i", "env": env}
    assert env_from_metadata(container, make_pod([container], labels, annotations)) == values
    assert reads_metadata(container) == bool(values)


def test_env_metadata_hash_is_order_independent_and_value_sensitive() -> None:
    # The controller computes the same hash; this vector is asserted on its side too.
    assert env_metadata_hash([("TEST_ENV", "foo")]) == 7628925628069257671
    assert env_metadata_hash([("A", "1"), ("B", "2")]) == env_metadata_hash([("B", "2"), ("A", "1")])
    assert env_metadata_hash([("TEST_ENV", "foo")]) != env_metadata_hash([("TEST_ENV", "bar")])


def test_a_changed_label_read_by_env_restarts_only_that_container_in_place() -> None:
    reader = {"name": "app", "image": "nginx", "env": [LABEL_ENV]}
    other = {"name": "side", "image": "redis"}
    pod = make_pod([reader, other], {"test-env": "foo"})
    kubelet = Kubelet(pod)
    status, _ = kubelet.step(pod, 1.0)
    before = statuses(status)
    relabelled = make_pod([reader, other], {"test-env": "bar"})
    status, _ = kubelet.step(relabelled, 5.0)
    after = statuses(status)
    assert after["app"]["restartCount"] == 1
    assert after["app"]["containerID"] != before["app"]["containerID"]
    assert after["app"]["lastState"]["terminated"]["reason"] == "Completed"
    assert after["side"] == before["side"]
    # Nothing changed since: no further restart.
    status, _ = kubelet.step(relabelled, 9.0)
    assert statuses(status)["app"]["restartCount"] == 1


def test_resuming_after_a_kubelet_restart_does_not_restart_env_readers() -> None:
    reader = {"name": "app", "image": "nginx", "env": [LABEL_ENV]}
    pod = make_pod([reader], {"test-env": "foo"})
    status, _ = Kubelet(pod).step(pod, 1.0)
    known = {**pod, "status": {**status, "startTime": "2023-11-14T22:13:20Z"}}
    resumed = memo_from_status(known, "node-1", "10.0.0.2", "10.244.0.2", 2.0)
    kubelet = Kubelet(known)
    kubelet.memo = resumed
    status, _ = kubelet.step(known, 3.0)
    assert statuses(status)["app"]["restartCount"] == 0


def test_runtime_report_records_the_values_each_run_started_with() -> None:
    reader = {"name": "app", "image": "nginx", "env": [LABEL_ENV]}
    pod = make_pod([reader, {"name": "idle", "image": "busybox"}], {"test-env": "foo"})
    kubelet = Kubelet(pod)
    status, _ = kubelet.step(pod, 1.0)
    started = {run.name: run.env for run in kubelet.memo.containers if run.has_started}
    report = runtime_containers_meta(status["containerStatuses"], started)
    assert orjson.loads(report) == {"containers": [
        {"name": "app", "containerID": "containerd://1", "restartCount": 0,
         "hashes": {"extractedEnvFromMetadataHash": env_metadata_hash([("TEST_ENV", "foo")])}},
        {"name": "idle", "containerID": "containerd://2", "restartCount": 0,
         "hashes": {"extractedEnvFromMetadataHash": env_metadata_hash([])}},
    ]}
    assert runtime_meta_patch(pod, report) == {
        "metadata": {"annotations": {kruise.RUNTIME_CONTAINERS_META_ANNOTATION: report}}}
    reported = make_pod(pod["spec"]["containers"], annotations={kruise.RUNTIME_CONTAINERS_META_ANNOTATION: report})
    assert runtime_meta_patch(reported, report) is None


def test_containers_not_started_are_left_out_of_the_runtime_report() -> None:
    report = runtime_containers_meta([{"name": "app", "restartCount": 0}], {})
    assert orjson.loads(report) == {"containers": []}


# -- launch priority ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("env", "priority"),
    [([barrier(10)], 10), ([barrier(-2)], -2), ([], None),
     ([{"name": kruise.CONTAINER_BARRIER_ENV, "valueFrom": {"configMapKeyRef": {"key": "q_1"}}}], None),
     ([{"name": kruise.CONTAINER_PRIORITY_ENV, "value": "10"}], None)],
)
def test_barrier_priority_reads_the_barrier_env_only(env: list[dict[str, Any]], priority: int | None) -> None:
    assert barrier_priority({"name": "c", "env": env}) == priority


@pytest.mark.parametrize(
    ("priority", "higher", "opens"),
    [(None, [None], float("-inf")), (0, [], float("-inf")), (0, [3.0, 5.0], 5.0), (0, [3.0, None], None)],
)
def test_barrier_opens_when_every_higher_container_is_ready(
        priority: int | None, higher: list[float | None], opens: float | None) -> None:
    assert barrier_opens(priority, higher) == opens


def test_lower_priority_containers_are_created_after_higher_ones_are_ready() -> None:
    behaviour = PodBehaviour(start_delay=1.0, ready_delay=0.0, termination_delay=1.0, post_start_delay=4.0)
    first = {"name": "redis", "image": "redis", "env": [barrier(10)],
             "lifecycle": {"postStart": {"exec": {"command": ["sleep", "4"]}}}}
    second = {"name": "nginx", "image": "nginx", "env": [barrier(0)]}
    pod = make_pod([second, first])
    kubelet = Kubelet(pod, behaviour)
    status, due = kubelet.step(pod, 2.0)
    assert statuses(status)["redis"]["state"].keys() == {"running"}
    assert statuses(status)["redis"]["ready"] is False  # its postStart hook runs until 1 + 4
    assert statuses(status)["nginx"]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert due == 5.0
    status, due = kubelet.step(pod, 5.0)
    assert statuses(status)["redis"]["ready"] is True
    assert statuses(status)["nginx"]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert due == 6.0  # the barrier opened at 5, then the start delay
    status, _ = kubelet.step(pod, 6.0)
    nginx = statuses(status)["nginx"]
    assert (nginx["ready"], [run.name for run in kubelet.memo.containers]) == (True, ["nginx", "redis"])


def test_containers_without_a_barrier_start_together() -> None:
    pod = make_pod([{"name": "a", "image": "a"}, {"name": "b", "image": "b"}])
    status, _ = Kubelet(pod).step(pod, 1.0)
    assert all(s["ready"] for s in status["containerStatuses"])


# -- images that never pull --------------------------------------------------------------------

def test_a_missing_image_keeps_the_restarted_container_waiting_on_its_old_image() -> None:
    behaviour = PodBehaviour(start_delay=1.0, ready_delay=0.0, termination_delay=1.0,
                             missing_images=frozenset({"redis:missing"}))
    pod = make_pod([{"name": "redis", "image": "redis:7"}])
    kubelet = Kubelet(pod, behaviour)
    before = statuses(kubelet.step(pod, 1.0)[0])["redis"]
    changed = make_pod([{"name": "redis", "image": "redis:missing"}])
    after = statuses(kubelet.step(changed, 3.0)[0])["redis"]
    assert after["state"]["waiting"]["reason"] == "ErrImagePull"
    assert (after["image"], after["imageID"]) == (before["image"], before["imageID"])
    assert (after["ready"], after["restartCount"]) == (False, 0)
    assert kubelet.memo.containers[0].state is RunState.PULL_FAILED


@pytest.mark.parametrize(
    ("annotations", "missing", "post_start"),
    [({"sim.kubeloop.io/missing-images": "a:1, b:2,,"}, frozenset({"a:1", "b:2"}), 0.0),
     ({"sim.kubeloop.io/post-start-delay": "2.5"}, frozenset(), 2.5),
     ({"sim.kubeloop.io/post-start-delay": "-1"}, frozenset(), 0.0)],
)
def test_behaviour_annotations_for_missing_images_and_post_start(
        annotations: dict[str, str], missing: frozenset[str], post_start: float) -> None:
    behaviour, _ = pod_behaviour({"metadata": {"annotations": annotations}}, BehaviourDefaults())
    assert (behaviour.missing_images, behaviour.post_start_delay) == (missing, post_start)
