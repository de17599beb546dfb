"""The transport seam: the one place that touches sockets.

:class:`ApiClient` builds a :class:`Request` (method, path, query, headers, body bytes) and
hands it to a :class:`Transport`, which answers with a :class:`Response` or raises
:class:`TransportError` / :class:`ConnectError`. Everything above the seam (auth, rate
limiting, retries, error mapping, watch decoding) is therefore testable with
:class:`MockTransport`, a function from request to canned response, the way httpx's
``MockTransport`` works; :class:`AiohttpTransport` is the real thing, a bounded keep-alive
pool on one ``aiohttp.ClientSession``.
"""

from __future__ import annotations

import asyncio
import inspect
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlencode, urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp
import orjson
from yarl import URL

from kubeloop.client._errors import CertificateError, ConnectError, TransportError, TransportTimeout


@dataclass(slots=True)
class Request:
    """One HTTP request relative to the server's base URL."""

    method: str
    path: str
    """Absolute API path, e.g. ``/apis/apps/v1/namespaces/default/deployments``."""
    query: Sequence[tuple[str, str]] = ()
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    timeout: float | None = None
    """Total seconds for the whole exchange; ``None`` for no limit."""
    stream: bool = False
    """The body will be consumed incrementally (watch); do not buffer it."""
    idle_timeout: float | None = None
    """For streams: seconds without a byte before the read fails."""

    def query_dict(self) -> dict[str, str]:
        """The query as a dict (last value wins), handy in tests."""
        return dict(self.query)

    def target(self) -> str:
        """Path plus encoded query string."""
        if not self.query:
            return self.path
        return f"{self.path}?{urlencode(self.query)}"


class Response(Protocol):
    """An HTTP answer; the body is read once, either whole or as a stream of chunks."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def read(self) -> bytes:
        """The whole body; releases the connection."""
        ...

    def iter_chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives, in chunks of any size; raises :class:`TransportError`
        if the connection breaks mid-body."""
        ...

    def close(self) -> None:
        """Drop the response (and its connection if the body was not fully read)."""
        ...


class Transport(Protocol):
    """Sends requests to one server."""

    async def send(self, request: Request) -> Response: ...

    async def reset_connections(self) -> None:
        """Close pooled connections so the next requests open fresh ones (new client
        certificate); in-flight streams may fail and are expected to reconnect."""
        ...

    async def aclose(self) -> None: ...


