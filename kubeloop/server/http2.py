"""HTTP/2 for the embedded server: ALPN picks the protocol of each TLS connection, and every h2
stream becomes an ordinary aiohttp request to the same application.

Go clients (kubectl, client-go) offer ``h2`` in ALPN and, when the server picks it, multiplex
every request and watch over one connection, as they do against kube-apiserver (whose
``SecureServingInfo.Serve``, k8s.io/apiserver pkg/server/secure_serving.go, enables HTTP/2 by
default). aiohttp speaks HTTP/1.1 only, so:

- :class:`AlpnSwitch` is the protocol the listener creates. When the TLS handshake completes it
  reads the protocol ALPN selected and hands the transport, unchanged, either to aiohttp's own
  ``RequestHandler`` (``http/1.1`` or no ALPN: HTTP/1.1 clients are served exactly as before, at
  the same cost) or to an :class:`Http2Connection`.
- :class:`Http2Connection` runs the protocol with the ``h2`` state machine (python-hyper). Each
  stream's headers become a ``RawRequestMessage`` and its DATA frames the request's payload;
  the request goes through the aiohttp application's own request factory and handler (its
  middlewares, routing and handlers are those HTTP/1.1 requests get), and the response's
  writer (:class:`_StreamWriter`) turns the status line, headers and body into HEADERS and DATA
  frames. A streamed response (a watch) sends each write as it comes, within the peer's
  flow-control windows (a write waits for WINDOW_UPDATE when a window is spent) and the
  transport's own back-pressure.

Settings are upstream's: at most 100 concurrent streams per connection, a 256 KiB initial
stream window and maximum frame size (``resourceBody99Percentile``), and a connection window
of 100 such streams (``MaxUploadBufferPerConnection``), and connections idle for 90 s are
closed with GOAWAY (``IdleTimeout``). Request body data is acknowledged (its window given back)
as it arrives until the request's reader holds twice aiohttp's read limit, and then only as the
handler reads it, so a client cannot run far ahead of a handler.

Per request cost is kept down (figures in docs/decisions.md, "HTTP/2: the cost of a request"):
``h2``'s own inbound header checks are off and :mod:`kubeloop.server.h2_headers` makes Go's
checks while it builds the request message (a repeated header block reuses its message);
HPACK blocks that leave the dynamic table unchanged are decoded and encoded once
(:mod:`kubeloop.server.hpack_memo`); and the answers of the requests one read started, when
they finish in their first step, leave in one TLS write.

A request's version reads ``HTTP/2.0``. A handler that is still streaming when its stream is
reset or the connection drops is cancelled (a watch must not outlive its client); one that has
not yet sent its headers runs to its end, as aiohttp lets HTTP/1.1 handlers finish after a
disconnect, and its writes are discarded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, cast

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.base_protocol import BaseProtocol
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import EMPTY_PAYLOAD, StreamReader
from aiohttp.web_protocol import RequestHandler
from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.errors import ErrorCodes
from h2.events import (
    ConnectionTerminated,
    DataReceived,
    RemoteSettingsChanged,
    RequestReceived,
    StreamEnded,
    StreamReset,
    WindowUpdated,
)
from h2.exceptions import ProtocolError
from h2.settings import SettingCodes, Settings
from multidict import CIMultiDict

from kubeloop.server import hpack_memo
from kubeloop.server.h2_headers import request_message

log = logging.getLogger(__name__)

ALPN_PROTOCOLS = ["h2", "http/1.1"]
"""What the listener offers, preferred first (Go's ``http2.ConfigureServer`` puts h2 first)."""
MAX_CONCURRENT_STREAMS = 100
"""Upstream's default ``MaxConcurrentStreams`` when --http2-max-streams-per-connection is unset."""
STREAM_WINDOW = 256 * 1024
"""Upstream's ``resourceBody99Percentile``: initial stream window and largest frame accepted."""
CONNECTION_WINDOW = STREAM_WINDOW * MAX_CONCURRENT_STREAMS
IDLE_TIMEOUT = 90.0
"""Seconds a connection with no open stream is kept (upstream's http2.Server ``IdleTimeout``)."""
_FLUSH_AT = 2**16
"""Bytes of DATA held for one write at most (beyond, a write goes out at once)."""
_BODY_LIMIT = 2**16  # aiohttp's own StreamReader limit for request payloads
# Connection-specific fields HTTP/2 forbids (RFC 9113 section 8.2.2); aiohttp adds some for HTTP/1.1.
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"})


class AlpnSwitch(asyncio.Protocol):
    """The listener's protocol: once TLS is up, hand the transport to the protocol ALPN chose."""

    def __init__(self, http1: Callable[[], asyncio.Protocol], http2: Callable[[], asyncio.Protocol]) -> None:
        self._http1 = http1
        self._http2 = http2

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        ssl_object = transport.get_extra_info("ssl_object")
        chosen = ssl_object.selected_alpn_protocol() if ssl_object is not None else None
        protocol = self._http2() if chosen == "h2" else self._http1()
        # Later reads go straight to the chosen protocol: no per-read cost for either.
        transport.set_protocol(protocol)
        protocol.connection_made(transport)


class Http2Server:
    """The HTTP/2 connections of one aiohttp ``web.Server`` (the application's request handler)."""

    def __init__(self, server: web.Server) -> None:
        self._server = server
        self.connections: set[Http2Connection] = set()
        self.streams_served = 0
        """Requests answered over HTTP/2 since start (how tests and operators see h2 in use)."""

    def protocol(self) -> Http2Connection:
        return Http2Connection(self)

    def close(self) -> None:
        """Say GOAWAY, end every stream's handler and drop every connection."""
        for connection in list(self.connections):
            connection.abort()
        self.connections.clear()


class _Stream:
    """One request/response exchange: its payload, its handler task and its send state."""

    __slots__ = ("closed", "handler", "headers_sent", "id", "paused", "payload", "unacknowledged", "window_waiter")

    def __init__(self, stream_id: int) -> None:
        self.id = stream_id
        self.payload: StreamReader = EMPTY_PAYLOAD
        self.handler: asyncio.Task[None] | None = None
        self.headers_sent = False
        self.closed = False
        self.paused = False
        self.unacknowledged = 0
        self.window_waiter: asyncio.Future[None] | None = None


class _PayloadFlow:
    """What aiohttp's ``StreamReader`` needs of a protocol, for one stream: reading is paused by
    withholding WINDOW_UPDATEs, and resumed by acknowledging what was withheld."""

    def __init__(self, connection: Http2Connection, stream: _Stream) -> None:
        self._connection = connection
        self._stream = stream
        self._reading_paused = False

    @property
    def connected(self) -> bool:
        return not self._stream.closed

    def pause_reading(self) -> None:
        self._reading_paused = self._stream.paused = True

    def resume_reading(self, resume_parser: bool = True) -> None:
        self._reading_paused = self._stream.paused = False
        self._connection.acknowledge(self._stream)


class Http2Connection(asyncio.Protocol):
    """One HTTP/2 connection: frames in, aiohttp requests through the application, frames out."""

    def __init__(self, owner: Http2Server) -> None:
        self._owner = owner
        self._loop = asyncio.get_running_loop()
        # Outbound headers come from aiohttp, lower-cased and filtered by _StreamWriter: checking
        # them again per response was a fifth of the server's cost of a small answer.
        # Inbound headers are checked by request_message, as Go's server checks them, in the
        # pass that builds the request (h2's own checks were the largest cost of a request).
        config = H2Configuration(client_side=False, header_encoding=None, validate_outbound_headers=False,
                                 normalize_outbound_headers=False, split_outbound_cookies=False,
                                 validate_inbound_headers=False, normalize_inbound_headers=False)
        self._h2 = H2Connection(config=config)
        hpack_memo.install(self._h2)
        self._streams: dict[int, _Stream] = {}
        self._transport: asyncio.Transport | None = None
        self._writable: asyncio.Future[None] | None = None
        self._closing = False
        self._idle: asyncio.TimerHandle | None = None
        self._idle_since = 0.0
        self._flush_pending = False
        self._unflushed = 0
        self._messages: dict[tuple[tuple[bytes, bytes], ...], RawRequestMessage | None] = {}
        # What aiohttp's BaseRequest reads of its protocol.
        self.transport: asyncio.Transport | None = None
        self.ssl_context: Any = None
        self.peername: Any = None
        self.sockname: Any = None
        self.max_field_size = 8190
        self.max_headers = 128

    # --- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = self.transport = cast(asyncio.Transport, transport)
        self.ssl_context = transport.get_extra_info("sslcontext")
        self.peername = transport.get_extra_info("peername")
        self.sockname = transport.get_extra_info("sockname")
        self._owner.connections.add(self)
        h2 = self._h2
        # Set before the first SETTINGS frame, so they hold from the start (and are what it sends).
        h2.local_settings = Settings(client=False, initial_values={
            SettingCodes.MAX_CONCURRENT_STREAMS: MAX_CONCURRENT_STREAMS,
            SettingCodes.INITIAL_WINDOW_SIZE: STREAM_WINDOW,
            SettingCodes.MAX_FRAME_SIZE: STREAM_WINDOW})
        h2.max_inbound_frame_size = STREAM_WINDOW
        h2.initiate_connection()
        h2.increment_flow_control_window(CONNECTION_WINDOW - h2.inbound_flow_control_window)
        self._flush()
        self._arm_idle()

    def _arm_idle(self) -> None:
        """Note that the connection fell idle; one timer at a time checks it (not one per request)."""
        self._idle_since = self._loop.time()
        if self._idle is None:
            self._idle = self._loop.call_at(self._idle_since + IDLE_TIMEOUT, self._idle_expired)

    def _idle_expired(self) -> None:
        self._idle = None
        if self._streams or self._transport is None:
            return  # re-armed when its last stream ends
        if (due := self._idle_since + IDLE_TIMEOUT) > self._loop.time():
            self._idle = self._loop.call_at(due, self._idle_expired)
            return
        # GOAWAY, then close, as Go's server does for a connection idle past IdleTimeout.
        self._h2.close_connection()
        self._flush()
        self._transport.close()

    def data_received(self, data: bytes) -> None:
        try:
            events = self._h2.receive_data(data)
        except ProtocolError as error:
            log.debug("HTTP/2 protocol error from %s: %s", self.peername, error)
            self._h2.close_connection(ErrorCodes.PROTOCOL_ERROR)
            self._flush()
            self._drop(ConnectionResetError("HTTP/2 protocol error"))
            if self._transport is not None:
                self._transport.close()
            return
        started = 0
        for event in events:
            if isinstance(event, RequestReceived):
                self._request(event)
                started += 1
            elif isinstance(event, DataReceived):
                self._data(event)
            elif isinstance(event, StreamEnded):
                stream = self._streams.get(event.stream_id)
                if stream is not None:
                    stream.payload.feed_eof()
            elif isinstance(event, StreamReset):
                self._reset(event.stream_id)
            elif isinstance(event, WindowUpdated | RemoteSettingsChanged):
                self._wake(None if isinstance(event, RemoteSettingsChanged) or event.stream_id == 0
                           else event.stream_id)
            elif isinstance(event, ConnectionTerminated):
                self._closing = True
                if not self._streams and self._transport is not None:
                    self._transport.close()
        self._flush()
        if started > 1 and not self._flush_pending:
            # The handlers just started take their first step in the loop's next turn, in order;
            # a flush queued after them sends the answers of those that finish in that step (a
            # small GET does) in one write rather than one each.
            self._flush_pending = True
            self._loop.call_soon(self._flush_queued)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        self._drop(ConnectionResetError("Connection lost"))
        self._owner.connections.discard(self)
        self._transport = self.transport = None
        # Release writers waiting for the transport: their streams are closed, so their next
        # step raises ConnectionResetError.
        self.resume_writing()

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = self._loop.create_future()

    def resume_writing(self) -> None:
        writable, self._writable = self._writable, None
        if writable is not None and not writable.done():
            writable.set_result(None)

    # --- incoming ------------------------------------------------------------------------------

    def _request(self, event: RequestReceived) -> None:
        stream = _Stream(event.stream_id)
        self._streams[event.stream_id] = stream
        # Clients repeat their header blocks (whole requests, when they poll): the message of
        # a block seen lately is reused, it is immutable (a RawRequestMessage, its headers a proxy).
        key = tuple(event.headers)
        message = self._messages.get(key)
        if message is None and key not in self._messages:
            message = request_message(event.headers)
            if len(self._messages) >= hpack_memo.MEMO_ENTRIES:
                self._messages.clear()
            self._messages[key] = message
        if message is None:
            self._h2.reset_stream(event.stream_id, ErrorCodes.PROTOCOL_ERROR)
            del self._streams[event.stream_id]
            return
        if event.stream_ended is None:
            stream.payload = StreamReader(cast(BaseProtocol, _PayloadFlow(self, stream)), _BODY_LIMIT,
                                          loop=self._loop)
        stream.handler = self._loop.create_task(self._serve(stream, message))

    def _data(self, event: DataReceived) -> None:
        stream = self._streams.get(event.stream_id)
        size = event.flow_controlled_length
        if stream is None or stream.payload is EMPTY_PAYLOAD:
            # A stream already answered or reset: give the connection's window back at once.
            self._h2.acknowledge_received_data(size, event.stream_id)
            return
        stream.unacknowledged += size
        stream.payload.feed_data(event.data)
        self.acknowledge(stream)

    def acknowledge(self, stream: _Stream) -> None:
        """Give back the window of what a stream received, unless its reader is full."""
        if stream.paused or not stream.unacknowledged or stream.closed:
            return
        size, stream.unacknowledged = stream.unacknowledged, 0
        self._h2.acknowledge_received_data(size, stream.id)
        self._flush()

    def _reset(self, stream_id: int) -> None:
        stream = self._streams.pop(stream_id, None)
        if stream is not None:
            self._end(stream, ConnectionResetError("HTTP/2 stream reset by the client"))
            if not self._streams:
                self._arm_idle()

    def _end(self, stream: _Stream, error: Exception) -> None:
        stream.closed = True
        stream.payload.set_exception(error)
        waiter, stream.window_waiter = stream.window_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)
        if stream.headers_sent and stream.handler is not None:
            stream.handler.cancel()

    def _drop(self, error: Exception) -> None:
        streams, self._streams = self._streams, {}
        for stream in streams.values():
            self._end(stream, error)

    def abort(self) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._h2.close_connection()
            self._flush()
            self._transport.abort()
        self._drop(ConnectionResetError("server stopped"))

    # --- one request ---------------------------------------------------------------------------

    async def _serve(self, stream: _Stream, message: RawRequestMessage) -> None:
        server = self._owner._server
        writer = _StreamWriter(self, stream)
        task = asyncio.current_task()
        assert task is not None
        request = server.request_factory(message, stream.payload, cast(RequestHandler, self), writer,
                                         cast("asyncio.Task[None]", task))
        try:
            try:
                response = await server.request_handler(request)
            except web.HTTPException as error:
                response = error
            except Exception:
                log.exception("unhandled error serving %s %s over HTTP/2", message.method, message.path)
                response = web.Response(status=500, text="500 Internal Server Error")
            request._finish()
            await response.prepare(request)
            await response.write_eof()
            self._owner.streams_served += 1
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        except Exception:
            log.exception("error answering %s %s over HTTP/2", message.method, message.path)
        finally:
            self._finish(stream)

    def _finish(self, stream: _Stream) -> None:
        if self._streams.get(stream.id) is stream:
            del self._streams[stream.id]
            if not stream.closed:
                stream.closed = True
                # The answer is over but the client may still be sending (or the handler failed
                # before answering): end the stream.
                h2_stream = self._h2.streams.get(stream.id)
                if h2_stream is not None and not h2_stream.closed:
                    code = ErrorCodes.NO_ERROR if stream.headers_sent else ErrorCodes.INTERNAL_ERROR
                    self._h2.reset_stream(stream.id, code)
                self._flush_soon()
        if not self._streams and self._transport is not None:
            if self._closing:
                self._flush()
                self._transport.close()
            else:
                self._arm_idle()

    # --- outgoing ------------------------------------------------------------------------------

    def _flush(self) -> None:
        self._unflushed = 0
        data = self._h2.data_to_send()
        if data and self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    def _flush_soon(self) -> None:
        """Write what is pending now, unless a flush is already queued behind the handlers that
        one read started (see data_received): then their answers leave in one TLS write."""
        if not self._flush_pending:
            self._flush()

    def _flush_queued(self) -> None:
        self._flush_pending = False
        self._flush()

    def _wake(self, stream_id: int | None) -> None:
        streams = self._streams.values() if stream_id is None else [s for s in (self._streams.get(stream_id),) if s]
        for stream in streams:
            waiter, stream.window_waiter = stream.window_waiter, None
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def send_headers(self, stream: _Stream, headers: list[tuple[bytes, bytes]], end_stream: bool,
                     flush: bool = True) -> None:
        """Send the HEADERS frame (``flush=False``: leave it for the DATA that follows, one write)."""
        if stream.closed:
            raise ConnectionResetError("HTTP/2 stream closed")
        stream.headers_sent = True
        self._h2.send_headers(stream.id, headers, end_stream=end_stream)
        if flush:
            self._flush_soon()

    async def send_data(self, stream: _Stream, data: bytes, end_stream: bool) -> None:
        """Send ``data`` in frames the peer's windows allow, waiting for them to open as needed."""
        h2 = self._h2
        view = memoryview(data)
        while True:
            if stream.closed:
                raise ConnectionResetError("HTTP/2 stream closed")
            if not view:
                if end_stream:
                    h2.end_stream(stream.id)
                break
            size = min(h2.local_flow_control_window(stream.id), h2.max_outbound_frame_size, len(view))
            if size <= 0:
                self._flush()
                stream.window_waiter = self._loop.create_future()
                await stream.window_waiter
                continue
            last = size == len(view)
            chunk = data if last and len(view) == len(data) else bytes(view[:size])
            h2.send_data(stream.id, chunk, end_stream=end_stream and last)
            self._unflushed += size
            view = view[size:]
            if last:
                break
        if self._unflushed > _FLUSH_AT:
            self._flush()  # a handler writing without pause must meet the transport's back-pressure
        else:
            self._flush_soon()
        if self._writable is not None:
            await self._writable


