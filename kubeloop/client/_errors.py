"""Typed exceptions for API errors, built from the ``Status`` body the server sends.

Every error answer of a Kubernetes API server is a ``Status`` object (or, from proxies and
very old servers, some other body). :func:`api_exception` turns a response into the most
specific :class:`ApiException` subclass, choosing by ``reason`` first and by HTTP code when
the reason is missing or unknown, which is how client-go's ``IsNotFound``-style predicates
decide. The ``is_*`` helpers accept any exception, including a plain
:class:`kubeloop.api.status.ApiError` raised inside the embedded server, so callers need not
care which side produced it.

Transport failures (no HTTP answer at all) are :class:`TransportError`; those that provably
never reached the server are :class:`ConnectError`, which makes them safe to retry for every
verb.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kubeloop.api.status import ApiError


@dataclass
class ApiException(ApiError):
    """An error answer from the API server, carrying the complete ``Status``.

    ``code``, ``reason``, ``message`` and ``details`` are the Status fields; ``headers``
    holds the response headers that matter to callers (``Retry-After``). ``status()``
    returns the Status dict.
    """

    @property
    def retry_after_seconds(self) -> int | None:
        """The server's requested wait, from ``Retry-After`` or ``details.retryAfterSeconds``."""
        header = self.headers.get("Retry-After")
        if header is not None and header.strip().isdigit():
            return int(header)
        if self.details:
            value = self.details.get("retryAfterSeconds")
            if isinstance(value, int) and value > 0:
                return value
        return None


class BadRequest(ApiException):
    """400 BadRequest."""


class Unauthorized(ApiException):
    """401 Unauthorized: credentials missing, wrong or expired."""


class Forbidden(ApiException):
    """403 Forbidden."""


class NotFound(ApiException):
    """404 NotFound."""


class MethodNotAllowed(ApiException):
    """405 MethodNotAllowed."""


class NotAcceptable(ApiException):
    """406 NotAcceptable."""


class AlreadyExists(ApiException):
    """409 AlreadyExists (create of an existing name)."""


class Conflict(ApiException):
    """409 Conflict (stale resourceVersion, failed precondition)."""


class Gone(ApiException):
    """410 Gone or Expired: a resourceVersion or continue token is too old; relist."""


class Expired(Gone):
    """410 with reason ``Expired`` (what current servers send)."""


class RequestEntityTooLarge(ApiException):
    """413 RequestEntityTooLarge."""


class UnsupportedMediaType(ApiException):
    """415 UnsupportedMediaType."""


class Invalid(ApiException):
    """422 Invalid: validation failed; ``details.causes`` lists the field errors."""


class TooManyRequests(ApiException):
    """429 TooManyRequests (left after the client's own Retry-After retries)."""


class InternalError(ApiException):
    """500 InternalError."""


class ServiceUnavailable(ApiException):
    """503 ServiceUnavailable."""


class ServerTimeout(ApiException):
    """Reason ``ServerTimeout`` or ``Timeout`` (504), e.g. a too-large resourceVersion."""


_BY_REASON: dict[str, type[ApiException]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "MethodNotAllowed": MethodNotAllowed,
    "NotAcceptable": NotAcceptable,
    "AlreadyExists": AlreadyExists,
    "Conflict": Conflict,
    "Gone": Gone,
    "Expired": Expired,
    "RequestEntityTooLarge": RequestEntityTooLarge,
    "UnsupportedMediaType": UnsupportedMediaType,
    "Invalid": Invalid,
    "TooManyRequests": TooManyRequests,
    "InternalError": InternalError,
    "ServiceUnavailable": ServiceUnavailable,
    "ServerTimeout": ServerTimeout,
    "Timeout": ServerTimeout,
}

_BY_CODE: dict[int, type[ApiException]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    406: NotAcceptable,
    409: Conflict,
    410: Gone,
    413: RequestEntityTooLarge,
    415: UnsupportedMediaType,
    422: Invalid,
    429: TooManyRequests,
    500: InternalError,
    503: ServiceUnavailable,
    504: ServerTimeout,
}

