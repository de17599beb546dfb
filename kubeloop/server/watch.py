"""Watch streams: framed events over a chunked HTTP response.

Start points follow kube-apiserver: no resourceVersion (or "0") sends the current state as
synthetic ADDED events and then live changes; "N" streams every change after N, and a
revision that left the watch window gets HTTP 200 with one in-stream ERROR event (410
Expired), which is what the Python client and kopf look for. With selectors, a change that
makes an object start matching is sent as ADDED and one that makes it stop matching as
DELETED, as the watch cache does. Each event is encoded once per view, in the store's shared
event ``cache``, however many watchers receive it. The Accept header is negotiated as for a
list (:func:`~kubeloop.server.handlers.read.output_for`): Tables for kubectl get -w, and
PartialObjectMetadata events, bookmarks included, for metadata informers; JSON or protobuf
frames (:mod:`kubeloop.server.codec.watchframes`), each shared per event and framing. Every event sent is
counted in the server's metrics (``apiserver_watch_events_total``) and each encoding's object
size observed (``apiserver_watch_events_sizes``).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from aiohttp import web

from kubeloop.api.status import expired_error
from kubeloop.server.codec.output import WatchView
from kubeloop.server.codec.watchframes import JSON_FRAMING, WatchFraming, framing_for
from kubeloop.server.handlers.read import Predicate, output_for, present, selector_predicate
from kubeloop.server.metrics import WatchSeries
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import optional_bool, optional_int, parse_resource_version
from kubeloop.server.routing import Target
from kubeloop.server.state import ServerState
from kubeloop.server.storage import ADDED, DELETED, MODIFIED, TooOldResourceVersion, Watcher, WatchEvent
from kubeloop.server.tables import TableConverter

Obj = dict[str, Any]

BOOKMARK_INTERVAL = 60.0
"""Seconds between bookmarks on an idle watch (kube-apiserver sends one about every minute)."""
SLOW_WATCHER_BACKLOG = 10_000
"""Events a watcher may fall behind by before its stream is ended (it re-watches, as from the
watch cache's full buffer upstream), so that a stalled client cannot make the server hoard."""
WRITE_BATCH_EVENTS = 128
"""Most events one write carries: queued events go out together, up to this many."""
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
MIN_REQUEST_TIMEOUT = 1800
"""Default watch duration is random in [this, 2 x this] seconds, as ``--min-request-timeout``."""


def _shown(info: ResourceInfo, obj: Obj, view: WatchView | None) -> Obj:
    shown = present(info, obj)
    return view.apply(shown) if view is not None else shown


def _served_key(info: ResourceInfo, view: WatchView | None, framing: WatchFraming) -> str:
    served = info.api_version if view is None else f"{info.api_version}:{view.key}"
    return framing.key + served


def _encoded(event: WatchEvent, event_type: str, obj: Obj, info: ResourceInfo, view: WatchView | None,
             series: WatchSeries | None, framing: WatchFraming) -> bytes:
    """The event's frame, memoised per (type, served version, view, framing) on the shared
    event; a frame encoded here has its object size observed in ``series``."""
    served = _served_key(info, view, framing)
    key = f"{event_type}:{served}" if obj is event.object else f"{event_type}:prev:{served}"
    line = event.cache.get(key)
    if line is None:
        line = event.cache[key] = framing.frame(event_type, _shown(info, obj, view))
        if series is not None:
            series.observe_size(framing.object_size(line))
    return line


def _with_revision(obj: Obj, rv: int) -> Obj:
    shown = dict(obj)
    shown["metadata"] = dict(obj["metadata"])
    shown["metadata"]["resourceVersion"] = str(rv)
    return shown


def filtered_line(event: WatchEvent, predicate: Predicate | None, info: ResourceInfo,
                  view: WatchView | None = None, series: WatchSeries | None = None,
                  framing: WatchFraming = JSON_FRAMING) -> bytes | None:
    """The frame a watcher with ``predicate`` (and ``view`` of objects, ``framing`` of events)
    receives for ``event``, or None if it sees nothing. A frame encoded here (not found in the
    event's cache) has its object size observed in ``series``."""
    if predicate is None:
        return _encoded(event, event.type, event.object, info, view, series, framing)
    now_matches = predicate(event.object)
    if event.type == ADDED:
        return _encoded(event, ADDED, event.object, info, view, series, framing) if now_matches else None
    if event.type == DELETED:
        return _encoded(event, DELETED, event.object, info, view, series, framing) if now_matches else None
    before_matches = predicate(event.prev) if event.prev is not None else now_matches
    if now_matches and before_matches:
        return _encoded(event, MODIFIED, event.object, info, view, series, framing)
    if now_matches:
        return _encoded(event, ADDED, event.object, info, view, series, framing)
    if before_matches and event.prev is not None:
        key = f"{DELETED}:prev:{_served_key(info, view, framing)}"
        line = event.cache.get(key)
        if line is None:
            line = event.cache[key] = framing.frame(DELETED, _shown(info, _with_revision(event.prev, event.rv), view))
            if series is not None:
                series.observe_size(framing.object_size(line))
        return line
    return None


def _bookmark(info: ResourceInfo, rv: int, initial_events_end: bool = False, view: WatchView | None = None,
              framing: WatchFraming = JSON_FRAMING) -> bytes:
    """A BOOKMARK frame: an empty object of the kind holding only the revision (and the
    initial-events-end annotation), in the watch's view as upstream's Fixup converts it."""
    meta: Obj = {"resourceVersion": str(rv)}
    if initial_events_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    obj: Obj = {"kind": info.kind, "apiVersion": info.api_version, "metadata": meta}
    return framing.frame("BOOKMARK", view.apply(obj) if view is not None else obj)


async def handle_watch(state: ServerState, request: web.Request, target: Target) -> web.StreamResponse:
    info = target.info
    query = request.query
    output = output_for(state, request, info, watch=True)
    predicate = selector_predicate(info, query)
    converter = output.table()
    view = output.watch_view()
    framing = framing_for(output.content_type)
    bookmarks = optional_bool(query, "allowWatchBookmarks") or False
    timeout = optional_int(query, "timeoutSeconds")
    duration = float(timeout) if timeout is not None and timeout > 0 else random.uniform(
        MIN_REQUEST_TIMEOUT, 2 * MIN_REQUEST_TIMEOUT)
    rv_text = query.get("resourceVersion") or ""
    # Watch-list (sendInitialEvents): the current state first, then a bookmark marking its end.
    initial_events_end = bool(optional_bool(query, "sendInitialEvents"))
    if initial_events_end:
        rv_text = ""
    initial: list[Obj] = []
    storage = state.storage
    start_rv = 0
    error_line: bytes | None = None
    watcher = None
    if rv_text in ("", "0"):
        # List and subscribe in the same event-loop step: nothing can happen in between.
        initial, _, _ = storage.list(info.resource_type, target.namespace, predicate=predicate)
        start_rv = storage.revision
        watcher = storage.watch(info.resource_type, target.namespace, start_rv)
    else:
        from_rv = parse_resource_version("resourceVersion", rv_text)
        try:
            watcher = storage.watch(info.resource_type, target.namespace, from_rv)
        except TooOldResourceVersion as error:
            error_line = framing.frame("ERROR", expired_error(
                f"too old resource version: {from_rv} ({error.oldest})").status())
    response = web.StreamResponse(status=200, headers={"Content-Type": framing.content_type,
                                                       "Cache-Control": "no-cache, private"})
    # No explicit chunking: aiohttp chunks an HTTP/1.1 answer of unknown length by itself, and
    # HTTP/2 (kubeloop.server.http2) frames the body and forbids Transfer-Encoding.
    stream = _Stream(state, response, converter, state.metrics.watch_series(info.group, info.version, info.kind),
                     framing)
    if watcher is not None:
        state.watchers.add(watcher)
    try:
        await response.prepare(request)
        if watcher is None:
            await stream.send(error_line or b"")
        else:
            for obj in initial:
                await stream.send(framing.frame(ADDED, _shown(info, obj, view)))
            if initial_events_end:
                await stream.send(_bookmark(info, start_rv, initial_events_end=True, view=view, framing=framing))
            await _follow(state, stream, watcher, predicate, info, duration, bookmarks, view)
        await response.write_eof()
    except ConnectionResetError:
        # The client went away; nothing is left to answer.
        pass
    finally:
        if watcher is not None:
            watcher.close()
            state.watchers.discard(watcher)
    return response


class _Stream:
    """The response of one watch: event frames go out as they are, or as Tables for kubectl
    get -w (JSON only: a Table is never negotiated in protobuf)."""

    def __init__(self, state: ServerState, response: web.StreamResponse, converter: TableConverter | None,
                 series: WatchSeries, framing: WatchFraming = JSON_FRAMING) -> None:
        self.state = state
        self.response = response
        self.converter = converter
        self.series = series
        self.framing = framing

    async def send(self, line: bytes) -> None:
        """Send one line encoded for this watcher alone (its object size is observed here)."""
        if line:
            self.series.events += 1
            self.series.observe_size(self.framing.object_size(line))
        if self.converter is not None and line:
            line = self.converter.watch_line(line, self.state.clock())
        await self.response.write(line)

    async def send_lines(self, lines: list[bytes]) -> None:
        """Send several event lines in one write (one TLS record and one syscall, not many).

        Their sizes were observed when they were encoded (once per change, shared by watchers)."""
        self.series.events += len(lines)
        if self.converter is not None:
            now = self.state.clock()
            lines = [self.converter.watch_line(line, now) if line else line for line in lines]
        await self.response.write(b"".join(lines))


async def _follow(state: ServerState, stream: _Stream, watcher: Watcher, predicate: Predicate | None,
                  info: ResourceInfo, duration: float, bookmarks: bool, view: WatchView | None = None) -> None:
    """Send the watcher's events (filtered) until the deadline, with bookmarks when idle."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + duration
    progressed = False
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            if bookmarks:
                await stream.send(_bookmark(info, state.storage.revision, view=view, framing=stream.framing))
            return
        event = await watcher.next(timeout=min(remaining, BOOKMARK_INTERVAL))
        if event is None:
            if watcher.closed:
                return
            if bookmarks and loop.time() < deadline:
                # The queue is empty, so every change up to the current revision was delivered.
                await stream.send(_bookmark(info, state.storage.revision, view=view, framing=stream.framing))
            continue
        if watcher.backlog > SLOW_WATCHER_BACKLOG:
            if not progressed:
                # Cut before it could deliver anything: re-watching from the same version would
                # be cut again, for ever. A 410 makes the client relist instead.
                await stream.send(stream.framing.frame("ERROR", expired_error(
                    f"too old resource version: {event.rv - 1} (watcher fell {watcher.backlog} events behind)"
                ).status()))
            return
        progressed = True
        # Whatever else is queued already goes out in the same write: under load a watcher
        # receives bursts, and a write per event made the sends the server's biggest cost.
        series = stream.series
        lines = [line for line in (filtered_line(e, predicate, info, view, series, stream.framing)
                                   for e in (event, *watcher.take_queued(WRITE_BATCH_EVENTS - 1)))
                 if line is not None]
        if lines:
            await stream.send_lines(lines)
