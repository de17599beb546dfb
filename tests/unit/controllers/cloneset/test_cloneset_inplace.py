"""In-place update helpers (kruise's ``pkg/util/inplaceupdate/inplace_update_test.go`` tables and
``sync/cloneset_update_test.go`` ``TestUpdate`` cases 1-8)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
import pytest
from cloneset_pods import NOW

from kubeloop.api import kruise
from kubeloop.api.meta import format_time
from kubeloop.controllers.cloneset.inplace import (
    calculate_in_place_update_spec,
    containers_update_completed,
    pod_update_completed,
    refresh,
    start_update_status,
    updated_pod,
)
from kubeloop.controllers.cloneset.jsondiff import apply_metadata_patch, metadata_merge_patch
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.controllers.cloneset.runtimemeta import env_metadata_hash


def _revision(name: str, template: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"spec": {"template": {"$patch": "replace", **template}}}
    data.update(extra or {})
    return {"metadata": {"name": name}, "data": data}


def _template(image: str = "foo1", labels: dict[str, str] | None = None, **container: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if labels is not None:
        meta["labels"] = labels
    return {"metadata": meta, "spec": {"containers": [{"name": "c1", "image": image, **container}]}}


def test_no_old_revision_means_no_in_place() -> None:
    assert calculate_in_place_update_spec(None, _revision("new-revision", _template())) is None


def test_image_change() -> None:
    spec = calculate_in_place_update_spec(_revision("old", _template()), _revision("new-revision", _template("foo2")))
    assert spec == {"revision": "new-revision", "containerImages": {"c1": "foo2"}}


def test_identical_data_outside_the_template_is_ignored() -> None:
    extra = {"metadata": {"labels": {"k": "v"}}}
    spec = calculate_in_place_update_spec(
        _revision("old", _template(), extra), _revision("new-revision", _template("foo2"), extra)
    )
    assert spec == {"revision": "new-revision", "containerImages": {"c1": "foo2"}}


def test_added_label_goes_to_the_metadata_patch() -> None:
    spec = calculate_in_place_update_spec(
        _revision("old", _template(labels={})), _revision("new", _template("foo2", labels={"k1": "v1"}))
    )
    assert spec == {
        "revision": "new",
        "containerImages": {"c1": "foo2"},
        "metaDataPatch": {"metadata": {"labels": {"k1": "v1"}}},
    }


def test_label_read_by_env_restarts_the_container() -> None:
    env = [{"name": "K", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['k']"}}}]
    old = _revision("old", _template(labels={"k": "v"}, env=env))
    new = _revision("new", _template(labels={"k": "v2", "k1": "v1"}, env=env))
    spec = calculate_in_place_update_spec(old, new)
    assert spec == {
        "revision": "new",
        "containerRefMetadata": {"c1": {"labels": {"k": "v2"}}},
        "updateEnvFromMetadata": True,
        "metaDataPatch": {"metadata": {"labels": {"k1": "v1"}}},
    }
    gate_off = calculate_in_place_update_spec(
        old, new, gates=CloneSetFeatureGates(in_place_update_env_from_metadata=False)
    )
    assert gate_off == {"revision": "new", "metaDataPatch": {"metadata": {"labels": {"k": "v2", "k1": "v1"}}}}


def test_removed_label_and_finalizer() -> None:
    old_template = _template(labels={"k2": "v2"})
    old_template["metadata"]["finalizers"] = ["fz1", "fz2"]
    new_template = _template(labels={"k1": "v1"})
    new_template["metadata"]["finalizers"] = ["fz2"]
    spec = calculate_in_place_update_spec(_revision("old", old_template), _revision("new", new_template))
    assert spec is not None
    patch = spec["metaDataPatch"]
    assert orjson.dumps(patch, option=orjson.OPT_SORT_KEYS) == (
        b'{"metadata":{"$deleteFromPrimitiveList/finalizers":["fz1"],"$setElementOrder/finalizers":["fz2"],'
        b'"labels":{"k1":"v1","k2":null}}}'
    )
    pod = {"metadata": {"labels": {"k2": "v2", "x": "y"}, "finalizers": ["fz1", "fz2", "other"]}}
    apply_metadata_patch(pod, patch)
    assert pod["metadata"]["labels"] == {"x": "y", "k1": "v1"}
    assert pod["metadata"]["finalizers"] == ["fz2", "other"]


@pytest.mark.parametrize(
    "new_template",
    [
        {"metadata": {}, "spec": {"containers": [{"name": "c2", "image": "foo1"}]}},
        _template(env=[{"name": "a", "value": "b"}]),
        _template(imagePullPolicy="Always"),
        {"metadata": {}, "spec": {"containers": [{"name": "c1", "image": "foo1"}, {"name": "c2", "image": "x"}]}},
    ],
)
def test_other_changes_are_not_in_place(new_template: dict[str, Any]) -> None:
    assert calculate_in_place_update_spec(_revision("old", _template()), _revision("new", new_template)) is None


def test_volume_claim_template_hash_gate() -> None:
    old = _revision("old", _template())
    new = _revision("new", _template("foo2"))
    old["metadata"]["annotations"] = {kruise.VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION: "a"}
    new["metadata"]["annotations"] = {kruise.VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION: "b"}
    gates = CloneSetFeatureGates(recreate_pod_when_change_vct=True)
    assert calculate_in_place_update_spec(old, new, gates=gates) is None
    assert calculate_in_place_update_spec(old, new, gates=gates, ignore_volume_claim_template_hash=True) is not None
    assert calculate_in_place_update_spec(old, new) is not None


# --- performing the update ---------------------------------------------------------------


def _pod(image: str = "foo1", image_id: str = "image-id-xyz", **extra_meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "labels": {kruise.CONTROLLER_REVISION_HASH_LABEL: "rev_old"}, **extra_meta},
        "spec": {
            "containers": [{"name": "c1", "image": image}],
            "readinessGates": [{"conditionType": kruise.INPLACE_UPDATE_READY}],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "c1", "image": image, "imageID": image_id}],
        },
    }


def _state(pod: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = orjson.loads(pod["metadata"]["annotations"][kruise.INPLACE_UPDATE_STATE_ANNOTATION])
    return value


def test_start_update_sets_the_condition_false() -> None:
    pod = _pod()
    status_pod = start_update_status(pod, NOW)
    assert status_pod is not None
    condition = status_pod["status"]["conditions"][-1]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        kruise.INPLACE_UPDATE_READY,
        "False",
        "StartInPlaceUpdate",
    )
    assert status_pod["status"]["conditions"][0]["status"] == "True"  # no ContainersReady condition
    assert start_update_status(status_pod, NOW) is None
    assert "conditions" not in pod["status"] or len(pod["status"]["conditions"]) == 1


def test_start_update_turns_ready_false_when_containers_ready() -> None:
    pod = _pod()
    pod["status"]["conditions"].append({"type": "ContainersReady", "status": "True"})
    status_pod = start_update_status(pod, NOW)
    assert status_pod is not None
    ready = status_pod["status"]["conditions"][0]
    assert (ready["status"], ready["reason"]) == ("False", "ReadinessGatesNotReady")
    assert ready["message"] == 'the status of pod readiness gate "InPlaceUpdateReady" is not "True", but False'


def test_in_place_update_without_grace() -> None:
    pod = _pod()
    result = updated_pod(pod, {"revision": "rev_new", "containerImages": {"c1": "foo2"}}, now=NOW)
    assert result["metadata"]["labels"][kruise.CONTROLLER_REVISION_HASH_LABEL] == "rev_new"
    assert result["metadata"]["labels"][kruise.POD_TEMPLATE_HASH_LABEL] == "rev_new"
    assert result["metadata"]["labels"][kruise.LIFECYCLE_STATE_LABEL] == kruise.STATE_UPDATING
    assert result["spec"]["containers"][0]["image"] == "foo2"
    assert _state(result) == {
        "revision": "rev_new",
        "updateTimestamp": format_time(NOW),
        "updateImages": True,
        "lastContainerStatuses": {"c1": {"imageID": "image-id-xyz"}},
        "containerBatchesRecord": [{"timestamp": format_time(NOW), "containers": ["c1"]}],
    }
    assert kruise.INPLACE_UPDATE_GRACE_ANNOTATION not in result["metadata"]["annotations"]
    assert pod["spec"]["containers"][0]["image"] == "foo1"


def test_in_place_update_with_grace_then_refresh() -> None:
    spec = {"revision": "rev_new", "containerImages": {"c1": "foo2"}, "graceSeconds": 3630}
    result = updated_pod(_pod(), spec, now=NOW)
    assert result["spec"]["containers"][0]["image"] == "foo1"
    assert _state(result) == {"revision": "rev_new", "updateTimestamp": format_time(NOW), "updateImages": True}
    assert orjson.loads(result["metadata"]["annotations"][kruise.INPLACE_UPDATE_GRACE_ANNOTATION]) == spec

    during = refresh(result, now=NOW + timedelta(seconds=10))
    assert (during.kind, during.delay_seconds) == ("requeue", 3620)

    after = refresh(result, now=NOW + timedelta(seconds=3631))
    assert after.kind == "update"
    assert after.pod is not None
    assert after.pod["spec"]["containers"][0]["image"] == "foo2"
    assert kruise.INPLACE_UPDATE_GRACE_ANNOTATION not in after.pod["metadata"]["annotations"]
    state = _state(after.pod)
    assert state["lastContainerStatuses"] == {"c1": {"imageID": "image-id-xyz"}}
    assert len(state["containerBatchesRecord"]) == 1


def test_grace_spec_of_another_revision_is_dropped() -> None:
    result = updated_pod(
        _pod(), {"revision": "rev_new", "containerImages": {"c1": "foo2"}, "graceSeconds": 30}, now=NOW
    )
    result["metadata"]["labels"][kruise.CONTROLLER_REVISION_HASH_LABEL] = "rev_other"
    action = refresh(result, now=NOW)
    assert action.kind == "update"
    assert action.pod is not None
    assert kruise.INPLACE_UPDATE_GRACE_ANNOTATION not in action.pod["metadata"]["annotations"]
    assert action.pod["spec"]["containers"][0]["image"] == "foo1"


# --- completion and refresh --------------------------------------------------------------


def test_update_completed_checks() -> None:
    assert pod_update_completed(_pod())
    state = {"lastContainerStatuses": {"c1": {"imageID": "img01"}}}
    changed_id = _pod(image_id="img02")
    assert containers_update_completed(changed_id, state)
    same_id_old_image = _pod(image="image01", image_id="img01")
    same_id_old_image["spec"]["containers"][0]["image"] = "image02"
    assert not containers_update_completed(same_id_old_image, state)
    same_id_new_image = _pod(image="image02:v", image_id="img01")
    assert containers_update_completed(same_id_new_image, state)
    no_statuses = _pod()
    no_statuses["status"]["containerStatuses"] = []
    assert not containers_update_completed(no_statuses, state)


def test_tagless_image_is_compared_with_latest() -> None:
    pod = _pod(image="nginx", image_id="same")
    pod["status"]["containerStatuses"][0]["image"] = "nginx:latest"
    assert containers_update_completed(pod, {"lastContainerStatuses": {"c1": {"imageID": "same"}}})


def test_env_from_metadata_needs_a_matching_runtime_report() -> None:
    pod = _pod(image_id="new")
    pod["status"]["containerStatuses"][0]["containerID"] = "containerd://2"
    state = {"updateEnvFromMetadata": True, "lastContainerStatuses": {"c1": {"imageID": "old"}}}
    assert not containers_update_completed(pod, state)
    pod["metadata"]["annotations"] = {kruise.RUNTIME_CONTAINERS_META_ANNOTATION: "{}"}
    assert not containers_update_completed(pod, state)
    report = {"containers": [{"name": "c1", "containerID": "containerd://2",
                              "hashes": {"extractedEnvFromMetadataHash": env_metadata_hash([])}}]}
    pod["metadata"]["annotations"] = {kruise.RUNTIME_CONTAINERS_META_ANNOTATION: orjson.dumps(report).decode()}
    assert containers_update_completed(pod, state)


def test_refresh_without_gate_does_nothing() -> None:
    pod = _pod()
    del pod["spec"]["readinessGates"]
    assert refresh(pod, now=NOW).kind == "none"


def test_refresh_adds_or_flips_the_condition_to_true() -> None:
    pod = _pod()
    added = refresh(pod, now=NOW)
    assert added.kind == "update_status"
    assert added.pod is not None
    assert added.pod["status"]["conditions"][-1]["type"] == kruise.INPLACE_UPDATE_READY
    assert added.pod["status"]["conditions"][-1]["status"] == "True"
    assert refresh(added.pod, now=NOW).kind == "none"
    pod["status"]["conditions"].append({"type": kruise.INPLACE_UPDATE_READY, "status": "False", "reason": "X"})
    flipped = refresh(pod, now=NOW)
    assert flipped.pod is not None
    assert flipped.pod["status"]["conditions"][-1]["status"] == "True"


def test_refresh_waits_for_the_kubelet() -> None:
    updated = updated_pod(_pod(), {"revision": "rev_new", "containerImages": {"c1": "foo2"}}, now=NOW)
    assert refresh(updated, now=NOW).kind == "none"
    updated["status"]["containerStatuses"][0].update({"image": "foo2", "imageID": "image-id-new"})
    assert refresh(updated, now=NOW).kind == "update_status"


def test_refresh_applies_the_next_batch() -> None:
    pod = _pod()
    pod["spec"]["containers"].append({"name": "c2", "image": "c2-img1"})
    pod["status"]["containerStatuses"].append({"name": "c2", "image": "c2-img1", "imageID": "c2-id1"})
    state = {
        "revision": "rev_new",
        "lastContainerStatuses": {"c1": {"imageID": "image-id-xyz"}},
        "nextContainerImages": {"c2": "c2-img2"},
        "containerBatchesRecord": [{"timestamp": format_time(NOW), "containers": ["c1"]}],
    }
    pod["metadata"]["annotations"] = {kruise.INPLACE_UPDATE_STATE_ANNOTATION: orjson.dumps(state).decode()}
    pod["spec"]["containers"][0]["image"] = "foo2"
    assert refresh(pod, now=NOW).kind == "none"
    pod["status"]["containerStatuses"][0]["imageID"] = "image-id-new"
    action = refresh(pod, now=NOW)
    assert action.kind == "update"
    assert action.pod is not None
    assert action.pod["spec"]["containers"][1]["image"] == "c2-img2"
    new_state = _state(action.pod)
    assert new_state["lastContainerStatuses"] == {"c1": {"imageID": "image-id-xyz"}, "c2": {"imageID": "c2-id1"}}
    assert [b["containers"] for b in new_state["containerBatchesRecord"]] == [["c1"], ["c2"]]
    assert "nextContainerImages" not in new_state
    assert not any(c["type"] == kruise.INPLACE_UPDATE_READY for c in action.pod["status"]["conditions"])


def test_launch_priority_splits_batches() -> None:
    pod = _pod()
    barrier = {"name": kruise.CONTAINER_BARRIER_ENV, "valueFrom": {"configMapKeyRef": {"name": "b", "key": "p_10"}}}
    pod["spec"]["containers"] = [{"name": "nginx", "image": "n1"}, {"name": "redis", "image": "r1", "env": [barrier]}]
    pod["spec"]["containers"][0]["env"] = [{**barrier, "valueFrom": {"configMapKeyRef": {"name": "b", "key": "p_5"}}}]
    result = updated_pod(pod, {"revision": "rev_new", "containerImages": {"nginx": "n2", "redis": "r2"}}, now=NOW)
    assert [c["image"] for c in result["spec"]["containers"]] == ["n1", "r2"]
    state = _state(result)
    assert state["nextContainerImages"] == {"nginx": "n2"}
    assert state["preCheckBeforeNext"] == {"containersRequiredReady": ["redis"]}


def test_metadata_merge_patch_of_equal_metadata_is_empty() -> None:
    assert metadata_merge_patch({"labels": {"a": "b"}}, {"labels": {"a": "b"}}) == {}
