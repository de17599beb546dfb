import orjson
import pytest

from kubeloop.client import Expired, Gone, WatchDecodeError, WatchEvent
from kubeloop.client._watch import LineSplitter, decode_event


def test_lines_split_across_chunks() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a":') == []
    assert splitter.feed(b"1}\n{") == [b'{"a":1}']
    assert splitter.feed(b'"b":2}\n\n{"c"') == [b'{"b":2}']
    assert splitter.feed(b":3}\n") == [b'{"c":3}']
    assert splitter.finish() is None


def test_large_line_in_many_chunks_is_joined_once() -> None:
    payload = b"x" * 300_000
    line = b'{"v":"' + payload + b'"}'
    splitter = LineSplitter()
    out: list[bytes] = []
    for start in range(0, len(line), 4096):
        out += splitter.feed(line[start:start + 4096])
    out += splitter.feed(b"\n")
    assert out == [line]


def test_unterminated_last_line_is_returned_by_finish() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a":1}\n{"b":2}') == [b'{"a":1}']
    assert splitter.finish() == b'{"b":2}'
    assert splitter.finish() is None


def test_whitespace_only_lines_are_dropped() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"  \n\r\n{}\n") == [b"{}"]


@pytest.mark.parametrize("kind", ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"])
def test_decode_event(kind: str) -> None:
    obj = {"kind": "Pod", "metadata": {"name": "p", "resourceVersion": "7"}}
    event = decode_event(orjson.dumps({"type": kind, "object": obj}))
    assert event == WatchEvent(kind, obj)
    assert event.type == kind


def test_error_event_raises_typed_exception() -> None:
    line = orjson.dumps({"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 1 (10)", "reason": "Expired", "code": 410}})
    with pytest.raises(Gone) as info:
        decode_event(line)
    assert isinstance(info.value, Expired)
    assert info.value.code == 410
    assert info.value.message == "too old resource version: 1 (10)"


@pytest.mark.parametrize("line", [b"not json", b"[1]", b'{"type":"ADDED"}', b'{"type":"WHAT","object":{}}'])
def test_garbage_raises_decode_error(line: bytes) -> None:
    with pytest.raises(WatchDecodeError):
        decode_event(line)
