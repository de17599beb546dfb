"""The ReplicaSet controller's wiring: handlers and expectations, and one sync against fakes."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.client import InternalError
from kubeloop.controllers.replicaset.controller import InvalidObjectError, ReplicaSetController
from kubeloop.controllers.replicaset.podcontrol import PodTemplateError, pod_from_template
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers import DeletedFinalStateUnknown
from tests.unit.controllers.controller_fakes import FakeApi, FakeQueue, FakeRecorder, cache, conflict

Obj = dict[str, Any]
NS = "default"
LABELS = {"app": "web"}


def replica_set(name: str = "rs", replicas: int = 3, uid: str = "rs-uid", selector: Any = None,
                min_ready: int = 0, **meta: Any) -> Obj:
    return {
        "metadata": {"name": name, "namespace": NS, "uid": uid, "generation": 1, "resourceVersion": "5", **meta},
        "spec": {"replicas": replicas, "minReadySeconds": min_ready,
                 "selector": selector if selector is not None else {"matchLabels": dict(LABELS)},
                 "template": {"metadata": {"labels": dict(LABELS), "annotations": {"a": "b"},
                                           "finalizers": ["example.com/f"]},
                              "spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }


def pod(name: str, owner: Obj | None = None, rv: str = "1", ready: bool = False, **meta: Any) -> Obj:
    metadata: Obj = {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": dict(LABELS),
                     "resourceVersion": rv, **meta}
    if owner is not None:
        metadata["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True,
                                        "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}]
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {"metadata": metadata, "spec": {}, "status": {"phase": "Running", "conditions": conditions}}


def controller(replica_sets: list[Obj], pods: list[Obj]) -> tuple[ReplicaSetController, FakeApi, FakeRecorder,
                                                                   FakeQueue]:
    api, recorder, queue = FakeApi(), FakeRecorder(), FakeQueue()
    rsc = ReplicaSetController(api, cache(*replica_sets), cache(*pods), recorder)
    return rsc, api, recorder, queue


def test_pod_from_template_copies_labels_annotations_finalizers_and_sets_the_controller() -> None:
    created = pod_from_template(replica_set())
    meta = created["metadata"]
    assert meta["generateName"] == "rs-" and meta["namespace"] == NS
    assert meta["labels"] == LABELS and meta["annotations"] == {"a": "b"} and meta["finalizers"] == ["example.com/f"]
    assert meta["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid",
                                        "controller": True, "blockOwnerDeletion": True}]
    unlabelled = replica_set()
    unlabelled["spec"]["template"]["metadata"] = {}
    with pytest.raises(PodTemplateError):
        pod_from_template(unlabelled)


def test_pod_events_drive_expectations_and_the_queue() -> None:
    rs = replica_set()
    rsc, _, _, queue = controller([rs], [])
    rsc.expectations.expect_creations("default/rs", 1)
    rsc.on_pod_add(pod("a", rs), False, queue)
    assert rsc.expectations.satisfied("default/rs")
    assert queue.names() == ["rs"]

    doomed = pod("b", rs)
    rsc.expectations.expect_deletions_of("default/rs", ["default/b"])
    rsc.expectations.raise_expectations("default/rs", 0, 1)  # a second, unrelated deletion pending
    deleting = pod("b", rs, rv="2", deletionTimestamp="2024-01-01T00:00:00Z")
    rsc.on_pod_update(doomed, deleting, queue)
    rsc.on_pod_delete(DeletedFinalStateUnknown("default/b", deleting), queue)
    # The graceful deletion counted once, not twice.
    assert not rsc.expectations.satisfied("default/rs")
    record = rsc.expectations.get("default/rs")
    assert record is not None and record.delete == 1


def test_orphan_pods_concern_every_matching_replica_set_and_resyncs_nobody() -> None:
    matching = replica_set("one", uid="u1")
    other = replica_set("two", uid="u2", selector={"matchLabels": {"app": "db"}})
    everything = replica_set("three", uid="u3", selector={})
    rsc, _, _, queue = controller([matching, other, everything], [])
    rsc.on_pod_add(pod("orphan"), False, queue)
    assert queue.names() == ["one"]
    queue.added.clear()
    rsc.on_pod_update(pod("orphan"), pod("orphan"), queue)
    assert queue.added == []


def test_a_pod_turning_ready_rechecks_after_min_ready_seconds() -> None:
    rs = replica_set(min_ready=10)
    rsc, _, _, queue = controller([rs], [])
    rsc.on_pod_update(pod("a", rs, rv="1"), pod("a", rs, rv="2", ready=True), queue)
    assert queue.delayed == [(Request(NS, "rs"), 11.0)]


def test_deleting_a_replica_set_drops_its_expectations() -> None:
    rs = replica_set()
    rsc, _, _, queue = controller([rs], [])
    rsc.expectations.expect_creations("default/rs", 3)
    rsc.on_replica_set_delete(DeletedFinalStateUnknown("default/rs", None), queue)
    assert rsc.expectations.get("default/rs") is None


async def test_sync_creates_in_slow_start_batches_and_waits_for_the_watch() -> None:
    rs = replica_set(replicas=3)
    rsc, api, recorder, _ = controller([rs], [])
    await rsc.reconcile(Request(NS, "rs"))
    assert api.verbs() == [("create", "pods")] * 3 + [("update_status", "replicasets")]
    assert recorder.reasons() == ["SuccessfulCreate"] * 3
    status = api.bodies[-1]["status"]
    assert status["replicas"] == 0 and status["observedGeneration"] == 1
    api.calls.clear()
    # Nothing observed yet: the next sync must not create again.
    await rsc.reconcile(Request(NS, "rs"))
    assert ("create", "pods") not in api.verbs()


async def test_failed_creations_lower_expectations_report_and_retry() -> None:
    rs = replica_set(replicas=10)
    rsc, api, recorder, _ = controller([rs], [])
    created = 0

    def fail(verb: str, plural: str, name: str) -> Exception | None:
        nonlocal created
        if verb != "create":
            return None
        created += 1
        return InternalError(code=500, reason="InternalError", message="quota") if created > 3 else None

    api.fail = fail
    with pytest.raises(InternalError):
        await rsc.reconcile(Request(NS, "rs"))
    # Batches 1 and 2 succeed, the batch of 4 fails: 7 calls, 3 successes; the rest is not expected.
    assert created == 7
    record = rsc.expectations.get("default/rs")
    assert record is not None and record.add == 3
    assert recorder.reasons().count("FailedCreate") == 4
    failure = [c for c in api.bodies[-1]["status"]["conditions"] if c["type"] == "ReplicaFailure"]
    assert failure and failure[0]["reason"] == "FailedCreate" and failure[0]["message"] == "quota"


async def test_sync_deletes_not_ready_pods_first_and_tracks_them() -> None:
    rs = replica_set(replicas=1)
    pods = [pod("ready", rs, ready=True), pod("not-ready-1", rs), pod("not-ready-2", rs)]
    rsc, api, recorder, _ = controller([rs], pods)
    await rsc.reconcile(Request(NS, "rs"))
    deleted = sorted(name for verb, _, name in api.calls if verb == "delete")
    assert deleted == ["not-ready-1", "not-ready-2"]
    assert rsc.expectations.expected_deletion_keys("default/rs") == {"default/not-ready-1", "default/not-ready-2"}
    assert recorder.reasons() == ["SuccessfulDelete", "SuccessfulDelete"]


async def test_status_conflict_is_retried_once_with_a_fresh_read() -> None:
    rs = replica_set(replicas=0)
    rsc, api, _, _ = controller([rs], [])
    api.objects[("replicasets", "rs")] = replica_set(replicas=0, resourceVersion="9")
    attempts = 0

    def fail(verb: str, plural: str, name: str) -> Exception | None:
        nonlocal attempts
        if verb == "update_status":
            attempts += 1
            return conflict() if attempts == 1 else None
        return None

    api.fail = fail
    await rsc.reconcile(Request(NS, "rs"))
    assert api.verbs() == [("update_status", "replicasets"), ("get", "replicasets"), ("update_status", "replicasets")]
    assert api.bodies[-1]["metadata"]["resourceVersion"] == "9"


async def test_a_malformed_selector_is_reported_and_retried() -> None:
    rs = replica_set(selector={"matchExpressions": [{"key": "a", "operator": "Bogus"}]})
    rsc, api, recorder, _ = controller([rs], [])
    with pytest.raises(InvalidObjectError):
        await rsc.reconcile(Request(NS, "rs"))
    assert recorder.events and recorder.events[0][:2] == ("Warning", "InvalidSelector")
    assert api.calls == []


async def test_repeated_conflicts_requeue_without_raising() -> None:
    rs = replica_set(replicas=0)
    rsc, api, _, _ = controller([rs], [])
    api.objects[("replicasets", "rs")] = rs
    api.fail = lambda verb, plural, name: conflict() if verb == "update_status" else None
    result = await rsc.reconcile(Request(NS, "rs"))
    assert result is not None and result.requeue


async def test_a_deleted_replica_set_is_forgotten() -> None:
    rsc, api, _, _ = controller([], [])
    rsc.expectations.expect_creations("default/gone", 2)
    assert await rsc.reconcile(Request(NS, "gone")) is None
    assert rsc.expectations.get("default/gone") is None and api.calls == []


async def test_scale_down_prefers_the_node_crowded_with_sibling_pods() -> None:
    # Two ReplicaSets of one Deployment; the scaled-down one has one ready pod on n1 and one on
    # n2. n2 also runs two pods of the sibling, so the pod there goes first (all else equal).
    deployment_ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "d-uid", "controller": True}
    old_labels, new_labels = {"app": "web", "hash": "old"}, {"app": "web", "hash": "new"}
    old = replica_set("old", replicas=1, uid="old-uid", selector={"matchLabels": old_labels},
                      ownerReferences=[deployment_ref])
    new = replica_set("new", replicas=2, uid="new-uid", selector={"matchLabels": new_labels},
                      ownerReferences=[deployment_ref])

    def placed(name: str, owner: Obj, labels: dict[str, str], node: str) -> Obj:
        placed_pod = pod(name, owner, ready=True)
        placed_pod["metadata"]["labels"] = dict(labels)
        placed_pod["spec"]["nodeName"] = node
        return placed_pod

    pods = [placed("old-a", old, old_labels, "n1"), placed("old-b", old, old_labels, "n2"),
            placed("new-a", new, new_labels, "n2"), placed("new-b", new, new_labels, "n2")]
    rsc, api, _, _ = controller([old, new], pods)
    await rsc.sync(Request(NS, "old"))
    assert [call for call in api.calls if call[0] == "delete"] == [("delete", "pods", "old-b")]
    # Without the sibling the two pods tie and the deletion falls to the order rules alone.
    rsc, api, _, _ = controller([old], pods[:2])
    await rsc.sync(Request(NS, "old"))
    assert len([call for call in api.calls if call[0] == "delete"]) == 1
