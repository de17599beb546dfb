"""Whether a request wants a Table, and what the row objects should hold.

kubectl asks for human-readable output with ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io,
application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json``. Media ranges are tried
by quality, concrete before wildcards, else in the order given (as kube-apiserver's negotiation
does); the first one the server can produce decides, so a Table request after plain JSON of the
same quality is not honoured, and a Table request for a version we do not serve is skipped.
``includeObject`` (a query parameter) chooses what each row's ``object`` holds. The decision
itself is :func:`kubeloop.server.codec.negotiation.negotiate_output`, shared with the other
conversions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kubeloop.api.status import ApiError, bad_request_error, invalid
from kubeloop.server.codec.negotiation import META_GROUP, META_VERSIONS, AcceptClause, accept_clauses, negotiate_output

TABLE_GROUP = META_GROUP
TABLE_VERSIONS = META_VERSIONS

__all__ = ["AcceptClause", "IncludeObject", "TableRequest", "accept_clauses", "include_object", "table_request"]

IncludeObject = Literal["None", "Object", "Metadata"]
INCLUDE_OBJECT_VALUES: tuple[IncludeObject, ...] = ("None", "Object", "Metadata")


@dataclass(frozen=True)
class TableRequest:
    """A request for ``meta.k8s.io/<version>`` Table output."""

    version: str

    @property
    def api_version(self) -> str:
        return f"{TABLE_GROUP}/{self.version}"


def table_request(accept: str | None) -> TableRequest | None:
    """The Table request in an ``Accept`` header, ``None`` when plain objects (or another
    conversion) should be sent, or nothing acceptable was asked for."""
    try:
        options = negotiate_output(accept)
    except ApiError:
        return None
    convert = options.convert
    if convert is None or convert.kind != "Table":
        return None
    return TableRequest(convert.version)


def include_object(value: str | None) -> IncludeObject:
    """The ``includeObject`` query parameter (default ``Metadata``); anything else is a 400 with
    upstream's message."""
    if value is None or value == "":
        return "Metadata"
    for allowed in INCLUDE_OBJECT_VALUES:
        if value == allowed:
            return allowed
    raise _unsupported(value)


def _unsupported(value: str) -> ApiError:
    error = invalid("includeObject", value, "must be 'Metadata', 'Object', 'None', or empty")
    return bad_request_error(f"Unable to convert to Table as requested: {error}")
