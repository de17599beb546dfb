"""What one read (get, list, watch) answers with: the negotiated form, applied and encoded.

:func:`kubeloop.server.codec.negotiation.negotiate_output` picks the media type and the
conversion; an :class:`Output` carries that choice through the handler, as upstream's
``transformResponseObject`` / ``doTransformObject`` and ``targetEncodingForTransform``
(k8s.io/apiserver pkg/endpoints/handlers/response.go) do: Tables through the table converter
(built lazily: its ``includeObject`` check runs after the read, as upstream's
``optionsForTransform``), PartialObjectMetadata(List) through :mod:`kubeloop.server.codec.metadata`,
anything else as the object itself; a ``Status`` (a delete's or an eviction's answer) is never
converted, as ``doTransformObject`` lets it through. Writes answer through the same form as
reads (upstream negotiates the output of create, update, patch and delete the same way).
Watches get a :class:`WatchView`: one function per event object, with a key under which the
encoded event is shared by every watcher with the same view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from kubeloop.server.codec import metadata
from kubeloop.server.codec.encoding import ENCODERS
from kubeloop.server.codec.negotiation import PARTIAL_OBJECT_METADATA, TABLE, MediaTypeOptions
from kubeloop.server.kinds.decode import warning_headers
from kubeloop.server.tables import TableConverter

Obj = dict[str, Any]


@dataclass(frozen=True)
class WatchView:
    """How a watch shows each event's object: ``apply`` it; ``key`` names the view in the
    per-event encoding cache."""

    key: str
    apply: Callable[[Obj], Obj]


@dataclass(frozen=True)
class ServedType:
    """What the request reads, for the Go type names of 406 messages."""

    group: str
    kind: str
    custom: bool


class Output:
    """The negotiated answer form of one request."""

    def __init__(self, options: MediaTypeOptions, served: ServedType,
                 table: Callable[[], TableConverter]) -> None:
        self.options = options
        self.served = served
        self._make_table = table
        self._table: TableConverter | None = None

    @property
    def content_type(self) -> str:
        return self.options.media_type

    def table(self) -> TableConverter | None:
        """The Table converter when a Table was asked for (400 for a bad ``includeObject``)."""
        convert = self.options.convert
        if convert is None or convert.kind != TABLE:
            return None
        if self._table is None:
            self._table = self._make_table()
        return self._table

    def _type_name(self, is_list: bool) -> str:
        served = self.served
        return metadata.go_type_name(served.group, served.kind, custom=served.custom, is_list=is_list)

    def object(self, obj: Obj) -> Any:
        """One object in the negotiated form (406 for a list-only conversion); a Status as is."""
        convert = self.options.convert
        if convert is None or _is_status(obj):
            return obj
        converter = self.table()
        if converter is not None:
            return converter.object(obj)
        return metadata.object_as(convert.kind, obj, convert.version, self._type_name(False))

    def list(self, body: Obj) -> Any:
        """A list in the negotiated form (406 for an object-only conversion)."""
        convert = self.options.convert
        if convert is None:
            return body
        converter = self.table()
        if converter is not None:
            return converter.list(body)
        return metadata.list_as(convert.kind, body, convert.version, self._type_name(True))

    def watch_view(self) -> WatchView | None:
        """The view of watch event objects; None for the objects as they are and for Tables
        (the stream converts those). PartialObjectMetadataList on a watch fails per object
        upstream, which logs it and sends the object unchanged: so does this."""
        convert = self.options.convert
        if convert is None or convert.kind != PARTIAL_OBJECT_METADATA:
            return None
        version = convert.version

        def view(obj: Obj) -> Obj:
            return metadata.partial_object_metadata(obj, version)

        return WatchView(f"{PARTIAL_OBJECT_METADATA}/{version}", view)

    def encode(self, body: Any) -> bytes:
        return ENCODERS[self.options.media_type](body)

    def response(self, body: Any, status: int = 200, warnings: Sequence[str] = ()) -> web.Response:
        """``body`` (already in the negotiated form) encoded, with ``Warning`` headers."""
        response = web.Response(body=self.encode(body), status=status, content_type=self.content_type)
        for value in warning_headers(list(warnings)):
            response.headers.add("Warning", value)
        return response

    def answer(self, obj: Obj, status: int = 200, warnings: Sequence[str] = ()) -> web.Response:
        """The answer of a write: ``obj`` in the negotiated form, encoded."""
        return self.response(self.object(obj), status, warnings)


def _is_status(obj: Obj) -> bool:
    return obj.get("kind") == "Status" and obj.get("apiVersion") == "v1"