# Reason and message for answers without a Status body, as client-go's generic response
# error words them (so logs read the same whichever client produced them).
_GENERIC: dict[int, tuple[str, str]] = {
    400: ("BadRequest", "the server rejected our request for an unknown reason"),
    401: ("Unauthorized", "the server has asked for the client to provide credentials"),
    403: ("Forbidden", "the server does not allow access to the requested resource"),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    406: ("NotAcceptable", "the server was unable to respond with a content type that the client supports"),
    409: ("Conflict", "the server reported a conflict"),
    410: ("Gone", "the server no longer has the requested resource"),
    413: ("RequestEntityTooLarge", "the server has rejected the request because it is too large"),
    415: ("UnsupportedMediaType", "the server was unable to process the request's content type"),
    422: ("Invalid", "the server rejected our request due to an error in our request"),
    429: ("TooManyRequests", "the server has received too many requests and has asked us to try again later"),
    500: ("InternalError", "an error on the server has prevented the request from succeeding"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: ("Timeout", "the server was unable to return a response in the time allotted"),
}


def exception_class(reason: str, code: int) -> type[ApiException]:
    """The most specific exception class for a Status ``reason`` and HTTP ``code``."""
    cls = _BY_REASON.get(reason)
    if cls is not None:
        return cls
    if code == 409:
        return Conflict
    return _BY_CODE.get(code, ApiException)


def exception_from_status(status: Mapping[str, Any], code: int | None = None,
                          headers: Mapping[str, str] | None = None) -> ApiException:
    """Build the typed exception for a ``Status`` dict (``code`` fills a missing ``status.code``)."""
    status_code = status.get("code")
    final_code = status_code if isinstance(status_code, int) and status_code > 0 else (code or 500)
    reason = str(status.get("reason") or "")
    details = status.get("details")
    cls = exception_class(reason, final_code)
    return cls(
        code=final_code,
        reason=reason,
        message=str(status.get("message") or ""),
        details=dict(details) if isinstance(details, Mapping) else None,
        headers=dict(headers) if headers else {},
    )


def api_exception(code: int, body: bytes, headers: Mapping[str, str] | None = None) -> ApiException:
    """Turn an error response (status ``code``, raw ``body``) into a typed exception.

    A JSON ``Status`` body is used as sent; anything else (an HTML page from a proxy, an
    empty body) becomes a generic error whose reason follows the HTTP code and whose message
    keeps the body text when it is short.
    """
    kept: dict[str, str] = {}
    for key, value in (headers or {}).items():
        if key.lower() == "retry-after":
            kept["Retry-After"] = value
    try:
        decoded = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status":
        return exception_from_status(decoded, code, kept)
    reason, message = _GENERIC.get(code, ("", f"the server responded with the status code {code} "
                                               "but did not return more information"))
    text = body.decode("utf-8", "replace").strip() if body else ""
    if text and len(text) < 1024:
        message = f"{message} ({text})"
    cls = exception_class(reason, code)
    return cls(code=code, reason=reason, message=message, details=None, headers=kept)


def _matches(exc: BaseException, cls: type[ApiException], reasons: tuple[str, ...], code: int) -> bool:
    if isinstance(exc, cls):
        return True
    if isinstance(exc, ApiError) and not isinstance(exc, ApiException):
        if exc.reason in reasons:
            return True
        return not exc.reason and exc.code == code
    return False


def is_not_found(exc: BaseException) -> bool:
    """True for a 404 NotFound."""
    return _matches(exc, NotFound, ("NotFound",), 404)


def is_already_exists(exc: BaseException) -> bool:
    """True for a 409 AlreadyExists."""
    return _matches(exc, AlreadyExists, ("AlreadyExists",), -1)


def is_conflict(exc: BaseException) -> bool:
    """True for a 409 Conflict (not AlreadyExists)."""
    return _matches(exc, Conflict, ("Conflict",), 409)


def is_invalid(exc: BaseException) -> bool:
    """True for a 422 Invalid."""
    return _matches(exc, Invalid, ("Invalid",), 422)


def is_gone(exc: BaseException) -> bool:
    """True for 410, reason Gone or Expired: the caller must relist."""
    return _matches(exc, Gone, ("Gone", "Expired"), 410)


def is_forbidden(exc: BaseException) -> bool:
    """True for a 403 Forbidden."""
    return _matches(exc, Forbidden, ("Forbidden",), 403)


def is_unauthorized(exc: BaseException) -> bool:
    """True for a 401 Unauthorized."""
    return _matches(exc, Unauthorized, ("Unauthorized",), 401)


def is_too_many_requests(exc: BaseException) -> bool:
    """True for a 429 TooManyRequests."""
    return _matches(exc, TooManyRequests, ("TooManyRequests",), 429)


def is_server_timeout(exc: BaseException) -> bool:
    """True for reason ServerTimeout or Timeout (504)."""
    return _matches(exc, ServerTimeout, ("ServerTimeout", "Timeout"), 504)


class TransportError(Exception):
    """The request got no HTTP answer (connection reset, TLS failure, timeout...).

    The request may or may not have reached the server, so only reads are retried.
    """


class ConnectError(TransportError):
    """The connection could not be opened: the server never saw the request."""


class CertificateError(ConnectError):
    """TLS verification failed (unknown authority, wrong name, expired): never retried,
    since trying again cannot help."""


class TransportTimeout(TransportError):
    """The request took longer than its timeout."""


class ConfigError(Exception):
    """A kubeconfig, in-cluster or client configuration that cannot be used."""


class ExecPluginError(ConfigError):
    """An exec credential plugin failed or printed something that is not an ExecCredential."""
