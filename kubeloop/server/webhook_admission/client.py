"""The HTTPS call of one webhook: POST an AdmissionReview, bounded by its ``timeoutSeconds``.

Upstream: kubernetes/apiserver ``pkg/util/webhook/client.go`` (``ClientManager.HookClient``,
TLS verified against the ``caBundle``, the system roots without one) and the rest client's
``Post().Timeout(...).Do(ctx)`` in ``mutating/dispatcher.go``: the request carries
``?timeout=Ns`` and the whole exchange is cancelled at the deadline. Every failure becomes a
:class:`CallFailure` whose text is what upstream's Go client reports after
``failed to call webhook:`` (``Post "URL": ...``), never a traceback.

One :class:`WebhookClient` (one aiohttp session) per server, closed at shutdown.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from kubeloop.api.status import go_quote
from kubeloop.server.webhook_admission.endpoints import Getter, ResolveFailure, shown_url, target_of
from kubeloop.server.webhook_admission.review import InvalidResponse, parse_body

_STATUS_TEXTS = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}


USER_AGENT = "kube-apiserver-admission"
"""The User-Agent of upstream's webhook calls (``pkg/util/webhook/client.go``)."""


class CallFailure(Exception):
    """The call did not produce an AdmissionReview (the text follows ``failed to call webhook: ``)."""


class ClientFailure(Exception):
    """No client can be built for the configuration (the text follows ``could not get REST client: ``)."""


def _go_duration(seconds: int) -> str:
    """Go's ``time.Duration.String`` of whole seconds."""
    minutes, rest = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes}m{rest}s"
    if minutes:
        return f"{minutes}m{rest}s"
    return f"{rest}s"


def _status_error_text(status: int, body: bytes) -> str:
    """The rest client's text for a non-2xx answer: a Status's message, else
    ``newUnstructuredResponseError``'s sentence for the code."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status" and isinstance(doc.get("message"), str):
        return str(doc["message"])
    if status == 500:
        return (f"an error on the server ({go_quote(body.decode('utf-8', 'replace').strip())}) has prevented the "
                f"request from succeeding")
    return _STATUS_TEXTS.get(status, f"the server responded with the status code {status} but did not return "
                                     f"more information")


def _connection_text(error: BaseException, host: str, port: int) -> str:
    if isinstance(error, aiohttp.ClientConnectorCertificateError):
        cause = error.certificate_error
        if isinstance(cause, ssl.SSLCertVerificationError) and "Hostname mismatch" in str(cause.verify_message):
            return "tls: failed to verify certificate: x509: certificate is not valid for the requested name"
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if isinstance(error, aiohttp.ClientConnectorError):
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if isinstance(error.os_error, ConnectionRefusedError):
            return f"dial tcp {address}: connect: connection refused"
        return f"dial tcp {address}: {error.os_error.strerror or error.os_error}"
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return "EOF"
    return str(error) or type(error).__name__


class WebhookClient:
    """Calls webhooks over HTTPS; TLS contexts are kept per ``caBundle``."""

    def __init__(self, get: Getter) -> None:
        self._get = get
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}

    def _ssl_context(self, ca_bundle: str) -> ssl.SSLContext:
        context = self._contexts.get(ca_bundle)
        if context is None:
            if ca_bundle:
                try:
                    pem = base64.b64decode(ca_bundle).decode("ascii")
                    context = ssl.create_default_context(cadata=pem)
                except (binascii.Error, UnicodeDecodeError, ValueError, ssl.SSLError):
                    # client-go's TLS config loading (cert.NewPoolFromBytes).
                    raise ClientFailure("unable to load root certificates: unable to parse bytes as PEM block"
                                        ) from None
            else:
                context = ssl.create_default_context()
            self._contexts[ca_bundle] = context
        return context

    async def post(self, client_config: Mapping[str, Any], timeout_seconds: int, body: bytes) -> dict[str, Any]:
        """POST ``body`` to the webhook; its decoded AdmissionReview, or :class:`CallFailure`
        (:class:`ClientFailure` when the configuration's ``caBundle`` holds no certificate)."""
        context = self._ssl_context(str(client_config.get("caBundle") or ""))
        url = f"{shown_url(client_config)}?timeout={_go_duration(timeout_seconds)}"
        prefix = f"Post \"{url}\""
        try:
            target = target_of(client_config, self._get)
        except ResolveFailure as failure:
            raise CallFailure(f"{prefix}: {failure}") from None
        if self._session is None:
            self._session = aiohttp.ClientSession(headers={"User-Agent": USER_AGENT})
        host = f"[{target.host}]" if ":" in target.host else target.host
        address = f"https://{host}:{target.port}{target.path}"
        try:
            async with asyncio.timeout(timeout_seconds):
                async with self._session.post(
                        address, params={"timeout": _go_duration(timeout_seconds)}, data=body, ssl=context,
                        server_hostname=target.server_name,
                        headers={"Content-Type": "application/json", "Accept": "application/json, */*",
                                 "Host": urlsplit(url).netloc},
                ) as response:
                    raw = await response.read()
                    status = response.status
        except TimeoutError:
            raise CallFailure(f"{prefix}: context deadline exceeded") from None
        except (aiohttp.ClientError, OSError) as error:
            raise CallFailure(f"{prefix}: {_connection_text(error, target.host, target.port)}") from None
        if not 200 <= status < 300:
            raise CallFailure(_status_error_text(status, raw))
        try:
            return parse_body(raw)
        except InvalidResponse as error:
            raise CallFailure(str(error)) from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
