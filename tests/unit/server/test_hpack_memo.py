"""Memoized HPACK coding (kubeloop.server.hpack_memo): the same results as hpack's own coders
over sequences that reuse, grow, evict and resize the dynamic table, and the memo really used
for blocks that leave the table alone."""

from __future__ import annotations

import pytest
from hpack import Decoder, Encoder, HeaderTuple, NeverIndexedHeaderTuple

from kubeloop.server import hpack_memo
from kubeloop.server.hpack_memo import MemoDecoder, MemoEncoder

Headers = list[tuple[bytes, bytes]]
REQUEST: Headers = [(b":method", b"GET"), (b":path", b"/api/v1/pods"), (b"user-agent", b"kubectl/v1.33.0"),
                    (b"authorization", b"Bearer " + b"t" * 40)]
OTHER: Headers = [(b":method", b"GET"), (b":path", b"/api/v1/nodes"), (b"user-agent", b"kubectl/v1.33.0")]


def _sequence() -> list[Headers | int]:
    """Header lists to code in turn; an int resizes the table (the peer's SETTINGS)."""
    big = [(b"x-big", bytes([65 + i]) * 1500) for i in range(3)]  # evicts entries from a 4 KiB table
    static_only = [(b":method", b"GET")]
    return [REQUEST, REQUEST, OTHER, REQUEST, OTHER, OTHER, big, REQUEST, REQUEST, 256, REQUEST, REQUEST, 4096,
            OTHER, OTHER, [(b"x-n", str(i).encode()) for i in range(5)], OTHER, OTHER, 0, static_only, 4096, OTHER]


def _blocks(encoder: Encoder) -> list[bytes | int]:
    out: list[bytes | int] = []
    for item in _sequence():
        if isinstance(item, int):
            encoder.header_table_size = item
            out.append(item)
        else:
            out.append(encoder.encode(list(item)))
    return out


def test_the_memo_encoder_writes_what_hpack_writes() -> None:
    assert _blocks(MemoEncoder()) == _blocks(Encoder())


def test_the_memo_decoder_reads_what_hpack_reads() -> None:
    plain, memo = Decoder(), MemoDecoder()
    for block in _blocks(Encoder()):
        if isinstance(block, int):
            continue  # the size update travels inside the next block
        assert memo.decode(block, raw=True) == plain.decode(block, raw=True)


def test_a_reference_is_read_against_the_table_of_its_time() -> None:
    # The same bytes (one reference to the newest dynamic entry) mean another field once the
    # table has grown: the memo must not answer from before.
    encoder, decoder = Encoder(), MemoDecoder()
    decoder.decode(encoder.encode([(b"x-a", b"1")]), raw=True)
    reference = encoder.encode([(b"x-a", b"1")])
    assert reference == b"\xbe"  # index 62, the newest dynamic entry
    assert decoder.decode(reference, raw=True) == [(b"x-a", b"1")]
    assert decoder.decode(reference, raw=True) == [(b"x-a", b"1")]
    decoder.decode(encoder.encode([(b"x-b", b"2")]), raw=True)
    assert decoder.decode(reference, raw=True) == [(b"x-b", b"2")]


def test_a_table_emptied_by_a_size_update_is_not_read_from_memory() -> None:
    encoder, memo, plain = Encoder(), MemoDecoder(), Decoder()
    blocks = [encoder.encode(list(OTHER)), encoder.encode(list(OTHER))]  # fields added, then referenced
    for block in [*blocks, b"\x20"]:  # the last: a size update to 0, which empties the table
        assert memo.decode(block, raw=True) == plain.decode(block, raw=True)
    with pytest.raises(Exception) as expected:
        plain.decode(blocks[1], raw=True)
    with pytest.raises(type(expected.value)):
        memo.decode(blocks[1], raw=True)


def test_never_indexed_fields_are_not_taken_for_plain_ones() -> None:
    encoder, plain = MemoEncoder(), Encoder()
    for headers in ([(b"x-secret", b"s")], [NeverIndexedHeaderTuple(b"x-secret", b"s")], [(b"x-secret", b"s")]):
        assert encoder.encode(headers) == plain.encode(headers)
    decoded = MemoDecoder().decode(Encoder().encode([NeverIndexedHeaderTuple(b"x-secret", b"s")]), raw=True)
    assert [type(h) for h in decoded] == [NeverIndexedHeaderTuple]


def test_blocks_that_leave_the_table_alone_are_coded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"encode": 0, "decode": 0}
    encode, decode = Encoder.encode, Decoder.decode

    def counted_encode(self: Encoder, headers: Headers, huffman: bool = True) -> bytes:
        calls["encode"] += 1
        return encode(self, headers, huffman)

    def counted_decode(self: Decoder, data: bytes, raw: bool = False) -> list[HeaderTuple]:
        calls["decode"] += 1
        return list(decode(self, data, raw))

    monkeypatch.setattr(Encoder, "encode", counted_encode)
    monkeypatch.setattr(Decoder, "decode", counted_decode)
    encoder, decoder = MemoEncoder(), MemoDecoder()
    blocks = [encoder.encode(list(REQUEST)) for _ in range(5)]
    # The first adds the fields to the table, the second is all references: both coded by hpack;
    # the next three are the second's, remembered.
    assert calls["encode"] == 2 and blocks[2:] == [blocks[1]] * 3
    answers = [decoder.decode(block, raw=True) for block in blocks]
    assert calls["decode"] == 2 and answers == [REQUEST] * 5
    # A list handed out is the caller's own (h2 keeps it on its event).
    answers[-1].append((b"x", b"y"))
    assert decoder.decode(blocks[1], raw=True) == REQUEST


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hpack_memo, "MEMO_ENTRIES", 2)
    decoder = MemoDecoder()
    blocks = [Encoder().encode([(b"x-n", str(i).encode(), True)]) for i in range(5)]  # never indexed
    for block in blocks:
        decoder.decode(block, raw=True)
    assert len(decoder._memo) == 2
