"""Handlers a controller is given (controller-runtime's ``handler.Funcs`` and
``handler.EnqueueRequestsFromMapFunc``, ``pkg/handler/eventhandler.go``): each event reaches
them with the controller's queue, and every handler counts in the controller's cache sync."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from kubeloop.runtime.controller import Controller
from kubeloop.runtime.handlers import (
    BoundHandler,
    EnqueueRequestForObject,
    EnqueueRequestsFromMapFunc,
    Funcs,
    Queue,
    Request,
    as_handler,
    requests_for_object,
)
from kubeloop.runtime.informers import DeletedFinalStateUnknown
from kubeloop.runtime.informers.informer import SharedIndexInformer
from kubeloop.runtime.predicates import from_filter
from kubeloop.testing.polling import eventually

from .fakes import FakeCollection, InstantClock

Obj = dict[str, Any]


def informer_for(api: FakeCollection) -> SharedIndexInformer:
    return SharedIndexInformer(api, name="objs", clock=InstantClock())


class RecordingQueue:
    def __init__(self) -> None:
        self.added: list[Request] = []
        self.delayed: list[tuple[Request, float]] = []

    def add(self, item: Request) -> None:
        self.added.append(item)

    def add_after(self, item: Request, seconds: float) -> None:
        self.delayed.append((item, seconds))


def obj(name: str, rv: str = "1", **labels: str) -> Obj:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "labels": labels}}


async def test_funcs_get_every_event_with_the_controllers_queue_and_enqueue_what_they_choose() -> None:
    api = FakeCollection()
    api.put("a")
    events: list[tuple[str, str, bool]] = []
    reconciled: list[Request] = []

    async def reconcile(request: Request) -> None:
        reconciled.append(request)

    controller = Controller("funcs", reconcile, registry=CollectorRegistry())

    def create(new: Obj, initial: bool, queue: Queue) -> None:
        events.append(("create", new["metadata"]["name"], initial))
        assert queue is controller.queue
        queue.add(Request("owners", f"of-{new['metadata']['name']}"))

    def update(old: Obj, new: Obj, queue: Queue) -> None:
        events.append(("update", new["metadata"]["name"], False))

    def delete(gone: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        name = gone.key if isinstance(gone, DeletedFinalStateUnknown) else gone["metadata"]["name"]
        events.append(("delete", name, False))
        queue.add(Request("owners", f"gone-{name}"))

    informer = informer_for(api)
    controller.watch(informer, Funcs(create=create, update=update, delete=delete))
    await controller.start()
    try:
        assert ("create", "a", True) in events
        api.put("b")
        api.put("a", spec={"x": 1})
        api.remove("b")
        await eventually(lambda: Request("owners", "gone-b") in reconciled, timeout=5, interval=0.001)
        assert events == [("create", "a", True), ("create", "b", False), ("update", "a", False),
                          ("delete", "b", False)]
        assert set(reconciled) == {Request("owners", "of-a"), Request("owners", "of-b"), Request("owners", "gone-b")}
    finally:
        await controller.stop()
        await informer.stop()


async def test_a_handler_not_yet_handed_its_initial_list_keeps_the_controller_unsynced() -> None:
    api = FakeCollection()
    for name in ("a", "b", "c"):
        api.put(name)
    informer = informer_for(api)

    async def reconcile(request: Request) -> None:
        return None

    controller = Controller("late", reconcile, registry=CollectorRegistry())
    controller.watch(informer)
    await controller.start()
    try:
        assert controller.has_synced()
        # The cache is listed; the new handler has not been handed its three objects yet.
        controller.watch(informer, Funcs())
        assert informer.has_synced()
        assert not controller.has_synced()
        await eventually(controller.has_synced, timeout=5, interval=0.001)
    finally:
        await controller.stop()
        await informer.stop()


def kept(o: Obj) -> bool:
    return bool(o["metadata"]["labels"].get("keep"))


def test_predicates_filter_before_the_handler_and_tombstones_reach_it_as_received() -> None:
    queue = RecordingQueue()
    deleted: list[Obj | DeletedFinalStateUnknown] = []
    bound = BoundHandler(Funcs(delete=lambda gone, q: deleted.append(gone)), queue, [from_filter(kept)])
    tombstone = DeletedFinalStateUnknown("ns/k", obj("k", keep="yes"))
    bound.on_delete(tombstone)
    bound.on_delete(obj("dropped"))
    # An empty tombstone cannot be tested against the predicates: it is held back.
    bound.on_delete(DeletedFinalStateUnknown("ns/empty", None))
    assert deleted == [tombstone]
    unfiltered = BoundHandler(Funcs(delete=lambda gone, q: deleted.append(gone)), queue)
    empty = DeletedFinalStateUnknown("ns/empty", None)
    unfiltered.on_delete(empty)
    assert deleted == [tombstone, empty]


def test_a_mapper_enqueues_each_request_once_for_both_sides_of_an_update() -> None:
    queue = RecordingQueue()

    def by_label(o: Obj) -> list[Request]:
        return [Request("ns", o["metadata"]["labels"]["owner"])]

    handler = EnqueueRequestsFromMapFunc(by_label)
    handler.on_update(obj("p", owner="x"), obj("p", rv="2", owner="y"), queue)
    handler.on_update(obj("q", owner="x"), obj("q", rv="2", owner="x"), queue)
    handler.on_delete(DeletedFinalStateUnknown("ns/gone", None), queue)
    assert queue.added == [Request("ns", "y"), Request("ns", "x"), Request("ns", "x")]


def test_a_bare_requests_for_object_enqueues_the_objects_own_request_once_per_event() -> None:
    # upstream's handler.EnqueueRequestForObject (pkg/handler/enqueue.go): For() enqueues the
    # object on create, the new object on update (once, not once per side), the object behind a
    # tombstone on delete, and nothing for a tombstone without one.
    handler = as_handler(requests_for_object)
    assert isinstance(handler, EnqueueRequestForObject)
    queue = RecordingQueue()
    handler.on_create(obj("a"), True, queue)
    handler.on_update(obj("b", "1"), obj("b", "2"), queue)
    handler.on_update({"metadata": {"name": "c", "namespace": "old"}}, {"metadata": {"name": "c"}}, queue)
    handler.on_delete(obj("d"), queue)
    handler.on_delete(DeletedFinalStateUnknown("ns/e", obj("e")), queue)
    handler.on_delete(DeletedFinalStateUnknown("ns/f", None), queue)
    assert queue.added == [Request("ns", "a"), Request("ns", "b"), Request("", "c"), Request("ns", "d"),
                           Request("ns", "e")]
    assert queue.delayed == []
