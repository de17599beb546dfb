"""Protobuf request bodies: decoded into the JSON form every other body takes.

A body sent as ``application/vnd.kubernetes.protobuf`` (kubectl 1.32+ typed creates, every
client-go typed client by default) is the ``k8s\\x00`` magic and a ``runtime.Unknown``
envelope; :func:`kubeloop.server.codec.protobuf.decode` turns it into the dict a JSON body
would have given, which then goes down the same path (typed decoding, defaulting, admission).

What upstream answers, and so this module:

* a malformed body is a 400 ``BadRequest`` whose text is the codec's, worded for the kind the
  endpoint expects (upstream's ``transformDecodeError`` in k8s.io/apiserver
  pkg/endpoints/handlers/rest.go);
* a custom resource's negotiated serializers list protobuf (apiextensions-apiserver
  ``customresource_handler.go``), so its protobuf body is *not* a 415: the protobuf decoder
  cannot fill an ``*unstructured.Unstructured`` (``errNotMarshalable`` in apimachinery
  ``serializer/protobuf/protobuf.go``), which ``transformDecodeError`` answers with a 400
  naming the envelope's kind and version (:func:`custom_resource_error`).
"""

from __future__ import annotations

from typing import Any

from kubeloop.api.status import ApiError, bad_request_error
from kubeloop.server.codec import protobuf

MAGIC = b"k8s\x00"
UNSTRUCTURED = "*unstructured.Unstructured"
"""The Go type a custom resource decodes into upstream."""


def decode_protobuf_body(raw: bytes, into: tuple[str, str] | None = None, *, custom: bool = False) -> dict[str, Any]:
    """The JSON form of a protobuf body. ``into`` is the (apiVersion, kind) the endpoint
    decodes into (it fills what the envelope leaves out and words errors), ``custom`` says it
    is a custom resource's."""
    if custom and into is not None:
        raise custom_resource_error(raw, into)
    try:
        return protobuf.decode(raw, into)
    except protobuf.ProtobufError as error:
        raise bad_request_error(str(error)) from None


def custom_resource_error(raw: bytes, into: tuple[str, str]) -> ApiError:
    """The 400 of a protobuf body sent to a custom resource of ``into`` (see the module doc).
    A body that is not even an envelope fails earlier, with the codec's text."""
    try:
        api_version, kind = envelope_type(raw)
    except ValueError:
        try:
            protobuf.decode(raw, into)
        except protobuf.ProtobufError as error:
            return bad_request_error(str(error))
        api_version, kind = "", ""
    custom_kind = into[1]
    # copyKindDefaults: what the envelope leaves out comes from the URL's type.
    version = api_version.rpartition("/")[2] or into[0].rpartition("/")[2]
    return bad_request_error(
        f'{kind or custom_kind} in version "{version}" cannot be handled as a {custom_kind}: object {UNSTRUCTURED} '
        "does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message")


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def message_fields(data: bytes) -> dict[int, bytes]:
    """The length-delimited fields of one message (last one wins); other wire types skipped."""
    fields: dict[int, bytes] = {}
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, at = _varint(data, at)
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise ValueError("truncated field")
            fields[number] = data[at:at + size]
            at += size
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    return fields


def envelope_type(raw: bytes) -> tuple[str, str]:
    """``(apiVersion, kind)`` of a ``runtime.Unknown`` envelope's ``typeMeta`` (field 1, whose
    fields 1 and 2 are apiVersion and kind: k8s.io/apimachinery pkg/runtime/generated.proto).
    ValueError when ``raw`` is not one."""
    if not raw.startswith(MAGIC):
        raise ValueError("no magic")
    type_meta = message_fields(message_fields(raw[len(MAGIC):]).get(1, b""))
    try:
        return type_meta.get(1, b"").decode(), type_meta.get(2, b"").decode()
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
