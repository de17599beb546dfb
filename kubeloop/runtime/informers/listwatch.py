"""What a reflector needs from the API: list pages and a watch stream.

A :class:`ListerWatcher` is the seam between the informer machinery and the client. The
reflector never builds requests itself, so tests drive it with an in-memory fake and the
client adapter (``ClientListerWatcher``) is a few lines over ``kubeloop.client``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kubeloop.api.errorstatus import has_status_cause, status_code, status_reason

Obj = dict[str, Any]


@dataclass
class ListPage:
    """One page of a list: its items, the list's resourceVersion and the continue token.

    ``items`` may be a one-pass iterable that decodes each item when it is reached; the
    reflector consumes it once, item by item.
    """

    items: Iterable[Obj]
    resource_version: str
    continue_token: str | None = None


class ListerWatcher(Protocol):
    """List pages and watch streams of one collection (with its selectors already applied)."""

    async def list(self, *, resource_version: str | None, limit: int | None, continue_token: str | None) -> ListPage:
        """One page. ``resource_version`` is ``None`` on continuation pages."""

    def watch(
        self, *, resource_version: str, timeout_seconds: int | None, allow_bookmarks: bool
    ) -> AsyncIterator[tuple[str, Obj]]:
        """Events ``(type, object)`` from ``resource_version`` on, until the server closes the stream.

        An in-stream ``ERROR`` event may be yielded as ``("ERROR", status)`` or raised as an
        exception carrying ``code``; the reflector handles both.
        """


def is_expired(exc: BaseException) -> bool:
    """A 410: the requested resourceVersion (or continue token) is no longer served."""
    return status_code(exc) == 410 or status_reason(exc) in ("Expired", "Gone")


def is_too_large_resource_version(exc: BaseException) -> bool:
    """The server has not caught up with the requested resourceVersion yet (504 + cause)."""
    return has_status_cause(exc, "ResourceVersionTooLarge") or "Too large resource version" in str(exc)


class WatchErrorEvent(Exception):
    """An ``ERROR`` event received in a watch stream, carrying the Status it held."""

    def __init__(self, status: Mapping[str, Any]) -> None:
        self.status_body = dict(status)
        code = status.get("code")
        self.code = code if isinstance(code, int) else None
        reason = status.get("reason")
        self.reason = reason if isinstance(reason, str) else ""
        super().__init__(str(status.get("message") or "watch error"))
