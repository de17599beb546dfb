"""Requests the HTTP/1.1 parser refuses are answered with a Status, and logged without a traceback.

aiohttp answers a request it cannot parse (a header line over 8 KiB, a method that is not a
token it knows such as ``FOO`` or ``CONNECT``, a NUL byte in a header) itself, before any
handler runs: a ``text/plain`` body, and an ERROR log line with the parser's traceback. Every
other answer of the server is a ``Status`` object that clients decode, so these become one too:
the same status code aiohttp chose (400 for all of the above), ``reason`` ``BadRequest``, and
the parser's message. They are the client's fault, so they are logged at DEBUG, once, with no
traceback. Anything else (a 500 from inside aiohttp) keeps aiohttp's own handling.

kube-apiserver's Go server differs in the limits themselves (``MaxHeaderBytes`` is 1 MiB, and
any token is a method, answered 405 by the handler); what is kept from it is that a client
never has to parse plain text from the API port.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from kubeloop.api.status import ApiError

log = logging.getLogger(__name__)

_REASONS = {400: "BadRequest", 413: "RequestEntityTooLarge", 431: "RequestHeaderFieldsTooLarge"}


def status_body(code: int, message: str) -> bytes:
    """The ``Status`` JSON of a refused request (``metav1.Status``, as every other error)."""
    error = ApiError(code, _REASONS.get(code, "BadRequest"), message)
    return orjson.dumps(error.status()) + b"\n"


class StatusErrorHandler(RequestHandler):
    """aiohttp's HTTP/1.1 connection handler, answering parser errors with a ``Status``."""

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        if status >= 500 or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        text = message or (str(exc) if exc is not None else "") or "bad request"
        log.debug("refused a request from %s that could not be parsed: %s", request.remote, text.splitlines()[0])
        response = web.Response(status=status, body=status_body(status, text.strip()),
                                content_type="application/json")
        response.force_close()
        return response


def handler_factory(server: web.Server) -> StatusErrorHandler:
    """A connection handler for ``server`` (what ``server()`` makes, with Status errors).

    Built from the server's handler settings (``web.Server._kwargs``, what ``web.Server.__call__``
    passes: keep-alive timeout, header limits, access log).
    """
    kwargs: dict[str, Any] = dict(getattr(server, "_kwargs", {}))
    return StatusErrorHandler(server, loop=server._loop, **kwargs)