class _StreamWriter(AbstractStreamWriter):
    """aiohttp's response writer for one h2 stream: the status line and headers become a HEADERS
    frame (held back until the body starts, so that a whole answer leaves in one flush), writes
    become DATA frames."""

    def __init__(self, connection: Http2Connection, stream: _Stream) -> None:
        self._connection = connection
        self._stream = stream
        self._headers: list[tuple[bytes, bytes]] | None = None
        self._eof = False
        self.buffer_size = 0
        self.output_size = 0
        self.length: int | None = None

    async def write_headers(self, status_line: str, headers: CIMultiDict[str]) -> None:
        status = status_line.split(" ", 2)[1]
        block = [(b":status", status.encode())]
        block += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()
                  if name.lower() not in _HOP_BY_HOP]
        self._headers = block

    def send_headers(self) -> None:
        if self._headers is not None and not self._stream.headers_sent:
            self._connection.send_headers(self._stream, self._headers, end_stream=False)

    def enable_chunking(self) -> None:
        """HTTP/2 frames the body itself."""

    def enable_compression(self, encoding: str = "deflate", strategy: int | None = None) -> None:
        # Never asked for: the server gzips whole answers itself (kubeloop.server.compression),
        # as upstream does, and never turns on aiohttp's transfer compression.
        raise RuntimeError("aiohttp's transfer compression is not used over HTTP/2")

    async def write(self, chunk: bytes | bytearray | memoryview) -> None:
        if self._eof:
            raise RuntimeError("write after write_eof")
        if not chunk:
            return
        if self._headers is not None and not self._stream.headers_sent:
            self._connection.send_headers(self._stream, self._headers, end_stream=False, flush=False)
        self.output_size += len(chunk)
        await self._connection.send_data(self._stream, bytes(chunk), end_stream=False)

    async def write_eof(self, chunk: bytes = b"") -> None:
        if self._eof:
            return
        self._eof = True
        stream = self._stream
        if not stream.headers_sent:
            if self._headers is None:
                raise RuntimeError("write_eof before the headers")
            self._connection.send_headers(stream, self._headers, end_stream=not chunk, flush=not chunk)
            if not chunk:
                return
        self.output_size += len(chunk)
        await self._connection.send_data(stream, bytes(chunk), end_stream=True)

    async def drain(self) -> None:
        """Writes wait for the transport themselves."""
