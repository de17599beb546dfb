"""gzip of large API responses, as kube-apiserver 1.33 serves them (APIResponseCompression, on by default).

Upstream compresses in one place only: ``SerializeObject`` (k8s.io/apiserver
pkg/endpoints/handlers/responsewriters/writers.go), through which every object, list,
discovery document, Table and error ``Status`` is written. Its rules, which this module keeps:

- the request must name ``gzip`` as one of the comma-separated tokens of ``Accept-Encoding``
  (``negotiateContentEncoding``: each token is trimmed and compared exactly, so
  ``gzip;q=0.5``, ``x-gzip`` or ``GZIP`` do not count, and no other coding is offered);
- the body must be larger than 128 KiB (``defaultGzipThresholdBytes``, strictly greater);
  a smaller one leaves as it is, with no ``Vary`` header;
- a compressed answer carries ``Content-Encoding: gzip`` and ``Vary: Accept-Encoding``, and is
  deflated at level 1 (``defaultGzipContentEncodingLevel``: the cheapest, within 1.1-1.3x of
  the best ratio).

Watch streams, ``/version``, OpenAPI documents, health checks and metrics are not written by
``SerializeObject`` and are never compressed here (the server-wide compression filter is gone
from 1.33's ``pkg/server/filters``). The deflate stream itself differs from Go's (zlib's level 1
is not Go's ``compress/flate`` level 1); what a client unpacks is byte for byte the same.
"""

from __future__ import annotations

import zlib

from aiohttp import web

GZIP_THRESHOLD_BYTES = 128 * 1024
"""A body must be longer than this to be compressed (upstream's ``defaultGzipThresholdBytes``)."""
GZIP_LEVEL = 1
"""Upstream's ``defaultGzipContentEncodingLevel`` (``gzip.BestSpeed``)."""
_GZIP_WBITS = 31  # zlib's gzip container: a 10-byte header, the deflate stream, CRC-32 and length.


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether ``Accept-Encoding`` asks for gzip, by upstream's ``negotiateContentEncoding`` rule."""
    if not accept_encoding:
        return False
    return any(token.strip() == "gzip" for token in accept_encoding.split(","))


def should_compress(accept_encoding: str | None, body_length: int) -> bool:
    """Whether a body of this length is sent gzipped to a request with this ``Accept-Encoding``."""
    return body_length > GZIP_THRESHOLD_BYTES and accepts_gzip(accept_encoding)


def gzip_body(body: bytes) -> bytes:
    """``body`` in a gzip container at upstream's level (modification time 0, as Go's writer leaves it)."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
    return compressor.compress(body) + compressor.flush()


def compress_response(request: web.BaseRequest, response: web.StreamResponse) -> web.StreamResponse:
    """``response`` gzipped when the request asks for it and its body is large enough.

    Only complete bodies are considered (a :class:`web.Response` holding bytes); streamed
    answers (watches) pass unchanged, as upstream never compresses them.
    """
    if type(response) is not web.Response or response.prepared:
        return response
    body = response.body
    if not isinstance(body, bytes) or not should_compress(request.headers.get("Accept-Encoding"), len(body)):
        return response
    if "Content-Encoding" in response.headers:
        return response
    response.body = gzip_body(body)
    response.headers["Content-Encoding"] = "gzip"
    response.headers.add("Vary", "Accept-Encoding")
    return response
