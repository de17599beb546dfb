"""Whether a request wants a Table, and what the row objects should hold.

kubectl asks for human-readable output with ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io,
application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json``. Media ranges are tried
by quality, concrete before wildcards, else in the order given (as kube-apiserver's negotiation
does); the first one the server can produce decides, so a Table request after plain JSON of the
same quality is not honoured, and a Table request for a version we do not serve is skipped.
``includeObject`` (a query parameter) chooses what each row's ``object`` holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kubeloop.api.status import ApiError, bad_request_error, invalid

TABLE_GROUP = "meta.k8s.io"
TABLE_VERSIONS = ("v1", "v1beta1")
_PLAIN = ("application/json", "application/*", "*/*", "application/yaml", "application/vnd.kubernetes.protobuf")

IncludeObject = Literal["None", "Object", "Metadata"]
INCLUDE_OBJECT_VALUES: tuple[IncludeObject, ...] = ("None", "Object", "Metadata")


@dataclass(frozen=True)
class TableRequest:
    """A request for ``meta.k8s.io/<version>`` Table output."""

    version: str

    @property
    def api_version(self) -> str:
        return f"{TABLE_GROUP}/{self.version}"


@dataclass(frozen=True)
class AcceptClause:
    """One media range of an ``Accept`` header: lower-case ``media`` (``type/subtype``), its
    parameters other than ``q``, and its quality."""

    media: str
    parameters: dict[str, str]
    quality: float


def _clause(text: str) -> AcceptClause:
    media, *raw = text.split(";")
    parameters: dict[str, str] = {}
    quality = 1.0
    for item in raw:
        key, _, value = item.partition("=")
        key, value = key.strip().lower(), value.strip().strip('"')
        if key == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
        else:
            parameters[key] = value
    return AcceptClause(media.strip().lower(), parameters, quality)


def accept_clauses(accept: str) -> list[AcceptClause]:
    """The media ranges of ``accept`` in the order a server tries them: higher quality first,
    then concrete types before wildcards, otherwise as written (goautoneg's order)."""
    clauses = [_clause(part) for part in accept.split(",") if part.strip()]

    def rank(clause: AcceptClause) -> tuple[float, bool, bool]:
        kind, _, subtype = clause.media.partition("/")
        return -clause.quality, kind == "*", subtype == "*"

    return sorted(clauses, key=rank)


def table_request(accept: str | None) -> TableRequest | None:
    """The Table request in an ``Accept`` header, ``None`` when plain objects should be sent."""
    if not accept:
        return None
    for clause in accept_clauses(accept):
        conversion = clause.parameters.get("as")
        if conversion is None:
            if clause.media in _PLAIN:
                return None
            continue
        if (conversion == "Table" and clause.media in ("application/json", "application/*", "*/*")
                and clause.parameters.get("g") == TABLE_GROUP and clause.parameters.get("v") in TABLE_VERSIONS):
            return TableRequest(clause.parameters["v"])
    return None


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
