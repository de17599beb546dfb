"""Scale side: new pods and PVCs, instance ids, victims, and the Scale step's plan."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from cloneset_pods import NOW, make_cloneset, make_pod

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.controllers.cloneset.scale import (
    INSTANCE_ID_ALPHABET,
    available_instance_ids,
    choose_pods_to_delete,
    creation_batches,
    new_pods,
    pvcs_of_pod,
)
from kubeloop.controllers.cloneset.scaleplan import plan_scale

GATES = CloneSetFeatureGates()


def _foo(env: bool) -> dict[str, Any]:
    cs = make_cloneset(3, name="foo")
    cs["spec"]["selector"] = {"matchLabels": {"foo": "bar"}}
    template = cs["spec"]["template"]
    template["metadata"] = {"labels": {"foo": "bar"}}
    template["spec"]["volumes"] = [{"name": "home", "hostPath": {"path": "/home"}}]
    if env:
        template["spec"]["containers"][0]["env"] = [{"name": "e-key", "value": "e-value"}]
    cs["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "datadir"}, "spec": {"resources": {}}}]
    return cs


def _pvc(name: str, instance_id: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {kruise.INSTANCE_ID_LABEL: instance_id}}}


def test_create_pods_like_upstream() -> None:
    current, update = _foo(env=False), _foo(env=True)
    pods = new_pods(current, update, "rev_current", "rev_update", 3, 1, ["id1", "id3", "id4"], now=NOW, gates=GATES)
    assert [p["metadata"]["name"] for p in pods] == ["foo-id1", "foo-id3", "foo-id4"]
    first = pods[0]
    assert first["metadata"]["generateName"] == "foo-"
    assert first["metadata"]["labels"] == {
        "foo": "bar",
        kruise.INSTANCE_ID_LABEL: "id1",
        kruise.CONTROLLER_REVISION_HASH_LABEL: "rev_current",
        kruise.POD_TEMPLATE_HASH_LABEL: "rev_current",
        kruise.LIFECYCLE_STATE_LABEL: kruise.STATE_PREPARING_NORMAL,
    }
    assert kruise.LIFECYCLE_TIMESTAMP_ANNOTATION in first["metadata"]["annotations"]
    owner = first["metadata"]["ownerReferences"][0]
    assert owner == {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "name": "foo",
        "uid": "cs-uid",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert first["spec"]["readinessGates"] == [{"conditionType": kruise.INPLACE_UPDATE_READY}]
    assert first["spec"]["volumes"] == [
        {"name": "datadir", "persistentVolumeClaim": {"claimName": "datadir-foo-id1"}},
        {"name": "home", "hostPath": {"path": "/home"}},
    ]
    assert "env" not in first["spec"]["containers"][0]
    for pod in pods[1:]:
        assert pod["metadata"]["labels"][kruise.CONTROLLER_REVISION_HASH_LABEL] == "rev_update"
        assert pod["spec"]["containers"][0]["env"] == [{"name": "e-key", "value": "e-value"}]


def test_short_hash_gate_writes_only_the_hash() -> None:
    cs = _foo(env=False)
    pod = new_pods(cs, cs, "foo-abc", "foo-abc", 1, 0, ["x"], now=NOW, gates=CloneSetFeatureGates(short_hash=True))[0]
    assert pod["metadata"]["labels"][kruise.CONTROLLER_REVISION_HASH_LABEL] == "abc"
    pod = new_pods(cs, cs, "foo-abc", "foo-abc", 1, 0, ["x"], now=NOW, gates=GATES)[0]
    assert pod["metadata"]["labels"][kruise.CONTROLLER_REVISION_HASH_LABEL] == "foo-abc"
    assert pod["metadata"]["labels"][kruise.POD_TEMPLATE_HASH_LABEL] == "abc"


def test_plan_creates_only_missing_pvcs() -> None:
    current, update = _foo(env=False), _foo(env=True)
    pvcs = [_pvc("datadir-foo-id3", "id3")]
    plan = plan_scale(
        current, update, [], pvcs, "rev_current", "rev_update", now=NOW, gates=GATES, rng=random.Random(1)
    )
    assert plan.step == "create"
    assert plan.modifies
    names = [c.pod["metadata"]["name"] for c in plan.creations]
    assert "foo-id3" in names
    claims = {c.pod["metadata"]["name"]: [p["metadata"]["name"] for p in c.pvcs] for c in plan.creations}
    assert claims["foo-id3"] == []
    for pod_name, claim_names in claims.items():
        if pod_name != "foo-id3":
            assert claim_names == [f"datadir-{pod_name}"]
    created_pvc = next(c.pvcs[0] for c in plan.creations if c.pvcs)
    assert created_pvc["metadata"]["labels"]["foo"] == "bar"
    assert created_pvc["metadata"]["ownerReferences"][0]["kind"] == "CloneSet"


def test_available_ids_reuse_free_pvcs_first() -> None:
    pods = [
        make_pod("a", labels={kruise.INSTANCE_ID_LABEL: "a"}),
        make_pod("b", labels={kruise.INSTANCE_ID_LABEL: "b"}),
    ]
    pvcs = [_pvc("p-b", "b"), _pvc("p-c", "c")]
    ids = available_instance_ids(2, pods, pvcs, random.Random(7))
    assert "c" in ids
    fresh = next(i for i in ids if i != "c")
    assert len(fresh) == 5
    assert set(fresh) <= set(INSTANCE_ID_ALPHABET)


def test_deleting_a_pod_deletes_its_pvcs() -> None:
    pvcs = [_pvc("d-1", "id1"), _pvc("d-2", "id2"), _pvc("d-3", "id3")]
    pods = [make_pod(f"foo-{i}", labels={kruise.INSTANCE_ID_LABEL: i}) for i in ("id1", "id3")]
    left = [p for p in pvcs if not any(p in pvcs_of_pod(pod, pvcs) for pod in pods)]
    assert [p["metadata"]["name"] for p in left] == ["d-2"]


def _five_ready(min_ready_seconds: int, specified: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cs = make_cloneset(3, max_unavailable="20%", min_ready_seconds=min_ready_seconds)
    pods = [
        make_pod(f"pod-{i}", "rev", ready_since=NOW - timedelta(seconds=10), specified_delete=specified and i == 0)
        for i in range(5)
    ]
    return cs, pods


def _plan(cs: dict[str, Any], pods: list[dict[str, Any]], **kwargs: Any) -> Any:
    return plan_scale(cs, cs, pods, [], "rev", "rev", now=NOW, gates=GATES, rng=random.Random(0), **kwargs)


def test_scale_in_waits_when_ready_pods_are_not_yet_available() -> None:
    cs, pods = _five_ready(9999)
    plan = _plan(cs, pods)
    assert plan.step == "scale_in"
    assert not plan.modifies


def test_scale_deletes_only_the_specified_pod_first() -> None:
    cs, pods = _five_ready(0, specified=True)
    plan = _plan(cs, pods)
    assert plan.step == "delete_specified"
    assert [p["metadata"]["name"] for p in plan.deletions] == ["pod-0"]


def test_scale_in_deletes_two() -> None:
    cs, pods = _five_ready(0)
    plan = _plan(cs, pods)
    assert plan.step == "scale_in"
    assert len(plan.deletions) == 2


def test_scale_up_limited_by_scale_strategy() -> None:
    cs = make_cloneset(5, scale_max_unavailable=2)
    plan = _plan(cs, [])
    assert plan.step == "create"
    assert len(plan.creations) == 2
    assert plan.scale_up_limited


def test_scale_up_with_zero_budget_writes_nothing() -> None:
    cs = make_cloneset(3, scale_max_unavailable=1)
    pods = [make_pod("a", "rev", ready=False, has_status=False), make_pod("b", "rev", specified_delete=True)]
    plan = _plan(cs, pods)
    assert plan.step == "create"
    assert not plan.modifies


def test_pre_delete_hook_holds_the_victim() -> None:
    lifecycle = {"preDelete": {"labelsHandler": {"hook": "true"}, "markPodNotReady": True}}
    cs = make_cloneset(2, lifecycle=lifecycle)
    pods = [make_pod(f"p{i}", "rev", labels={"hook": "true"}) for i in range(2)]
    pods.append(make_pod("p2", "rev", labels={"hook": "true"}, specified_delete=True))
    plan = _plan(cs, pods)
    assert plan.step == "delete_specified"
    assert [p["metadata"]["name"] for p in plan.to_preparing_delete] == ["p2"]
    assert plan.mark_not_ready
    assert plan.deletions == []


def test_released_preparing_delete_pod_is_deleted() -> None:
    cs = make_cloneset(2, lifecycle={"preDelete": {"labelsHandler": {"hook": "true"}}})
    pods = [make_pod("p0", "rev"), make_pod("p1", "rev"), make_pod("p2", "rev", state=kruise.STATE_PREPARING_DELETE)]
    plan = _plan(cs, pods)
    assert plan.step == "delete_preparing"
    assert [p["metadata"]["name"] for p in plan.deletions] == ["p2"]


def test_preparing_delete_pod_is_revived_when_replicas_need_it() -> None:
    cs = make_cloneset(3, lifecycle={"preDelete": {"labelsHandler": {"hook": "true"}}})
    pods = [
        make_pod("p0", "rev"),
        make_pod("p1", "rev"),
        make_pod("p2", "rev", state=kruise.STATE_PREPARING_DELETE, labels={"hook": "true"}),
    ]
    plan = _plan(cs, pods)
    assert plan.step == "revive"
    assert [p["metadata"]["name"] for p in plan.revive] == ["p2"]
    cs["spec"]["lifecycle"]["preDelete"]["markPodNotReady"] = True
    assert _plan(cs, pods).step != "revive"


def test_victims_split_between_revisions_in_scale_in_order() -> None:
    cs = make_cloneset(2)
    pods = [
        make_pod("old-ready", "old"),
        make_pod("old-unready", "old", ready=False),
        make_pod("new-ready", "new"),
        make_pod("new-unscheduled", "new", node=None),
    ]
    victims = choose_pods_to_delete(cs, 2, 1, pods, "new", now=NOW, gates=GATES)
    assert [p["metadata"]["name"] for p in victims] == ["old-unready", "new-unscheduled"]
    victims = choose_pods_to_delete(cs, 2, 2, pods, "new", now=NOW, gates=GATES)
    assert [p["metadata"]["name"] for p in victims] == ["old-ready", "old-unready"]


def test_creation_batches_start_slow() -> None:
    assert creation_batches(10) == [1, 2, 4, 3]
    assert creation_batches(1) == [1]
    assert creation_batches(0) == []


def test_pvc_cleanup_when_reuse_is_disabled() -> None:
    from kubeloop.controllers.cloneset.scale import pvc_cleanup, pvc_owned_by_pod

    active = [make_pod("foo-a", labels={kruise.INSTANCE_ID_LABEL: "a"})]
    inactive = [make_pod("foo-b", labels={kruise.INSTANCE_ID_LABEL: "b"}, phase="Failed")]
    pvcs = [_pvc("d-a", "a"), _pvc("d-b", "b"), _pvc("d-c", "c")]
    cleanup = pvc_cleanup(active, inactive, pvcs)
    assert [(p["metadata"]["name"], pod["metadata"]["name"]) for p, pod in cleanup.reown] == [("d-b", "foo-b")]
    assert [p["metadata"]["name"] for p in cleanup.delete] == ["d-c"]
    owned = dict(pvcs[1])
    owned["metadata"] = {**owned["metadata"], "ownerReferences": [{"uid": "cs-uid", "kind": "CloneSet"}]}
    moved = pvc_owned_by_pod(owned, make_cloneset(1), inactive[0])
    assert moved["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "foo-b", "uid": "uid-foo-b"}
    ]


def test_pods_to_delete_is_truncated_to_existing_pods() -> None:
    from kubeloop.controllers.cloneset.scale import truncated_pods_to_delete

    cs = make_cloneset(2, pods_to_delete=["a", "gone", "b"])
    assert truncated_pods_to_delete(cs, [make_pod("a"), make_pod("b")]) == ["a", "b"]
    assert truncated_pods_to_delete(cs, [make_pod("a"), make_pod("b"), make_pod("gone")]) is None
