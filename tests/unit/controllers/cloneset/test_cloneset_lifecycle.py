"""Lifecycle hooks and the refresh-phase state transitions (kruise
``sync/cloneset_update_test.go`` ``TestUpdate`` cases 9-16, ``pkg/util/lifecycle``)."""

from __future__ import annotations

from typing import Any

import pytest
from cloneset_pods import NOW, make_cloneset, make_pod

from kubeloop.api import kruise
from kubeloop.api.meta import format_time
from kubeloop.controllers.cloneset.lifecycle import (
    is_pod_all_hooked,
    is_pod_hooked,
    lifecycle_marks_pod_not_ready,
    lifecycle_patch,
    not_ready_key_change,
    refreshed_state,
    with_lifecycle_state,
)
from kubeloop.controllers.cloneset.options import CloneSetBehaviour

HOOK = {"labelsHandler": {"a": "1", "b": "2"}, "finalizersHandler": ["f1", "f2"]}


@pytest.mark.parametrize(
    ("labels", "finalizers", "hooked", "all_hooked"),
    [
        ({}, [], False, False),
        ({"a": "1"}, [], True, False),
        ({}, ["f2"], True, False),
        ({"a": "1", "b": "2"}, ["f1", "f2"], True, True),
        ({"a": "x", "b": "2"}, ["f1", "f2"], True, False),
    ],
)
def test_hooked_any_and_all(labels: dict[str, str], finalizers: list[str], hooked: bool, all_hooked: bool) -> None:
    pod = make_pod("p", labels=labels, finalizers=finalizers)
    assert is_pod_hooked(HOOK, pod) is hooked
    assert is_pod_all_hooked(HOOK, pod) is all_hooked
    assert not is_pod_hooked(None, pod)
    assert not is_pod_all_hooked(None, pod)


def _refresh(cs: dict[str, Any], pod: dict[str, Any], completed: bool = True, **kwargs: Any) -> str | None:
    return refreshed_state(cs, pod, "new", update_completed=completed, **kwargs)


def test_preparing_normal_without_hook_becomes_normal() -> None:
    cs = make_cloneset(1)
    assert _refresh(cs, make_pod("p", state=kruise.STATE_PREPARING_NORMAL)) == kruise.STATE_NORMAL


def test_preparing_normal_unscheduled_waits_only_with_the_newer_behaviour() -> None:
    cs = make_cloneset(1)
    pod = make_pod("p", state=kruise.STATE_PREPARING_NORMAL, node=None)
    assert _refresh(cs, pod) == kruise.STATE_NORMAL
    assert _refresh(cs, pod, behaviour=CloneSetBehaviour(normal_requires_scheduling=True)) is None


def test_pre_normal_hook_must_be_fully_present() -> None:
    cs = make_cloneset(1, lifecycle={"preNormal": {"labelsHandler": {"preNormalHooked": "true"}}})
    assert _refresh(cs, make_pod("p", state=kruise.STATE_PREPARING_NORMAL)) is None
    hooked = make_pod("p", state=kruise.STATE_PREPARING_NORMAL, labels={"preNormalHooked": "true"})
    assert _refresh(cs, hooked) == kruise.STATE_NORMAL


def test_preparing_normal_with_hooks_present_becomes_normal() -> None:
    lifecycle = {
        "preNormal": {"finalizersHandler": ["slb/online"]},
        "inPlaceUpdate": {"finalizersHandler": ["slb/online"]},
    }
    cs = make_cloneset(1, lifecycle=lifecycle)
    pod = make_pod("p", "old", state=kruise.STATE_PREPARING_NORMAL, finalizers=["slb/online"])
    assert _refresh(cs, pod) == kruise.STATE_NORMAL


def test_updating_completes_to_updated_or_normal() -> None:
    lifecycle = {"inPlaceUpdate": {"labelsHandler": {"hook": "true"}}}
    cs = make_cloneset(1, lifecycle=lifecycle)
    pod = make_pod("p", state=kruise.STATE_UPDATING)
    assert _refresh(cs, pod, completed=False) is None
    assert _refresh(cs, pod) == kruise.STATE_UPDATED
    assert _refresh(cs, make_pod("p", state=kruise.STATE_UPDATING, labels={"hook": "true"})) == kruise.STATE_NORMAL
    assert _refresh(make_cloneset(1), pod) == kruise.STATE_NORMAL
    # A lifecycle without an inPlaceUpdate hook still passes through Updated (upstream quirk).
    assert _refresh(make_cloneset(1, lifecycle={}), pod) == kruise.STATE_UPDATED


