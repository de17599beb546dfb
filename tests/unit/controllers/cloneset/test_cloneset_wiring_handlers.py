"""The CloneSet controller's cache-event handlers: expectations and what gets enqueued."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from kubeloop.api import kruise
from kubeloop.controllers.cloneset.handlers import CloneSetEventHandlers, is_cloneset_reference
from kubeloop.runtime.expectations import CREATE, DELETE, ResourceVersionExpectations, ScaleExpectations
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers import DeletedFinalStateUnknown, ListPage, SharedIndexInformer

Obj = dict[str, Any]


class NoListWatch:
    """A lister-watcher for informers whose store the test fills by hand."""

    async def list(self, *, resource_version: str | None, limit: int | None, continue_token: str | None) -> ListPage:
        return ListPage([], "1", None)

    async def watch(
        self, *, resource_version: str, timeout_seconds: int | None, allow_bookmarks: bool
    ) -> AsyncIterator[tuple[str, Obj]]:
        nothing: list[tuple[str, Obj]] = []
        for event in nothing:
            yield event


class RecordingQueue:
    def __init__(self) -> None:
        self.added: list[Request] = []

    def add(self, item: Request) -> None:
        self.added.append(item)

    def add_after(self, item: Request, seconds: float) -> None:
        raise AssertionError("the CloneSet handlers never delay")


def cloneset(name: str = "web", uid: str = "cs-uid", labels: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": kruise.API_VERSION, "kind": kruise.CLONESET_KIND,
            "metadata": {"name": name, "namespace": "ns", "uid": uid},
            "spec": {"selector": {"matchLabels": labels or {"app": name}}}}


def owned(name: str, owner: Obj | None, *, rv: str = "1", labels: dict[str, str] | None = None,
          deleting: bool = False) -> Obj:
    meta: Obj = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": rv,
                 "labels": labels if labels is not None else {"app": "web"}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": kruise.API_VERSION, "kind": kruise.CLONESET_KIND,
                                    "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                    "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"metadata": meta}


def make_handlers(*clonesets: Obj) -> tuple[CloneSetEventHandlers, ScaleExpectations, ResourceVersionExpectations,
                                          RecordingQueue]:
    informer = SharedIndexInformer(NoListWatch())
    for cs in clonesets:
        informer.indexer.upsert(cs)
    scale = ScaleExpectations()
    versions = ResourceVersionExpectations()
    handlers = CloneSetEventHandlers(informer, scale, versions)
    queue = RecordingQueue()
    return handlers, scale, versions, queue


async def test_reference_must_name_a_kruise_cloneset() -> None:
    assert is_cloneset_reference({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"})
    assert is_cloneset_reference({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet"})
    assert not is_cloneset_reference({"apiVersion": "apps/v1", "kind": "CloneSet"})
    assert not is_cloneset_reference({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet"})
    assert not is_cloneset_reference(None)


async def test_pod_creation_is_observed_and_enqueues_owner() -> None:
    cs = cloneset()
    handlers, scale, _, queue = make_handlers(cs)
    scale.expect("ns/web", CREATE, "web-abcde")
    handlers.on_pod_add(owned("web-abcde", cs), False, queue)
    assert scale.satisfied("ns/web")[0]
    assert queue.added == [Request("ns", "web")]


async def test_pod_with_stale_owner_uid_is_ignored() -> None:
    cs = cloneset()
    handlers, scale, _, queue = make_handlers(cs)
    scale.expect("ns/web", CREATE, "web-abcde")
    handlers.on_pod_add(owned("web-abcde", cloneset(uid="other")), False, queue)
    assert not scale.satisfied("ns/web")[0]
    assert queue.added == []


async def test_orphan_pod_enqueues_matching_clonesets_only() -> None:
    web, api = cloneset("web", "u1"), cloneset("api", "u2")
    handlers, _, _, queue = make_handlers(web, api)
    handlers.on_pod_add(owned("stray", None, labels={"app": "api"}), False, queue)
    assert queue.added == [Request("ns", "api")]


async def test_pod_update_setting_deletion_is_an_observed_deletion() -> None:
    cs = cloneset()
    handlers, scale, versions, queue = make_handlers(cs)
    scale.expect("ns/web", DELETE, "web-abcde")
    versions.expect("uid-web-abcde", "5")
    handlers.on_pod_update(owned("web-abcde", cs, rv="4"), owned("web-abcde", cs, rv="5", deleting=True), queue)
    assert scale.satisfied("ns/web")[0]
    assert versions.satisfied("uid-web-abcde", "5")
    assert queue.added == [Request("ns", "web")]


async def test_pod_update_with_same_resource_version_is_ignored() -> None:
    cs = cloneset()
    handlers, _, _, queue = make_handlers(cs)
    handlers.on_pod_update(owned("p", cs, rv="3"), owned("p", cs, rv="3"), queue)
    assert queue.added == []


async def test_pod_update_feeds_resource_version_expectations() -> None:
    cs = cloneset()
    handlers, _, versions, queue = make_handlers(cs)
    versions.expect("uid-p", "7")
    handlers.on_pod_update(owned("p", cs, rv="5"), owned("p", cs, rv="6"), queue)
    assert not versions.satisfied("uid-p", "6")
    handlers.on_pod_update(owned("p", cs, rv="6"), owned("p", cs, rv="7"), queue)
    assert versions.satisfied("uid-p", "6")


async def test_owner_change_enqueues_both_owners() -> None:
    web, api = cloneset("web", "u1"), cloneset("api", "u2")
    handlers, _, _, queue = make_handlers(web, api)
    handlers.on_pod_update(owned("p", web, rv="1"), owned("p", api, rv="2"), queue)
    assert set(queue.added) == {Request("ns", "web"), Request("ns", "api")}


async def test_pod_delete_tombstone_observes_and_forgets_versions() -> None:
    cs = cloneset()
    handlers, scale, versions, queue = make_handlers(cs)
    scale.expect("ns/web", DELETE, "p")
    versions.expect("uid-p", "9")
    handlers.on_pod_delete(DeletedFinalStateUnknown("ns/p", owned("p", cs)), queue)
    assert scale.satisfied("ns/web")[0]
    assert versions.satisfied("uid-p", "1")
    assert queue.added == [Request("ns", "web")]


async def test_pvc_events_feed_scale_expectations() -> None:
    cs = cloneset()
    handlers, scale, _, queue = make_handlers(cs)
    scale.expect("ns/web", CREATE, "data-web-abcde")
    handlers.on_pvc_add(owned("data-web-abcde", cs), False, queue)
    assert scale.satisfied("ns/web")[0]
    scale.expect("ns/web", DELETE, "data-web-abcde")
    handlers.on_pvc_update(owned("data-web-abcde", cs, rv="1"), owned("data-web-abcde", cs, rv="2", deleting=True),
                           queue)
    assert scale.satisfied("ns/web")[0]
    scale.expect("ns/web", DELETE, "data-web-fghjk")
    handlers.on_pvc_delete(owned("data-web-fghjk", cs), queue)
    assert scale.satisfied("ns/web")[0]
    assert queue.added == [Request("ns", "web")] * 3


async def test_cloneset_delete_drops_its_expectations() -> None:
    cs = cloneset()
    handlers, scale, _, queue = make_handlers(cs)
    scale.expect("ns/web", CREATE, "web-abcde")
    handlers.on_cloneset_delete(DeletedFinalStateUnknown("ns/web", None), queue)
    assert scale.satisfied("ns/web")[0]


async def test_cloneset_updates_feed_and_deletes_clear_version_expectations() -> None:
    cs = cloneset()
    handlers, _, versions, queue = make_handlers(cs)
    versions.expect("cs-uid", "8")
    handlers.on_cloneset_update({**cs, "metadata": {**cs["metadata"], "resourceVersion": "7"}},
                                {**cs, "metadata": {**cs["metadata"], "resourceVersion": "8"}}, queue)
    assert versions.satisfied("cs-uid", "1")
    versions.expect("cs-uid", "9")
    handlers.on_cloneset_delete(cs, queue)
    assert versions.satisfied("cs-uid", "1")
