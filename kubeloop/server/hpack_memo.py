"""HPACK coding that remembers header blocks which leave the dynamic table as it found them.

A client repeats itself: client-go and kubectl send the same fields on every request (a Go
client's HPACK encoder indexes each of them, so from the second request on its header block is
a few one-byte references to the dynamic table), httpx sends the same bytes too (its
``authorization`` as a never-indexed literal), and the server's answers to one kind of request
carry the same fields. Decoding a block, or encoding a header list, is a pure function of the
bytes (or fields) and of the dynamic table, and a block made only of references and
non-indexed literals does not change the table. So :class:`MemoDecoder` and
:class:`MemoEncoder` (drop-in ``hpack`` ``Decoder`` / ``Encoder`` subclasses that
:class:`kubeloop.server.http2.Http2Connection` puts on its ``h2`` connection) keep the result
of such blocks and hand it back while the table is unchanged: the table counts its changes
(:class:`_CountingTable`), and a remembered result is used only at the count it was made at.

A block that changes the table (a new field, a size update) is coded by ``hpack`` as ever and
is not remembered; the memo is emptied whenever the table changes and holds at most
``MEMO_ENTRIES`` blocks of at most ``MEMO_BLOCK`` bytes (a peer cannot grow it). It saves, per
request, the pure-Python HPACK decode and encode (and ``hpack``'s ~28 ``log.debug`` calls) that
dominated a profile of the server answering a Go-like client; figures in docs/decisions.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from hpack import Decoder, Encoder, HeaderTuple
from hpack.table import HeaderTable

MEMO_ENTRIES = 8
"""Blocks remembered per direction per connection: a client's distinct request shapes while its
table holds still (a new path or value changes the table); with h2's 64 KiB bound on a decoded
header list, at most 512 KiB per connection."""
MEMO_BLOCK = 2048
"""Largest block (encoded bytes) remembered."""

_maxsize = cast(property, vars(HeaderTable)["maxsize"])


class _CountingTable(HeaderTable):
    """A header table that counts its changes (entries added, size changed)."""

    def __init__(self) -> None:
        super().__init__()
        self.changes = 0

    def add(self, name: bytes, value: bytes) -> None:
        self.changes += 1
        super().add(name, value)

    def _set_maxsize(self, newmax: int) -> None:
        self.changes += 1
        assert _maxsize.fset is not None
        _maxsize.fset(self, newmax)

    maxsize = property(_maxsize.fget, _set_maxsize)


class MemoDecoder(Decoder):
    """``hpack.Decoder`` that returns a remembered header list for a block it decoded before
    at the same table state (raw decoding, as ``h2`` asks for)."""

    def __init__(self, max_header_list_size: int | None = None) -> None:
        if max_header_list_size is None:
            super().__init__()
        else:
            super().__init__(max_header_list_size)
        self.header_table = _CountingTable()
        self._memo: dict[bytes, list[HeaderTuple]] = {}
        self._memo_at: tuple[int, int, int] = (-1, 0, 0)

    def decode(self, data: bytes, raw: bool = False) -> Iterable[HeaderTuple]:
        table = self.header_table
        assert isinstance(table, _CountingTable)
        if not raw or len(data) > MEMO_BLOCK:
            return super().decode(data, raw)
        # Besides the table, the limits a decode checks against are part of the state.
        state = (table.changes, self.max_header_list_size, self.max_allowed_table_size)
        if state != self._memo_at:
            self._memo.clear()
            self._memo_at = state
        else:
            known = self._memo.get(data)
            if known is not None:
                return list(known)
        headers = list(super().decode(data, raw))
        if table.changes == state[0] and len(self._memo) < MEMO_ENTRIES:
            self._memo[bytes(data)] = headers
            return list(headers)
        return headers


class MemoEncoder(Encoder):
    """``hpack.Encoder`` that returns the remembered block for a header list (of plain
    ``(bytes, bytes)`` tuples) it encoded before at the same table state."""

    def __init__(self) -> None:
        super().__init__()
        self.header_table = _CountingTable()
        self._memo: dict[tuple[tuple[bytes, bytes], ...], bytes] = {}
        self._memo_at = -1

    def encode(self, headers: Any, huffman: bool = True) -> bytes:
        table = self.header_table
        assert isinstance(table, _CountingTable)
        # Only plain 2-tuples of bytes: a HeaderTuple may be never-indexed, and compares equal
        # to the plain tuple of its fields.
        if not huffman or table.resized or not isinstance(headers, list) or \
                not all(type(h) is tuple and len(h) == 2 for h in headers):
            return super().encode(headers, huffman)
        key = tuple(headers)
        changes = table.changes
        if changes != self._memo_at:
            self._memo.clear()
            self._memo_at = changes
        else:
            known = self._memo.get(key)
            if known is not None:
                return known
        block = super().encode(headers, huffman)
        if table.changes == changes and len(self._memo) < MEMO_ENTRIES and len(block) <= MEMO_BLOCK:
            self._memo[key] = block
        return block


def install(connection: Any) -> None:
    """Put memoizing coders on a fresh ``h2.connection.H2Connection`` (before any frame)."""
    decoder = MemoDecoder(connection.decoder.max_header_list_size)
    decoder.max_allowed_table_size = connection.decoder.max_allowed_table_size
    connection.decoder = decoder
    connection.encoder = MemoEncoder()
