"""The invariant monitor itself: its pure rules (tables from upstream's ``deployment_util_test.go``
``TestMaxUnavailable`` / ``TestResolveFenceposts`` and the rollout invariants) and its verdicts on
replayed event sequences, so that a monitor that sees nothing cannot pass for one that checks. No
cluster here."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest

from kubeloop.client import ApiClient
from kubeloop.testing import deployment_rules as rules
from kubeloop.testing.monitor import DeploymentMonitor

Obj = dict[str, Any]
UID = "d-uid"


@pytest.mark.parametrize(("replicas", "surge", "unavailable", "expected"), [
    (10, None, None, (3, 2)),          # defaults 25%/25%: surge rounds up, unavailable down
    (10, 1, 0, (1, 0)),
    (10, 0, 1, (0, 1)),
    (3, 0, "10%", (0, 1)),             # both 0 after rounding: the fencepost makes it 1
    (1, "25%", "25%", (1, 0)),
    (4, 2, 9, (2, 4)),                 # unavailable clamped to replicas
    (0, 1, 1, (1, 0)),                 # no replicas: nothing may be unavailable
])
def test_bounds_resolve_surge_and_unavailable(replicas: int, surge: Any, unavailable: Any,
                                              expected: tuple[int, int]) -> None:
    rolling: Obj = {}
    if surge is not None:
        rolling["maxSurge"] = surge
    if unavailable is not None:
        rolling["maxUnavailable"] = unavailable
    d = {"spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}}
    bounds = rules.bounds_of(d)
    assert (bounds.max_surge, bounds.max_unavailable) == expected


def test_recreate_has_neither_surge_nor_unavailable() -> None:
    bounds = rules.bounds_of({"spec": {"replicas": 3, "strategy": {"type": "Recreate"}}})
    assert (bounds.max_total, bounds.min_available, bounds.recreate) == (3, 3, True)


def test_templates_compare_without_hash_and_empties() -> None:
    a = {"metadata": {"labels": {"app": "x", "pod-template-hash": "abc"}, "creationTimestamp": None},
         "spec": {"containers": [{"name": "c", "image": "i", "env": []}]}}
    b = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert rules.same_template(a, b) and rules.same_template(b, a)
    c: Obj = copy.deepcopy(b)
    c["spec"]["containers"][0]["image"] = "j"
    assert not rules.same_template(a, c)


@pytest.mark.parametrize(("status", "generation", "problems"), [
    ({"replicas": 3, "readyReplicas": 2, "availableReplicas": 1, "updatedReplicas": 3}, 1, 0),
    ({"replicas": 3, "readyReplicas": 1, "availableReplicas": 2}, 1, 1),
    ({"replicas": 1, "updatedReplicas": 2}, 1, 1),
    ({"observedGeneration": 3}, 2, 1),
])
def test_status_problems(status: Obj, generation: int, problems: int) -> None:
    assert len(rules.status_problems("Deployment", status, generation)) == problems


# -- replayed event sequences -------------------------------------------------------------

def deployment(size: int, image: str, generation: int, observed: int, **status: Any) -> Obj:
    return {"metadata": {"name": "web", "uid": UID, "generation": generation,
                         "annotations": {rules.REVISION: str(status.pop("revision", 1))}},
            "spec": {"replicas": size, "strategy": {"type": "RollingUpdate",
                                                        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "template": template(image)},
            "status": {"observedGeneration": observed, **status}}


def template(image: str) -> Obj:
    return {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}}


def replica_set(hash_: str, image: str, replicas: int, revision: int, *, desired: int = 3) -> Obj:
    labels = {"app": "web", "pod-template-hash": hash_}
    tpl = template(image)
    tpl["metadata"]["labels"] = dict(labels)
    return {"metadata": {"name": f"web-{hash_}", "uid": f"rs-{hash_}", "generation": 1, "labels": labels,
                         "creationTimestamp": f"2024-01-01T00:00:0{revision}Z",
                         "annotations": {rules.REVISION: str(revision), rules.DESIRED_REPLICAS: str(desired)},
                         "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": UID, "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": tpl},
            "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                       "observedGeneration": 1}}


def with_rv(obj: Obj, rv: int) -> Obj:
    result = copy.deepcopy(obj)
    result["metadata"]["resourceVersion"] = str(rv)
    return result


def replay(events: list[tuple[str, str, Obj]]) -> list[str]:
    monitor = DeploymentMonitor(cast(ApiClient, None), "web")
    for rv, (kind, type_, obj) in enumerate(events, start=1):
        monitor.observe(kind, type_, with_rv(obj, rv))
    monitor.flush()
    return [v.invariant for v in monitor.violations]


def ready_pod(rs: Obj, index: int) -> Obj:
    return {"metadata": {"name": f"{rs['metadata']['name']}-{index}", "labels": dict(rs["metadata"]["labels"]),
                         "ownerReferences": [{"kind": "ReplicaSet", "name": rs["metadata"]["name"],
                                              "uid": rs["metadata"]["uid"], "controller": True,
                                              "blockOwnerDeletion": True}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def steady_start() -> list[tuple[str, str, Obj]]:
    old = replica_set("old", "v1", 3, 1)
    return [("ReplicaSet", "ADDED", old),
            *(("Pod", "ADDED", ready_pod(old, i)) for i in range(3)),
            ("Deployment", "ADDED", deployment(3, "v1", 1, 1, replicas=3, updatedReplicas=3, readyReplicas=3,
                                               availableReplicas=3))]


def rolled_to_v2() -> Obj:
    return deployment(3, "v2", 2, 2, replicas=3, readyReplicas=3, availableReplicas=3)


def test_a_clean_surge_by_one_rollout_has_no_violation() -> None:
    events = steady_start()
    events.append(("Deployment", "MODIFIED", deployment(3, "v2", 2, 2, replicas=3, updatedReplicas=0,
                                                        readyReplicas=3, availableReplicas=3)))
    events.append(("ReplicaSet", "ADDED", replica_set("new", "v2", 1, 2)))
    events.append(("ReplicaSet", "MODIFIED", replica_set("old", "v1", 2, 1)))
    events.append(("ReplicaSet", "MODIFIED", replica_set("new", "v2", 2, 2)))
    assert replay(events) == []


def test_surge_beyond_the_bound_is_reported() -> None:
    events = steady_start()
    events.append(("Deployment", "MODIFIED", rolled_to_v2()))
    events.append(("ReplicaSet", "ADDED", replica_set("new", "v2", 1, 2)))
    events.append(("ReplicaSet", "MODIFIED", replica_set("new", "v2", 2, 2)))
    assert "I1" in replay(events)


def test_an_old_replica_set_growing_without_a_scaling_event_is_reported() -> None:
    events = steady_start()
    events.append(("Deployment", "MODIFIED", rolled_to_v2()))
    events.append(("ReplicaSet", "ADDED", replica_set("new", "v2", 0, 2)))
    events.append(("ReplicaSet", "MODIFIED", replica_set("old", "v1", 2, 1)))
    events.append(("ReplicaSet", "MODIFIED", replica_set("old", "v1", 3, 1)))
    assert replay(events) == ["I4"]
    events[-1] = ("ReplicaSet", "MODIFIED", replica_set("old", "v1", 3, 1, desired=4))
    assert replay(events) == []


def test_availability_below_the_floor_and_regressing_revisions_are_reported() -> None:
    events = steady_start()
    events.append(("Deployment", "MODIFIED", deployment(3, "v1", 1, 1, revision=0, replicas=3,
                                                        availableReplicas=2, readyReplicas=2)))
    assert set(replay(events)) == {"I2", "I9"}


def test_events_are_applied_in_resource_version_order() -> None:
    """The new ReplicaSet's creation arrives before the template change on another stream; the
    monitor applies the template change first and sees a legal rollout."""
    monitor = DeploymentMonitor(cast(ApiClient, None), "web")
    for rv, (kind, type_, obj) in enumerate(steady_start(), start=1):
        monitor.observe(kind, type_, with_rv(obj, rv))
    monitor.observe("ReplicaSet", "ADDED", with_rv(replica_set("new", "v2", 1, 2), 7))
    monitor.observe("Deployment", "MODIFIED", with_rv(deployment(3, "v2", 2, 2, availableReplicas=3,
                                                                 replicas=3, readyReplicas=3), 6))
    monitor.flush()
    assert monitor.violations == []
    assert [line.split(" rv=")[0] for line in monitor.trail[-2:]] == ["MODIFIED Deployment web",
                                                                      "ADDED ReplicaSet web-new"]
    with pytest.raises(AssertionError):
        monitor.observe("ReplicaSet", "MODIFIED", with_rv(replica_set("new", "v2", 4, 2), 8))
        monitor.flush()
        monitor.check()


def test_a_new_replica_set_created_too_large_is_reported() -> None:
    events = steady_start()
    events.append(("Deployment", "MODIFIED", rolled_to_v2()))
    events.append(("ReplicaSet", "ADDED", replica_set("new", "v2", 2, 2)))
    assert replay(events) == ["I1"]


def test_recreate_pods_of_two_templates_together_are_reported() -> None:
    events = steady_start()
    recreate = deployment(3, "v2", 2, 2, replicas=3, readyReplicas=3, availableReplicas=3)
    recreate["spec"]["strategy"] = {"type": "Recreate"}
    events[-1][2]["spec"]["strategy"] = {"type": "Recreate"}
    new = replica_set("new", "v2", 3, 2)
    events += [("Deployment", "MODIFIED", recreate), ("ReplicaSet", "MODIFIED", replica_set("old", "v1", 0, 1)),
               ("ReplicaSet", "ADDED", new), ("Pod", "ADDED", ready_pod(new, 0))]
    assert "I8" in replay(events)


def test_a_new_replica_set_past_replicas_is_reported_unless_a_scaling_event_sized_it() -> None:
    """Proportional scaling (upstream's ``scale`` in ``pkg/controller/deployment/sync.go``) can
    size the new ReplicaSet above ``replicas`` while an old one still runs: replicas 4 -> 5 with
    maxSurge 25%, the new ReplicaSet at 4 and an old one at 1 (both sized for 4 + 1) share
    5 + 2 - 5 = 2 more, the new one getting round(4 * 7 / 5) - 4 = 2 of them: 6 > 5. Such a write
    changes the ReplicaSet's desired-replicas annotation; growth past ``replicas`` without one
    is a violation (I3)."""
    events = steady_start()
    events.append(("Deployment", "MODIFIED", rolled_to_v2()))
    events.append(("ReplicaSet", "ADDED", replica_set("new", "v2", 1, 2)))
    events.append(("ReplicaSet", "MODIFIED", replica_set("old", "v1", 0, 1)))
    events.append(("ReplicaSet", "MODIFIED", replica_set("new", "v2", 4, 2)))
    assert replay(events) == ["I3"]
    events[-1] = ("ReplicaSet", "MODIFIED", replica_set("new", "v2", 4, 2, desired=4))
    assert replay(events) == []
