"""An HTTP/2 request header block, checked as Go's HTTP/2 server checks it, turned into the
aiohttp request message of that request, in one pass.

:mod:`kubeloop.server.http2` runs the ``h2`` state machine with its own inbound header checks
and normalization turned off (``validate_inbound_headers``, ``normalize_inbound_headers``):
they were a series of nine generators per field, the largest single cost of an h2 request in
the server's profile. :func:`request_message` does what kube-apiserver's HTTP/2 server
(golang.org/x/net/http2) does instead, while it builds the message:

- field names (``Framer.readMetaFrame``, frame.go, ``validWireHeaderFieldName``): a regular
  field's name is a non-empty token of lower-case characters;
- field values (``httpguts.ValidHeaderFieldValue``): no control character but HTAB;
- pseudo-header fields (``readMetaFrame``, ``MetaHeadersFrame.checkPseudos``): only
  ``:method``, ``:path``, ``:scheme``, ``:authority`` (and ``:protocol``, which this server has
  no use for), each at most once, all before the first regular field;
- the request (``serverConn.newWriterAndRequest``, server.go, ``checkValidHTTP2RequestHeaders``):
  no connection-specific field (``connection``, ``proxy-connection``, ``keep-alive``,
  ``transfer-encoding``, ``upgrade``), ``te`` only as ``trailers``; ``:method``, ``:scheme``
  and ``:path`` present and ``:path`` absolute (``CONNECT`` and ``OPTIONS *`` are not served
  here, so they are refused too); several ``cookie`` fields are joined with ``"; "``.

A block that fails any check gives ``None``; the caller resets the stream with
PROTOCOL_ERROR, a stream error as in Go (``h2`` would have ended the whole connection). Unlike
``h2``'s checks, values with leading or trailing whitespace and a ``host`` field that differs
from ``:authority`` are accepted, as Go accepts them; ``:authority`` becomes ``Host`` when the
block has no ``host`` field (Go's ``req.Host``).
"""

from __future__ import annotations

import re

from aiohttp.http import HttpVersion
from aiohttp.http_parser import RawRequestMessage
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

HTTP_2 = HttpVersion(2, 0)
# Go's validWireHeaderFieldName: httpguts token characters, upper case excluded.
_NAME = re.compile(rb"[!#$%&'*+\-.^_`|~0-9a-z]+")
# Go's httpguts.ValidHeaderFieldValue: any byte but a control character other than HTAB.
_BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_PSEUDO = frozenset({b":method", b":path", b":scheme", b":authority", b":protocol"})
_TE = frozenset({b"trailers", b""})  # Go lets an empty te through too
_CONNECTION_SPECIFIC = frozenset({b"connection", b"proxy-connection", b"keep-alive", b"transfer-encoding",
                                  b"upgrade"})


def request_message(headers: list[tuple[bytes, bytes]]) -> RawRequestMessage | None:
    """The aiohttp request message of one request header block, or None when Go's server would
    refuse the block (see the module docstring)."""
    pseudo: dict[bytes, bytes] = {}
    pairs: list[tuple[str, str]] = []
    raw: list[tuple[bytes, bytes]] = []
    cookies: list[bytes] | None = None
    host = False
    for name, value in headers:
        if _BAD_VALUE.search(value) is not None:
            return None
        if name[:1] == b":":
            if raw or cookies is not None or name in pseudo or name not in _PSEUDO:
                return None
            pseudo[name] = value
            continue
        if _NAME.fullmatch(name) is None or name in _CONNECTION_SPECIFIC or (name == b"te" and value not in _TE):
            return None
        if name == b"cookie":
            # Joined into one field after the others, as Go's server joins them.
            (cookies := cookies or []).append(value)
            continue
        host = host or name == b"host"
        pairs.append((name.decode("ascii"), value.decode("utf-8", "surrogateescape")))
        raw.append((name, value))
    method, path = pseudo.get(b":method"), pseudo.get(b":path")
    if method is None or path is None or b":scheme" not in pseudo or path[:1] != b"/" or b":protocol" in pseudo:
        return None
    if cookies:
        joined = b"; ".join(cookies)
        pairs.append(("cookie", joined.decode("utf-8", "surrogateescape")))
        raw.append((b"cookie", joined))
    authority = pseudo.get(b":authority")
    if authority is not None and not host:
        pairs.append(("Host", authority.decode("utf-8", "surrogateescape")))
        raw.append((b"host", authority))
    target = path.decode("utf-8", "surrogateescape")
    path_part, _, query = target.partition("?")
    url = URL.build(path=path_part, query_string=query, encoded=True)
    return RawRequestMessage(method.decode("ascii", "surrogateescape"), target, HTTP_2,
                             CIMultiDictProxy(CIMultiDict(pairs)), tuple(raw), False, None, False, False, url)
