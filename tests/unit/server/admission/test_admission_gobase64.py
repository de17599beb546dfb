"""Secret data and ConfigMap binaryData decoded as Go's encoding/base64 StdEncoding does."""

from __future__ import annotations

import base64
import os

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.admission import default_object, validate_create
from kubeloop.server.admission.gobase64 import CorruptInputError, canonical, decode_std


@pytest.mark.parametrize("size", range(0, 40))
def test_valid_encodings_round_trip(size: int) -> None:
    raw = os.urandom(size)
    encoded = base64.b64encode(raw).decode()
    assert decode_std(encoded) == raw
    assert canonical(encoded) == encoded


@pytest.mark.parametrize(("text", "decoded"), [
    ("aGVs\nbG8=", b"hello"),
    ("aGVsbG8=\n", b"hello"),
    ("\r\naGVs\r\nbG8=\r\n", b"hello"),
    ("aGVsbA=\n=", b"hell"),  # line breaks between the two padding characters
    ("\n\n", b""),
    ("", b""),
    ("YR==", b"a"),  # non-zero trailing bits are accepted (not strict)
])
def test_line_breaks_are_skipped(text: str, decoded: bytes) -> None:
    assert decode_std(text) == decoded


@pytest.mark.parametrize(("text", "offset"), [
    ("!!", 0),
    ("YWJj!", 4),
    ("YWJj YWJj", 4),  # spaces are not skipped, only \r and \n
    ("aGVs\nbG8=x", 9),  # trailing garbage after the padding, offsets count the line break
    ("a", 0),  # a group cut short
    ("YWJjZA", 4),  # missing padding
    ("YWJjZ===", 5),  # padding after one symbol
    ("=", 0),
    ("YWJjZA=", 7),  # one of the two padding characters
    ("YWJjZA=x", 6),
    ("aGVs\n!", 5),
])
def test_errors_report_go_s_offset(text: str, offset: int) -> None:
    with pytest.raises(CorruptInputError) as caught:
        decode_std(text)
    assert str(caught.value) == f"illegal base64 data at input byte {offset}"


TLS_CRT = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n" + os.urandom(300) + b"\n-----END CERTIFICATE-----\n")


def wrapped(encoded: bytes, width: int = 64) -> str:
    text = encoded.decode()
    return "\n".join(text[i:i + width] for i in range(0, len(text), width)) + "\n"


def test_a_wrapped_tls_secret_is_stored_on_one_line() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls", "namespace": "default"},
              "type": "kubernetes.io/tls", "data": {"tls.crt": wrapped(TLS_CRT), "tls.key": wrapped(TLS_CRT, 76)}}
    default_object("", "v1", "Secret", secret)
    assert secret["data"] == {"tls.crt": TLS_CRT.decode(), "tls.key": TLS_CRT.decode()}
    assert validate_create("", "v1", "Secret", secret, namespaced=True) == []


def test_config_map_binary_data_is_read_the_same_way() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
                  "data": {"plain": "a\nb\n"}, "binaryData": {"bin": "AAEC\nAw=="}}
    default_object("", "v1", "ConfigMap", config_map)
    assert config_map["binaryData"] == {"bin": "AAECAw=="}
    assert config_map["data"] == {"plain": "a\nb\n"}  # text data is not base64


@pytest.mark.parametrize(("kind", "field_name"), [("Secret", "data"), ("ConfigMap", "binaryData")])
def test_undecodable_bytes_fail_the_body_with_upstream_s_text(kind: str, field_name: str) -> None:
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", "namespace": "default"},
           field_name: {"ok": "b2s=", "bad": "b2s=!"}}
    with pytest.raises(ApiError) as caught:
        default_object("", "v1", kind, obj)
    assert (caught.value.code, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == f'{kind} in version "v1" cannot be handled as a {kind}: ' \
                                   "illegal base64 data at input byte 4"
