from typing import Any

import orjson
import pytest

from kubeloop.api import status
from kubeloop.client import (
    AlreadyExists,
    ApiException,
    BadRequest,
    Conflict,
    Expired,
    Forbidden,
    Gone,
    InternalError,
    Invalid,
    MethodNotAllowed,
    NotFound,
    ServerTimeout,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
    api_exception,
    exception_from_status,
    is_already_exists,
    is_conflict,
    is_forbidden,
    is_gone,
    is_invalid,
    is_not_found,
    is_server_timeout,
    is_too_many_requests,
    is_unauthorized,
)


@pytest.mark.parametrize(
    ("error", "cls"),
    [
        (status.not_found_error("deployments", "apps", "web"), NotFound),
        (status.already_exists_error("pods", "", "p"), AlreadyExists),
        (status.conflict_error("pods", "", "p", status.OBJECT_MODIFIED), Conflict),
        (status.invalid_error("Deployment", "apps", "web", [status.required("spec.replicas")]), Invalid),
        (status.bad_request_error("nope"), BadRequest),
        (status.expired_error("too old resource version: 1 (5)"), Expired),
        (status.method_not_allowed_error("pods", "", "watch"), MethodNotAllowed),
        (status.unsupported_media_type_error("text/plain", ["application/json"]), UnsupportedMediaType),
        (status.unauthorized_error(), Unauthorized),
        (status.forbidden_error("pods", "", "p", "no"), Forbidden),
        (status.too_large_resource_version_error(9, 3), ServerTimeout),
        (status.internal_error("boom"), InternalError),
        (status.ApiError(429, "TooManyRequests", "slow down"), TooManyRequests),
        (status.ApiError(410, "Gone", "gone"), Gone),
    ],
)
def test_status_bodies_become_typed_exceptions(error: status.ApiError, cls: type[ApiException]) -> None:
    exc = api_exception(error.code, orjson.dumps(error.status()), {"Content-Type": "application/json"})
    assert type(exc) is cls
    assert (exc.code, exc.reason, exc.message, exc.details) == (error.code, error.reason, error.message,
                                                                error.details)
    assert exc.status() == error.status()
    assert str(exc) == error.message


def test_gone_predicate_covers_both_reasons() -> None:
    expired = exception_from_status({"kind": "Status", "code": 410, "reason": "Expired", "message": "x"})
    gone = exception_from_status({"kind": "Status", "code": 410, "reason": "Gone", "message": "x"})
    assert isinstance(expired, Gone)
    assert is_gone(expired)
    assert is_gone(gone)
    assert not is_gone(NotFound(code=404, reason="NotFound", message=""))


def test_unknown_reason_falls_back_to_code() -> None:
    assert type(exception_from_status({"code": 404, "reason": "SomethingNew"})) is NotFound
    assert type(exception_from_status({"code": 409, "reason": "SomethingNew"})) is Conflict
    assert type(exception_from_status({"code": 418})) is ApiException


def test_missing_code_in_status_uses_http_code() -> None:
    exc = exception_from_status({"kind": "Status", "reason": "NotFound", "message": "m"}, 404)
    assert exc.code == 404


@pytest.mark.parametrize(
    ("code", "body", "cls", "reason", "fragment"),
    [
        (404, b"", NotFound, "NotFound", "could not find the requested resource"),
        (502, b"<html>bad gateway</html>", ApiException, "", "<html>bad gateway</html>"),
        (503, b"not json {", ApiException, "ServiceUnavailable", "unable to handle the request"),
        (401, b'{"not": "a status"}', Unauthorized, "Unauthorized", "provide credentials"),
    ],
)
def test_non_status_bodies_get_generic_errors(code: int, body: bytes, cls: type[ApiException], reason: str,
                                              fragment: str) -> None:
    exc = api_exception(code, body)
    assert isinstance(exc, cls)
    assert exc.code == code
    assert exc.reason == reason
    assert fragment in exc.message


def test_retry_after_from_header_or_details() -> None:
    with_header = api_exception(429, b"", {"retry-after": "7"})
    assert with_header.retry_after_seconds == 7
    assert with_header.headers == {"Retry-After": "7"}
    body = orjson.dumps(status.too_large_resource_version_error(9, 3).status())
    assert api_exception(504, body).retry_after_seconds == 1
    assert api_exception(500, b"").retry_after_seconds is None


PREDICATES: list[tuple[Any, int, str]] = [
    (is_not_found, 404, "NotFound"),
    (is_already_exists, 409, "AlreadyExists"),
    (is_conflict, 409, "Conflict"),
    (is_invalid, 422, "Invalid"),
    (is_forbidden, 403, "Forbidden"),
    (is_unauthorized, 401, "Unauthorized"),
    (is_too_many_requests, 429, "TooManyRequests"),
    (is_server_timeout, 504, "Timeout"),
]


@pytest.mark.parametrize(("predicate", "code", "reason"), PREDICATES)
def test_predicates_accept_client_and_server_errors(predicate: Any, code: int, reason: str) -> None:
    client_side = exception_from_status({"code": code, "reason": reason})
    server_side = status.ApiError(code, reason, "m")
    assert predicate(client_side)
    assert predicate(server_side)
    assert not predicate(ValueError("x"))
    assert not predicate(status.ApiError(500, "InternalError", "m"))


def test_already_exists_is_not_a_conflict() -> None:
    exc = exception_from_status({"code": 409, "reason": "AlreadyExists"})
    assert is_already_exists(exc)
    assert not is_conflict(exc)
    assert not is_already_exists(status.ApiError(409, "", "m"))
    assert is_conflict(status.ApiError(409, "", "m"))
