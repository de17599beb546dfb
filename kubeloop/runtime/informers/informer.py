"""The shared index informer: one reflector, one indexed cache, many event handlers.

Every handler gets its own listener task and buffer, so a slow handler delays only itself.
Handlers see ``on_add(obj, is_in_initial_list)``, ``on_update(old, new)`` and
``on_delete(obj_or_tombstone)`` in the order the cache changed; a handler registered after
the informer started first gets ``on_add(obj, True)`` for everything cached.

After a relist, handlers see updates only for objects whose resourceVersion changed, and
``on_delete(DeletedFinalStateUnknown)`` for objects that vanished while the watch was down.
A resync re-delivers every cached object as ``on_update(obj, obj)`` to the handlers whose
resync period is due; it never contacts the server.

Handlers may be plain functions or coroutine functions. They should only enqueue keys; the
objects they receive are the cache's own and must not be mutated.

Every object is rebuilt on arrival, before it is cached: first by the informer's ``transform``
if one is set (client-go's ``SetTransform``; none by default, so objects are exactly what the
server sent; :func:`strip_managed_fields` is the usual one), then by a
:class:`~kubeloop.runtime.informers.sharing.SubtreeSharer` that makes parts equal to the previous
version's (or the previous object's) the same objects, which cuts the cache's memory to about a
third (bench/README.md, "Cache size against the raw JSON"). The result stays a plain dict equal to what
was sent; ``share_subtrees=False`` turns the sharing off. Shared parts are why the cache must
never be mutated in place: one change would show through several objects.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kubeloop.api.meta import object_key, resource_version_of
from kubeloop.runtime.clock import REAL_CLOCK, Clock
from kubeloop.runtime.informers.listwatch import ListerWatcher
from kubeloop.runtime.informers.mutation import CacheMutationDetector, detector_enabled_by_env
from kubeloop.runtime.informers.reflector import Reflector, Transform
from kubeloop.runtime.informers.sharing import SubtreeSharer
from kubeloop.runtime.informers.store import DeletedFinalStateUnknown, Indexer, IndexFunc

log = logging.getLogger(__name__)

Obj = dict[str, Any]
MIN_RESYNC_PERIOD = 1.0


class EventHandler(Protocol):
    """Callbacks for cache changes (return values may be awaitables)."""

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> Any: ...

    def on_update(self, old: Obj, new: Obj) -> Any: ...

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> Any: ...


@dataclass
class EventHandlerFuncs:
    """An :class:`EventHandler` from optional functions; a missing one ignores its events."""

    add: Callable[[Obj, bool], Any] | None = None
    update: Callable[[Obj, Obj], Any] | None = None
    delete: Callable[[Obj | DeletedFinalStateUnknown], Any] | None = None

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> Any:
        return self.add(obj, is_in_initial_list) if self.add else None

    def on_update(self, old: Obj, new: Obj) -> Any:
        return self.update(old, new) if self.update else None

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> Any:
        return self.delete(obj) if self.delete else None


_ADD, _UPDATE, _DELETE = 0, 1, 2


class HandlerRegistration:
    """One registered handler: its buffer, its task and its own sync state."""

    def __init__(self, handler: EventHandler, resync_period: float, name: str) -> None:
        self.handler = handler
        self.resync_period = resync_period
        self.next_resync = 0.0
        self.resyncing = False
        self._name = name
        self._buffer: deque[tuple[int, Any, Any, bool]] = deque()
        self._wakeup = asyncio.Event()
        self._initial_pending = 0
        self._initial_known = False
        self._task: asyncio.Task[None] | None = None
        self.errors = 0

    def has_synced(self) -> bool:
        """True once every object of the initial list has been handed to this handler."""
        return self._initial_known and self._initial_pending == 0

    def _mark_initial(self, count: int) -> None:
        self._initial_pending += count
        self._initial_known = True

    def _push(self, kind: int, a: Any, b: Any = None, initial: bool = False) -> None:
        self._buffer.append((kind, a, b, initial))
        self._wakeup.set()

    def _start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"informer-listener-{self._name}")

    async def _stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _run(self) -> None:
        while True:
            while not self._buffer:
                self._wakeup.clear()
                await self._wakeup.wait()
            kind, a, b, initial = self._buffer.popleft()
            try:
                if kind == _ADD:
                    result = self.handler.on_add(a, initial)
                elif kind == _UPDATE:
                    result = self.handler.on_update(a, b)
                else:
                    result = self.handler.on_delete(a)
                if inspect.isawaitable(result):
                    await result
            except asyncio.CancelledError:
                raise
            except Exception:
                self.errors += 1
                log.exception("informer %s: event handler failed", self._name)
            finally:
                if initial:
                    self._initial_pending -= 1


class SharedIndexInformer:
    """An indexed cache of one collection, kept current by a reflector, feeding many handlers."""

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        *,
        name: str = "",
        resync_period: float = 0.0,
        indexers: Mapping[str, IndexFunc] | None = None,
        clock: Clock = REAL_CLOCK,
        detect_mutations: bool | None = None,
        transform: Transform | None = None,
        share_subtrees: bool = True,
    ) -> None:
        self.name = name
        self.indexer = Indexer(indexers)
        self._transform = transform
        self._sharer = SubtreeSharer() if share_subtrees else None
        self._clock = clock
        self._default_resync = resync_period
        self._resync_check_period = resync_period
        self._registrations: list[HandlerRegistration] = []
        self._reflector = Reflector(lister_watcher, self, name=name, clock=clock, transform=self._intake)
        self._synced = False
        self._started = False
        self._tasks: list[asyncio.Task[None]] = []
        self._synced_event = asyncio.Event()
        enabled = detector_enabled_by_env() if detect_mutations is None else detect_mutations
        self.mutation_detector = CacheMutationDetector(name) if enabled else None

    # -- public API ---------------------------------------------------------------------
    @property
    def last_sync_resource_version(self) -> str:
        return self._reflector.last_sync_resource_version

    @property
    def reflector(self) -> Reflector:
        return self._reflector

    def has_synced(self) -> bool:
        """True once the first list has been applied to the cache."""
        return self._synced

    async def wait_for_sync(self) -> None:
        await self._synced_event.wait()

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        self.indexer.add_indexers(indexers)

    def set_transform(self, transform: Transform | None) -> None:
        """Rebuild every object with ``transform`` before caching it; only before :meth:`start`.

        ``transform`` gets a freshly decoded object and returns the object to cache (it may edit
        its argument, which nobody else holds). As in client-go, it must be set before the
        informer starts so that every cached object went through it.
        """
        if self._started:
            raise RuntimeError(f"informer {self.name}: the transform cannot change after start")
        self._transform = transform

    def add_event_handler(self, handler: EventHandler, resync_period: float | None = None) -> HandlerRegistration:
        """Register a handler; after start it first receives every cached object as an add."""
        period = self._default_resync if resync_period is None else resync_period
        if 0 < period < MIN_RESYNC_PERIOD:
            period = MIN_RESYNC_PERIOD
        if period > 0:
            if not self._started and (self._resync_check_period == 0 or period < self._resync_check_period):
                self._resync_check_period = period
            elif self._started and self._resync_check_period > 0:
                period = max(period, self._resync_check_period)
            else:
                period = 0.0 if self._started else period
        registration = HandlerRegistration(handler, period, self.name)
        registration.next_resync = self._clock.now() + period
        self._registrations.append(registration)
        if self._started:
            if self._synced:
                objects = self.indexer.list()
                registration._mark_initial(len(objects))
                for obj in objects:
                    registration._push(_ADD, obj, None, True)
            registration._start()
        return registration

    def remove_event_handler(self, registration: HandlerRegistration) -> None:
        if registration in self._registrations:
            self._registrations.remove(registration)
            if self._started:
                asyncio.get_running_loop().create_task(registration._stop())

    async def start(self) -> None:
        """Start listing and watching in the background (idempotent)."""
        if self._started:
            return
        self._started = True
        loop = asyncio.get_running_loop()
        for registration in self._registrations:
            registration._start()
        self._tasks.append(loop.create_task(self._reflector.run(), name=f"reflector-{self.name}"))
        if self._resync_check_period > 0:
            self._tasks.append(loop.create_task(self._resync_loop(), name=f"resync-{self.name}"))

    async def stop(self) -> None:
        """Stop the reflector and every listener; raises if the mutation detector found one."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._tasks.clear()
        for registration in self._registrations:
            await registration._stop()
        self._started = False
        if self.mutation_detector is not None:
            self.mutation_detector.check()

    # -- reflector sink -----------------------------------------------------------------
    def replace(self, items: list[Obj], resource_version: str) -> None:
        """Apply a full list: adds, changed updates, and tombstone deletes for vanished keys."""
        initial = not self._synced
        if initial:
            for registration in self._registrations:
                registration._mark_initial(len(items))
        listed: set[str] = set()
        for obj in items:
            key = object_key(obj)
            listed.add(key)
            old = self._store(key, obj)
            if old is None:
                self._distribute(_ADD, obj, None, initial)
            elif resource_version_of(old) != resource_version_of(obj):
                self._distribute(_UPDATE, old, obj, False)
        for key in [k for k in self.indexer.keys() if k not in listed]:  # noqa: SIM118 - a snapshot
            old = self._remove(key)
            self._distribute(_DELETE, DeletedFinalStateUnknown(key, old), None, False)
        if initial:
            self._synced = True
            self._synced_event.set()

    def apply_event(self, event_type: str, obj: Obj) -> None:
        key = object_key(obj)
        if event_type == "DELETED":
            if self._remove(key) is not None:
                self._distribute(_DELETE, obj, None, False)
            return
        old = self._store(key, obj)
        if old is None:
            self._distribute(_ADD, obj, None, False)
        else:
            self._distribute(_UPDATE, old, obj, False)

    # -- internals ------------------------------------------------------------------------
    def _intake(self, obj: Obj) -> Obj:
        """Every object the reflector receives, as it arrives: the transform, then sharing."""
        if self._transform is not None:
            obj = self._transform(obj)
        if self._sharer is not None:
            obj = self._sharer.share(obj, self.indexer.get(object_key(obj)))
        return obj

    def _store(self, key: str, obj: Obj) -> Obj | None:
        if self.mutation_detector is not None:
            self.mutation_detector.record(key, obj)
        return self.indexer.upsert(obj, key)

    def _remove(self, key: str) -> Obj | None:
        if self.mutation_detector is not None:
            self.mutation_detector.forget(key)
        return self.indexer.delete(key)

    def _distribute(self, kind: int, a: Any, b: Any, initial: bool) -> None:
        for registration in self._registrations:
            registration._push(kind, a, b, initial)

    async def _resync_loop(self) -> None:
        while True:
            await self._clock.sleep(self._resync_check_period)
            self.resync_due()

    def resync_due(self) -> None:
        """Re-deliver every cached object to handlers whose resync period has elapsed."""
        now = self._clock.now()
        due = [r for r in self._registrations if r.resync_period > 0 and now >= r.next_resync]
        for registration in due:
            registration.next_resync = now + registration.resync_period
        if not due or not self._synced:
            return
        for obj in self.indexer.list():
            for registration in due:
                registration._push(_UPDATE, obj, obj, False)
        if self.mutation_detector is not None:
            self.mutation_detector.check()


def strip_managed_fields(obj: Obj) -> Obj:
    """A transform dropping ``metadata.managedFields`` (controller-runtime's
    ``cache.TransformStripManagedFields``), for caches whose readers never look at them."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


async def wait_for_cache_sync(*synced: Callable[[], bool], poll: float = 0.01) -> None:
    """Return once every ``has_synced`` callable returns True (bound it with ``asyncio.timeout``).

    ``has_synced`` is a plain predicate (informers, handler registrations, anything), so this
    polls, as client-go does.
    """
    while not all(check() for check in synced):  # noqa: ASYNC110 - predicates have no event to await
        await asyncio.sleep(poll)
