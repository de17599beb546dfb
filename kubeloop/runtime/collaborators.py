"""What a controller is given, as Protocols: the client, the caches, the recorder, the queue.

Controllers type their collaborators with these instead of the concrete classes
(:class:`~kubeloop.client.ApiClient`, :class:`~kubeloop.runtime.informers.SharedIndexInformer`,
:class:`~kubeloop.runtime.events.EventRecorder`, the work queue), so a test passes a fake that
records calls without subclassing nor a ``type: ignore``, and mypy still checks that the real
classes fit. Each Protocol names only what the controllers call, with the keywords they pass,
as controller-runtime's controllers take ``client.Client``, ``cache.Cache`` and
``record.EventRecorder`` interfaces (``pkg/client/interfaces.go``, ``pkg/cache/cache.go``,
client-go ``tools/record/event.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kubeloop.client import Resource
from kubeloop.runtime.handlers import Request
from kubeloop.runtime.informers.store import Indexer

Obj = dict[str, Any]
Body = Mapping[str, Any]


class ObjectClient(Protocol):
    """The reads and writes of one object that controllers make (``ApiClient`` fits)."""

    # Positional parameters are positional-only: a fake may name them as it likes.
    async def get(self, resource: Resource | str, name: str, /, *, namespace: str | None = None) -> Obj: ...

    async def create(self, resource: Resource | str, obj: Body, /, *, namespace: str | None = None) -> Obj: ...

    async def update(self, resource: Resource | str, obj: Body, /, *, namespace: str | None = None) -> Obj: ...

    async def update_status(self, resource: Resource | str, obj: Body, /, *, namespace: str | None = None) -> Obj: ...

    async def patch(
        self,
        resource: Resource | str,
        name: str,
        patch: Mapping[str, Any],
        /,
        *,
        patch_type: str = "merge",
        namespace: str | None = None,
    ) -> Obj: ...

    async def delete(
        self,
        resource: Resource | str,
        name: str,
        /,
        *,
        namespace: str | None = None,
        preconditions: Mapping[str, str] | None = None,
    ) -> Obj: ...


class CachedObjects(Protocol):
    """A collection's local cache as controllers read it (a shared informer fits): the indexer."""

    @property
    def indexer(self) -> Indexer: ...


class Recorder(Protocol):
    """Emits an Event about an object (``EventRecorder`` fits; never blocks, never raises)."""

    def event(
        self, obj: Mapping[str, Any], type_: str, reason: str, message: str, *, kind: str = "", api_version: str = ""
    ) -> None: ...


class RetryQueue(Protocol):
    """The controller's work queue as a reconcile sees it: how often a request was retried."""

    def num_requeues(self, item: Request) -> int: ...


__all__ = ["CachedObjects", "ObjectClient", "Recorder", "RetryQueue"]
