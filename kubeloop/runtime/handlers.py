"""Event handlers that turn cache events into reconcile requests.

A *mapper* takes an object and returns the requests it should cause:
:func:`requests_for_object` (the object itself), :func:`requests_for_owner` (the object's
controller of a given kind, as ``Owns()`` does), or any function of your own (``Watches()``).
:class:`EnqueueHandler` adapts a mapper plus predicates to an informer's handler interface,
unwrapping deletion tombstones, and enqueues into a work queue.
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


class Enqueuer(Protocol):
    def add(self, item: Request) -> None: ...


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


class EnqueueHandler:
    """Informer handler: filter events by predicates, map objects to requests, enqueue them."""

    def __init__(self, queue: Enqueuer, mapper: Mapper, predicates: Iterable[Predicate] = ()) -> None:
        self._queue = queue
        self._mapper = mapper
        self._predicates = tuple(predicates)

    def _enqueue(self, *objects: Obj) -> None:
        seen: set[Request] = set()
        for obj in objects:
            for request in self._mapper(obj):
                if request not in seen:
                    seen.add(request)
                    self._queue.add(request)

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        if all(p.on_create(obj) for p in self._predicates):
            self._enqueue(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        if all(p.on_update(old, new) for p in self._predicates):
            # Both sides: an owner change must reach the old owner as well as the new one.
            self._enqueue(new, old)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        actual = unwrap(obj)
        if actual is not None and all(p.on_delete(actual) for p in self._predicates):
            self._enqueue(actual)
