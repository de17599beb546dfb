"""Serving the OpenAPI documents: content negotiation and a cache keyed by what is served.

Building and encoding the v2 document takes a noticeable fraction of a second, and kubectl asks
for it on every ``apply``/``create``/``edit``, so :class:`OpenAPIService` keeps the encoded
forms until the served resources or the stored CRDs change. Handlers call :meth:`update` with
the current state (cheap when nothing changed) and then ask for a document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import orjson

from kubeloop.server.openapi.document import (
    JSON_CONTENT_TYPE,
    Encoded,
    encoded,
    encoded_v2,
    group_version_paths,
    openapi_v2_json,
    openapi_v3_discovery,
    openapi_v3_document,
)
from kubeloop.server.openapi.served import ServedResource
from kubeloop.server.tables.negotiation import accept_clauses

V2Format = Literal["json", "protobuf"]

_PROTOBUF_TYPES = (
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
)
_JSON_TYPES = ("application/json", "*/*", "application/*")


def negotiate_v2(accept: str | None) -> V2Format | None:
    """Which form of ``/openapi/v2`` an ``Accept`` header asks for; ``None`` means 406.

    No header (or an empty one) gets JSON, as from kube-apiserver. Media ranges are tried by
    quality, concrete before wildcards, else in the order written; the first we can produce wins."""
    if accept is None or not accept.strip():
        return "json"
    for clause in accept_clauses(accept):
        if clause.media in _PROTOBUF_TYPES:
            return "protobuf"
        if clause.media in _JSON_TYPES:
            return "json"
    return None


def _crd_key(crd: Mapping[str, Any]) -> tuple[str, str]:
    meta = crd.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    version = meta.get("resourceVersion")
    if isinstance(version, str) and version:
        return str(meta.get("uid") or meta.get("name") or ""), version
    return str(meta.get("name") or ""), orjson.dumps(crd, option=orjson.OPT_SORT_KEYS).hex()


class OpenAPIService:
    """The encoded OpenAPI documents of the current state, rebuilt lazily after a change."""

    def __init__(self) -> None:
        self._served: tuple[ServedResource, ...] = ()
        self._crds: tuple[Mapping[str, Any], ...] = ()
        self._key: object = None
        self._v2: dict[V2Format, Encoded] = {}
        self._v2_document: dict[str, Any] | None = None
        self._v3: dict[str, Encoded | None] = {}
        self._v3_index: Encoded | None = None

    def update(self, served: Sequence[ServedResource], crds: Iterable[Mapping[str, Any]]) -> None:
        """Record the current state; caches are dropped only when it differs from the last one."""
        crd_list = tuple(crds)
        key = (tuple(served), tuple(sorted(_crd_key(c) for c in crd_list)))
        if key == self._key:
            return
        self._key = key
        self._served = tuple(served)
        self._crds = crd_list
        self._v2.clear()
        self._v2_document = None
        self._v3.clear()
        self._v3_index = None

    def v2_document(self) -> dict[str, Any]:
        """The Swagger 2.0 document as JSON data (shared: do not modify)."""
        if self._v2_document is None:
            self._v2_document = openapi_v2_json(self._served, self._crds)
        return self._v2_document

    def v2(self, accept: str | None) -> Encoded | None:
        """``/openapi/v2`` in the form ``accept`` asks for, ``None`` when it asks for none we have."""
        form = negotiate_v2(accept)
        if form is None:
            return None
        if form not in self._v2:
            self._v2[form] = encoded_v2(self.v2_document(), protobuf=form == "protobuf")
        return self._v2[form]

    def v3_document(self, group_version_path: str) -> Encoded | None:
        """``/openapi/v3/<path>`` (``apis/apps/v1``), ``None`` when that group version is not served."""
        if group_version_path not in self._v3:
            document = openapi_v3_document(group_version_path, self._served, self._crds)
            self._v3[group_version_path] = (None if document is None
                                            else encoded(orjson.dumps(document), JSON_CONTENT_TYPE))
        return self._v3[group_version_path]

    def v3_discovery(self) -> Encoded:
        """``/openapi/v3``: every served group version with the hash of its current document."""
        if self._v3_index is None:
            etags = {}
            for path in group_version_paths(self._served):
                document = self.v3_document(path)
                if document is not None:
                    etags[path] = document.etag
            self._v3_index = encoded(orjson.dumps(openapi_v3_discovery(etags)), JSON_CONTENT_TYPE)
        return self._v3_index
