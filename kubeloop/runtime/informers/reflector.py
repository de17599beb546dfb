"""The reflector: list, then watch from the list's resourceVersion, forever.

It keeps a :class:`ReflectorSink` (the informer) equal to the server's state, following
client-go's rules:

- The first list asks for resourceVersion ``"0"`` (any, the cheapest) in pages of 500; later
  relists ask "not older than" the last synced version without paging; after a 410 the next
  list asks for ``""`` (the latest, consistent read).
- A continuation page that expires (410) restarts the list without paging.
- The watch starts at the list's version with bookmarks on and a random 5 to 10 minute timeout.
  A watch the server closes normally is reopened from the last version, with no relist. A
  watch that cannot be opened (connection refused, 429) is retried after a back-off, also with
  no relist. A 410 (or any other watch error) ends the round, and the next round relists.
- Failed rounds back off exponentially (0.8 s doubling to 30 s, jittered, reset after 2 min
  of good behaviour).
- An optional ``transform`` rebuilds every listed and watched object as it arrives (client-go's
  ``TransformFunc``, applied in the reflector's store). List pages go through it as they come,
  item by item when the page decodes lazily (``listdecode``), so a long list never holds both
  its raw dicts and the transformed ones. Bookmarks and errors are not transformed.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from kubeloop.api.errorstatus import status_code
from kubeloop.runtime.clock import REAL_CLOCK, Clock
from kubeloop.runtime.informers.listwatch import (
    ListerWatcher,
    WatchErrorEvent,
    is_expired,
    is_too_large_resource_version,
)

log = logging.getLogger(__name__)

Obj = dict[str, Any]

Transform = Callable[[Obj], Obj]
"""Rebuilds an object before it reaches the sink: returns a new object, or its argument (a fresh
decode nobody else holds, which it may edit)."""

PAGE_SIZE = 500
MIN_WATCH_TIMEOUT = 300


class ReflectorSink(Protocol):
    """Where a reflector delivers state: a full replacement, or one watch event."""

    def replace(self, items: list[Obj], resource_version: str) -> None: ...

    def apply_event(self, event_type: str, obj: Obj) -> None: ...


class Backoff:
    """Exponential back-off with jitter that resets after a quiet period (client-go's manager)."""

    def __init__(
        self,
        clock: Clock,
        *,
        initial: float = 0.8,
        maximum: float = 30.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        rng: random.Random | None = None,
    ) -> None:
        self._clock = clock
        self._initial = initial
        self._maximum = maximum
        self._factor = factor
        self._jitter = jitter
        self._reset_after = reset_after
        self._rng = rng or random.Random()
        self._current = 0.0
        self._last = float("-inf")

    def next_delay(self) -> float:
        """The next wait; the sequence restarts when the previous failure is old enough."""
        now = self._clock.now()
        if now - self._last > self._reset_after or self._current == 0.0:
            self._current = self._initial
        else:
            self._current = min(self._current * self._factor, self._maximum)
        self._last = now
        return self._current + self._current * self._jitter * self._rng.random()


class Reflector:
    """Keeps a sink in step with one collection through a :class:`ListerWatcher`."""

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        sink: ReflectorSink,
        *,
        name: str = "",
        clock: Clock = REAL_CLOCK,
        page_size: int = PAGE_SIZE,
        rng: random.Random | None = None,
        transform: Transform | None = None,
    ) -> None:
        self._lw = lister_watcher
        self.transform = transform
        self._sink = sink
        self.name = name
        self._clock = clock
        self._page_size = page_size
        self._rng = rng or random.Random()
        self._backoff = Backoff(clock, rng=self._rng)
        self.last_sync_resource_version = ""
        self._last_rv_unavailable = False
        self.lists = 0
        self.watches = 0

    async def run(self) -> None:
        """List and watch until cancelled, backing off between failed rounds."""
        while True:
            try:
                await self.list_and_watch()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_expired(exc):
                    log.debug("%s: watch expired, relisting: %s", self.name, exc)
                else:
                    log.warning("%s: list/watch failed: %s", self.name, exc)
            await self._clock.sleep(self._backoff.next_delay())

    async def list_and_watch(self) -> None:
        """One round: a list, then watches until one fails."""
        await self.list_once()
        while True:
            await self._watch_once()

    # -- list -----------------------------------------------------------------------------
    def _relist_resource_version(self) -> str:
        if self._last_rv_unavailable:
            return ""
        return self.last_sync_resource_version or "0"

    async def list_once(self) -> None:
        """List the collection and hand the result to the sink."""
        rv = self._relist_resource_version()
        try:
            items, list_rv = await self._list_at(rv)
        except Exception as exc:
            if is_expired(exc) or is_too_large_resource_version(exc):
                # The version is gone (or not reached yet): read the latest instead.
                self._last_rv_unavailable = True
                items, list_rv = await self._list_at("")
            else:
                raise
        self._last_rv_unavailable = False
        self.lists += 1
        self._sink.replace(items, list_rv)
        self.last_sync_resource_version = list_rv

    async def _list_at(self, rv: str) -> tuple[list[Obj], str]:
        # Paging is only asked for when the list may come from anywhere ("0") or is the latest
        # (""); a "not older than N" list is left whole so a watch cache can serve it.
        limit = self._page_size if rv in ("", "0") else None
        page = await self._lw.list(resource_version=rv, limit=limit, continue_token=None)
        items = self._take(page.items)
        list_rv = page.resource_version
        token = page.continue_token
        while token:
            try:
                page = await self._lw.list(resource_version=None, limit=limit, continue_token=token)
            except Exception as exc:
                if not is_expired(exc):
                    raise
                # The continuation expired: take the whole list in one go at the same version.
                page = await self._lw.list(resource_version=rv, limit=None, continue_token=None)
                return self._take(page.items), page.resource_version
            items.extend(self._take(page.items))
            token = page.continue_token
        return items, list_rv

    def _take(self, objects: Iterable[Obj]) -> list[Obj]:
        transform = self.transform
        return list(objects) if transform is None else [transform(obj) for obj in objects]

    # -- watch ----------------------------------------------------------------------------
    async def _watch_once(self) -> None:
        timeout = int(MIN_WATCH_TIMEOUT * (1.0 + self._rng.random()))
        started = self._clock.now()
        events = 0
        self.watches += 1
        try:
            stream = self._lw.watch(
                resource_version=self.last_sync_resource_version, timeout_seconds=timeout, allow_bookmarks=True
            )
            async for event_type, obj in stream:
                if event_type == "ERROR":
                    raise WatchErrorEvent(obj)
                self._handle(event_type, obj)
                events += 1
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not self._is_transient(exc):
                raise
            # The connection broke or could not open (server restarting, throttled): watch
            # again from the last version, no relist; back off if nothing came through.
            log.debug("%s: watch interrupted: %s", self.name, exc)
            if events == 0:
                await self._clock.sleep(self._backoff.next_delay())
            return
        if events == 0 and self._clock.now() - started < 1.0:
            raise RuntimeError("very short watch: closed before a second passed with no events")

    def _handle(self, event_type: str, obj: Obj) -> None:
        rv = _resource_version(obj)
        if event_type in ("ADDED", "MODIFIED", "DELETED"):
            self._sink.apply_event(event_type, obj if self.transform is None else self.transform(obj))
        elif event_type != "BOOKMARK":
            log.warning("%s: ignoring watch event of unknown type %r", self.name, event_type)
            return
        if rv:
            self.last_sync_resource_version = rv

    @staticmethod
    def _is_transient(exc: BaseException) -> bool:
        code = status_code(exc)
        if code is None:
            return isinstance(exc, OSError | ConnectionError | TimeoutError) or _is_client_connection_error(exc)
        return code in (429, 500, 503, 504) and not is_expired(exc)


def _resource_version(obj: Obj) -> str:
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        rv = meta.get("resourceVersion")
        if isinstance(rv, str):
            return rv
    return ""


def _is_client_connection_error(exc: BaseException) -> bool:
    # aiohttp's connection errors do not all derive from OSError; match them by name so the
    # reflector does not depend on the transport library.
    return any(cls.__name__ in ("ClientConnectionError", "ServerDisconnectedError") for cls in type(exc).__mro__)
