"""The new ReplicaSet: revision sync, the object to create and creation outcomes (upstream
``pkg/controller/deployment/sync.go`` ``getNewReplicaSet``)."""

from __future__ import annotations

from datetime import UTC, datetime

from deployment_builders import deployment, pod_template, replica_set

from kubeloop.controllers.deployment import conditions as cond
from kubeloop.controllers.deployment.annotations import DESIRED_REPLICAS, MAX_REPLICAS, REVISION
from kubeloop.controllers.deployment.new_replica_set import (
    after_hash_collision,
    after_replica_set_create_failed,
    after_replica_set_created,
    is_own_replica_set,
    next_revision,
    replica_set_to_create,
    sync_existing_new_replica_set,
)
from kubeloop.controllers.deployment.templates import POD_TEMPLATE_HASH, compute_hash

NOW = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def test_next_revision_is_int64_arithmetic() -> None:
    adopted = replica_set("adopted", 1, annotations={REVISION: "3546343826724305832"})
    assert next_revision([adopted, None]) == 3546343826724305833
    assert next_revision([]) == 1


def test_replica_set_to_create() -> None:
    d = deployment(10, name="web", max_surge="25%", max_unavailable="25%", annotations={"team": "a"})
    d["spec"]["minReadySeconds"] = 5
    old = replica_set("web-old", 10, annotations={REVISION: "4"}, template=pod_template(image="old"))
    created = replica_set_to_create(d, [old])
    template_hash = compute_hash(d["spec"]["template"], None)
    assert created["metadata"]["name"] == f"web-{template_hash}"
    assert created["metadata"]["labels"] == {"foo": "bar", POD_TEMPLATE_HASH: template_hash}
    assert created["spec"]["template"]["metadata"]["labels"] == created["metadata"]["labels"]
    assert created["spec"]["selector"] == {"matchLabels": {"foo": "bar", POD_TEMPLATE_HASH: template_hash}}
    assert created["spec"]["minReadySeconds"] == 5
    assert created["spec"]["replicas"] == 3  # 10 old pods, ceiling 13
    assert created["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "web",
            "uid": "deployment-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert created["metadata"]["annotations"] == {
        "team": "a",
        REVISION: "5",
        DESIRED_REPLICAS: "10",
        MAX_REPLICAS: "13",
    }
    assert POD_TEMPLATE_HASH not in d["spec"]["template"]["metadata"]["labels"]
    assert d["spec"]["selector"] == {"matchLabels": {"foo": "bar"}}


def test_collision_count_changes_the_name() -> None:
    d = deployment(1)
    first = replica_set_to_create(d, [])
    bumped = after_hash_collision(d)
    assert bumped["status"]["collisionCount"] == 1
    assert "collisionCount" not in d["status"]
    second = replica_set_to_create(bumped, [])
    assert first["metadata"]["name"] != second["metadata"]["name"]
    assert after_hash_collision(bumped)["status"]["collisionCount"] == 2


def test_recreate_creates_at_full_size() -> None:
    assert replica_set_to_create(deployment(4, strategy="Recreate"), [])["spec"]["replicas"] == 4


def test_is_own_replica_set() -> None:
    d = deployment(1)
    ours = replica_set_to_create(d, [])
    assert is_own_replica_set(d, ours)
    foreign = replica_set_to_create(deployment(1, uid="someone-else"), [])
    assert not is_own_replica_set(d, foreign)
    changed = replica_set_to_create(d, [])
    changed["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 5
    assert not is_own_replica_set(d, changed)


def test_after_created_records_revision_event_and_condition() -> None:
    d = deployment(2, progress_deadline=600)
    created = replica_set("foo-abc", 2)
    outcome = after_replica_set_created(d, created, 1, already_existed=False, now=NOW)
    assert [(e.type, e.reason, e.message) for e in outcome.events] == [
        ("Normal", "ScalingReplicaSet", "Scaled up replica set foo-abc to 2")
    ]
    update = outcome.deployment_status_update
    assert update is not None
    assert update["metadata"]["annotations"][REVISION] == "1"
    progressing = cond.get_condition(update["status"], cond.PROGRESSING)
    assert progressing is not None
    assert (progressing["reason"], progressing["message"]) == (
        cond.NEW_REPLICA_SET_CREATED,
        'Created new replica set "foo-abc"',
    )
    quiet = after_replica_set_created(
        deployment(2, annotations={REVISION: "1"}), created, 1, already_existed=True, now=NOW
    )
    assert quiet.events == [] and quiet.deployment_status_update is None


def test_after_create_failed() -> None:
    outcome = after_replica_set_create_failed(deployment(1, progress_deadline=600), "foo-abc", "quota exceeded", NOW)
    message = 'Failed to create new replica set "foo-abc": quota exceeded'
    assert (outcome.event.type, outcome.event.reason, outcome.event.message) == (
        "Warning",
        "ReplicaSetCreateError",
        message,
    )
    assert outcome.deployment_status_update is not None
    progressing = cond.get_condition(outcome.deployment_status_update["status"], cond.PROGRESSING)
    assert progressing is not None and (progressing["status"], progressing["message"]) == ("False", message)
    assert after_replica_set_create_failed(deployment(1), "x", "boom", NOW).deployment_status_update is None


def test_existing_new_replica_set_is_brought_in_line_first() -> None:
    d = deployment(3, annotations={"team": "a"})
    d["spec"]["minReadySeconds"] = 7
    old = replica_set("old", 0, annotations={REVISION: "2"})
    new = replica_set("new", 3, annotations={REVISION: "1"})
    step = sync_existing_new_replica_set(d, new, [old], NOW)
    assert step.deployment_status_update is None
    assert step.replica_set_update is not None
    assert step.replica_set_update["spec"]["minReadySeconds"] == 7
    assert step.replica_set_update["metadata"]["annotations"][REVISION] == "3"
    assert new["metadata"]["annotations"] == {REVISION: "1"}


def test_existing_new_replica_set_revision_is_mirrored_on_the_deployment() -> None:
    d = deployment(3, progress_deadline=600)
    new = replica_set("new", 3, annotations={REVISION: "3"})
    step = sync_existing_new_replica_set(d, new, [replica_set("old", 0, annotations={REVISION: "2"})], NOW)
    assert step.replica_set_update is None
    update = step.deployment_status_update
    assert update is not None
    assert update["metadata"]["annotations"][REVISION] == "3"
    found = cond.get_condition(update["status"], cond.PROGRESSING)
    assert found is not None and (found["reason"], found["message"]) == (
        cond.FOUND_NEW_REPLICA_SET,
        'Found new replica set "new"',
    )
    in_line = {**update}
    assert sync_existing_new_replica_set(in_line, new, [], NOW).deployment_status_update is None
