"""Bounds on the API server's connections: a header read timeout and a cap on open connections.

kube-apiserver's ``http.Server`` (``SecureServingInfo.Serve`` in k8s.io/apiserver
``pkg/server/secure_serving.go``) sets ``ReadHeaderTimeout`` to 32 s and ``IdleTimeout`` to 90 s,
so a client that trickles a partial request header, or opens connections and sends nothing, is
cut off. What the embedded server does, per connection, on top of the listener:

- the TLS handshake must finish within :data:`HEADER_TIMEOUT` (Go counts the handshake in the
  header deadline); the first request's header must then be complete within
  :data:`HEADER_TIMEOUT` of the connection being made, or the connection is aborted;
- between requests (and so for the header of every later request on a kept-alive HTTP/1.1
  connection) aiohttp's keep-alive timer closes a connection idle for :data:`IDLE_TIMEOUT`; an
  HTTP/2 connection with no open stream is closed after the same time by
  :mod:`kubeloop.server.http2`. A later request's header thus has up to 90 s, not 32;
- at most :func:`connection_cap` connections are open at once; one more is aborted as soon as it
  is accepted (Go's servers have no such cap by default; ``netutil.LimitListener``, the usual
  one, holds further connections in the backlog instead of refusing them).

No per-read cost: the header check is one timer per connection that looks, when it fires, at
whether the HTTP/1.1 handler has parsed a request yet.
"""

from __future__ import annotations

import asyncio
import resource
from collections.abc import Callable
from typing import cast

HEADER_TIMEOUT = 32.0
"""Seconds for the TLS handshake, then for the first request's header (``ReadHeaderTimeout``)."""
IDLE_TIMEOUT = 90.0
"""Seconds an HTTP/1.1 connection may wait between requests (``IdleTimeout``)."""
MAX_CONNECTIONS = 4096
"""The most connections served at once, further limited to half the open-files limit."""


def connection_cap() -> int:
    """:data:`MAX_CONNECTIONS`, or half the process's open-files limit when that is lower (the
    store, the watches' files and the clients of an all-in-one process need the rest)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return MAX_CONNECTIONS
    return max(1, min(MAX_CONNECTIONS, soft // 2))


def _request_seen(protocol: asyncio.BaseProtocol) -> bool:
    """Whether the connection's protocol has read a whole request header.

    aiohttp's ``RequestHandler`` counts the requests it parsed (``_request_count``); any other
    protocol (HTTP/2, which bounds itself) counts as having one.
    """
    count = getattr(protocol, "_request_count", None)
    return not isinstance(count, int) or count > 0


class ConnectionLimits:
    """Wraps the listener's protocol factory with the bounds above; one per listener."""

    def __init__(self, factory: Callable[[], asyncio.BaseProtocol]) -> None:
        self._factory = factory
        self._open: set[asyncio.BaseTransport] = set()
        self.cap = connection_cap()
        self.refused = 0
        """Connections aborted because the cap was reached."""

    def protocol(self) -> asyncio.Protocol:
        """The protocol factory to give ``loop.create_server``."""
        return _Limited(self)

    def _admit(self, transport: asyncio.BaseTransport) -> bool:
        if len(self._open) >= self.cap:
            # Forget closed connections only when the cap is reached: O(n) once per n accepts.
            self._open = {t for t in self._open if not t.is_closing()}
            if len(self._open) >= self.cap:
                self.refused += 1
                return False
        self._open.add(transport)
        return True

    def _arm(self, transport: asyncio.BaseTransport) -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(HEADER_TIMEOUT, _expire, transport)

    def open_connections(self) -> int:
        """Connections open now."""
        self._open = {t for t in self._open if not t.is_closing()}
        return len(self._open)


def _expire(transport: asyncio.BaseTransport) -> None:
    if transport.is_closing():
        return
    if not _request_seen(transport.get_protocol()):
        cast(asyncio.Transport, transport).abort()


class _Limited(asyncio.Protocol):
    """Admits a connection and arms its header deadline, then hands it to the real protocol
    (which, through ``set_protocol``, gets every later event directly)."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self._limits = limits

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        limits = self._limits
        if not limits._admit(transport):
            cast(asyncio.Transport, transport).abort()
            return
        limits._arm(transport)
        inner = limits._factory()
        transport.set_protocol(inner)
        inner.connection_made(transport)
