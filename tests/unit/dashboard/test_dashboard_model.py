"""ClusterModel: watch events in, per-workload views out (a rolling update frozen mid-way)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kubeloop.dashboard.model import ADDED, DELETED, MODIFIED, ClusterModel, Collection
from kubeloop.dashboard.timeline import Timeline
from tests.unit.dashboard.builders import (
    NOW,
    cloneset,
    controller_revision,
    deployment,
    event,
    pod,
    replica_set,
)


def mid_rollout() -> tuple[ClusterModel, dict[str, Any]]:
    """web: 4 replicas, rev 1 (app:1) scaled down to 3, rev 2 (app:2) up to 2 with one pod not ready."""
    model = ClusterModel()
    web = deployment(status={"replicas": 5, "updatedReplicas": 2, "readyReplicas": 4, "availableReplicas": 4})
    old = replica_set(web, "aaa", 1, image="app:1", replicas=3, ready=3, available=3)
    new = replica_set(web, "bbb", 2, image="app:2", replicas=2, ready=1, available=1, created=60)
    model.apply(Collection.DEPLOYMENTS, ADDED, web)
    for rs in (old, new):
        model.apply(Collection.REPLICA_SETS, ADDED, rs)
    for name in ("web-aaa-1", "web-aaa-2", "web-aaa-3"):
        model.apply(Collection.PODS, ADDED, pod(name, old))
    model.apply(Collection.PODS, ADDED, pod("web-aaa-4", old, deleting=True))
    model.apply(Collection.PODS, ADDED, pod("web-bbb-1", new))
    model.apply(Collection.PODS, ADDED, pod("web-bbb-2", new, ready=False))
    model.apply(Collection.EVENTS, ADDED, event("e1", web, "Deployment", "ScalingReplicaSet", at=1))
    model.apply(Collection.EVENTS, ADDED, event("e2", new, "ReplicaSet", "SuccessfulCreate", at=2))
    model.apply(Collection.EVENTS, ADDED, event("e3", {"metadata": {"namespace": "default", "name": "other",
                                                                      "uid": "uid-other"}}, "Pod", "Pulled", at=3))
    return model, web


def test_deployment_view_mid_rollout() -> None:
    model, _ = mid_rollout()
    [view] = model.views(NOW)
    assert view["key"] == "Deployment/default/web"
    assert view["strategy"] == "RollingUpdate"
    assert [(r["id"], r["revision"], r["isUpdate"], r["image"]) for r in view["revisions"]] == [
        ("web-bbb", 2, True, "app:2"), ("web-aaa", 1, False, "app:1")]
    new, old = view["revisions"]
    assert (new["desired"], new["current"], new["ready"], new["available"]) == (2, 2, 1, 1)
    assert new["states"]["available"] == 1 and new["states"]["running"] == 1
    # The terminating pod is drawn but does not count as current.
    assert (old["current"], old["states"]["terminating"]) == (3, 1)
    # Newest revision first, then the healthiest state first.
    assert [(p["name"], p["state"]) for p in view["pods"]] == [
        ("web-bbb-1", "available"), ("web-bbb-2", "running"),
        ("web-aaa-1", "available"), ("web-aaa-2", "available"), ("web-aaa-3", "available"),
        ("web-aaa-4", "terminating")]
    assert view["progress"]["maxPods"] == 5 and view["progress"]["minAvailable"] == 3
    assert view["rollout"]["phase"] == "progressing"
    # Only events about the Deployment, its ReplicaSets or its pods, newest first.
    assert [e["reason"] for e in view["events"]] == ["SuccessfulCreate", "ScalingReplicaSet"]
    assert view["updateRevision"] == "2"


def test_timeline_records_changes_only() -> None:
    model, _ = mid_rollout()
    model.views(NOW)
    model.views(NOW + timedelta(seconds=1))
    [view] = model.views(NOW + timedelta(seconds=2))
    assert view["timeline"] == [{"t": NOW.timestamp(), "counts": {"web-bbb": 2, "web-aaa": 3}}]
    new_rs = model.objects(Collection.REPLICA_SETS)[1]
    model.apply(Collection.PODS, ADDED, pod("web-bbb-3", new_rs, phase="Pending", ready=False))
    model.apply(Collection.PODS, DELETED, pod("web-aaa-4", new_rs))
    [view] = model.views(NOW + timedelta(seconds=3))
    assert [sample["counts"] for sample in view["timeline"]] == [
        {"web-bbb": 2, "web-aaa": 3}, {"web-bbb": 3, "web-aaa": 3}]


def test_modified_replaces_and_deleted_forgets_the_workload() -> None:
    model, web = mid_rollout()
    done = deployment(status={"replicas": 4, "updatedReplicas": 4, "availableReplicas": 4})
    model.apply(Collection.DEPLOYMENTS, MODIFIED, done)
    [view] = model.views(NOW)
    assert view["rollout"]["phase"] == "complete"
    model.apply(Collection.DEPLOYMENTS, DELETED, web)
    assert model.views(NOW) == []
    # Its timeline went with it.
    assert model.timeline.samples("Deployment/default/web") == []


def test_pods_of_other_owners_and_namespaces_are_not_drawn() -> None:
    model = ClusterModel(namespace="default")
    web = deployment()
    other = deployment("other", namespace="elsewhere")
    model.apply(Collection.DEPLOYMENTS, ADDED, web)
    model.apply(Collection.DEPLOYMENTS, ADDED, other)
    rs = replica_set(web, "aaa", 2, image="app:2", replicas=1)
    model.apply(Collection.REPLICA_SETS, ADDED, rs)
    model.apply(Collection.PODS, ADDED, pod("orphan", {"metadata": {"name": "x", "namespace": "default",
                                                                      "uid": "uid-x"}}))
    model.apply(Collection.PODS, ADDED, pod("web-aaa-1", rs))
    views = model.views(NOW)
    assert [v["name"] for v in views] == ["web"]
    assert [p["name"] for p in views[0]["pods"]] == ["web-aaa-1"]


def test_cloneset_view_groups_pods_by_revision_label() -> None:
    model = ClusterModel()
    cs = cloneset(partition=1, status={"replicas": 4, "updatedReplicas": 2, "updatedAvailableReplicas": 1,
                                       "readyReplicas": 3, "availableReplicas": 3})
    model.apply(Collection.CLONESETS, ADDED, cs)
    model.apply(Collection.CONTROLLER_REVISIONS, ADDED, controller_revision(cs, "cs-aaa", 1, "app:1"))
    model.apply(Collection.CONTROLLER_REVISIONS, ADDED, controller_revision(cs, "cs-bbb", 2, "app:2"))
    pods = [
        pod("cs-1", cs, "CloneSet", labels={"controller-revision-hash": "cs-aaa"}),
        pod("cs-2", cs, "CloneSet", labels={"controller-revision-hash": "cs-aaa"}, ready=False),
        # The short form of the label (hash only) names the same revision.
        pod("cs-3", cs, "CloneSet", labels={"controller-revision-hash": "bbb"}),
        pod("cs-4", cs, "CloneSet", labels={"controller-revision-hash": "cs-bbb"}, phase="Pending", ready=False),
        pod("cs-5", cs, "CloneSet", labels={"controller-revision-hash": "cs-zzz"}),
    ]
    for p in pods:
        model.apply(Collection.PODS, ADDED, p)
    [view] = model.views(NOW)
    assert view["kind"] == "CloneSet" and view["strategy"] == "ReCreate"
    assert [(r["id"], r["isUpdate"], r["desired"], r["current"], r["ready"], r["available"])
            for r in view["revisions"]] == [("cs-bbb", True, 3, 2, 1, 1), ("cs-aaa", False, None, 2, 1, 1)]
    assert {p["name"]: p["revision"] for p in view["pods"]} == {
        "cs-1": "cs-aaa", "cs-2": "cs-aaa", "cs-3": "cs-bbb", "cs-4": "cs-bbb", "cs-5": "cs-zzz"}
    assert view["revisions"][0]["image"] == "app:2"
    assert view["progress"]["expectedUpdated"] == 3


def test_timeline_thins_old_samples() -> None:
    timeline = Timeline(max_samples=4)
    for i in range(6):
        timeline.record("k", float(i), {"r": i + 1})
    samples = timeline.samples("k")
    assert len(samples) <= 4
    assert samples[0]["t"] == 0.0 and samples[-1] == {"t": 5.0, "counts": {"r": 6}}
    # Zero counts are not recorded as revisions.
    assert timeline.record("k", 6.0, {"r": 6, "gone": 0}) is False


def without_timeline(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in view.items() if k != "timeline"} for view in views]


def test_incremental_views_equal_views_built_from_scratch() -> None:
    """After every event, the views rebuilt from the touched uids equal a fresh model's views."""
    web = deployment(status={"replicas": 2, "updatedReplicas": 1})
    other = deployment("other")
    old = replica_set(web, "aaa", 1, image="app:1", replicas=1)
    new = replica_set(web, "bbb", 2, image="app:2", replicas=1, created=60)
    adopted_pod = pod("p-2", new)
    cs = cloneset()
    steps: list[tuple[Collection, str, Any]] = [
        (Collection.DEPLOYMENTS, ADDED, web),
        (Collection.DEPLOYMENTS, ADDED, other),
        (Collection.PODS, ADDED, pod("p-1", old)),  # before its ReplicaSet arrives
        (Collection.REPLICA_SETS, ADDED, old),
        (Collection.REPLICA_SETS, ADDED, new),
        (Collection.PODS, ADDED, pod("p-2", old, ready=False)),
        (Collection.PODS, MODIFIED, adopted_pod),  # moves from one ReplicaSet to the other
        (Collection.EVENTS, ADDED, event("e-1", adopted_pod, "Pod", "Started", at=5)),
        # An event without the object's uid is matched by kind and name.
        (Collection.EVENTS, ADDED, {**event("e-2", old, "ReplicaSet", "Scaled", at=6),
                                    "involvedObject": {"kind": "ReplicaSet", "name": "web-aaa"}}),
        (Collection.EVENTS, DELETED, event("e-1", adopted_pod, "Pod", "Started", at=5)),
        (Collection.PODS, MODIFIED, pod("p-1", old, deleting=True)),
        (Collection.PODS, DELETED, pod("p-1", old)),
        (Collection.REPLICA_SETS, DELETED, old),
        (Collection.CLONESETS, ADDED, cs),
        (Collection.PODS, ADDED, pod("cs-1", cs, "CloneSet", labels={"controller-revision-hash": "cs-bbb"})),
        (Collection.CONTROLLER_REVISIONS, ADDED, controller_revision(cs, "cs-bbb", 1, "app:2")),
        (Collection.DEPLOYMENTS, MODIFIED, deployment(status={"replicas": 1, "updatedReplicas": 1})),
        (Collection.DEPLOYMENTS, DELETED, other),
    ]
    incremental = ClusterModel()
    applied: list[tuple[Collection, str, Any]] = []
    web_events = []
    for step in steps:
        incremental.apply(*step)
        applied.append(step)
        fresh = ClusterModel()
        for earlier in applied:
            fresh.apply(*earlier)
        views = incremental.views(NOW)
        assert without_timeline(views) == without_timeline(fresh.views(NOW)), step
        web_events.append([e["reason"] for v in views if v["name"] == "web" for e in v["events"]])
    assert web_events[7:13] == [["Started"], ["Scaled", "Started"], ["Scaled"], ["Scaled"], ["Scaled"], []]
    final = {view["name"]: view for view in incremental.views(NOW)}
    assert set(final) == {"web", "cs"}
    assert [p["name"] for p in final["web"]["pods"]] == ["p-2"]
    assert [p["revision"] for p in final["cs"]["pods"]] == ["cs-bbb"]


def test_waiting_on_time_and_full_rebuild() -> None:
    model = ClusterModel()
    web = deployment(min_ready_seconds=60)
    rs = replica_set(web, "aaa", 2, image="app:2", replicas=1)
    for collection, obj in ((Collection.DEPLOYMENTS, web), (Collection.REPLICA_SETS, rs),
                            (Collection.PODS, pod("p", rs, ready_since=NOW - timedelta(seconds=30)))):
        model.apply(collection, ADDED, obj)
    [view] = model.views(NOW)
    assert view["pods"][0]["state"] == "ready" and model.waiting_on_time()
    # Nothing changed: the cached view stays, even though time passed ...
    [view] = model.views(NOW + timedelta(seconds=60))
    assert view["pods"][0]["state"] == "ready"
    # ... until a full rebuild re-reads the clock.
    [view] = model.views(NOW + timedelta(seconds=60), full=True)
    assert view["pods"][0]["state"] == "available" and not model.waiting_on_time()
