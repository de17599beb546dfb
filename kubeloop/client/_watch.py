"""Decoding a watch stream: newline-delimited JSON events, sans-IO.

A watch response is a chunked body of ``{"type": ..., "object": ...}`` documents, each
followed by ``\\n`` (apiserver ``pkg/endpoints/handlers/watch.go`` ``WatchServer.HandleHTTP``,
framed by apimachinery's json ``Framer``). Chunk boundaries fall anywhere, and one event can
be megabytes (a large CRD), so :class:`LineSplitter` accumulates chunk pieces and
joins them only when a newline completes a line, instead of relying on a stream reader's
bounded ``readline``. :func:`decode_event` turns a line into a :class:`WatchEvent`, raising
the typed exception for an ``ERROR`` event so a reflector can catch :class:`Gone` and relist.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from kubeloop.client._errors import ApiException, exception_from_status

EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"})


class WatchEvent(NamedTuple):
    """One change: ``type`` is ADDED, MODIFIED, DELETED or BOOKMARK; ``object`` the object."""

    type: str
    object: dict[str, Any]


class WatchDecodeError(ApiException):
    """The stream carried something that is not a watch event (a broken or foreign server)."""


class LineSplitter:
    """Feed chunks, get complete lines (without the newline); blank lines are dropped."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            piece = chunk[start:end]
            if self._pending:
                self._pending.append(piece)
                piece = b"".join(self._pending)
                self._pending.clear()
            if piece.strip():
                lines.append(piece)
            start = end + 1
        if start < len(chunk):
            self._pending.append(chunk[start:])
        return lines

    def finish(self) -> bytes | None:
        """The unterminated last line, if the stream ended without a final newline."""
        rest = b"".join(self._pending)
        self._pending.clear()
        return rest if rest.strip() else None


def decode_event(line: bytes) -> WatchEvent:
    """Parse one event line; ``ERROR`` events raise the exception their Status describes."""
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise _decode_error(f"watch stream carried invalid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise _decode_error("watch event is not a JSON object")
    kind = doc.get("type")
    obj = doc.get("object")
    if kind not in EVENT_TYPES or not isinstance(obj, dict):
        raise _decode_error(f"watch event has unexpected type {kind!r} or no object")
    if kind == "ERROR":
        raise exception_from_status(obj, 500)
    return WatchEvent(kind, obj)


def _decode_error(message: str) -> WatchDecodeError:
    return WatchDecodeError(code=500, reason="InternalError", message=message)
