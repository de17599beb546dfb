"""The launch-priority barrier env the pod webhook would inject, container batches built from
it, and the runtime report that finishes an env-from-metadata in-place update."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.inplace import apply_update_spec, container_priority
from kubeloop.controllers.cloneset.launchpriority import LAUNCH_PRIORITY_ANNOTATION, barrier_env, inject_launch_priority
from kubeloop.controllers.cloneset.runtimemeta import env_from_metadata_applied, env_metadata_hash, expected_env_values

NOW = datetime(2024, 1, 1, tzinfo=UTC)
LABEL_ENV = {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}


def priority_env(value: str) -> dict[str, str]:
    return {"name": kruise.CONTAINER_PRIORITY_ENV, "value": value}


def pod_with(containers: list[dict[str, Any]], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "cs-abcde", "annotations": annotations or {}}, "spec": {"containers": containers}}


# -- the pod webhook's barrier env ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("envs", "annotations", "priorities"),
    [
        # nginx unset (0), redis 10: both get a barrier.
        ([[], [priority_env("10")]], {}, [0, 10]),
        # Ordered: spec order, 0, -1, -2.
        ([[], [], []], {LAUNCH_PRIORITY_ANNOTATION: "Ordered"}, [0, -1, -2]),
        # All the same priority: no order, nothing injected.
        ([[priority_env("5")], [priority_env("5")]], {}, None),
        ([[], []], {}, None),
        # A single container never gets one.
        ([[priority_env("10")]], {}, None),
        # A value that is not an integer counts as unset.
        ([[priority_env("x")], [priority_env("-3")]], {}, [0, -3]),
    ],
)
def test_inject_launch_priority(envs: list[list[dict[str, str]]], annotations: dict[str, str],
                                priorities: list[int] | None) -> None:
    containers = [{"name": f"c{i}", "image": "i", "env": list(env)} for i, env in enumerate(envs)]
    pod = pod_with(containers, annotations)
    inject_launch_priority(pod)
    injected = [container_priority(c) for c in pod["spec"]["containers"]]
    if priorities is None:
        assert pod["spec"]["containers"] == [{"name": f"c{i}", "image": "i", "env": env} for i, env in enumerate(envs)]
    else:
        assert injected == priorities
        assert pod["spec"]["containers"][0]["env"][-1] == barrier_env("cs-abcde", priorities[0])
        assert barrier_env("cs-abcde", 7)["valueFrom"]["configMapKeyRef"] == {"name": "cs-abcde-barrier", "key": "p_7"}


def test_batches_follow_the_injected_priorities() -> None:
    pod = pod_with([{"name": "nginx", "image": "nginx:1", "env": []},
                    {"name": "redis", "image": "redis:1", "env": [priority_env("10")]}])
    inject_launch_priority(pod)
    pod["status"] = {"containerStatuses": [{"name": "nginx", "imageID": "n1"}, {"name": "redis", "imageID": "r1"}]}
    spec = {"revision": "rev2", "containerImages": {"nginx": "nginx:2", "redis": "redis:2"}}
    first, state = apply_update_spec(pod, spec, {"revision": "rev2"}, NOW)
    images = {c["name"]: c["image"] for c in first["spec"]["containers"]}
    assert images == {"nginx": "nginx:1", "redis": "redis:2"}
    assert [batch["containers"] for batch in state["containerBatchesRecord"]] == [["redis"]]
    assert state["nextContainerImages"] == {"nginx": "nginx:2"}
    assert state["preCheckBeforeNext"] == {"containersRequiredReady": ["redis"]}
    second, state = apply_update_spec(first, {"containerImages": state["nextContainerImages"]}, state, NOW)
    assert {c["name"]: c["image"] for c in second["spec"]["containers"]} == {"nginx": "nginx:2", "redis": "redis:2"}
    assert [batch["containers"] for batch in state["containerBatchesRecord"]] == [["redis"], ["nginx"]]
    assert "nextContainerImages" not in state


# -- runtime report ------------------------------------------------------------------------------

def test_env_metadata_hash_matches_the_kubelet_contract_vector() -> None:
    # Same vector as tests/unit/kubelet: both ends must hash alike.
    assert env_metadata_hash([("TEST_ENV", "foo")]) == 7628925628069257671
    assert env_metadata_hash([("A", "1"), ("B", "2")]) == env_metadata_hash([("B", "2"), ("A", "1")])


def reported_pod(label: str, reported_value: str, reported_id: str = "containerd://2",
                 report: Any = None) -> dict[str, Any]:
    entry = {"name": "app", "containerID": reported_id,
             "hashes": {"extractedEnvFromMetadataHash": env_metadata_hash([("TEST_ENV", reported_value)])}}
    text = orjson.dumps(report if report is not None else {"containers": [entry]}).decode()
    return {"metadata": {"labels": {"test-env": label},
                         "annotations": {kruise.RUNTIME_CONTAINERS_META_ANNOTATION: text}},
            "spec": {"containers": [{"name": "app", "image": "nginx",
                                     "env": [LABEL_ENV, {"name": "x", "value": "y"}]}]},
            "status": {"containerStatuses": [{"name": "app", "containerID": "containerd://2"}]}}


@pytest.mark.parametrize(
    ("pod", "applied"),
    [
        (reported_pod("bar", "bar"), True),
        (reported_pod("bar", "foo"), False),  # still running with the old value
        (reported_pod("bar", "bar", reported_id="containerd://1"), False),  # report of the previous run
        (reported_pod("bar", "bar", report={"containers": []}), False),
        (reported_pod("bar", "bar", report=["not", "an", "object"]), False),
    ],
)
def test_env_from_metadata_applied(pod: dict[str, Any], applied: bool) -> None:
    assert env_from_metadata_applied(pod) is applied


def test_unparsable_or_missing_report_is_not_applied() -> None:
    pod = reported_pod("bar", "bar")
    pod["metadata"]["annotations"][kruise.RUNTIME_CONTAINERS_META_ANNOTATION] = "{not json"
    assert not env_from_metadata_applied(pod)
    del pod["metadata"]["annotations"][kruise.RUNTIME_CONTAINERS_META_ANNOTATION]
    assert not env_from_metadata_applied(pod)


def test_expected_env_values_resolve_against_the_current_pod() -> None:
    container = {"env": [LABEL_ENV, {"name": "CONFIG", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.annotations['config']"}}}, {"name": "N", "valueFrom": {"fieldRef": {
            "fieldPath": "spec.nodeName"}}}]}
    pod = {"metadata": {"labels": {"test-env": "foo"}, "annotations": {}}}
    assert expected_env_values(container, pod) == [("TEST_ENV", "foo"), ("CONFIG", "")]