def test_updated_returns_to_normal_once_hooked_again() -> None:
    cs = make_cloneset(1, lifecycle={"inPlaceUpdate": {"labelsHandler": {"hook": "true"}}})
    assert _refresh(cs, make_pod("p", state=kruise.STATE_UPDATED)) is None
    assert _refresh(cs, make_pod("p", state=kruise.STATE_UPDATED, labels={"hook": "true"})) == kruise.STATE_NORMAL
    assert _refresh(make_cloneset(1, lifecycle={}), make_pod("p", state=kruise.STATE_UPDATED)) == kruise.STATE_NORMAL


def test_preparing_update_on_the_update_revision_needs_no_update() -> None:
    cs = make_cloneset(1, lifecycle={"inPlaceUpdate": {"labelsHandler": {"hook": "true"}}})
    assert _refresh(cs, make_pod("p", "old", state=kruise.STATE_PREPARING_UPDATE)) is None
    assert _refresh(cs, make_pod("p", "new", state=kruise.STATE_PREPARING_UPDATE)) == kruise.STATE_UPDATED
    assert _refresh(make_cloneset(1), make_pod("p", "new", state=kruise.STATE_PREPARING_UPDATE)) == kruise.STATE_NORMAL


def test_normal_and_preparing_delete_stay() -> None:
    cs = make_cloneset(1)
    assert _refresh(cs, make_pod("p")) is None
    assert _refresh(cs, make_pod("p", state=kruise.STATE_PREPARING_DELETE)) is None


def test_lifecycle_patches() -> None:
    assert lifecycle_patch(kruise.STATE_NORMAL, NOW) == {
        "metadata": {
            "labels": {kruise.LIFECYCLE_STATE_LABEL: "Normal"},
            "annotations": {kruise.LIFECYCLE_TIMESTAMP_ANNOTATION: format_time(NOW)},
        }
    }
    rehook = lifecycle_patch(kruise.STATE_PREPARING_UPDATE, NOW, HOOK)
    assert rehook["metadata"]["labels"] == {kruise.LIFECYCLE_STATE_LABEL: "PreparingUpdate", "a": "1", "b": "2"}
    assert rehook["metadata"]["finalizers"] == ["f1", "f2"]
    pod = make_pod("p")
    moved = with_lifecycle_state(pod, kruise.STATE_UPDATED, NOW)
    assert moved["metadata"]["labels"][kruise.LIFECYCLE_STATE_LABEL] == "Updated"
    assert pod["metadata"]["labels"][kruise.LIFECYCLE_STATE_LABEL] == "Normal"


def test_mark_pod_not_ready() -> None:
    assert not lifecycle_marks_pod_not_ready(make_cloneset(1))
    assert lifecycle_marks_pod_not_ready(make_cloneset(1, lifecycle={"inPlaceUpdate": {"markPodNotReady": True}}))
    assert not_ready_key_change(kruise.STATE_PREPARING_DELETE) == ("add", "preDeleteHook")
    assert not_ready_key_change(kruise.STATE_PREPARING_UPDATE) == ("add", "preUpdateHook")
    assert not_ready_key_change(kruise.STATE_UPDATED) == ("remove", "preUpdateHook")
    assert not_ready_key_change(kruise.STATE_NORMAL) is None


def _gated_pod() -> dict[str, Any]:
    pod = make_pod("p")
    pod["spec"]["readinessGates"] = [{"conditionType": kruise.KRUISE_POD_READY}]
    pod["status"]["conditions"] += [
        {"type": "ContainersReady", "status": "True"},
        {"type": kruise.KRUISE_POD_READY, "status": "True"},
    ]
    return pod


def test_not_ready_key_round_trip() -> None:
    from kubeloop.controllers.cloneset.lifecycle import with_not_ready_key

    pod = _gated_pod()
    assert with_not_ready_key(make_pod("p"), "preDeleteHook", add=True, now=NOW) is None
    marked = with_not_ready_key(pod, "preDeleteHook", add=True, now=NOW)
    assert marked is not None
    conditions = {c["type"]: c for c in marked["status"]["conditions"]}
    assert conditions[kruise.KRUISE_POD_READY]["status"] == "False"
    assert conditions[kruise.KRUISE_POD_READY]["message"] == '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]'
    assert conditions["Ready"]["status"] == "False"
    assert with_not_ready_key(marked, "preDeleteHook", add=True, now=NOW) is None
    released = with_not_ready_key(marked, "preDeleteHook", add=False, now=NOW)
    assert released is not None
    assert {c["type"]: c for c in released["status"]["conditions"]}[kruise.KRUISE_POD_READY]["status"] == "True"
    assert with_not_ready_key(released, "preDeleteHook", add=False, now=NOW) is None
