"""API errors as ``Status`` objects, shaped exactly as kube-apiserver shapes them.

The server raises :class:`ApiError` anywhere below a request handler and the handler turns it
into the HTTP response; the client parses the same ``Status`` back into typed exceptions.
``FieldError`` is one validation failure; a list of them becomes a 422 ``Invalid`` status
with one cause per error, and the message upstream's aggregate prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Cause reasons (metav1.CauseType) for field errors, and the words upstream prints for each.
FIELD_VALUE_NOT_FOUND = "FieldValueNotFound"
FIELD_VALUE_REQUIRED = "FieldValueRequired"
FIELD_VALUE_DUPLICATE = "FieldValueDuplicate"
FIELD_VALUE_INVALID = "FieldValueInvalid"
FIELD_VALUE_NOT_SUPPORTED = "FieldValueNotSupported"
FIELD_VALUE_FORBIDDEN = "FieldValueForbidden"
FIELD_VALUE_TOO_LONG = "FieldValueTooLong"
FIELD_VALUE_TOO_MANY = "FieldValueTooMany"
FIELD_VALUE_TYPE_INVALID = "FieldValueTypeInvalid"
INTERNAL_ERROR = "InternalError"

_TYPE_WORDS = {
    FIELD_VALUE_NOT_FOUND: "Not found",
    FIELD_VALUE_REQUIRED: "Required value",
    FIELD_VALUE_DUPLICATE: "Duplicate value",
    FIELD_VALUE_INVALID: "Invalid value",
    FIELD_VALUE_NOT_SUPPORTED: "Unsupported value",
    FIELD_VALUE_FORBIDDEN: "Forbidden",
    FIELD_VALUE_TOO_LONG: "Too long",
    FIELD_VALUE_TOO_MANY: "Too many",
    FIELD_VALUE_TYPE_INVALID: "Invalid value",
    INTERNAL_ERROR: "Internal error",
}
# Types whose message never shows the offending value.
_VALUELESS = {FIELD_VALUE_REQUIRED, FIELD_VALUE_FORBIDDEN, FIELD_VALUE_TOO_LONG, INTERNAL_ERROR}


class _Omitted:
    def __repr__(self) -> str:
        return "<omitted>"


OMITTED: Any = _Omitted()


def go_value(value: Any) -> str:
    """Format a bad value the way Go's ``%q`` / ``%v`` / ``%#v`` print it in field errors."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, Mapping):
        if all(isinstance(v, str) for v in value.values()):
            body = ", ".join(f"{go_quote(str(k))}:{go_quote(v)}" for k, v in sorted(value.items()))
            return "map[string]string{" + body + "}"
        body = ", ".join(f"{go_quote(str(k))}:{go_value(v)}" for k, v in sorted(value.items()))
        return "map[string]interface {}{" + body + "}"
    if isinstance(value, Sequence):
        if all(isinstance(v, str) for v in value):
            return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
        return "[]interface {}{" + ", ".join(go_value(v) for v in value) + "}"
    return str(value)


_GO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """Go's ``%q`` (``strconv.Quote``): the named escapes, ``\\xNN`` for other control bytes."""
    out = ['"']
    for ch in text:
        escaped = _GO_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)



@dataclass(frozen=True)
class FieldError:
    """One validation failure on one field, as ``field.Error`` upstream.

    ``type`` is a cause reason such as :data:`FIELD_VALUE_INVALID`; ``field`` is the path
    (``spec.template.metadata.labels``); ``value`` the offending value (omit it for types
    that do not show one); ``detail`` the human explanation.
    """

    type: str
    field: str
    value: Any = OMITTED
    detail: str = ""

    def body(self) -> str:
        """The message without the field path (a Status cause's ``message``)."""
        words = _TYPE_WORDS.get(self.type, self.type)
        if self.type in _VALUELESS or self.value is OMITTED:
            text = words
        else:
            text = f"{words}: {go_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(FIELD_VALUE_REQUIRED, path, detail=detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(FIELD_VALUE_INVALID, path, value, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FIELD_VALUE_FORBIDDEN, path, detail=detail)


def not_supported(path: str, value: Any, supported: Iterable[str]) -> FieldError:
    quoted = ", ".join(go_quote(s) for s in supported)
    return FieldError(FIELD_VALUE_NOT_SUPPORTED, path, value, f"supported values: {quoted}")


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(FIELD_VALUE_DUPLICATE, path, value)


