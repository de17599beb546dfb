"""Container batches built from the launch-priority barrier env (which the API server's pod
admission injects, see tests/unit/server/admission), and the runtime report that finishes an
env-from-metadata in-place update."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from cloneset_pods import make_cloneset

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.inplace import apply_update_spec, container_priority
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.controllers.cloneset.runtimemeta import env_from_metadata_applied, env_metadata_hash, expected_env_values
from kubeloop.controllers.cloneset.scale import new_pods

NOW = datetime(2024, 1, 1, tzinfo=UTC)
LABEL_ENV = {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}


def priority_env(value: str) -> dict[str, str]:
    return {"name": kruise.CONTAINER_PRIORITY_ENV, "value": value}


def pod_with(containers: list[dict[str, Any]], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "cs-abcde", "annotations": annotations or {}}, "spec": {"containers": containers}}


# -- container batches from the barrier env ------------------------------------------------------

def barrier(priority: int) -> dict[str, Any]:
    """The barrier env the API server's pod admission adds (as OpenKruise's pod webhook does)."""
    return {"name": kruise.CONTAINER_BARRIER_ENV,
            "valueFrom": {"configMapKeyRef": {"name": "cs-abcde-barrier", "key": f"p_{priority}"}}}


def test_new_pods_carry_the_template_env_only() -> None:
    # The barrier env is the API server's business (pod create admission), not the controller's.
    cs = make_cloneset(1, name="cs")
    template = cs["spec"]["template"]
    template["metadata"] = {"annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}}
    template["spec"]["containers"] = [{"name": "nginx", "image": "nginx:1"},
                                      {"name": "redis", "image": "redis:1", "env": [priority_env("10")]}]
    pod = new_pods(cs, cs, "cs-abc", "cs-abc", 1, 0, ["abcde"], now=NOW, gates=CloneSetFeatureGates())[0]
    assert [c.get("env") for c in pod["spec"]["containers"]] == [None, [priority_env("10")]]


def test_batches_follow_the_injected_priorities() -> None:
    pod = pod_with([{"name": "nginx", "image": "nginx:1", "env": [barrier(0)]},
                    {"name": "redis", "image": "redis:1", "env": [priority_env("10"), barrier(10)]}])
    assert [container_priority(c) for c in pod["spec"]["containers"]] == [0, 10]
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
