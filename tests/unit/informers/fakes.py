"""An in-memory collection with list pages and watch streams, for driving reflectors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from kubeloop.runtime.informers.listwatch import ListPage

Obj = dict[str, Any]


class ApiFailure(Exception):
    def __init__(self, code: int, reason: str = "") -> None:
        super().__init__(f"{code} {reason}")
        self.code = code
        self.reason = reason


class InstantClock:
    """Real monotonic time, but back-off sleeps only yield to the loop."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(0)

    def call_at(self, deadline: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(0, callback)


class FakeCollection:
    """Objects with a global revision, a change history and live watch streams."""

    def __init__(self) -> None:
        self.rv = 100
        self.objects: dict[str, Obj] = {}
        self.history: list[tuple[int, str, Obj]] = []
        self.compacted_below = 0
        self.list_calls: list[dict[str, Any]] = []
        self.watch_calls: list[dict[str, Any]] = []
        self.watch_failures: list[BaseException] = []
        self._streams: list[asyncio.Queue[tuple[str, Obj] | None]] = []

    # -- changes --------------------------------------------------------------------------
    def _commit(self, kind: str, obj: Obj) -> Obj:
        self.rv += 1
        obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.rv)}}
        self.history.append((self.rv, kind, obj))
        for queue in self._streams:
            queue.put_nowait((kind, obj))
        return obj

    def put(self, name: str, namespace: str = "ns", **fields: Any) -> Obj:
        key = f"{namespace}/{name}"
        kind = "MODIFIED" if key in self.objects else "ADDED"
        obj = {"metadata": {"name": name, "namespace": namespace}, **fields}
        self.objects[key] = self._commit(kind, obj)
        return self.objects[key]

    def remove(self, name: str, namespace: str = "ns") -> None:
        obj = self.objects.pop(f"{namespace}/{name}")
        self._commit("DELETED", obj)

    def bookmark(self) -> None:
        """Advance the revision (as other collections' writes do) and send a BOOKMARK."""
        self.rv += 10
        for queue in self._streams:
            queue.put_nowait(("BOOKMARK", {"kind": "ConfigMap", "metadata": {"resourceVersion": str(self.rv)}}))

    def close_streams(self) -> None:
        for queue in self._streams:
            queue.put_nowait(None)

    def expire_streams(self) -> None:
        """Compact history and end every stream with a 410 ERROR event."""
        self.compacted_below = self.rv
        for queue in self._streams:
            queue.put_nowait(("ERROR", {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}))

    # -- ListerWatcher ------------------------------------------------------------------
    page_size_seen: list[int | None]

    async def list(self, *, resource_version: str | None, limit: int | None, continue_token: str | None) -> ListPage:
        self.list_calls.append({"rv": resource_version, "limit": limit, "continue": continue_token})
        keys = sorted(self.objects)
        start = int(continue_token) if continue_token else 0
        end = len(keys) if not limit else start + limit
        items = [self.objects[k] for k in keys[start:end]]
        token = str(end) if end < len(keys) else None
        return ListPage(items, str(self.rv), token)

    async def watch(
        self, *, resource_version: str, timeout_seconds: int | None, allow_bookmarks: bool
    ) -> AsyncIterator[tuple[str, Obj]]:
        self.watch_calls.append({"rv": resource_version, "timeout": timeout_seconds, "bookmarks": allow_bookmarks})
        if self.watch_failures:
            raise self.watch_failures.pop(0)
        since = int(resource_version)
        if since < self.compacted_below:
            yield "ERROR", {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
            return
        queue: asyncio.Queue[tuple[str, Obj] | None] = asyncio.Queue()
        for rv, kind, obj in self.history:
            if rv > since:
                queue.put_nowait((kind, obj))
        self._streams.append(queue)
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                yield item
        finally:
            self._streams.remove(queue)
