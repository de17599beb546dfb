"""Watch window and fan-out for one resource type.

kube-apiserver serves watches from its watch cache, a ring of the latest changes per resource
type; a watch that starts before the oldest change it still holds is refused with 410 Gone, as
after etcd compaction. ``WatchWindow`` is that ring plus the set of live watchers of the type:
a change is appended to the ring and pushed to the queue of every watcher that wants its
namespace, so one write costs O(watchers of the type), not O(all watchers).

Each ``Watcher`` owns an unbounded queue: a slow reader never blocks writers nor other readers.
The queue is a deque plus at most one waiting future, cheaper than ``asyncio.Queue`` at the
rates a fan-out reaches; it is fed synchronously, in revision order, by the single-threaded
store.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable

from kubeloop.server.storage._model import TooOldResourceVersion, WatchEvent


def event_namespace(event: WatchEvent) -> str:
    namespace: str = event.object["metadata"].get("namespace", "")
    return namespace


class Watcher:
    """An async iterator of the changes of one resource type after a revision.

    Events arrive in revision order; only those with ``rv > from_rv`` are delivered, so a watch
    from a revision ahead of the store simply waits. One task at a time may wait on a watcher.
    ``close()`` unregisters it and drops whatever is queued; iteration then ends and ``next``
    returns None. Events are shared with other watchers and with the window: read-only.
    """

    __slots__ = ("_closed", "_from_rv", "_namespace", "_pending", "_unregister", "_waiter")

    def __init__(self, namespace: str | None, from_rv: int, unregister: Callable[[Watcher], None]) -> None:
        self._namespace = namespace
        self._from_rv = from_rv
        self._unregister = unregister
        self._pending: deque[WatchEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    @property
    def namespace(self) -> str | None:
        """The namespace watched, or None for all namespaces."""
        return self._namespace

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def backlog(self) -> int:
        """Number of events queued and not yet read (lets the HTTP layer spot stalled clients)."""
        return len(self._pending)

    def push(self, event: WatchEvent) -> None:
        """Queue ``event`` (called by the window, in revision order)."""
        if self._closed or event.rv <= self._from_rv:
            return
        self._pending.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> WatchEvent:
        event = await self.next()
        if event is None:
            raise StopAsyncIteration
        return event

    # A timeout parameter rather than asyncio.timeout(): timing out is the normal way for the
    # HTTP layer to learn that it is time for a bookmark, not an error to unwind.
    async def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event; None after ``timeout`` seconds without one, or once the watcher is closed."""
        if self._pending:
            return self._pending.popleft()
        if self._closed or (timeout is not None and timeout <= 0):
            return None
        if self._waiter is not None:
            raise RuntimeError("another task is already waiting on this watcher")
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiter = waiter
        timer = loop.call_later(timeout, _wake, waiter) if timeout is not None else None
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()
        return self._pending.popleft() if self._pending else None

    def take_queued(self, limit: int) -> list[WatchEvent]:
        """Up to ``limit`` events already queued, without waiting (lets the HTTP layer send a
        burst of changes in one write instead of one write per event)."""
        pending = self._pending
        taken: list[WatchEvent] = []
        while pending and len(taken) < limit:
            taken.append(pending.popleft())
        return taken

    def close(self) -> None:
        """Stop receiving events; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._pending.clear()
        self._unregister(self)
        if self._waiter is not None:
            _wake(self._waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class WatchWindow:
    """The last ``size`` changes of one resource type and the watchers of that type.

    ``floor`` is the revision of the newest change of this type known to be missing from the
    window (0 if none is): every change with a larger revision is in the window, so a watch from
    any ``from_rv >= floor`` can be replayed exactly.
    """

    __slots__ = ("_all_namespaces", "_by_namespace", "events", "floor", "size")

    def __init__(self, size: int, floor: int = 0, events: Iterable[WatchEvent] = ()) -> None:
        if size < 1:
            raise ValueError("the watch window must hold at least one change")
        self.size = size
        self.floor = floor
        self.events: deque[WatchEvent] = deque(events)
        self._all_namespaces: dict[Watcher, None] = {}
        self._by_namespace: dict[str, dict[Watcher, None]] = {}
        while len(self.events) > size:
            self.floor = self.events.popleft().rv

    def append(self, event: WatchEvent, namespace: str) -> WatchEvent | None:
        """Record ``event`` and fan it out; return the change that left the window, if any."""
        for watcher in self._all_namespaces:
            watcher.push(event)
        watchers = self._by_namespace.get(namespace)
        if watchers:
            for watcher in watchers:
                watcher.push(event)
        self.events.append(event)
        if len(self.events) > self.size:
            evicted = self.events.popleft()
            self.floor = evicted.rv
            return evicted
        return None

    def watch(self, namespace: str | None, from_rv: int) -> Watcher:
        """Register a watcher fed with every change after ``from_rv``, replayed ones first."""
        if from_rv < self.floor:
            raise TooOldResourceVersion(self.floor, from_rv)
        watcher = Watcher(namespace, from_rv, self._unregister)
        replay: list[WatchEvent] = []
        for event in reversed(self.events):
            if event.rv <= from_rv:
                break
            replay.append(event)
        for event in reversed(replay):
            if namespace is None or event_namespace(event) == namespace:
                watcher.push(event)
        if namespace is None:
            self._all_namespaces[watcher] = None
        else:
            self._by_namespace.setdefault(namespace, {})[watcher] = None
        return watcher

    def watcher_count(self) -> int:
        return len(self._all_namespaces) + sum(len(group) for group in self._by_namespace.values())

    def close_all(self) -> None:
        for watcher in [*self._all_namespaces, *(w for g in self._by_namespace.values() for w in g)]:
            watcher.close()

    def _unregister(self, watcher: Watcher) -> None:
        namespace = watcher.namespace
        if namespace is None:
            self._all_namespaces.pop(watcher, None)
            return
        group = self._by_namespace.get(namespace)
        if group is not None:
            group.pop(watcher, None)
            if not group:
                del self._by_namespace[namespace]
