"""The garbage collector's graph and decisions, and the controller registry."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.client import ApiClient, ClientConfig, MockResponse, MockTransport, Request, Resource
from kubeloop.controllers import (
    DEFAULT_CONTROLLERS,
    UnknownControllerError,
    controller_builder,
    parse_controller_list,
)
from kubeloop.controllers.garbagecollector.controller import GarbageCollector, UnknownKindError, collectable_resources
from kubeloop.controllers.garbagecollector.graph import (
    BACKGROUND,
    FOREGROUND,
    ORPHAN,
    DependencyGraph,
    DependentAction,
    OwnerState,
    blocking_dependents,
    classify_owners,
    decide_dependent,
    node_from_object,
    with_unblocked_owner_references,
    without_finalizer,
    without_owner_references,
)
from kubeloop.runtime.informers.factory import SharedInformerFactory

Obj = dict[str, Any]


def ref(uid: str, block: bool = False) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"n-{uid}", "uid": uid, "blockOwnerDeletion": block}


def obj(uid: str, owners: list[Obj] | None = None, finalizers: list[str] | None = None,
        deleting: bool = False) -> Obj:
    meta: Obj = {"name": f"n-{uid}", "namespace": "ns", "uid": uid, "ownerReferences": list(owners or []),
                 "finalizers": list(finalizers or [])}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"metadata": meta}


def node(uid: str, **kwargs: Any) -> Any:
    return node_from_object(obj(uid, **kwargs), "v1", "Pod")


def test_graph_tracks_dependents_through_reference_changes_and_removal() -> None:
    graph = DependencyGraph()
    graph.upsert(node("a", owners=[ref("o1"), ref("o2")]))
    graph.upsert(node("b", owners=[ref("o1")]))
    assert [n.uid for n in graph.dependents_of("o1")] == ["a", "b"]
    released = graph.upsert(node("a", owners=[ref("o2")]))
    assert released == {"o1"}
    assert [n.uid for n in graph.dependents_of("o1")] == ["b"]
    graph.remove("b")
    assert graph.dependents_of("o1") == [] and "o1" not in graph.dependents


@pytest.mark.parametrize(
    ("states", "has_dependents", "finalizers", "expected"),
    [
        # A solid owner keeps the dependent; dangling and waiting references are cut.
        ({"o1": OwnerState.EXISTS, "o2": OwnerState.ABSENT}, False, [], DependentAction(frozenset({"o2"}))),
        ({"o1": OwnerState.EXISTS, "o2": OwnerState.DELETING_DEPENDENTS}, True, [],
         DependentAction(frozenset({"o2"}))),
        ({"o1": OwnerState.EXISTS, "o2": OwnerState.EXISTS}, False, [], DependentAction()),
        # No owner left: deleted with the policy its own finalizers ask for.
        ({"o1": OwnerState.ABSENT, "o2": OwnerState.ABSENT}, False, [], DependentAction(delete_policy=BACKGROUND)),
        ({"o1": OwnerState.ABSENT, "o2": OwnerState.ABSENT}, False, ["orphan"], DependentAction(delete_policy=ORPHAN)),
        ({"o1": OwnerState.ABSENT, "o2": OwnerState.ABSENT}, False, ["foregroundDeletion"],
         DependentAction(delete_policy=FOREGROUND)),
        # Waiting on a foreground owner with dependents of its own: foreground, recursively.
        ({"o1": OwnerState.DELETING_DEPENDENTS, "o2": OwnerState.ABSENT}, True, [],
         DependentAction(delete_policy=FOREGROUND)),
        ({"o1": OwnerState.DELETING_DEPENDENTS, "o2": OwnerState.ABSENT}, False, [],
         DependentAction(delete_policy=BACKGROUND)),
    ],
)
def test_dependent_decisions(states: dict[str, OwnerState], has_dependents: bool, finalizers: list[str],
                             expected: DependentAction) -> None:
    dependent = node("d", owners=[ref("o1"), ref("o2")], finalizers=finalizers)
    assert decide_dependent(dependent, classify_owners(dependent.owners, states), has_dependents) == expected


def test_only_references_with_block_owner_deletion_block_a_foreground_owner() -> None:
    graph = DependencyGraph()
    graph.upsert(node("blocking", owners=[ref("owner", block=True)]))
    graph.upsert(node("free", owners=[ref("owner", block=False)]))
    graph.upsert(node("other", owners=[ref("elsewhere", block=True)]))
    assert [n.uid for n in blocking_dependents(graph, "owner")] == ["blocking"]


def test_owner_flags_follow_finalizers_and_deletion() -> None:
    assert node("x", finalizers=["foregroundDeletion"], deleting=True).deleting_dependents
    assert not node("x", finalizers=["foregroundDeletion"]).deleting_dependents
    assert node("x", finalizers=["orphan"], deleting=True).orphaning


def test_reference_and_finalizer_removal_copy_the_object() -> None:
    original = obj("d", owners=[ref("o1"), ref("o2")], finalizers=["orphan", "keep"])
    stripped = without_owner_references(original, ["o1"])
    assert stripped is not None and [r["uid"] for r in stripped["metadata"]["ownerReferences"]] == ["o2"]
    assert len(original["metadata"]["ownerReferences"]) == 2
    emptied = without_owner_references(original, ["o1", "o2"])
    assert emptied is not None and "ownerReferences" not in emptied["metadata"]
    assert without_owner_references(original, ["nope"]) is None
    unfinalized = without_finalizer(original, "orphan")
    assert unfinalized is not None and unfinalized["metadata"]["finalizers"] == ["keep"]
    assert without_finalizer(original, "absent") is None


def test_collectable_resources_need_list_watch_delete_and_skip_events_and_duplicates() -> None:
    verbs = frozenset({"list", "watch", "delete", "get"})
    resources = [
        Resource("apps", "v1", "deployments", "Deployment", True, verbs=verbs),
        Resource("apps", "v1beta1", "deployments", "Deployment", True, verbs=verbs),
        Resource("", "v1", "events", "Event", True, verbs=verbs),
        Resource("", "v1", "bindings", "Binding", True, verbs=frozenset({"create"})),
        Resource("example.com", "v1", "widgets", "Widget", True, verbs=verbs),
    ]
    assert [(r.group, r.version, r.plural) for r in collectable_resources(resources)] == [
        ("apps", "v1", "deployments"), ("example.com", "v1", "widgets")]


def test_registry_resolves_names_and_rejects_unknown_ones() -> None:
    for name in DEFAULT_CONTROLLERS:
        assert callable(controller_builder(name))
    assert parse_controller_list("") == list(DEFAULT_CONTROLLERS)
    assert parse_controller_list("*") == list(DEFAULT_CONTROLLERS)
    assert parse_controller_list("replicaset, deployment") == ["replicaset", "deployment"]
    with pytest.raises(UnknownControllerError):
        parse_controller_list("replicaset,nope")


def refuse(request: Request) -> MockResponse:
    raise AssertionError(f"unexpected API call {request.method} {request.path}")


def collector() -> GarbageCollector:
    """A collector whose graph the test drives by hand; it never calls the API."""
    client = ApiClient(ClientConfig("https://k8s.example:6443", qps=0), transport=MockTransport(refuse))
    return GarbageCollector(client, SharedInformerFactory(client))


PODS_RESOURCE = Resource("", "v1", "pods", "Pod", True)
SETS_RESOURCE = Resource("apps", "v1", "replicasets", "ReplicaSet", True)


async def queued(gc: GarbageCollector) -> list[tuple[str, str]]:
    """Drain the queue: what the workers would be handed now."""
    items = []
    while len(gc.queue):
        item, _ = await gc.queue.get()
        assert item is not None
        gc.queue.done(item)
        items.append(item)
    return sorted(items)


async def test_observing_objects_enqueues_what_they_affect() -> None:
    gc = collector()
    gc.observe(obj("rs"), SETS_RESOURCE)
    gc.observe(obj("pod", owners=[ref("rs")]), PODS_RESOURCE)
    assert await queued(gc) == []  # the owner is known and alive
    gc.observe(obj("stray", owners=[ref("never-seen")]), PODS_RESOURCE)
    assert await queued(gc) == [("delete", "stray")]
    gc.observe(obj("rs", finalizers=["foregroundDeletion"], deleting=True), SETS_RESOURCE)
    # The owner (to drop its finalizer when it can) and every dependent (to be deleted).
    assert await queued(gc) == [("delete", "pod"), ("delete", "rs")]


async def test_forgetting_an_owner_enqueues_its_dependents_and_waiting_owners() -> None:
    gc = collector()
    gc.observe(obj("owner", finalizers=["foregroundDeletion"], deleting=True), SETS_RESOURCE)
    gc.observe(obj("rs"), SETS_RESOURCE)
    gc.observe(obj("child", owners=[ref("owner"), ref("rs")]), PODS_RESOURCE)
    gc.observe(obj("pod", owners=[ref("rs")]), PODS_RESOURCE)
    await queued(gc)
    gc.forget("rs")
    assert await queued(gc) == [("delete", "child"), ("delete", "pod")]
    assert "rs" in gc.absent_owners
    gc.forget("child")
    assert await queued(gc) == [("delete", "owner")]


async def test_an_orphaning_owner_is_queued_for_orphaning() -> None:
    gc = collector()
    gc.observe(obj("owner", finalizers=["orphan"], deleting=True), SETS_RESOURCE)
    assert await queued(gc) == [("orphan", "owner")]


async def test_an_owner_of_an_unknown_kind_is_never_taken_for_absent() -> None:
    gc = collector()
    dependent = node("d", owners=[ref("o1")])
    with pytest.raises(UnknownKindError):
        await gc.owner_state(dependent, dependent.owners[0])
    assert "o1" not in gc.absent_owners


def test_a_possible_cycle_unblocks_the_owner_references_before_deleting() -> None:
    dependent = node("d", owners=[ref("o1", block=True)])
    waiting = classify_owners(dependent.owners, {"o1": OwnerState.DELETING_DEPENDENTS})
    assert decide_dependent(dependent, waiting, True, True) == DependentAction(delete_policy=FOREGROUND,
                                                                              unblock_owners=True)
    assert decide_dependent(dependent, waiting, True, False) == DependentAction(delete_policy=FOREGROUND)
    original = obj("d", owners=[ref("o1", block=True), ref("o2")])
    unblocked = with_unblocked_owner_references(original)
    assert unblocked is not None
    assert [r["blockOwnerDeletion"] for r in unblocked["metadata"]["ownerReferences"]] == [False, False]
    assert original["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True
    assert with_unblocked_owner_references(obj("d", owners=[ref("o2")])) is None
