"""Update candidates, their order, and the per-pod update decision."""

from __future__ import annotations

from typing import Any

from cloneset_pods import NOW, make_cloneset, make_pod

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.controllers.cloneset.revisions import new_revision
from kubeloop.controllers.cloneset.update import (
    decide_pod_update,
    pods_to_update,
    sort_update_candidates,
    specified_delete_patch,
    update_candidates,
)

GATES = CloneSetFeatureGates()


def _pod(ready: bool, phase: str) -> dict[str, Any]:
    return make_pod("p", "old", ready=ready, phase=phase)


def test_default_order_matches_upstream_sort_update_indexes() -> None:
    """Pods [Pending+Ready, Pending, Pending, Running+Ready, Running], candidates [0,1,3,4]."""
    pods = [
        _pod(True, "Pending"),
        _pod(False, "Pending"),
        _pod(False, "Pending"),
        _pod(True, "Running"),
        _pod(False, "Running"),
    ]
    assert sort_update_candidates(make_cloneset(5), pods, [0, 1, 3, 4]) == [1, 0, 4, 3]


def test_preparing_update_pods_go_first() -> None:
    pods = [
        make_pod("a", "old"),
        make_pod("b", "old", state=kruise.STATE_PREPARING_UPDATE),
        make_pod("c", "old", ready=False),
    ]
    assert sort_update_candidates(make_cloneset(3), pods, [0, 1, 2]) == [1, 2, 0]


def test_candidates_skip_preparing_delete_and_grace_period() -> None:
    grace = {kruise.INPLACE_UPDATE_GRACE_ANNOTATION: '{"revision":"new"}'}
    pods = [
        make_pod("a", "old"),
        make_pod("b", "old", state=kruise.STATE_PREPARING_DELETE),
        make_pod("c", "old", annotations=grace),
        make_pod("d", "old", state=kruise.STATE_UPDATED, annotations=grace),
        make_pod("e", "new"),
    ]
    assert update_candidates(pods, 3, "new") == [0, 3]
    assert update_candidates(pods, -1, "new") == [4]


def test_priority_strategy_orders_the_rollout() -> None:
    cs = make_cloneset(
        3,
        max_unavailable=3,
        extra_update_strategy={
            "priorityStrategy": {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"tier": "x"}}}]}
        },
    )
    pods = [make_pod("a", "old"), make_pod("b", "old", labels={"tier": "x"}), make_pod("c", "old")]
    plan = pods_to_update(cs, pods, "old", "new", now=NOW, gates=GATES)
    assert plan.indexes[0] == 1
    assert sorted(plan.indexes) == [0, 1, 2]


def _revisions(strategy: str, new_image: str = "img:2", env: bool = False) -> tuple[dict[str, Any], ...]:
    cs = make_cloneset(1, strategy_type=strategy)
    old = new_revision(cs, 1, 0)
    changed = make_cloneset(1, strategy_type=strategy)
    container = changed["spec"]["template"]["spec"]["containers"][0]
    container["image"] = new_image
    if env:
        container["env"] = [{"name": "e-key", "value": "v"}]
    new = new_revision(changed, 2, 0)
    return changed, old, new


