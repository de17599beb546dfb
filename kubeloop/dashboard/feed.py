"""From watches to subscribers: informers feed a :class:`ClusterModel`, changes go out as messages.

:class:`DashboardFeed` owns the model. Anything that changes it calls :meth:`~DashboardFeed.notify`;
the feed then rebuilds the touched views at most every ``interval`` seconds (a burst of watch
events becomes one update), and all of them every ``tick`` seconds while some pod waits to
become *available* (it does when its ``minReadySeconds`` pass, without any event), and sends
each subscriber only the workloads whose view changed. Messages are JSON objects:

- ``{"type": "snapshot", "time": t, "workloads": [view, ...]}`` first, to every new subscriber;
- ``{"type": "delta", "time": t, "upsert": [view, ...], "remove": [key, ...]}`` afterwards;

``t`` is the server's clock (Unix seconds), against which the browser reads the timelines.

A subscriber that falls more than ``max_backlog`` messages behind is dropped (its stream
ends); the browser's ``EventSource`` reconnects and starts again from a snapshot.

:func:`watch_cluster` starts one informer per collection on a :class:`SharedInformerFactory`
of its own and routes their events into the feed. It only lists and watches (the page's
token-protected buttons write, through :mod:`kubeloop.dashboard.actionroutes`). CloneSets and
ControllerRevisions are watched only when the server knows the CloneSet resource (a plain
cluster without OpenKruise shows Deployments).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from kubeloop.api.meta import split_key
from kubeloop.client import CONTROLLER_REVISIONS, DEPLOYMENTS, EVENTS, PODS, REPLICA_SETS, ApiClient, Resource
from kubeloop.dashboard.model import ADDED, DELETED, MODIFIED, ClusterModel, Collection
from kubeloop.dashboard.views import View
from kubeloop.runtime.informers import DeletedFinalStateUnknown, EventHandlerFuncs, wait_for_cache_sync
from kubeloop.runtime.informers.factory import SharedInformerFactory

log = logging.getLogger(__name__)

CLONESET_RESOURCE = "clonesets.apps.kruise.io"
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


class DashboardFeed:
    """Rebuilds the views when the model changes and fans the changes out (see the module docstring)."""

    def __init__(self, model: ClusterModel, *, interval: float = 0.1, tick: float = 1.0, max_backlog: int = 256,
                 clock: Clock = utc_now) -> None:
        self.model = model
        self.interval = interval
        self.tick = tick
        self.max_backlog = max_backlog
        self._clock = clock
        self._dirty = asyncio.Event()
        self._views: dict[str, View] = {}
        self._encoded: dict[str, bytes] = {}
        self._subscribers: set[asyncio.Queue[bytes | None]] = set()
        self._task: asyncio.Task[None] | None = None
        self.version = 0
        """Incremented by each rebuild that changed something (tests wait on it)."""

    # -- input ---------------------------------------------------------------------------
    def notify(self) -> None:
        """The model changed: rebuild soon."""
        self._dirty.set()

    def apply(self, collection: Collection, event_type: str, obj: Any) -> None:
        """Fold a watch event into the model and schedule a rebuild."""
        self.model.apply(collection, event_type, obj)
        self.notify()

    # -- output --------------------------------------------------------------------------
    def views(self) -> list[View]:
        """The views as of the last rebuild."""
        return list(self._views.values())

    def snapshot_message(self) -> bytes:
        return orjson.dumps({"type": "snapshot", "time": self._clock().timestamp(), "workloads": self.views()})

    def open_subscription(self) -> Subscription:
        """A new subscriber's queue, holding the snapshot; ``close`` it when done."""
        subscription = Subscription(self)
        subscription.queue.put_nowait(self.snapshot_message())
        self._subscribers.add(subscription.queue)
        return subscription

    def unsubscribe(self, queue: asyncio.Queue[bytes | None]) -> None:
        self._subscribers.discard(queue)

    async def subscribe(self) -> AsyncGenerator[bytes, None]:
        """Messages for one subscriber: a snapshot, then deltas, until the feed stops or drops it."""
        subscription = self.open_subscription()
        try:
            while (message := await subscription.next()) is not None:
                yield message
        finally:
            subscription.close()

    def rebuild(self, *, full: bool = False) -> bytes | None:
        """Rebuild the views now (only those touched since the last rebuild unless ``full``); the
        delta message (also sent to subscribers), or None if nothing changed."""
        fresh = {view["key"]: view for view in self.model.views(self._clock(), full=full)}
        # The model hands back the very same dict for a view it did not rebuild: skip encoding it.
        encoded = {key: self._encoded[key] if self._views.get(key) is view else orjson.dumps(view)
                   for key, view in fresh.items()}
        upsert = [fresh[key] for key, data in encoded.items() if self._encoded.get(key) != data]
        remove = [key for key in self._encoded if key not in fresh]
        self._views, self._encoded = fresh, encoded
        if not upsert and not remove:
            return None
        self.version += 1
        message = orjson.dumps({"type": "delta", "time": self._clock().timestamp(), "upsert": upsert,
                                "remove": remove})
        for queue in list(self._subscribers):
            if queue.qsize() >= self.max_backlog:
                self._subscribers.discard(queue)
                queue.put_nowait(None)
            else:
                queue.put_nowait(message)
        return message

    # -- lifecycle -----------------------------------------------------------------------
    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last_full = loop.time()
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.tick):
                    await self._dirty.wait()
            # Let a burst of events land before rebuilding.
            await asyncio.sleep(self.interval)
            self._dirty.clear()
            full = loop.time() - last_full >= self.tick and self.model.waiting_on_time()
            if full:
                last_full = loop.time()
            try:
                self.rebuild(full=full)
            except Exception:  # one malformed object must not stop the page from updating
                log.exception("dashboard: rebuilding the views failed")

    def start(self) -> None:
        if self._task is None:
            self.rebuild()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="dashboard-feed")

    async def stop(self) -> None:
        """Stop rebuilding and end every subscriber's stream."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for queue in list(self._subscribers):
            queue.put_nowait(None)
        self._subscribers.clear()


class Subscription:
    """One subscriber's message queue (see :meth:`DashboardFeed.open_subscription`)."""

    def __init__(self, feed: DashboardFeed) -> None:
        self._feed = feed
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        """Messages for this subscriber; ``None`` ends the stream."""

    async def next(self) -> bytes | None:
        """The next message; ``None`` once the stream has ended (feed stopped or subscriber dropped)."""
        return await self.queue.get()

    def close(self) -> None:
        """Stop receiving messages (idempotent)."""
        self._feed.unsubscribe(self.queue)


