"""Which media types one endpoint is served in, and an error Status in the negotiated one.

Upstream gives every built-in kind the scheme's serializers (JSON, YAML, protobuf: the
``CodecFactory`` of k8s.io/apiserver) and custom resources their own set, which lists protobuf
too but keeps it out of ``StandardSerializers`` (apiextensions-apiserver
``pkg/apiserver/customresource_handler.go``): a custom resource's objects are JSON or YAML,
while ``as=PartialObjectMetadata(List)`` views of them may be protobuf. :func:`served_media_types`
says the same per endpoint; a built-in kind the protobuf codec has no schema for is served as
custom resources are. Watch streams exist in JSON and protobuf (YAML has no stream serializer).

:func:`error_body` renders an error ``Status`` as ``responsewriters.ErrorNegotiated`` does: in the
media type the ``Accept`` header picks with no conversion allowed, else (nothing acceptable)
as ``WriteRawJSON`` writes it, indented by two spaces and without a final newline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from kubeloop.server.codec import protobuf
from kubeloop.server.codec.encoding import ENCODERS
from kubeloop.server.codec.negotiation import JSON, PROTOBUF, YAML, negotiate_error

_OBJECT_TYPES = (JSON, YAML)


@dataclass(frozen=True)
class ServedMediaTypes:
    """``encoded``: media types answers can take; ``standard``: those allowed without a
    conversion (None: all of ``encoded``); ``streams``: media types of watch streams."""

    encoded: tuple[str, ...]
    standard: tuple[str, ...] | None
    streams: tuple[str, ...]


_ALL = ServedMediaTypes((JSON, YAML, PROTOBUF), None, (JSON, PROTOBUF))
_METADATA_ONLY_PROTOBUF = ServedMediaTypes((JSON, YAML, PROTOBUF), _OBJECT_TYPES, (JSON, PROTOBUF))


@lru_cache(maxsize=1024)
def served_media_types(api_version: str, kind: str, *, custom: bool) -> ServedMediaTypes:
    """The media types of an endpoint serving ``kind`` at ``api_version``."""
    if custom or not protobuf.has_schema(api_version, kind):
        return _METADATA_ONLY_PROTOBUF
    return _ALL


def error_body(status: Mapping[str, Any], accept: str | None) -> tuple[bytes, str]:
    """An error ``Status`` body and its Content-Type for a request that sent ``accept``."""
    media_type = negotiate_error(accept)
    if media_type is None:
        return orjson.dumps(status, option=orjson.OPT_INDENT_2), JSON
    return ENCODERS[media_type](status), media_type
