"""The owned-pod tally equals a full recount after every step of random pod histories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.api.labels import selector_from_label_selector
from kubeloop.api.meta import format_time
from kubeloop.api.pods import is_pod_available, is_pod_ready
from kubeloop.controllers.replicaset.podfacts import PodFactsCache, pod_facts
from kubeloop.controllers.replicaset.status import ReplicaCounts, is_fully_labeled
from kubeloop.controllers.replicaset.tally import OwnedPodTally

Obj = dict[str, Any]
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
UID = "rs-uid"
SELECTOR = selector_from_label_selector({"matchLabels": {"app": "web"}})
TEMPLATE_LABELS = {"app": "web", "tier": "front"}

pod_states = st.fixed_dictionaries({
    "phase": st.sampled_from(["Pending", "Running", "Succeeded", "Failed"]),
    "ready": st.sampled_from([None, False, True]),
    "ready_ago": st.one_of(st.none(), st.integers(0, 40)),
    "deleting": st.booleans(),
    "owner": st.sampled_from([UID, UID, UID, "other-uid"]),
    "labels": st.sampled_from([{"app": "web"}, {"app": "web", "tier": "front"}, {"app": "db"}]),
})
steps = st.lists(st.tuples(st.integers(0, 7), st.one_of(st.none(), pod_states)), min_size=1, max_size=40)


def make_pod(name: str, version: int, state: dict[str, Any]) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": str(version),
                 "labels": dict(state["labels"]),
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                      "uid": state["owner"], "controller": True}]}
    if state["deleting"]:
        meta["deletionTimestamp"] = format_time(NOW)
    conditions: list[Obj] = []
    if state["ready"] is not None:
        condition: Obj = {"type": "Ready", "status": "True" if state["ready"] else "False"}
        if state["ready_ago"] is not None:
            condition["lastTransitionTime"] = format_time(NOW - timedelta(seconds=state["ready_ago"]))
        conditions.append(condition)
    return {"metadata": meta, "status": {"phase": state["phase"], "conditions": conditions}}


def recount(pods: list[Obj], min_ready: int) -> tuple[ReplicaCounts, list[str]]:
    """The counts and the pods to claim, computed from scratch as the status rules say."""
    claimed, to_claim, terminating = [], [], 0
    for pod in pods:
        facts = pod_facts(pod)
        if facts.active:
            if facts.controller_uid == UID and SELECTOR.matches(facts.labels):
                claimed.append(pod)
            else:
                to_claim.append(pod["metadata"]["name"])
        elif facts.terminating and facts.controller_uid == UID:
            terminating += 1
    ready = [pod for pod in claimed if is_pod_ready(pod)]
    counts = ReplicaCounts(len(claimed), sum(1 for p in claimed if is_fully_labeled(p, TEMPLATE_LABELS)),
                           len(ready), sum(1 for p in ready if is_pod_available(p, min_ready, NOW)), terminating)
    return counts, sorted(f"default/{name}" for name in to_claim)


@settings(max_examples=150, deadline=None)
@given(steps, st.sampled_from([0, 10, 30]))
def test_tally_matches_a_full_recount_after_every_step(history: list[tuple[int, Any]], min_ready: int) -> None:
    # Two tallies follow the same history: one re-reads every owned pod at each step, the other
    # only the pods marked as changed (as the controller's cache listener marks them).
    full = OwnedPodTally(UID, SELECTOR, TEMPLATE_LABELS, PodFactsCache())
    marked = OwnedPodTally(UID, SELECTOR, TEMPLATE_LABELS, PodFactsCache())
    pods: dict[str, Obj] = {}
    for version, (index, state) in enumerate(history, start=1):
        key = f"default/p{index}"
        if state is None:
            pods.pop(key, None)
        else:
            pods[key] = make_pod(f"p{index}", version, state)
        marked.mark(key)
        # What the pod-controller index holds for this ReplicaSet: the pods it controls.
        owned = {k for k, pod in pods.items() if pod["metadata"]["ownerReferences"][0]["uid"] == UID}
        full.refresh(owned, pods.get)
        marked.update(0, owned, pods.get)
        expected, expected_to_claim = recount([pods[k] for k in owned], min_ready)
        for tally in (full, marked):
            assert tally.counts(min_ready, NOW) == expected
            assert tally.to_claim_keys() == expected_to_claim
            assert len(tally) == len(owned)


def test_update_reads_everything_again_when_the_store_epoch_changes() -> None:
    tally = OwnedPodTally(UID, SELECTOR, TEMPLATE_LABELS, PodFactsCache())
    state = {"phase": "Running", "ready": True, "ready_ago": 5, "deleting": False, "owner": UID,
             "labels": {"app": "web"}}
    pods = {"default/a": make_pod("a", 1, state)}
    tally.update(0, set(pods), pods.get)
    assert tally.counts(0, NOW).replicas == 1
    # Changed without a mark (a wholesale replace): only a new epoch makes the tally look again.
    pods["default/b"] = make_pod("b", 2, state)
    tally.update(0, set(pods), pods.get)
    assert tally.counts(0, NOW).replicas == 1
    tally.update(1, set(pods), pods.get)
    assert tally.counts(0, NOW).replicas == 2


def test_an_unchanged_version_is_not_read_again() -> None:
    tally = OwnedPodTally(UID, SELECTOR, TEMPLATE_LABELS, PodFactsCache())
    state = {"phase": "Running", "ready": True, "ready_ago": 5, "deleting": False, "owner": UID,
             "labels": {"app": "web"}}
    pod = make_pod("a", 1, state)
    tally.refresh({"default/a"}, {"default/a": pod}.get)
    assert tally.counts(0, NOW).ready == 1
    # Same resourceVersion: the tally trusts what it counted (informers replace, never edit).
    pod["status"]["conditions"][0]["status"] = "False"
    tally.refresh({"default/a"}, {"default/a": pod}.get)
    assert tally.counts(0, NOW).ready == 1
    tally.refresh({"default/a"}, {"default/a": make_pod("a", 2, {**state, "ready": False})}.get)
    assert tally.counts(0, NOW).ready == 0
    # A key the cache cannot read any more counts as gone.
    nothing: dict[str, Obj] = {}
    tally.refresh({"default/a"}, nothing.get)
    assert len(tally) == 0 and tally.counts(0, NOW).replicas == 0


def test_availability_is_strict_at_the_exact_boundary() -> None:
    tally = OwnedPodTally(UID, SELECTOR, TEMPLATE_LABELS, PodFactsCache())
    state = {"phase": "Running", "ready": True, "ready_ago": 10, "deleting": False, "owner": UID,
             "labels": {"app": "web"}}
    tally.refresh({"default/a"}, {"default/a": make_pod("a", 1, state)}.get)
    assert tally.available(10, NOW) == 0  # ready exactly 10 s: not longer than minReadySeconds
    assert tally.available(10, NOW + timedelta(microseconds=1)) == 1
    assert tally.available(9, NOW) == 1


def test_identity_changes_with_selector_labels_or_uid() -> None:
    tally = OwnedPodTally(UID, SELECTOR, TEMPLATE_LABELS, PodFactsCache())
    assert tally.matches_identity(UID, SELECTOR, dict(TEMPLATE_LABELS))
    assert not tally.matches_identity("other", SELECTOR, TEMPLATE_LABELS)
    assert not tally.matches_identity(UID, selector_from_label_selector({"matchLabels": {"app": "web"}}),
                                      TEMPLATE_LABELS)
    assert not tally.matches_identity(UID, SELECTOR, {"app": "web"})
