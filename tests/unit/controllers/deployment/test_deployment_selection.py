"""Deployments interested in a ReplicaSet, and the empty-selector guard (upstream
``deployment_controller.go`` ``getDeploymentsForReplicaSet``, ``syncDeployment``; ``util``
``GetDeploymentsForReplicaSet``)."""

from __future__ import annotations

from deployment_builders import Obj, deployment, replica_set

from kubeloop.controllers.deployment.selection import (
    deployments_for_replica_set,
    deployments_for_replica_set_added,
    deployments_for_replica_set_deleted,
    deployments_for_replica_set_updated,
    pods_by_replica_set_uid,
    recreate_needs_sync_after_pod_deletion,
    selects_all_pods,
)


def _deployment(name: str, selector: dict[str, object] | None, namespace: str = "default") -> Obj:
    d = deployment(1, name=name)
    d["metadata"]["namespace"] = namespace
    if selector is None:
        del d["spec"]["selector"]
    else:
        d["spec"]["selector"] = selector
    return d


def _labelled(name: str, labels: dict[str, str]) -> Obj:
    rs = replica_set(name, 1)
    rs["metadata"]["labels"] = labels
    return rs


def _names(items: list[Obj]) -> list[str]:
    return [item["metadata"]["name"] for item in items]


def test_deployments_for_replica_set() -> None:
    deployments = [_deployment(f"d{i}", {"matchLabels": {"app": f"test-{i}"}}) for i in range(3)]
    for i in range(3):
        rs = _labelled(f"rs{i}", {"app": f"test-{i}", "label": f"label-{i}"})
        assert _names(deployments_for_replica_set(rs, deployments)) == [f"d{i}"]
    for i in (3, 4):
        rs = _labelled(f"rs{i}", {"app": f"test-{i}", "label": f"label-{i}"})
        assert deployments_for_replica_set(rs, deployments) == []


def test_selection_ignores_empty_invalid_and_foreign_selectors() -> None:
    rs = _labelled("rs", {"app": "web"})
    candidates = [
        _deployment("everything", {}),
        _deployment("missing", None),
        _deployment("broken", {"matchExpressions": [{"key": "app", "operator": "Near"}]}),
        _deployment("elsewhere", {"matchLabels": {"app": "web"}}, namespace="other"),
        _deployment("expression", {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}),
    ]
    assert _names(deployments_for_replica_set(rs, candidates)) == ["expression"]
    assert deployments_for_replica_set(_labelled("bare", {}), candidates) == []


def test_selects_all_pods() -> None:
    assert selects_all_pods(_deployment("d", {}))
    assert not selects_all_pods(_deployment("d", {"matchLabels": {"a": "b"}}))
    assert not selects_all_pods(_deployment("d", None))


def _owned(name: str, owner: Obj | None, labels: dict[str, str], resource_version: str = "1") -> Obj:
    rs = _labelled(name, labels)
    rs["metadata"]["resourceVersion"] = resource_version
    if owner is not None:
        rs["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    return rs


def _three_deployments() -> list[Obj]:
    d1 = _deployment("d1", {"matchLabels": {"foo": "bar"}})
    d2 = _deployment("d2", {"matchLabels": {"foo": "bar"}})
    d3 = _deployment("d3", {"matchLabels": {"foo": "notbar"}})
    for d in (d1, d2, d3):
        d["metadata"]["uid"] = f"uid-{d['metadata']['name']}"
    return [d1, d2, d3]


def test_replica_set_added() -> None:
    d1, _d2, d3 = deployments = _three_deployments()
    assert _names(deployments_for_replica_set_added(_owned("rs1", d1, {"foo": "bar"}), deployments)) == ["d1"]
    assert _names(deployments_for_replica_set_added(_owned("orphan", None, {"foo": "bar"}), deployments)) == [
        "d1",
        "d2",
    ]
    stale = _owned("rs", d1, {"foo": "bar"})
    stale["metadata"]["ownerReferences"][0]["uid"] = "recreated"
    assert deployments_for_replica_set_added(stale, deployments) == []  # same name, other UID
    deleting = _owned("rs", d3, {"foo": "bar"})
    deleting["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    assert _names(deployments_for_replica_set_added(deleting, deployments)) == ["d3"]


def test_replica_set_updated() -> None:
    d1, d2, d3 = deployments = _three_deployments()
    owned = _owned("rs", d1, {"foo": "bar"})
    assert deployments_for_replica_set_updated(owned, owned, deployments) == []  # resync
    bumped = _owned("rs", d1, {"foo": "bar"}, resource_version="2")
    assert _names(deployments_for_replica_set_updated(owned, bumped, deployments)) == ["d1"]
    orphan = _owned("rs", None, {"foo": "other"})
    relabelled = _owned("rs", None, {"foo": "bar"}, resource_version="2")
    assert _names(deployments_for_replica_set_updated(orphan, relabelled, deployments)) == ["d1", "d2"]
    moved = _owned("rs", d2, {"foo": "bar"}, resource_version="2")
    assert _names(deployments_for_replica_set_updated(owned, moved, deployments)) == ["d1", "d2"]
    released = _owned("rs", None, {"foo": "bar"}, resource_version="2")
    assert _names(deployments_for_replica_set_updated(_owned("rs", d3, {"foo": "bar"}), released, deployments)) == [
        "d3",
        "d1",
        "d2",
    ]
    unchanged_orphan = _owned("rs", None, {"foo": "bar"}, resource_version="3")
    assert deployments_for_replica_set_updated(released, unchanged_orphan, deployments) == []


def test_replica_set_deleted() -> None:
    d1, _, _ = deployments = _three_deployments()
    assert _names(deployments_for_replica_set_deleted(_owned("rs", d1, {"foo": "bar"}), deployments)) == ["d1"]
    assert deployments_for_replica_set_deleted(_owned("rs", None, {"foo": "bar"}), deployments) == []


def _pod(name: str, owner_uid: str | None, phase: str = "Running", labels: dict[str, str] | None = None) -> Obj:
    pod: Obj = {"metadata": {"name": name, "labels": labels or {"foo": "bar"}}, "status": {"phase": phase}}
    if owner_uid is not None:
        pod["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "uid": owner_uid, "controller": True}]
    return pod


def test_pods_by_replica_set_uid() -> None:
    d = deployment(1)
    rs1, rs2 = replica_set("rs1", 1, uid="u1"), replica_set("rs2", 1, uid="u2")
    pods = [
        _pod("p1", "u1"),
        _pod("p2", "u2", phase="Failed"),  # finished pods are kept
        _pod("p3", "u1"),
        _pod("orphan", None),
        _pod("foreign", "u9"),
        _pod("unmatched", "u1", labels={"foo": "other"}),
    ]
    grouped = pods_by_replica_set_uid(d, [rs1, rs2, replica_set("rs3", 0, uid="u3")], pods)
    assert {uid: [p["metadata"]["name"] for p in group] for uid, group in grouped.items()} == {
        "u1": ["p1", "p3"],
        "u2": ["p2"],
        "u3": [],
    }


def test_recreate_needs_sync_after_pod_deletion() -> None:
    recreate = deployment(1, strategy="Recreate")
    assert recreate_needs_sync_after_pod_deletion(recreate, {"u1": [], "u2": []})
    assert not recreate_needs_sync_after_pod_deletion(recreate, {"u1": [_pod("p", "u1")]})
    assert not recreate_needs_sync_after_pod_deletion(deployment(1), {"u1": []})
