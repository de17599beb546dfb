"""Event handlers that turn cache events into reconcile requests.

A *mapper* takes an object and returns the requests it should cause:
:func:`requests_for_object` (the object itself), :func:`requests_for_owner` (the object's
controller of a given kind, as ``Owns()`` does), or any function of your own (``Watches()``).

A :class:`Handler` is controller-runtime's ``handler.EventHandler``
(``pkg/handler/eventhandler.go``): told of a create, an update or a delete with the object(s)
and the controller's :class:`Queue`, it decides what to enqueue and may do bookkeeping on the
way (expectations). Three kinds: :class:`EnqueueRequestForObject` (the object itself, upstream's
``pkg/handler/enqueue.go``; what :func:`requests_for_object` becomes),
:class:`EnqueueRequestsFromMapFunc` (a mapper, as upstream's
``handler.EnqueueRequestsFromMapFunc`` in ``pkg/handler/enqueue_mapped.go``) and :class:`Funcs`
(three optional functions, as upstream's ``handler.Funcs``). :class:`BoundHandler` binds one to
a queue and predicates and is what an informer is given; it unwraps deletion tombstones for
the predicates, and hands the delete function the event as received, tombstone or not (a
handler may need the tombstone's key when its object is gone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from kubeloop.api.meta import name_of, namespace_of, owner_references
from kubeloop.runtime.informers.store import DeletedFinalStateUnknown
from kubeloop.runtime.predicates import Predicate

Obj = dict[str, Any]


@dataclass(frozen=True, order=True)
class Request:
    """What a reconcile is asked to do: bring the named object to its desired state."""

    namespace: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def for_object(cls, obj: Obj) -> Request:
        return cls(namespace_of(obj), name_of(obj))

    def __str__(self) -> str:
        return self.key


Mapper = Callable[[Obj], Iterable[Request]]


class Queue(Protocol):
    """What a handler may do with the controller's work queue (controller-runtime passes its
    rate-limiting queue to every handler function)."""

    def add(self, item: Request) -> None: ...

    def add_after(self, item: Request, seconds: float) -> None: ...


def requests_for_object(obj: Obj) -> list[Request]:
    return [Request.for_object(obj)]


def requests_for_owner(group: str, kind: str, *, only_controller: bool = True) -> Mapper:
    """Map an object to its owner(s) of the given group and kind (same namespace)."""

    def mapper(obj: Obj) -> list[Request]:
        requests = []
        for ref in owner_references(obj):
            if only_controller and ref.get("controller") is not True:
                continue
            api_version = str(ref.get("apiVersion") or "")
            ref_group = api_version.rpartition("/")[0]
            if ref.get("kind") == kind and ref_group == group and ref.get("name"):
                requests.append(Request(namespace_of(obj), str(ref["name"])))
        return requests

    return mapper


def unwrap(obj: Obj | DeletedFinalStateUnknown) -> Obj | None:
    """The object of a delete event, tombstone or not (``None`` if the tombstone is empty)."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.obj
    return obj


class Handler(Protocol):
    """A controller's reaction to one cache event: enqueue requests into ``queue``."""

    def on_create(self, obj: Obj, is_in_initial_list: bool, queue: Queue) -> None: ...

    def on_update(self, old: Obj, new: Obj, queue: Queue) -> None: ...

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None: ...


CreateFunc = Callable[[Obj, bool, Queue], None]
UpdateFunc = Callable[[Obj, Obj, Queue], None]
DeleteFunc = Callable[[Obj | DeletedFinalStateUnknown, Queue], None]


@dataclass(frozen=True)
class Funcs:
    """A :class:`Handler` from optional functions; a missing one ignores its events."""

    create: CreateFunc | None = None
    update: UpdateFunc | None = None
    delete: DeleteFunc | None = None

    def on_create(self, obj: Obj, is_in_initial_list: bool, queue: Queue) -> None:
        if self.create is not None:
            self.create(obj, is_in_initial_list, queue)

    def on_update(self, old: Obj, new: Obj, queue: Queue) -> None:
        if self.update is not None:
            self.update(old, new, queue)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        if self.delete is not None:
            self.delete(obj, queue)


class EnqueueRequestsFromMapFunc:
    """A :class:`Handler` enqueueing what a mapper gives for the object(s) of each event."""

    def __init__(self, mapper: Mapper) -> None:
        self.mapper = mapper

    def _enqueue(self, queue: Queue, *objects: Obj) -> None:
        seen: set[Request] = set()
        for obj in objects:
            for request in self.mapper(obj):
                if request not in seen:
                    seen.add(request)
                    queue.add(request)

    def on_create(self, obj: Obj, is_in_initial_list: bool, queue: Queue) -> None:
        self._enqueue(queue, obj)

    def on_update(self, old: Obj, new: Obj, queue: Queue) -> None:
        # Both sides: an owner change must reach the old owner as well as the new one.
        self._enqueue(queue, new, old)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        actual = unwrap(obj)
        if actual is not None:
            self._enqueue(queue, actual)


class EnqueueRequestForObject:
    """The object's own request for every event, as upstream's ``handler.EnqueueRequestForObject``
    (``pkg/handler/enqueue.go``): an update enqueues the new object only (its key is the old
    one's). What ``For()`` and a bare :func:`requests_for_object` get: the same requests as
    mapping both sides through :class:`EnqueueRequestsFromMapFunc`, without a list, a set and a
    second request per update (every reconcile's own write comes back as one)."""

    def on_create(self, obj: Obj, is_in_initial_list: bool, queue: Queue) -> None:
        queue.add(Request.for_object(obj))

    def on_update(self, old: Obj, new: Obj, queue: Queue) -> None:
        queue.add(Request.for_object(new))

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown, queue: Queue) -> None:
        actual = unwrap(obj)
        if actual is not None:
            queue.add(Request.for_object(actual))


class BoundHandler:
    """Informer handler: filter events by predicates, then pass them to a :class:`Handler` with the queue.

    A delete whose tombstone holds no object skips the predicates (there is nothing to test)
    and reaches the handler only when there are none.
    """

    def __init__(self, handler: Handler, queue: Queue, predicates: Iterable[Predicate] = ()) -> None:
        self.handler = handler
        self._queue = queue
        self._predicates = tuple(predicates)

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        if all(p.on_create(obj) for p in self._predicates):
            self.handler.on_create(obj, is_in_initial_list, self._queue)

    def on_update(self, old: Obj, new: Obj) -> None:
        if all(p.on_update(old, new) for p in self._predicates):
            self.handler.on_update(old, new, self._queue)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        actual = unwrap(obj)
        if actual is None:
            if not self._predicates:
                self.handler.on_delete(obj, self._queue)
            return
        if all(p.on_delete(actual) for p in self._predicates):
            self.handler.on_delete(obj, self._queue)


def as_handler(handler: Handler | Mapper) -> Handler:
    """A :class:`Handler` as given, or one enqueueing what a mapper function gives."""
    if handler is requests_for_object:
        return EnqueueRequestForObject()
    if callable(handler):
        return EnqueueRequestsFromMapFunc(handler)
    return handler
