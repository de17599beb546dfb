"""An h2 request header block checked as Go's HTTP/2 server checks it (kubeloop.server.h2_headers):
what is refused, what is let through, and the aiohttp message a good block becomes."""

from __future__ import annotations

import pytest

from kubeloop.server.h2_headers import HTTP_2, request_message

GOOD = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"10.0.0.1:6443"),
        (b":path", b"/api/v1/pods?limit=5&watch=0"), (b"accept", b"application/json"),
        (b"authorization", b"Bearer abc")]


def test_a_good_block_becomes_its_request() -> None:
    message = request_message([*GOOD, (b"cookie", b"a=1"), (b"x-n", b"\tpadded "), (b"cookie", b"b=2")])
    assert message is not None
    assert (message.method, message.path, message.version) == ("GET", "/api/v1/pods?limit=5&watch=0", HTTP_2)
    assert message.url.path == "/api/v1/pods" and message.url.query == {"limit": "5", "watch": "0"}
    # :authority stands in for Host; the cookie fields are joined (Go's server joins them).
    assert message.headers["Host"] == "10.0.0.1:6443"
    assert message.headers.getall("Cookie") == ["a=1; b=2"]
    assert message.headers["Authorization"] == "Bearer abc"
    assert message.headers["X-N"] == "\tpadded "  # Go does not refuse surrounding whitespace
    assert (b"host", b"10.0.0.1:6443") in message.raw_headers
    assert not any(name.startswith(b":") for name, _ in message.raw_headers)


def test_a_host_field_wins_over_authority() -> None:
    message = request_message([*GOOD, (b"host", b"other")])
    assert message is not None and message.headers.getall("Host") == ["other"]


@pytest.mark.parametrize("extra", [(b"te", b"trailers"), (b"te", b""), (b"x-utf8", "ü".encode()),
                                   (b"x-empty", b"")])
def test_fields_go_lets_through(extra: tuple[bytes, bytes]) -> None:
    assert request_message([*GOOD, extra]) is not None


@pytest.mark.parametrize(("block", "why"), [
    ([*GOOD, (b"Accept", b"x")], "upper-case name"),
    ([*GOOD, (b"x y", b"x")], "space in a name"),
    ([*GOOD, (b"x:y", b"x")], "colon in a name"),
    ([*GOOD, (b"", b"x")], "empty name"),
    ([*GOOD, (b"x", b"a\nb")], "LF in a value"),
    ([*GOOD, (b"x", b"a\rb")], "CR in a value"),
    ([*GOOD, (b"x", b"a\x00b")], "NUL in a value"),
    ([*GOOD, (b"x", b"a\x01b")], "control character in a value"),
    ([*GOOD, (b"x", b"a\x7fb")], "DEL in a value"),
    ([(b":method", b"G\nET"), *GOOD[1:]], "LF in a pseudo-header value"),
    ([*GOOD[:4], (b"accept", b"x"), (b":authority", b"y")], "pseudo-header after a regular field"),
    ([*GOOD[:4], (b"cookie", b"x"), (b":authority", b"y")], "pseudo-header after a cookie"),
    ([*GOOD, (b":path", b"/again")], "duplicate pseudo-header"),
    ([(b":status", b"200"), *GOOD], "response pseudo-header"),
    ([(b":custom", b"1"), *GOOD], "unknown pseudo-header"),
    ([(b":protocol", b"websocket"), *GOOD], "extended CONNECT"),
    ([*GOOD, (b"connection", b"keep-alive")], "connection"),
    ([*GOOD, (b"keep-alive", b"300")], "keep-alive"),
    ([*GOOD, (b"proxy-connection", b"x")], "proxy-connection"),
    ([*GOOD, (b"transfer-encoding", b"chunked")], "transfer-encoding"),
    ([*GOOD, (b"upgrade", b"h2c")], "upgrade"),
    ([*GOOD, (b"te", b"gzip")], "te other than trailers"),
    ([g for g in GOOD if g[0] != b":method"], "no :method"),
    ([g for g in GOOD if g[0] != b":scheme"], "no :scheme"),
    ([g for g in GOOD if g[0] != b":path"], "no :path"),
    ([(b":path", b"") if g[0] == b":path" else g for g in GOOD], "empty :path"),
    ([(b":path", b"*") if g[0] == b":path" else g for g in GOOD], "OPTIONS * form"),
    ([(b":path", b"api/v1") if g[0] == b":path" else g for g in GOOD], "relative :path"),
])
def test_blocks_go_refuses(block: list[tuple[bytes, bytes]], why: str) -> None:
    assert request_message(block) is None, why
