"""The CloneSet pod tally equals a full recount after every step of random pod histories, and
the refresh pass it skips is a no-op for every pod it calls quiet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubeloop.api import kruise
from kubeloop.api.labels import selector_from_label_selector
from kubeloop.api.meta import format_time
from kubeloop.api.pods import is_pod_active
from kubeloop.controllers.cloneset.diffs import count_pods
from kubeloop.controllers.cloneset.inplace import pod_update_completed, refresh
from kubeloop.controllers.cloneset.lifecycle import refreshed_state, with_initial_kruise_pod_ready
from kubeloop.controllers.cloneset.options import DEFAULT_BEHAVIOUR, CloneSetBehaviour, CloneSetFeatureGates
from kubeloop.controllers.cloneset.ordering import update_order_key
from kubeloop.controllers.cloneset.podstate import equal_to_revision
from kubeloop.controllers.cloneset.refreshplan import plan_refresh, refresh_context
from kubeloop.controllers.cloneset.revisions import live_revision_names
from kubeloop.controllers.cloneset.status import calculate_status
from kubeloop.controllers.cloneset.tally import CloneSetPodTally, refresh_may_write
from kubeloop.controllers.cloneset.update import count_unavailable, pod_template_hash_patch

Obj = dict[str, Any]
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
UID = "cs-uid"
SELECTOR_SPEC = {"matchLabels": {"app": "web"}}
SELECTOR = selector_from_label_selector(SELECTOR_SPEC)
REVISIONS = ["web-abc", "web-def"]
STATES = ["", kruise.STATE_NORMAL, kruise.STATE_PREPARING_NORMAL, kruise.STATE_PREPARING_UPDATE,
          kruise.STATE_UPDATING, kruise.STATE_UPDATED, kruise.STATE_PREPARING_DELETE]
CS: Obj = {"metadata": {"name": "web", "namespace": "default", "uid": UID, "generation": 1},
           "spec": {"replicas": 5, "selector": SELECTOR_SPEC}}

pod_states = st.fixed_dictionaries({
    "phase": st.sampled_from(["Pending", "Running", "Running", "Succeeded", "Failed"]),
    "ready": st.sampled_from([None, False, True, True]),
    "in_place_ready": st.sampled_from([None, "True", "False"]),
    "deleting": st.booleans(),
    "owner": st.sampled_from([UID, UID, UID, "other-uid"]),
    "controller": st.sampled_from([True, True, False]),
    "app": st.sampled_from(["web", "web", "db"]),
    "revision": st.sampled_from([None, "web-abc", "abc", "web-def", "x-def", "web-xyz"]),
    "state": st.sampled_from(STATES),
    "specified": st.sampled_from([None, "true", "false"]),
    "hash_label": st.booleans(),
    "gates": st.sampled_from([(), (kruise.KRUISE_POD_READY,), (kruise.INPLACE_UPDATE_READY,)]),
    "kruise_ready": st.booleans(),
    "grace": st.sampled_from([False, False, True, 600]),
    "node": st.sampled_from([None, "node-1"]),
    "restarted": st.sampled_from([None, False, True]),
})
steps = st.lists(st.tuples(st.integers(0, 7), st.one_of(st.none(), pod_states)), min_size=1, max_size=25)


def make_pod(name: str, version: int, state: dict[str, Any]) -> Obj:
    labels: Obj = {"app": state["app"]}
    if state["revision"] is not None:
        labels[kruise.CONTROLLER_REVISION_HASH_LABEL] = state["revision"]
        if state["hash_label"]:
            labels[kruise.POD_TEMPLATE_HASH_LABEL] = state["revision"].rsplit("-", 1)[-1]
    if state["state"]:
        labels[kruise.LIFECYCLE_STATE_LABEL] = state["state"]
    if state["specified"] is not None:
        labels[kruise.SPECIFIED_DELETE_LABEL] = state["specified"]
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": str(version),
                 "labels": labels,
                 "ownerReferences": [{"apiVersion": kruise.API_VERSION, "kind": kruise.CLONESET_KIND, "name": "web",
                                      "uid": state["owner"], "controller": state["controller"]}]}
    if state["deleting"]:
        meta["deletionTimestamp"] = format_time(NOW)
    annotations: Obj = {}
    if state["grace"]:
        seconds = state["grace"] if state["grace"] is not True else 0
        annotations[kruise.INPLACE_UPDATE_GRACE_ANNOTATION] = f'{{"revision": "web-def", "graceSeconds": {seconds}}}'
    if state.get("restarted") is not None:
        # An in-place update in progress: the container is restarted once its imageID moved.
        annotations[kruise.INPLACE_UPDATE_STATE_ANNOTATION] = (
            '{"revision": "web-def", "updateTimestamp": "2024-06-01T11:59:00Z",'
            ' "lastContainerStatuses": {"app": {"imageID": "sha-old"}}}')
    if annotations:
        meta["annotations"] = annotations
    conditions: list[Obj] = []
    if state["ready"] is not None:
        conditions.append({"type": "Ready", "status": "True" if state["ready"] else "False",
                           "lastTransitionTime": format_time(NOW - timedelta(seconds=5))})
    if state["in_place_ready"] is not None:
        conditions.append({"type": kruise.INPLACE_UPDATE_READY, "status": state["in_place_ready"]})
    if state["kruise_ready"]:
        conditions.append({"type": kruise.KRUISE_POD_READY, "status": "True"})
    spec: Obj = {"containers": [{"name": "app", "image": "nginx"}],
                 "readinessGates": [{"conditionType": gate} for gate in state["gates"]]}
    if state.get("node"):
        spec["nodeName"] = state["node"]
    return {"metadata": meta,
            "spec": spec,
            "status": {"phase": state["phase"], "conditions": conditions,
                       "containerStatuses": [{"name": "app", "image": "nginx:1.0",
                                              "imageID": "sha-new" if state.get("restarted") else "sha-old"}]}}


def step(pods: dict[str, Obj], index: int, version: int, state: dict[str, Any] | None) -> tuple[str, set[str]]:
    """One step of a pod history applied to ``pods`` (``state`` None deletes the pod): the key
    it changed, and what the owner-UID index then holds for this CloneSet (pods with any
    reference to it)."""
    key = f"default/p{index}"
    if state is None:
        pods.pop(key, None)
    else:
        pods[key] = make_pod(f"p{index}", version, state)
    return key, {k for k, pod in pods.items() if pod["metadata"]["ownerReferences"][0]["uid"] == UID}


def is_claimed(pod: Obj) -> bool:
    reference = pod["metadata"]["ownerReferences"][0]
    return (is_pod_active(pod) and reference["controller"] and reference["uid"] == UID
            and SELECTOR.matches(pod["metadata"]["labels"]))


def check(tally: CloneSetPodTally, pods: dict[str, Obj], owned: set[str]) -> None:
    """Every read of the tally against the per-pod functions on the claimed pods."""
    claimed_keys = sorted(k for k in owned if is_claimed(pods[k]))
    to_claim = {k for k in owned if is_pod_active(pods[k]) and not is_claimed(pods[k])}
    assert tally.claimed_keys() == claimed_keys
    assert tally.claimed_pods() == [pods[k] for k in claimed_keys]
    assert tally.view().index_of == {k: i for i, k in enumerate(claimed_keys)}
    assert tally.to_claim == to_claim
    assert tally.claimed_uids == {pods[k]["metadata"]["uid"]: k for k in claimed_keys}
    claimed = [pods[k] for k in claimed_keys]
    view = tally.view(claimed_keys)
    for update in REVISIONS:
        for for_scale in (False, True):
            for as_update in (False, True):
                expected = count_pods(CS, claimed, update, now=NOW, for_scale=for_scale,
                                      gates=CloneSetFeatureGates(preparing_update_as_update=as_update))
                assert view.diff_counts(update, for_scale=for_scale, preparing_update_as_update=as_update) == expected
        status, _ = calculate_status(CS, claimed, update_revision=update, current_revision=REVISIONS[0],
                                     collision_count=0, label_selector="app=web", now=NOW)
        counted, _ = calculate_status(CS, [], update_revision=update, current_revision=REVISIONS[0],
                                      collision_count=0, label_selector="app=web", now=NOW,
                                      pod_counts=view.status_counts(update))
        assert counted == status
        assert view.unavailable(update) == count_unavailable(claimed, 0, update, NOW)
        for equal in (False, True):
            assert view.indexes_on(update, equal=equal) == [
                i for i, pod in enumerate(claimed) if equal_to_revision(pod, update) == equal]
    assert view.unquiet == [i for i, pod in enumerate(claimed) if refresh_may_write(pod)]
    # Cached per version of each pod across steps: equal to the key of the pod as it is now.
    assert [view.update_order_key(i) for i in range(len(claimed))] == [update_order_key(p) for p in claimed]
    assert view.has_planned_deletions() == any(
        kruise.SPECIFIED_DELETE_LABEL in p["metadata"]["labels"]
        or p["metadata"]["labels"].get(kruise.LIFECYCLE_STATE_LABEL) == kruise.STATE_PREPARING_DELETE for p in claimed)
    revisions = [{"metadata": {"name": name}} for name in ["web-abc", "web-def", "web-xyz", "web-old"]]
    assert live_revision_names("a", "b", claimed, revisions, labels=view.revision_labels()) == \
        live_revision_names("a", "b", claimed, revisions)


@settings(max_examples=60, deadline=None)
@given(steps)
def test_tally_matches_a_full_recount_after_every_step(history: list[tuple[int, Any]]) -> None:
    # Two tallies follow the same history: one re-reads every owned pod at each step, the other
    # only the pods marked as changed (as the controller's cache listener marks them).
    full = CloneSetPodTally(UID, SELECTOR_SPEC, SELECTOR)
    marked = CloneSetPodTally(UID, SELECTOR_SPEC, SELECTOR)
    pods: dict[str, Obj] = {}
    for version, (index, state) in enumerate(history, start=1):
        key, owned = step(pods, index, version, state)
        marked.mark(key)
        full.refresh(owned, pods.get)
        marked.update(0, owned, pods.get)
        for tally in (full, marked):
            assert len(tally) == len(owned)
            check(tally, pods, owned)


@settings(max_examples=100, deadline=None)
@given(pod_states, st.sampled_from([None, {"preNormal": {"labelsHandler": {"hold": "true"}}},
                                    {"inPlaceUpdate": {"labelsHandler": {"hold": "true"}}}]),
       st.sampled_from(REVISIONS), st.integers(0, 3600))
# A Normal pod, labelled, whose KruisePodReady gate has no condition yet: the refresh adds it.
@example({"phase": "Running", "ready": True, "in_place_ready": None, "deleting": False, "owner": UID,
          "controller": True, "app": "web", "revision": "web-abc", "state": "Normal", "specified": None,
          "hash_label": True, "gates": (kruise.KRUISE_POD_READY,), "kruise_ready": False, "grace": False,
          "node": "node-1", "restarted": None}, None, "web-abc", 0)
def test_a_quiet_pod_refreshes_to_nothing(state: dict[str, Any], lifecycle: Obj | None, update: str,
                                          seconds: int) -> None:
    pod = make_pod("p", 1, state)
    if refresh_may_write(pod):
        return
    now = NOW + timedelta(seconds=seconds)
    cs = {**CS, "spec": {**CS["spec"], **({"lifecycle": lifecycle} if lifecycle else {})}}
    assert with_initial_kruise_pod_ready(pod, now) is None
    assert refresh(pod, now=now).kind == "none"
    assert refreshed_state(cs, pod, update, update_completed=pod_update_completed(pod)) is None
    assert pod_template_hash_patch(pod) is None


def test_update_reads_everything_again_when_the_store_epoch_changes() -> None:
    tally = CloneSetPodTally(UID, SELECTOR_SPEC, SELECTOR)
    state = {"phase": "Running", "ready": True, "in_place_ready": None, "deleting": False, "owner": UID,
             "controller": True, "app": "web", "revision": "web-abc", "state": "", "specified": None,
             "hash_label": True, "gates": (), "kruise_ready": False, "grace": False}
    pods = {"default/a": make_pod("a", 1, state)}
    tally.update(0, set(pods), pods.get)
    assert tally.claimed == 1
    # Changed without a mark (a wholesale replace): only a new epoch makes the tally look again.
    pods["default/b"] = make_pod("b", 2, state)
    tally.update(0, set(pods), pods.get)
    assert tally.claimed == 1
    tally.update(1, set(pods), pods.get)
    assert tally.claimed == 2
    # A pod whose owner reference to the CloneSet went away leaves on its mark.
    del pods["default/a"]
    tally.mark("default/a")
    tally.update(1, {"default/b"}, pods.get)
    assert tally.claimed_keys() == ["default/b"]


def test_identity_changes_with_selector_or_uid() -> None:
    tally = CloneSetPodTally(UID, SELECTOR_SPEC, SELECTOR)
    assert tally.matches_identity(UID, {"matchLabels": {"app": "web"}})
    assert not tally.matches_identity("other", SELECTOR_SPEC)
    assert not tally.matches_identity(UID, {"matchLabels": {"app": "db"}})


LIFECYCLES: list[Obj | None] = [None, {"preNormal": {"labelsHandler": {"hold": "true"}}},
                                {"inPlaceUpdate": {"labelsHandler": {"hold": "true"}}}]


def cloneset_with(lifecycle: Obj | None) -> Obj:
    return {**CS, "spec": {**CS["spec"], **({"lifecycle": lifecycle} if lifecycle else {})}}


BEHAVIOURS = [DEFAULT_BEHAVIOUR, CloneSetBehaviour(normal_requires_scheduling=True)]


@settings(max_examples=150, deadline=None)
@given(pod_states, st.sampled_from(LIFECYCLES), st.sampled_from(REVISIONS), st.integers(0, 3600),
       st.integers(0, 3600), st.sampled_from(BEHAVIOURS))
def test_an_idle_refresh_plan_stays_idle_at_any_later_time(state: dict[str, Any], lifecycle: Obj | None,
                                                            update: str, first: int, later: int,
                                                            behaviour: CloneSetBehaviour) -> None:
    pod = make_pod("p", 1, state)
    cs = cloneset_with(lifecycle)
    plans = [plan_refresh(cs, pod, update, NOW + timedelta(seconds=s), behaviour) for s in (first, later)]
    assert plans[0].idle == plans[1].idle
    if plans[0].idle:
        # Idle means the refresh pass writes nothing and asks for no re-check.
        assert with_initial_kruise_pod_ready(pod, NOW) is None
        assert refresh(pod, now=NOW).kind == "none"
        assert refreshed_state(cs, pod, update, update_completed=pod_update_completed(pod),
                               behaviour=behaviour) is None
        assert pod_template_hash_patch(pod) is None


syncs = st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), pod_states), st.sampled_from(LIFECYCLES),
                           st.sampled_from(REVISIONS), st.integers(0, 3600)), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(syncs, st.sampled_from(BEHAVIOURS))
def test_the_refresh_pass_skips_only_pods_whose_plan_is_idle(history: list[tuple[int, Any, Any, str, int]],
                                                             behaviour: CloneSetBehaviour) -> None:
    # Each step changes one pod, then runs a sync's refresh bookkeeping under a random context:
    # plan the due pods, note the idle ones. Every unquiet pod left out must plan to nothing.
    tally = CloneSetPodTally(UID, SELECTOR_SPEC, SELECTOR)
    pods: dict[str, Obj] = {}
    for version, (index, state, lifecycle, update, seconds) in enumerate(history, start=1):
        key, owned = step(pods, index, version, state)
        tally.mark(key)
        tally.update(0, owned, pods.get)
        cs = cloneset_with(lifecycle)
        context = refresh_context(cs, update)
        now = NOW + timedelta(seconds=seconds)
        claimed = tally.claimed_pods()
        view = tally.view()
        due = view.refresh_due(context)
        assert [i for i, _ in due] == sorted(i for i, _ in due)
        due_keys = {key for _, key in due}
        for pod in claimed:
            pod_key = f"default/{pod['metadata']['name']}"
            if refresh_may_write(pod) and pod_key not in due_keys:
                assert plan_refresh(cs, pod, update, now, behaviour).idle, pod_key
        for i, due_key in due:
            if plan_refresh(cs, claimed[i], update, now, behaviour).idle:
                view.note_idle(context, due_key, claimed[i]["metadata"]["resourceVersion"])


def test_an_idle_note_for_an_older_version_or_context_is_ignored() -> None:
    behaviour = CloneSetBehaviour(normal_requires_scheduling=True)
    tally = CloneSetPodTally(UID, SELECTOR_SPEC, SELECTOR)
    state = {"phase": "Pending", "ready": None, "in_place_ready": None, "deleting": False, "owner": UID,
             "controller": True, "app": "web", "revision": "web-abc", "state": kruise.STATE_PREPARING_NORMAL,
             "specified": None, "hash_label": True, "gates": (), "kruise_ready": False, "grace": False, "node": None,
             "restarted": None}
    pods = {"default/a": make_pod("a", 1, state)}
    tally.update(0, set(pods), pods.get)
    context = refresh_context(CS, "web-abc")
    # Waiting to be scheduled: unquiet, but its plan is idle.
    assert plan_refresh(CS, pods["default/a"], "web-abc", NOW, behaviour).idle
    assert tally.refresh_due(context) == {"default/a"}
    tally.note_idle(context, "default/a", "0")
    assert tally.refresh_due(context) == {"default/a"}
    tally.note_idle(context, "default/a", "1")
    assert tally.refresh_due(context) == set()
    # Another update revision or lifecycle: planned again.
    assert tally.refresh_due(refresh_context(CS, "web-def")) == {"default/a"}
    tally.note_idle(context, "default/a", "1")
    assert tally.refresh_due(refresh_context(CS, "web-def")) == {"default/a"}
    # Scheduled (a new version): planned again, and no longer idle (PreparingNormal -> Normal).
    tally.note_idle(refresh_context(CS, "web-def"), "default/a", "1")
    pods["default/a"] = make_pod("a", 2, {**state, "node": "node-1"})
    tally.mark("default/a")
    tally.update(0, set(pods), pods.get)
    assert tally.refresh_due(refresh_context(CS, "web-def")) == {"default/a"}
    assert not plan_refresh(CS, pods["default/a"], "web-def", NOW, behaviour).idle
