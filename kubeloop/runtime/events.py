"""Event recorder: core/v1 Events with client-go's correlation.

``recorder.event(obj, "Normal", "ScalingReplicaSet", "Scaled up ...")`` returns at once; a
background task writes the Event. Before writing, the correlator does what client-go's does:

1. *Aggregation*: events that differ only in their message, for the same object, reason and
   source, are counted; from the 10th distinct message within 10 minutes on they are merged
   into one event whose message starts ``(combined from similar events): ``.
2. *De-duplication*: an event identical to an earlier one (same object, reason, message,
   source) is not created again; the earlier Event is patched with ``count + 1`` and a new
   ``lastTimestamp`` (a strategic merge patch).
3. *Spam filter*: per object and source, a token bucket of 25 events refilled one per 5
   minutes; events without a token are dropped.

The sink is a protocol (create and patch of Events) so the logic is tested without a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, cast

from kubeloop.api.errorstatus import status_code
from kubeloop.api.meta import format_time, metadata, now
from kubeloop.api.shapes import ObjectReference
from kubeloop.client import EVENTS, ApiClient
from kubeloop.runtime.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

Obj = dict[str, Any]
NORMAL = "Normal"
WARNING = "Warning"

MAX_LRU = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_REFILL_SECONDS = 300.0
QUEUE_SIZE = 1000


class EventSink(Protocol):
    async def create(self, namespace: str, event: Obj) -> Obj: ...

    async def patch(self, namespace: str, name: str, patch: Obj) -> Obj: ...


class _LRU(OrderedDict[str, Any]):
    def get_fresh(self, key: str) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: str, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > MAX_LRU:
            self.popitem(last=False)


@dataclass
class _Aggregate:
    messages: set[str] = field(default_factory=set)
    last: float = 0.0


@dataclass
class _Observed:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


@dataclass
class _Bucket:
    tokens: float
    last: float


def _source_key(event: Obj) -> list[str]:
    source = event.get("source") or {}
    ref = event.get("involvedObject") or {}
    return [
        str(source.get("component", "")),
        str(source.get("host", "")),
        str(ref.get("kind", "")),
        str(ref.get("namespace", "")),
        str(ref.get("name", "")),
        str(ref.get("uid", "")),
        str(ref.get("apiVersion", "")),
    ]


class EventCorrelator:
    """Decides, per event, whether to create it, patch an earlier one, or drop it."""

    def __init__(self, clock: Clock = REAL_CLOCK) -> None:
        self._clock = clock
        self._aggregates = _LRU()
        self._observed = _LRU()
        self._buckets = _LRU()

    def correlate(self, event: Obj) -> tuple[Obj | None, Obj | None, str]:
        """``(event to write, patch or None, dedup key)``; the event is None when it is dropped."""
        event, key = self._aggregate(event)
        if not self._allow(event):
            return None, None, key
        previous = self._observed.get_fresh(key)
        if previous is None:
            return event, None, key
        event = {**event, "metadata": {**event["metadata"], "name": previous.name,
                                       "resourceVersion": previous.resource_version}}
        event["count"] = previous.count + 1
        event["firstTimestamp"] = previous.first_timestamp
        patch = {"count": event["count"], "lastTimestamp": event["lastTimestamp"], "message": event["message"]}
        return event, patch, key

    def record(self, key: str, written: Obj) -> None:
        """Remember what the server stored, so the next duplicate patches it."""
        meta = metadata(written)
        self._observed.put(
            key,
            _Observed(
                int(written.get("count") or 1),
                str(written.get("firstTimestamp") or ""),
                str(meta.get("name") or ""),
                str(meta.get("resourceVersion") or ""),
            ),
        )

    def _aggregate(self, event: Obj) -> tuple[Obj, str]:
        base = _source_key(event)
        aggregate_key = "".join([*base, str(event.get("type", "")), str(event.get("reason", "")),
                                 str(event.get("reportingComponent", "")), str(event.get("reportingInstance", ""))])
        full_key = "".join([*base[:5], str((event.get("involvedObject") or {}).get("fieldPath", "")), *base[5:],
                            str(event.get("type", "")), str(event.get("reason", "")), str(event.get("message", ""))])
        now_mono = self._clock.now()
        record = self._aggregates.get_fresh(aggregate_key)
        if record is None or now_mono - record.last > AGGREGATE_INTERVAL:
            record = _Aggregate()
        record.messages.add(str(event.get("message", "")))
        record.last = now_mono
        self._aggregates.put(aggregate_key, record)
        if len(record.messages) < AGGREGATE_MAX_EVENTS:
            return event, full_key
        ref_name = str((event.get("involvedObject") or {}).get("name", ""))
        combined = {
            **event,
            "metadata": {**event["metadata"], "name": f"{ref_name}.{time.time_ns():x}"},
            "message": f"(combined from similar events): {event.get('message', '')}",
            "count": 1,
        }
        return combined, aggregate_key

    def _allow(self, event: Obj) -> bool:
        key = "".join([*_source_key(event), str(event.get("type", ""))])
        now_mono = self._clock.now()
        bucket = self._buckets.get_fresh(key)
        if bucket is None:
            bucket = _Bucket(SPAM_BURST, now_mono)
        bucket.tokens = min(SPAM_BURST, bucket.tokens + (now_mono - bucket.last) / SPAM_REFILL_SECONDS)
        bucket.last = now_mono
        self._buckets.put(key, bucket)
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True


def object_reference(obj: Mapping[str, Any], *, kind: str = "", api_version: str = "") -> ObjectReference:
    """An ``involvedObject`` for ``obj``; pass kind/apiVersion for objects from lists, which lack them."""
    meta = metadata(obj)
    ref: Obj = {
        "kind": kind or obj.get("kind", ""),
        "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "apiVersion": api_version or obj.get("apiVersion", ""),
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    # Empty fields are left out, as they are on the wire (omitempty).
    return cast(ObjectReference, {k: v for k, v in ref.items() if v})


class EventRecorder:
    """Records Events for objects; writing happens in a background task started by :meth:`start`."""

    def __init__(
        self,
        sink: EventSink,
        component: str,
        *,
        host: str = "",
        clock: Clock = REAL_CLOCK,
        wall: Callable[[], datetime] = now,
        retries: int = 12,
        retry_delay: float = 10.0,
    ) -> None:
        self._sink = sink
        self.component = component
        self.host = host
        self._clock = clock
        self._wall = wall
        self._retries = retries
        self._retry_delay = retry_delay
        self._correlator = EventCorrelator(clock)
        self._queue: asyncio.Queue[Obj] = asyncio.Queue(QUEUE_SIZE)
        self._task: asyncio.Task[None] | None = None
        self.dropped = 0
        self.written = 0

    def event(
        self, obj: Mapping[str, Any], type_: str, reason: str, message: str, *, kind: str = "", api_version: str = ""
    ) -> None:
        """Queue an event about ``obj``; never blocks, never raises (bad types are logged and dropped)."""
        if type_ not in (NORMAL, WARNING):
            log.error("unsupported event type %r (reason %s)", type_, reason)
            return
        ref = object_reference(obj, kind=kind, api_version=api_version)
        stamp = format_time(self._wall())
        namespace = str(ref.get("namespace") or "default")
        event: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{ref.get('name', '')}.{time.time_ns():x}", "namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": type_,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped += 1

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"events-{self.component}")

    async def stop(self, flush_timeout: float = 5.0) -> None:
        """Write what is queued (bounded by ``flush_timeout``), then stop."""
        if self._task is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(flush_timeout):
                await self._queue.join()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _run(self) -> None:
        while True:
            event = await self._queue.get()
            try:
                await self._write(event)
            finally:
                self._queue.task_done()

    async def _write(self, event: Obj) -> None:
        to_write, patch, key = self._correlator.correlate(event)
        if to_write is None:
            self.dropped += 1
            return
        namespace = to_write["metadata"]["namespace"]
        for attempt in range(self._retries):
            try:
                if patch is not None:
                    try:
                        written = await self._sink.patch(namespace, to_write["metadata"]["name"], patch)
                    except Exception as exc:
                        if status_code(exc) != 404:
                            raise
                        fresh = {**to_write, "metadata": {k: v for k, v in to_write["metadata"].items()
                                                          if k != "resourceVersion"}}
                        written = await self._sink.create(namespace, fresh)
                else:
                    written = await self._sink.create(namespace, to_write)
            except Exception as exc:
                code = status_code(exc)
                if code in (409, 403, 422):
                    # Already exists, namespace terminating, invalid: retrying cannot help.
                    log.debug("event %s not written: %s", reason_of(to_write), exc)
                    return
                if attempt + 1 == self._retries:
                    log.warning("event %s dropped after %d attempts: %s", reason_of(to_write), self._retries, exc)
                    return
                await self._clock.sleep(self._retry_delay)
            else:
                self.written += 1
                self._correlator.record(key, written)
                return


def reason_of(event: Obj) -> str:
    return str(event.get("reason", ""))


class ClientEventSink:
    """Writes Events through ``kubeloop.client`` (POST, or a strategic merge PATCH for repeats)."""

    def __init__(self, client: ApiClient) -> None:
        self._client = client

    async def create(self, namespace: str, event: Obj) -> Obj:
        result: Obj = await self._client.create(EVENTS, event, namespace=namespace)
        return result

    async def patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        result: Obj = await self._client.patch(EVENTS, name, patch, patch_type="strategic", namespace=namespace)
        return result