def _pod_on(revision: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return make_pod("p", revision["metadata"]["name"], **kwargs)


def test_recreate_strategy_marks_the_pod_for_deletion() -> None:
    cs, old, new = _revisions(kruise.RECREATE)
    decision = decide_pod_update(cs, _pod_on(old), [old, new], new, gates=GATES)
    assert decision.kind == "recreate"
    assert specified_delete_patch() == {"metadata": {"labels": {kruise.SPECIFIED_DELETE_LABEL: "true"}}}


def test_in_place_if_possible_falls_back_to_recreate() -> None:
    cs, old, new = _revisions(kruise.IN_PLACE_IF_POSSIBLE, env=True)
    assert decide_pod_update(cs, _pod_on(old), [old, new], new, gates=GATES).kind == "recreate"


def test_in_place_only_reports_an_error_when_impossible() -> None:
    cs, old, new = _revisions(kruise.IN_PLACE_ONLY, env=True)
    decision = decide_pod_update(cs, _pod_on(old), [old, new], new, gates=GATES)
    assert decision.kind == "error"
    assert decision.message == "find Pod p update strategy is InPlaceOnly but can not update in-place"


def test_pod_on_an_unknown_revision_cannot_be_updated_in_place() -> None:
    cs, old, new = _revisions(kruise.IN_PLACE_IF_POSSIBLE)
    assert decide_pod_update(cs, make_pod("p", "cs-foreign"), [old, new], new, gates=GATES).kind == "recreate"


def test_image_change_is_in_place() -> None:
    cs, old, new = _revisions(kruise.IN_PLACE_IF_POSSIBLE)
    decision = decide_pod_update(cs, _pod_on(old), [old, new], new, gates=GATES)
    assert decision.kind == "in_place"
    assert decision.spec == {"revision": new["metadata"]["name"], "containerImages": {"c": "img:2"}}


def test_pod_not_normal_yet_is_updated_in_place_without_hook() -> None:
    cs, old, new = _revisions(kruise.IN_PLACE_IF_POSSIBLE)
    cs["spec"]["lifecycle"] = {"preNormal": {"finalizersHandler": ["slb/online"]}}
    pod = _pod_on(old, state=kruise.STATE_PREPARING_NORMAL)
    assert decide_pod_update(cs, pod, [old, new], new, gates=GATES).kind == "in_place"


def test_in_place_update_hook_holds_the_pod() -> None:
    cs, old, new = _revisions(kruise.IN_PLACE_IF_POSSIBLE)
    cs["spec"]["lifecycle"] = {"inPlaceUpdate": {"finalizersHandler": ["slb/online"]}}
    hooked = _pod_on(old, finalizers=["slb/online"])
    assert decide_pod_update(cs, hooked, [old, new], new, gates=GATES).kind == "prepare_update"
    waiting = _pod_on(old, state=kruise.STATE_PREPARING_UPDATE, finalizers=["slb/online"])
    assert decide_pod_update(cs, waiting, [old, new], new, gates=GATES).kind == "wait"
    released = _pod_on(old, state=kruise.STATE_PREPARING_UPDATE)
    assert decide_pod_update(cs, released, [old, new], new, gates=GATES).kind == "in_place"
    updated = _pod_on(old, state=kruise.STATE_UPDATED)
    assert decide_pod_update(cs, updated, [old, new], new, gates=GATES).kind == "rehook"


def test_updated_pod_without_hook_waits_and_bad_states_error() -> None:
    cs, old, new = _revisions(kruise.IN_PLACE_IF_POSSIBLE)
    assert decide_pod_update(cs, _pod_on(old, state=kruise.STATE_UPDATED), [old, new], new, gates=GATES).kind == "wait"
    decision = decide_pod_update(cs, _pod_on(old, state=kruise.STATE_PREPARING_DELETE), [old, new], new, gates=GATES)
    assert decision.kind == "error"
    assert decision.message == "not allowed to in-place update pod p in state PreparingDelete"


def test_missing_pod_template_hash_is_added() -> None:
    from kubeloop.controllers.cloneset.update import pod_template_hash_patch

    pod = make_pod("p", "cs-abc12")
    assert pod_template_hash_patch(pod) == {"metadata": {"labels": {kruise.POD_TEMPLATE_HASH_LABEL: "abc12"}}}
    pod["metadata"]["labels"][kruise.POD_TEMPLATE_HASH_LABEL] = "abc12"
    assert pod_template_hash_patch(pod) is None


def test_mark_pod_not_ready_travels_with_the_hook_decision() -> None:
    cs, old, new = _revisions(kruise.IN_PLACE_IF_POSSIBLE)
    cs["spec"]["lifecycle"] = {"inPlaceUpdate": {"labelsHandler": {"h": "1"}, "markPodNotReady": True}}
    decision = decide_pod_update(cs, _pod_on(old, labels={"h": "1"}), [old, new], new, gates=GATES)
    assert (decision.kind, decision.mark_not_ready) == ("prepare_update", True)


def test_sync_recreate_marks_one_pod_when_all_are_unready() -> None:
    """TestSyncCloneSet: ReCreate, maxUnavailable 1, five running-but-unready old pods."""
    cs = make_cloneset(5, max_unavailable=1)
    pods = [make_pod(f"p{i}", "rev1", ready=False, phase="Running") for i in range(5)]
    plan = pods_to_update(cs, pods, "rev1", "rev2", now=NOW, gates=GATES)
    assert len(plan.indexes) == 1
    assert decide_pod_update(cs, pods[plan.indexes[0]], [], {"metadata": {"name": "rev2"}}, gates=GATES).kind == (
        "recreate"
    )
    assert (
        pods_to_update(cs, [make_pod(f"p{i}", "rev2") for i in range(5)], "rev1", "rev2", now=NOW, gates=GATES).indexes
        == []
    )


def test_a_round_calculates_the_in_place_spec_once_per_old_revision() -> None:
    # Pods on the old revision, on an unknown one (no in-place spec) and with an env change
    # (not in place): with the round's memo, every decision equals the one made without it,
    # and each in-place decision carries a spec of its own.
    for strategy, env in ((kruise.IN_PLACE_IF_POSSIBLE, False), (kruise.IN_PLACE_IF_POSSIBLE, True),
                          (kruise.IN_PLACE_ONLY, True)):
        cs, old, new = _revisions(strategy, env=env)
        pods = [make_pod(f"p{i}", name) for i, name in
                enumerate([old["metadata"]["name"], "cs-foreign", old["metadata"]["name"], "cs-foreign"])]
        specs: dict[str, Any] = {}
        memoized = [decide_pod_update(cs, pod, [old, new], new, gates=GATES, specs=specs) for pod in pods]
        assert memoized == [decide_pod_update(cs, pod, [old, new], new, gates=GATES) for pod in pods]
        assert set(specs) == {old["metadata"]["name"], ""}
        if memoized[0].spec is not None:
            assert memoized[0].spec is not memoized[2].spec
            memoized[0].spec["containerImages"]["c"] = "changed"
            assert decide_pod_update(cs, pods[2], [old, new], new, gates=GATES, specs=specs) == memoized[2]