def _handlers(feed: DashboardFeed, collection: Collection) -> EventHandlerFuncs:
    def on_add(obj: dict[str, Any], _initial: bool) -> None:
        feed.apply(collection, ADDED, obj)

    def on_update(_old: dict[str, Any], new: dict[str, Any]) -> None:
        feed.apply(collection, MODIFIED, new)

    def on_delete(obj: dict[str, Any] | DeletedFinalStateUnknown) -> None:
        last: Any = obj
        if isinstance(obj, DeletedFinalStateUnknown):
            # A tombstone may have lost the object; its key still names what to forget.
            namespace, name = split_key(obj.key)
            last = obj.obj if obj.obj is not None else {"metadata": {"namespace": namespace, "name": name}}
        feed.apply(collection, DELETED, last)

    return EventHandlerFuncs(add=on_add, update=on_update, delete=on_delete)


async def cloneset_resource(client: ApiClient) -> Resource | None:
    """The CloneSet resource if the server serves it, else ``None`` (no OpenKruise installed)."""
    try:
        return await client.resource(CLONESET_RESOURCE)
    except Exception as exc:  # NotFound, or a discovery failure: either way, no CloneSets to show
        log.info("dashboard: no CloneSets on this server (%s)", exc)
        return None


async def watch_cluster(client: ApiClient, feed: DashboardFeed, *, namespace: str | None = None,
                        sync_timeout: float | None = 30.0) -> Callable[[], Awaitable[None]]:
    """Start informers feeding ``feed``; wait until the initial lists reached the model (up to
    ``sync_timeout``); return ``stop``."""
    factory = SharedInformerFactory(client, namespace=namespace)
    collections: list[tuple[Collection, Resource]] = [
        (Collection.DEPLOYMENTS, DEPLOYMENTS),
        (Collection.REPLICA_SETS, REPLICA_SETS),
        (Collection.PODS, PODS),
        (Collection.EVENTS, EVENTS),
    ]
    clonesets = await cloneset_resource(client)
    if clonesets is not None:
        collections += [(Collection.CLONESETS, clonesets), (Collection.CONTROLLER_REVISIONS, CONTROLLER_REVISIONS)]
    registrations = []
    for collection, resource in collections:
        informer = await factory.informer_for(resource)
        registrations.append(informer.add_event_handler(_handlers(feed, collection)))
    await factory.start()
    if sync_timeout is not None:
        # Synced caches are not enough: the model is fed by the handlers, which run a little later.
        try:
            async with asyncio.timeout(sync_timeout):
                await wait_for_cache_sync(*(registration.has_synced for registration in registrations))
        except TimeoutError:
            log.warning("dashboard: caches did not sync within %ss; showing what has arrived", sync_timeout)
    return factory.shutdown