def not_found(path: str, value: Any) -> FieldError:
    return FieldError(FIELD_VALUE_NOT_FOUND, path, value)


def too_long(path: str, max_length: int) -> FieldError:
    return FieldError(FIELD_VALUE_TOO_LONG, path, detail=f"must have at most {max_length} bytes")


def type_invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(FIELD_VALUE_TYPE_INVALID, path, value, detail)


@dataclass
class ApiError(Exception):
    """An error answer of the API, carrying the complete ``Status`` body."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body

    @classmethod
    def from_status(cls, status: Mapping[str, Any], code: int | None = None) -> ApiError:
        """Rebuild an error from a ``Status`` body (the client side of :meth:`status`)."""
        return cls(
            code=int(status.get("code") or code or 500),
            reason=str(status.get("reason") or ""),
            message=str(status.get("message") or ""),
            details=status.get("details"),
        )


def status_details(name: str = "", group: str = "", kind: str = "", uid: str = "",
                   causes: Sequence[Mapping[str, Any]] = (), retry_after_seconds: int = 0) -> dict[str, Any]:
    """``metav1.StatusDetails`` as Go encodes it: every field is ``omitempty``, so the core
    group's ``""`` (and an empty name, kind, uid or cause list) is left out, in Go's field order."""
    details: dict[str, Any] = {}
    for key, value in (("name", name), ("group", group), ("kind", kind), ("uid", uid)):
        if value:
            details[key] = value
    if causes:
        details["causes"] = [dict(cause) for cause in causes]
    if retry_after_seconds:
        details["retryAfterSeconds"] = retry_after_seconds
    return details


def qualified(resource: str, group: str) -> str:
    """``GroupResource.String()`` / ``GroupKind.String()``: ``name`` or ``name.group``."""
    return f"{resource}.{group}" if group else resource


def not_found_error(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f"{qualified(resource, group)} {go_quote(name)} not found",
        status_details(name, group, resource),
    )


def already_exists_error(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f"{qualified(resource, group)} {go_quote(name)} already exists",
        status_details(name, group, resource),
    )


def generate_name_conflict_error(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f"{qualified(resource, group)} {go_quote(name)} already exists, "
        "the server was not able to generate a unique name for the object",
        status_details(name, group, resource, retry_after_seconds=1),
    )


def conflict_error(resource: str, group: str, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f"Operation cannot be fulfilled on {qualified(resource, group)} {go_quote(name)}: {why}",
        status_details(name, group, resource),
    )


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid_error(kind: str, group: str, name: str, errors: Sequence[FieldError]) -> ApiError:
    """422 Invalid with one cause per field error and upstream's aggregated message."""
    causes = [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]
    messages: list[str] = []
    for e in errors:
        text = str(e)
        if text not in messages:
            messages.append(text)
    head = f"{qualified(kind, group)} {go_quote(name)} is invalid"
    if not messages:
        message = head
    elif len(messages) == 1:
        message = f"{head}: {messages[0]}"
    else:
        message = f"{head}: [{', '.join(messages)}]"
    return ApiError(422, "Invalid", message, status_details(name, group, kind, causes=causes))


def bad_request_error(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed_error(resource: str, group: str, action: str) -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        f"{action} is not supported on resources of kind {go_quote(qualified(resource, group))}",
        status_details(group=group, kind=resource),
    )


def expired_error(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def unsupported_media_type_error(content_type: str, accepted: Sequence[str]) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


def not_acceptable_error(accepted: Sequence[str]) -> ApiError:
    return ApiError(
        406,
        "NotAcceptable",
        f"only the following media types are accepted: {', '.join(accepted)}",
    )


def too_large_error(limit: int) -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def unauthorized_error() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden_error(resource: str, group: str, name: str, why: str) -> ApiError:
    target = f"{qualified(resource, group)} {go_quote(name)}" if name else qualified(resource, group)
    if not resource and not group:
        # upstream's NewForbidden with an empty GroupResource (a non-resource path).
        return ApiError(403, "Forbidden", f"forbidden: {why}", status_details())
    return ApiError(403, "Forbidden", f"{target} is forbidden: {why}", status_details(name, group, resource))


def too_large_resource_version_error(requested: int, current: int) -> ApiError:
    return ApiError(
        504,
        "Timeout",
        f"Too large resource version: {requested}, current: {current}",
        {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
         "retryAfterSeconds": 1},
        headers={"Retry-After": "1"},
    )


def internal_error(message: str) -> ApiError:
    return ApiError(500, "InternalError", f"Internal error occurred: {message}")