class _AiohttpResponse:
    __slots__ = ("_response",)

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    async def read(self) -> bytes:
        try:
            return await self._response.read()
        except TimeoutError as exc:
            raise TransportTimeout(f"timed out reading the response: {exc}") from exc
        except aiohttp.ClientError as exc:
            raise TransportError(f"reading the response failed: {exc}") from exc
        finally:
            self._response.release()

    async def iter_chunks(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except TimeoutError as exc:
            raise TransportTimeout(f"stream idle for too long: {exc}") from exc
        except aiohttp.ClientError as exc:
            raise TransportError(f"stream broken: {exc}") from exc
        finally:
            self._response.close()

    def close(self) -> None:
        self._response.close()


def environment_proxy(url: str) -> str | None:
    """The proxy ``HTTPS_PROXY`` / ``HTTP_PROXY`` name for ``url`` unless ``NO_PROXY`` exempts it."""
    parts = urlsplit(url)
    proxy = getproxies().get(parts.scheme)
    if not proxy or proxy_bypass(parts.hostname or ""):
        return None
    return proxy


class AiohttpTransport:
    """A bounded keep-alive pool to one server on aiohttp.

    ``ssl_context`` is ``None`` for plain HTTP. ``server_hostname`` overrides the name the
    server certificate is checked against (kubeconfig ``tls-server-name``). The session is
    created lazily inside the running loop.
    """

    def __init__(
        self,
        base_url: str,
        *,
        ssl_context: ssl.SSLContext | None = None,
        proxy_url: str | None = None,
        trust_env: bool = True,
        pool_limit: int = 100,
        connect_timeout: float = 10.0,
        server_hostname: str | None = None,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._ssl: ssl.SSLContext | bool = ssl_context if ssl_context is not None else True
        # Go reads the proxy environment once; so do we. (aiohttp's trust_env would look it
        # up again in a thread for every request, which costs more than the request.)
        self._proxy = proxy_url if proxy_url is not None else (environment_proxy(base_url) if trust_env else None)
        self._pool_limit = pool_limit
        self._connect_timeout = connect_timeout
        self._server_hostname = server_hostname
        self._session: aiohttp.ClientSession | None = None
        self._stream_session: aiohttp.ClientSession | None = None
        self._timeouts: dict[tuple[bool, float | None], aiohttp.ClientTimeout] = {}

    def _new_session(self, limit: int) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(limit=limit, limit_per_host=limit, ssl=self._ssl, ttl_dns_cache=300)
        return aiohttp.ClientSession(
            connector=connector,
            trust_env=False,
            auto_decompress=True,
            skip_auto_headers=("User-Agent",),
        )

    def _session_for(self, request: Request) -> aiohttp.ClientSession:
        # Each watch holds an HTTP/1.1 connection for its whole life; in the bounded request
        # pool, enough informers would starve every other call. Streams get their own,
        # unbounded pool (one connection per open watch); requests keep the bounded one.
        if request.stream:
            session = self._stream_session
            if session is None or session.closed:
                session = self._stream_session = self._new_session(0)
            return session
        session = self._session
        if session is None or session.closed:
            session = self._session = self._new_session(self._pool_limit)
        return session

    def _timeout_for(self, request: Request) -> aiohttp.ClientTimeout:
        key = (request.stream, request.idle_timeout if request.stream else request.timeout)
        timeout = self._timeouts.get(key)
        if timeout is None:
            if request.stream:
                timeout = aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout,
                                                sock_read=request.idle_timeout)
            else:
                timeout = aiohttp.ClientTimeout(total=request.timeout, sock_connect=self._connect_timeout)
            self._timeouts[key] = timeout
        return timeout

    async def send(self, request: Request) -> Response:
        session = self._session_for(request)
        url = URL(self._base + request.target(), encoded=True)
        try:
            response = await session.request(
                request.method,
                url,
                headers=request.headers,
                data=request.body,
                timeout=self._timeout_for(request),
                proxy=self._proxy,
                server_hostname=self._server_hostname,
                allow_redirects=False,
            )
        except aiohttp.ClientConnectorCertificateError as exc:
            raise CertificateError(f"cannot verify the certificate of {self._base}: {exc}") from exc
        except aiohttp.ClientConnectorError as exc:
            raise ConnectError(f"cannot connect to {self._base}: {exc}") from exc
        except TimeoutError as exc:
            raise TransportTimeout(f"{request.method} {request.path} timed out") from exc
        except aiohttp.ClientError as exc:
            raise TransportError(f"{request.method} {request.path} failed: {exc}") from exc
        return _AiohttpResponse(response)

    async def reset_connections(self) -> None:
        sessions = (self._session, self._stream_session)
        self._session = self._stream_session = None
        for old in sessions:
            if old is not None and not old.closed:
                await old.close()

    async def aclose(self) -> None:
        await self.reset_connections()


@dataclass
class MockResponse:
    """A canned answer for :class:`MockTransport`; ``chunks`` (if given) streams the body."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    chunks: Iterable[bytes] | None = None
    error_after_chunks: Exception | None = None
    """Raised (as a TransportError) after the chunks, to simulate a broken stream."""
    closed: bool = False

    @classmethod
    def json(cls, obj: object, status: int = 200, headers: Mapping[str, str] | None = None) -> MockResponse:
        merged = {"Content-Type": "application/json", **(headers or {})}
        return cls(status=status, body=orjson.dumps(obj), headers=merged)

    async def read(self) -> bytes:
        if self.chunks is not None:
            return b"".join(self.chunks)
        return self.body

    async def iter_chunks(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks if self.chunks is not None else [self.body]:
            await asyncio.sleep(0)
            yield chunk
        if self.error_after_chunks is not None:
            raise TransportError(str(self.error_after_chunks)) from self.error_after_chunks

    def close(self) -> None:
        self.closed = True


MockHandler = Callable[[Request], "MockResponse | Awaitable[MockResponse]"]


class MockTransport:
    """A transport answering from a function, recording every request in ``requests``.

    The handler may be sync or async and may raise :class:`TransportError` /
    :class:`ConnectError` to simulate network failures.
    """

    def __init__(self, handler: MockHandler) -> None:
        self._handler = handler
        self.requests: list[Request] = []
        self.resets = 0
        self.closed = False

    async def send(self, request: Request) -> Response:
        self.requests.append(request)
        result = self._handler(request)
        if inspect.isawaitable(result):
            result = await result
        assert isinstance(result, MockResponse)
        return result

    async def reset_connections(self) -> None:
        self.resets += 1

    async def aclose(self) -> None:
        self.closed = True
