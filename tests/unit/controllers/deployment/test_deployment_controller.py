"""The Deployment controller's wiring against fakes (upstream
``pkg/controller/deployment/deployment_controller_test.go``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from deployment_builders import NEWER, OLDER, deployment, pod_template, replica_set

from kubeloop.client import AlreadyExists, Resource
from kubeloop.controllers.deployment.annotations import REVISION, ROLLBACK_TO
from kubeloop.controllers.deployment.controller import MAX_RETRIES, DeploymentController
from kubeloop.controllers.deployment.strategy import UnsupportedStrategyError
from kubeloop.runtime.controllerref import OwnerGoneError
from kubeloop.runtime.handlers import Request
from tests.unit.controllers.controller_fakes import FakeApi, FakeQueue, FakeRecorder, cache, conflict

Obj = dict[str, Any]
LABELS = {"foo": "bar"}


def owned(rs: Obj, d: Obj | None, labels: dict[str, str] = LABELS) -> Obj:
    """The ReplicaSet with labels and, if ``d`` is given, a controller reference to it."""
    rs = copy.deepcopy(rs)
    rs["metadata"]["labels"] = dict(labels)
    rs["metadata"]["resourceVersion"] = "1"
    if d is not None:
        rs["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "controller": True,
                                              "name": d["metadata"]["name"], "uid": d["metadata"]["uid"]}]
    return rs


def pod_of(name: str, rs: Obj) -> Obj:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": dict(LABELS),
                         "ownerReferences": [{"kind": "ReplicaSet", "controller": True, "name": rs["metadata"]["name"],
                                              "uid": rs["metadata"]["uid"]}]},
            "status": {"phase": "Running"}}


def controller(deployments: list[Obj], replica_sets: list[Obj], pods: list[Obj] | None = None,
               api: FakeApi | None = None) -> tuple[DeploymentController, FakeApi, FakeRecorder, FakeQueue]:
    api, recorder, queue = api or FakeApi(), FakeRecorder(), FakeQueue()
    dc = DeploymentController(api, cache(*deployments), cache(*replica_sets), cache(*(pods or [])), recorder)
    dc.bind(queue)
    return dc, api, recorder, queue


def three_deployments() -> list[Obj]:
    first = deployment(name="d1", uid="u1")
    second = deployment(name="d2", uid="u2")
    third = deployment(name="d3", uid="u3")
    third["spec"]["selector"] = {"matchLabels": {"foo": "notbar"}}
    return [first, second, third]


def test_replica_set_events_enqueue_owners_or_matching_deployments() -> None:
    d1, d2, d3 = three_deployments()
    dc, _, _, queue = controller([d1, d2, d3], [])
    dc.on_replica_set_add(owned(replica_set("rs", 1), d1), False, queue)
    assert queue.names() == ["d1"]
    queue.added.clear()
    dc.on_replica_set_add(owned(replica_set("orphan", 1), None), False, queue)
    assert queue.names() == ["d1", "d2"]
    queue.added.clear()
    old, new = owned(replica_set("rs", 1), d1), owned(replica_set("rs", 1), d2)
    new["metadata"]["resourceVersion"] = "2"
    dc.on_replica_set_update(old, new, queue)
    assert queue.names() == ["d1", "d2"]
    queue.added.clear()
    dc.on_replica_set_delete(owned(replica_set("orphan", 1), None), queue)
    assert queue.added == []


def test_pod_deletion_enqueues_a_recreate_deployment_only_when_no_pod_is_left() -> None:
    d = deployment(strategy="Recreate")
    rs = owned(replica_set("rs", 1), d)
    survivor, gone = pod_of("a", rs), pod_of("b", rs)
    dc, _, _, queue = controller([d], [rs], [survivor])
    dc.on_pod_delete(gone, queue)
    assert queue.added == []
    dc.pods.indexer.delete("default/a")
    dc.on_pod_delete(survivor, queue)
    assert queue.names() == ["foo"]
    rolling = deployment()
    dc, _, _, queue = controller([rolling], [owned(replica_set("rs", 1), rolling)], [])
    dc.on_pod_delete(pod_of("c", rs), queue)
    assert queue.added == []


async def test_sync_creates_the_replica_set_then_writes_status_twice() -> None:
    d = deployment(1)
    dc, api, recorder, _ = controller([d], [])
    await dc.reconcile(Request("default", "foo"))
    assert api.verbs() == [("create", "replicasets"), ("update_status", "deployments"),
                           ("update_status", "deployments")]
    created = api.bodies[0]
    assert created["metadata"]["name"].startswith("foo-") and created["spec"]["replicas"] == 1
    assert created["metadata"]["annotations"][REVISION] == "1"
    assert recorder.reasons() == ["ScalingReplicaSet"]


async def test_only_a_recreate_sync_reads_the_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    for strategy in ("RollingUpdate", "Recreate"):
        dc, api, _, _ = controller([deployment(1, strategy=strategy)], [])

        def by_namespace(namespace: str, strategy: str = strategy) -> list[Obj]:
            reads.append(strategy)
            return []

        monkeypatch.setattr(dc.pods.indexer, "by_namespace", by_namespace)
        await dc.reconcile(Request("default", "foo"))
        assert api.verbs()[0] == ("create", "replicasets")
    assert reads == ["Recreate"]


async def test_a_deployment_being_deleted_only_gets_its_status_written() -> None:
    d = deployment(1)
    d["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    dc, api, _, _ = controller([d], [])
    await dc.reconcile(Request("default", "foo"))
    assert api.verbs() == [("update_status", "deployments")]


async def test_adoption_is_refused_when_the_live_deployment_is_being_deleted() -> None:
    d = deployment(1)
    dc, api, _, _ = controller([d], [owned(replica_set("orphan", 1), None)])
    live = copy.deepcopy(d)
    live["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    api.objects[("deployments", "foo")] = live
    with pytest.raises(OwnerGoneError):
        await dc.reconcile(Request("default", "foo"))
    assert api.verbs() == [("get", "deployments")]


async def test_an_empty_selector_is_reported_and_not_synced() -> None:
    d = deployment(1)
    d["spec"]["selector"] = {}
    dc, api, recorder, _ = controller([d], [])
    await dc.reconcile(Request("default", "foo"))
    assert api.calls == []
    assert recorder.reasons() == ["SelectingAll"]
    d["metadata"]["generation"] = 2
    await dc.reconcile(Request("default", "foo"))
    assert api.verbs() == [("update_status", "deployments")]
    assert api.bodies[0]["status"]["observedGeneration"] == 2


async def test_rollback_to_the_previous_revision_updates_only_the_deployment() -> None:
    d = deployment(1, annotations={REVISION: "2", ROLLBACK_TO: "0"}, template=pod_template(image="v2"))
    rs1 = owned(replica_set("rs1", 0, created=OLDER, annotations={REVISION: "1"},
                            template=pod_template(image="v1")), d)
    rs2 = owned(replica_set("rs2", 1, created=NEWER, annotations={REVISION: "2"},
                            template=pod_template(image="v2")), d)
    dc, api, recorder, _ = controller([d], [rs1, rs2])
    await dc.reconcile(Request("default", "foo"))
    assert api.verbs() == [("update", "deployments")]
    sent = api.bodies[0]
    assert sent["spec"]["template"]["spec"]["containers"][0]["image"] == "v1"
    assert ROLLBACK_TO not in sent["metadata"]["annotations"]
    assert recorder.reasons() == ["DeploymentRollback"]


async def test_a_name_taken_by_someone_else_bumps_the_collision_count() -> None:
    class NameTaken(FakeApi):
        async def get(self, resource: Resource | str, name: str, *, namespace: str | None = None) -> Obj:
            self.calls.append(("get", "replicasets", name))
            # The name is taken by a ReplicaSet nobody controls, with another template.
            return owned(replica_set(name, 1, template=pod_template(image="other")), None)

    d = deployment(1)
    dc, api, _, _ = controller([d], [], api=NameTaken())
    api.fail = lambda verb, plural, name: (
        AlreadyExists(code=409, reason="AlreadyExists", message="exists") if verb == "create" else None)
    with pytest.raises(AlreadyExists):
        await dc.reconcile(Request("default", "foo"))
    assert api.verbs() == [("create", "replicasets"), ("get", "replicasets"), ("update_status", "deployments")]
    assert api.bodies[-1]["status"]["collisionCount"] == 1


async def test_recreate_scales_old_replica_sets_down_before_creating_anything() -> None:
    d = deployment(2, strategy="Recreate", template=pod_template(image="v2"))
    old = owned(replica_set("old", 2, available=2, annotations={REVISION: "1"}, template=pod_template(image="v1")), d)
    dc, api, recorder, _ = controller([d], [old], [pod_of("p", old)])
    await dc.reconcile(Request("default", "foo"))
    assert api.verbs() == [("update", "replicasets"), ("update_status", "deployments")]
    assert api.bodies[0]["spec"]["replicas"] == 0
    assert recorder.events == [("Normal", "ScalingReplicaSet", "Scaled down replica set old to 0 from 2")]


async def test_malformed_strategy_warns_and_stops_after_max_retries() -> None:
    d = deployment(1)
    d["spec"]["strategy"] = {"type": "Bogus"}
    dc, _, recorder, queue = controller([d], [])
    with pytest.raises(UnsupportedStrategyError):
        await dc.reconcile(Request("default", "foo"))
    assert recorder.events[-1][:2] == ("Warning", "FailedSync")
    queue.requeues = MAX_RETRIES
    assert await dc.reconcile(Request("default", "foo")) is None


async def test_malformed_max_surge_never_raises_past_the_controller() -> None:
    d = deployment(4, max_surge="lots", max_unavailable=1)
    dc, api, recorder, _ = controller([d], [])
    with pytest.raises(ValueError):
        await dc.reconcile(Request("default", "foo"))
    assert recorder.events[-1][:2] == ("Warning", "FailedSync")
    assert ("create", "replicasets") not in api.verbs()


async def test_conflicts_requeue_with_back_off() -> None:
    d = deployment(1)
    dc, api, _, _ = controller([d], [])
    api.fail = lambda verb, plural, name: conflict() if verb == "update_status" else None
    result = await dc.reconcile(Request("default", "foo"))
    assert result is not None and result.requeue


async def test_a_missing_deployment_is_a_no_op() -> None:
    dc, api, _, _ = controller([], [])
    assert await dc.reconcile(Request("default", "gone")) is None
    assert api.calls == []
