"""Image pre-download decisions (upstream's ``createImagePullJobsForInPlaceUpdate`` and the
conditions around it in the reconcile), as tables over plain CloneSets and revisions."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from cloneset_pods import make_cloneset

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.options import DEFAULT_GATES
from kubeloop.controllers.cloneset.predownload import (
    CREATED_LABEL,
    IGNORED_LABEL,
    MIN_UPDATED_READY_PODS_ANNOTATION,
    PARALLELISM_ANNOTATION,
    TIMEOUT_SECONDS_ANNOTATION,
    changed_images,
    image_pull_job,
    jobs_controlled_by,
    min_updated_ready_pods,
    plan_pre_download,
    revision_label_patch,
    should_pre_download,
)
from kubeloop.controllers.cloneset.revisions import new_revision

Obj = dict[str, Any]


def cloneset(replicas: int = 5, **kwargs: Any) -> Obj:
    kwargs.setdefault("strategy_type", kruise.IN_PLACE_IF_POSSIBLE)
    kwargs.setdefault("partition", 1)
    return make_cloneset(replicas, **kwargs)


def with_image(cs: Obj, image: str, container: int = 0) -> Obj:
    changed = copy.deepcopy(cs)
    changed["spec"]["template"]["spec"]["containers"][container]["image"] = image
    return changed


def annotated(cs: Obj, **annotations: str) -> Obj:
    changed = copy.deepcopy(cs)
    changed["metadata"]["annotations"] = dict(annotations)
    return changed


def revisions(old: Obj, new: Obj) -> tuple[Obj, Obj]:
    return new_revision(old, 1, None), new_revision(new, 2, None)


def plan_for(cs: Obj, new: Obj | None = None) -> Any:
    new = new if new is not None else with_image(cs, "img:2")
    current, update = revisions(cs, new)
    return plan_pre_download(new, current, update, DEFAULT_GATES)


# -- when the reconcile considers it --------------------------------------------------------------

@pytest.mark.parametrize(
    ("annotation", "replicas", "expected"),
    [
        (None, 5, 0),
        ("2", 5, 2),
        ("40%", 5, 2),
        ("41%", 5, 3),
        ("100%", 5, 5),
        ("x", 5, 0),
        ("2.5", 5, 0),
    ],
)
def test_min_updated_ready_pods(annotation: str | None, replicas: int, expected: int) -> None:
    cs = cloneset(replicas)
    if annotation is not None:
        cs = annotated(cs, **{MIN_UPDATED_READY_PODS_ANNOTATION: annotation})
    assert min_updated_ready_pods(cs) == expected


@pytest.mark.parametrize(
    ("current", "update", "status", "threshold", "expected"),
    [
        ("r1", "r1", {}, None, False),
        ("r1", "r2", {}, None, True),
        ("r1", "r2", {"updateRevision": "r2", "updatedReadyReplicas": 1}, "2", False),
        ("r1", "r2", {"updateRevision": "r2", "updatedReadyReplicas": 2}, "2", True),
        # A status still about an older rollout counts no updated ready pod.
        ("r1", "r3", {"updateRevision": "r2", "updatedReadyReplicas": 4}, "2", False),
    ],
)
def test_should_pre_download(current: str, update: str, status: Obj, threshold: str | None, expected: bool) -> None:
    cs = cloneset()
    if threshold is not None:
        cs = annotated(cs, **{MIN_UPDATED_READY_PODS_ANNOTATION: threshold})
    cs["status"] = status
    assert should_pre_download(cs, current, update) is expected


# -- the decision for a revision ------------------------------------------------------------------

@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"strategy_type": kruise.RECREATE}, "ReCreate"),
        ({"replicas": 3}, "replicas 3 <= 3"),
        ({"partition": None, "max_unavailable": 5}, "one batch"),
        ({"partition": 0, "max_unavailable": "100%"}, "one batch"),
        ({"partition": None, "max_unavailable": 7}, "one batch"),
    ],
)
def test_revisions_not_worth_pre_downloading_are_ignored(settings: Obj, reason: str) -> None:
    replicas = settings.pop("replicas", 5)
    plan = plan_for(cloneset(replicas, **settings))
    assert plan.action == "ignore" and reason in plan.reason and not plan.jobs


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"replicas": 4},
        {"partition": None},  # default maxUnavailable 20% of 5 = 1 per batch
        {"partition": None, "max_unavailable": 4},
        {"partition": 1, "max_unavailable": "100%"},
        {"strategy_type": kruise.IN_PLACE_ONLY},
    ],
)
def test_in_place_rollouts_in_several_batches_get_jobs(settings: Obj) -> None:
    replicas = settings.pop("replicas", 5)
    plan = plan_for(cloneset(replicas, **settings))
    assert plan.action == "create"
    assert [job["spec"]["image"] for job in plan.jobs] == ["img:2"]


def test_a_revision_that_cannot_be_applied_in_place_is_ignored() -> None:
    cs = cloneset()
    new = copy.deepcopy(cs)
    new["spec"]["template"]["spec"]["containers"][0]["command"] = ["sleep"]
    plan = plan_for(cs, new)
    assert plan.action == "ignore" and "in place" in plan.reason


def test_vct_changes_block_pre_download_only_with_the_recreate_gate() -> None:
    def with_vct(cs: Obj, size: str) -> Obj:
        changed = copy.deepcopy(cs)
        changed["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"},
                                                    "spec": {"resources": {"requests": {"storage": size}}}}]
        return changed

    cs = with_vct(cloneset(), "1Gi")
    new = with_vct(with_image(cs, "img:2"), "2Gi")
    current, update = revisions(cs, new)
    gated = dataclasses.replace(DEFAULT_GATES, recreate_pod_when_change_vct=True)
    assert plan_pre_download(new, current, update, DEFAULT_GATES).action == "create"
    assert plan_pre_download(new, current, update, gated).action == "ignore"
    in_place_only = copy.deepcopy(new)
    in_place_only["spec"]["updateStrategy"]["type"] = kruise.IN_PLACE_ONLY
    assert plan_pre_download(in_place_only, current, update, gated).action == "create"


@pytest.mark.parametrize("label", [CREATED_LABEL, IGNORED_LABEL])
def test_a_labelled_revision_is_decided_already(label: str) -> None:
    cs = cloneset(strategy_type=kruise.RECREATE)
    new = with_image(cs, "img:2")
    current, update = revisions(cs, new)
    update["metadata"]["labels"][label] = "true"
    assert plan_pre_download(new, current, update, DEFAULT_GATES).action == "none"


def test_an_unreadable_partition_is_an_error_not_a_label() -> None:
    plan = plan_for(cloneset(partition="half"))
    assert plan.action == "error" and "partition" in plan.reason


def test_changed_images_are_new_or_different_containers() -> None:
    cs = cloneset()
    cs["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "side:1"})
    new = with_image(cs, "img:2")
    new["spec"]["template"]["spec"]["containers"].append({"name": "extra", "image": "extra:1"})
    current, update = revisions(cs, new)
    assert changed_images(current, update) == {"c": "img:2", "extra": "extra:1"}
    assert changed_images(current, current) == {}


# -- the job ------------------------------------------------------------------------------------

def test_job_shape() -> None:
    cs = annotated(cloneset(), **{PARALLELISM_ANNOTATION: "2", TIMEOUT_SECONDS_ANNOTATION: "60"})
    cs["spec"]["template"]["metadata"]["annotations"] = {"note": "x"}
    cs["spec"]["template"]["spec"]["imagePullSecrets"] = [{"name": "registry"}]
    new = with_image(cs, "img:2")
    update = new_revision(new, 2, None)
    revision_hash = update["metadata"]["labels"][kruise.REVISION_HASH_LABEL]
    job = image_pull_job(new, update, "c", "img:2")
    assert job["metadata"]["name"] == f"{update['metadata']['name']}-c"
    assert job["metadata"]["namespace"] == "default"
    assert job["metadata"]["labels"] == {"app": "cs", kruise.REVISION_HASH_LABEL: revision_hash}
    ref = job["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == ("CloneSet", "cs", "cs-uid", True)
    assert job["spec"] == {
        "image": "img:2",
        "podSelector": {"matchLabels": {"app": "cs"}, "matchExpressions": [
            {"key": kruise.CONTROLLER_REVISION_HASH_LABEL, "operator": "NotIn",
             "values": [update["metadata"]["name"], revision_hash]}]},
        "parallelism": 2,
        "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 60},
        "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 600},
        "sandboxConfig": {"labels": job["metadata"]["labels"], "annotations": {"note": "x"}},
        "pullSecrets": ["registry"],
    }


@pytest.mark.parametrize(
    ("parallelism", "timeout", "expected"),
    [
        (None, None, (1, 300)),
        ("3", "10", (3, 10)),
        ("two", "ten", (1, 300)),
        ("2%", "99999999999", (1, 300)),
    ],
)
def test_job_settings_fall_back_to_upstream_defaults(parallelism: str | None, timeout: str | None,
                                                     expected: tuple[int, int]) -> None:
    settings = {key: value for key, value in ((PARALLELISM_ANNOTATION, parallelism),
                                              (TIMEOUT_SECONDS_ANNOTATION, timeout)) if value is not None}
    cs = annotated(cloneset(), **settings)
    job = image_pull_job(cs, new_revision(cs, 1, None), "c", "img:1")
    assert (job["spec"]["parallelism"], job["spec"]["pullPolicy"]["timeoutSeconds"]) == expected
    assert "pullSecrets" not in job["spec"] and "annotations" not in job["spec"]["sandboxConfig"]


def test_a_cloneset_selector_with_expressions_keeps_them() -> None:
    cs = cloneset()
    cs["spec"]["selector"]["matchExpressions"] = [{"key": "tier", "operator": "Exists"}]
    job = image_pull_job(cs, new_revision(cs, 1, None), "c", "img:1")
    keys = [e["key"] for e in job["spec"]["podSelector"]["matchExpressions"]]
    assert keys == ["tier", kruise.CONTROLLER_REVISION_HASH_LABEL]
    assert cs["spec"]["selector"]["matchExpressions"] == [{"key": "tier", "operator": "Exists"}]


def test_jobs_controlled_by_the_cloneset() -> None:
    cs = cloneset()
    ours = image_pull_job(cs, new_revision(cs, 1, None), "c", "img:1")
    foreign = copy.deepcopy(ours)
    foreign["metadata"]["ownerReferences"][0]["uid"] = "other"
    not_controller = copy.deepcopy(ours)
    not_controller["metadata"]["ownerReferences"][0]["controller"] = False
    assert jobs_controlled_by(cs, [ours, foreign, not_controller, {"metadata": {}}]) == [ours]


def test_revision_label_patch() -> None:
    assert revision_label_patch(CREATED_LABEL) == {"metadata": {"labels": {CREATED_LABEL: "true"}}}
