"""The request core: one HTTP exchange with auth, rate limiting, retries and error mapping.

Order of events for every attempt: take a token from the rate limiter (waiting if the
bucket is empty), get credentials (installing an exec plugin's client certificate if it
changed), send through the transport, record the attempt in the metrics hook, then:

- 2xx: hand the response to the caller;
- 401, first time: ask the authenticator to refresh; retry once if it produced new
  credentials (rotated token file, re-run exec plugin);
- 429 or 5xx with an integer ``Retry-After``: wait that long and retry, at most
  ``max_retries`` times, whatever the verb: the server asked for it and did not act
  (client-go's ``checkWait``);
- a connection that never opened: back off and retry any verb, at most
  ``connection_retries`` times; a connection broken after sending: retry only GET and HEAD,
  which cannot have changed anything (client-go retries only GET there); a timeout or a
  failed certificate check is not retried;
- any other status: raise the typed :class:`ApiException` built from the Status body.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import orjson

from kubeloop.client._auth import Authenticator, Credentials, StaticAuth, TokenFileAuth
from kubeloop.client._clock import Clock, SystemClock
from kubeloop.client._config import ClientConfig
from kubeloop.client._errors import (
    ApiException,
    CertificateError,
    ConnectError,
    TransportError,
    TransportTimeout,
    api_exception,
)
from kubeloop.client._exec import ExecAuth
from kubeloop.client._metrics import ERROR_CODE, RequestMetrics
from kubeloop.client._ratelimit import new_rate_limiter
from kubeloop.client._tls import build_ssl_context, load_client_certificate
from kubeloop.client._transport import AiohttpTransport, Request, Response, Transport

_SAFE_TO_REPEAT = frozenset({"GET", "HEAD"})


def authenticator_for(config: ClientConfig, clock: Clock) -> Authenticator:
    """The authenticator a config asks for: exec > token file > token > basic > none."""
    if config.exec is not None:
        return ExecAuth(config.exec, clock)
    if config.token_file:
        return TokenFileAuth(config.token_file, clock, config.token_file_period, config.token)
    if config.token:
        return StaticAuth.bearer(config.token)
    if config.username is not None and config.password is not None:
        return StaticAuth.basic(config.username, config.password)
    return StaticAuth()


def retry_after_seconds(headers: Any) -> int | None:
    """An integer ``Retry-After`` header value, or ``None`` (HTTP dates are ignored, as in client-go)."""
    value = headers.get("Retry-After")
    if value is None:
        return None
    text = str(value).strip()
    return int(text) if text.isdigit() else None


class RestCore:
    """Sends requests to one API server; the verbs live in :class:`kubeloop.client.ApiClient`."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: Transport | None = None,
        authenticator: Authenticator | None = None,
        metrics: RequestMetrics | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.config = config
        self._clock: Clock = clock or SystemClock()
        self._ssl: ssl.SSLContext | None = build_ssl_context(config)
        if transport is None:
            transport = AiohttpTransport(
                config.server,
                ssl_context=self._ssl,
                proxy_url=config.proxy_url,
                trust_env=config.proxy_from_environment,
                pool_limit=config.pool_limit,
                connect_timeout=config.connect_timeout,
                server_hostname=config.tls_server_name,
            )
        self.transport: Transport = transport
        self.authenticator: Authenticator = authenticator or authenticator_for(config, self._clock)
        self._limiter = new_rate_limiter(config.qps, config.burst, self._clock.now())
        self.metrics = metrics
        self._host = urlsplit(config.server).netloc
        self._headers = {"Accept": "application/json", "User-Agent": config.user_agent}
        self._installed_cert: tuple[bytes, bytes] | None = None

    async def aclose(self) -> None:
        """Close pooled connections; the client must not be used afterwards."""
        await self.transport.aclose()

    async def _prepare(self, credentials: Credentials) -> None:
        cert, key = credentials.client_cert_pem, credentials.client_key_pem
        if cert is None or key is None or self._ssl is None or self._installed_cert == (cert, key):
            return
        load_client_certificate(self._ssl, cert, key)
        first = self._installed_cert is None
        self._installed_cert = (cert, key)
        if not first:
            # Pooled connections were authenticated with the old certificate; client-go
            # closes them all on rotation too.
            await self.transport.reset_connections()

    def _backoff(self, attempt: int) -> float:
        return float(min(self.config.retry_backoff * 2.0**attempt, self.config.retry_backoff_max))

    def _observe(self, method: str, code: str, started: float) -> None:
        if self.metrics is not None:
            self.metrics.observe(method, self._host, code, self._clock.now() - started)

    async def send(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: bytes | None = None,
        content_type: str | None = None,
        stream: bool = False,
    ) -> Response:
        """Perform one API call (with the retries described in the module docstring) and
        return its successful response; raise the typed exception otherwise."""
        connection_failures = 0
        waits = 0
        refreshed = False
        while True:
            if self._limiter is not None:
                delay = self._limiter.reserve(self._clock.now())
                if delay > 0:
                    await self._clock.sleep(delay)
            credentials = await self.authenticator.credentials()
            if credentials.client_cert_pem is not None:  # an exec plugin's certificate (rare)
                await self._prepare(credentials)
            headers = dict(self._headers)
            if credentials.authorization is not None:
                headers["Authorization"] = credentials.authorization
            if content_type is not None:
                headers["Content-Type"] = content_type
            request = Request(
                method, path, query, headers, body,
                timeout=None if stream else self.config.request_timeout,
                stream=stream,
                idle_timeout=self.config.watch_idle_timeout,
            )
            metrics = self.metrics
            started = self._clock.now() if metrics is not None else 0.0
            try:
                response = await self.transport.send(request)
            except (TransportTimeout, CertificateError):
                self._observe(method, ERROR_CODE, started)
                raise
            except TransportError as exc:
                self._observe(method, ERROR_CODE, started)
                retryable = isinstance(exc, ConnectError) or method in _SAFE_TO_REPEAT
                if not retryable or connection_failures >= self.config.connection_retries:
                    raise
                await self._clock.sleep(self._backoff(connection_failures))
                connection_failures += 1
                continue
            status = response.status
            if metrics is not None:
                self._observe(method, str(status), started)
            if status < 300:
                return response
            if status == 401 and not refreshed:
                refreshed = True
                if await self.authenticator.refresh(credentials):
                    await response.read()
                    continue
            if (status == 429 or status >= 500) and waits < self.config.max_retries:
                seconds = retry_after_seconds(response.headers)
                if seconds is not None:
                    await response.read()
                    waits += 1
                    await self._clock.sleep(seconds)
                    continue
            raise api_exception(status, await response.read(), response.headers)

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: bytes | None = None,
        content_type: str | None = None,
    ) -> bytes:
        """Perform an API call and return the raw response body."""
        response = await self.send(method, path, query=query, body=body, content_type=content_type)
        return await response.read()

    async def request_json(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: bytes | None = None,
        content_type: str | None = None,
    ) -> dict[str, Any]:
        """Perform an API call and decode its JSON object body (``{}`` for an empty body)."""
        response = await self.send(method, path, query=query, body=body, content_type=content_type)
        data = await response.read()
        if not data:
            return {}
        try:
            decoded = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ApiException(code=response.status, reason="InternalError",
                               message=f"{method} {path}: the server sent invalid JSON: {exc}") from exc
        if not isinstance(decoded, dict):
            raise ApiException(code=response.status, reason="InternalError",
                               message=f"{method} {path}: the server sent JSON that is not an object")
        return decoded
