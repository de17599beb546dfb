"""Protobuf in negotiation: which Accept headers get protobuf per endpoint, error bodies,
request-body envelopes and watch framing."""

from __future__ import annotations

import orjson
import pytest
import yaml

from kubeloop.api.status import ApiError
from kubeloop.server.codec import protobuf
from kubeloop.server.codec.bodies import custom_resource_error, decode_protobuf_body, envelope_type
from kubeloop.server.codec.negotiation import Conversion, MediaTypeOptions, negotiate_error, negotiate_output
from kubeloop.server.codec.serving import error_body, served_media_types
from kubeloop.server.codec.watchframes import JSON_FRAMING, PROTOBUF_FRAMING, framing_for

JSON = "application/json"
YAML = "application/yaml"
PB = "application/vnd.kubernetes.protobuf"
POM = "as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
POML = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
POM_V1 = Conversion("PartialObjectMetadata", "meta.k8s.io", "v1")
POML_V1 = Conversion("PartialObjectMetadataList", "meta.k8s.io", "v1")
BUILTIN = served_media_types("v1", "Pod", custom=False)
CUSTOM = served_media_types("apps.kruise.io/v1alpha1", "CloneSet", custom=True)
ONLY = ("only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf")


def test_served_media_types_per_endpoint() -> None:
    assert (BUILTIN.encoded, BUILTIN.standard, BUILTIN.streams) == ((JSON, YAML, PB), None, (JSON, PB))
    assert (CUSTOM.encoded, CUSTOM.standard, CUSTOM.streams) == ((JSON, YAML, PB), (JSON, YAML), (JSON, PB))
    # A kind the codec has no message for is served as custom resources are.
    assert served_media_types("meta.k8s.io/v1", "Table", custom=False) == CUSTOM


@pytest.mark.parametrize(("accept", "builtin", "custom"), [
    (PB, MediaTypeOptions(PB), None),
    (f"{PB}, */*", MediaTypeOptions(PB), MediaTypeOptions(JSON)),
    (f"{PB},{JSON}", MediaTypeOptions(PB), MediaTypeOptions(JSON)),
    (f"{JSON};q=0.9, {PB}", MediaTypeOptions(PB), MediaTypeOptions(JSON)),
    (f"{PB};q=0.5, {JSON}", MediaTypeOptions(JSON), MediaTypeOptions(JSON)),
    (f"{PB};q=0.5, {YAML};q=0.4", MediaTypeOptions(PB), MediaTypeOptions(YAML)),
    ("application/*", MediaTypeOptions(JSON), MediaTypeOptions(JSON)),
    (f"{PB};{POM},{JSON};{POM},{JSON}", MediaTypeOptions(PB, POM_V1), MediaTypeOptions(PB, POM_V1)),
    (f"{PB};{POML},{JSON};{POML},{JSON}", MediaTypeOptions(PB, POML_V1), MediaTypeOptions(PB, POML_V1)),
    (f"{PB};as=Table;g=meta.k8s.io;v=v1", None, None),
    (f"{PB};as=Table;g=meta.k8s.io;v=v1, {JSON};as=Table;g=meta.k8s.io;v=v1",
     MediaTypeOptions(JSON, Conversion("Table", "meta.k8s.io", "v1")),
     MediaTypeOptions(JSON, Conversion("Table", "meta.k8s.io", "v1"))),
    (f"{PB};stream=watch", MediaTypeOptions(PB), None),
    (f"{PB};stream=other, {JSON}", MediaTypeOptions(JSON), MediaTypeOptions(JSON)),
    (f"{YAML};stream=watch, {PB}", MediaTypeOptions(PB), None),
])
def test_accept_headers_with_protobuf(accept: str, builtin: MediaTypeOptions | None,
                                      custom: MediaTypeOptions | None) -> None:
    for served, expected in ((BUILTIN, builtin), (CUSTOM, custom)):
        if expected is None:
            with pytest.raises(ApiError) as raised:
                negotiate_output(accept, encoded=served.encoded, standard=served.standard)
            assert (raised.value.code, raised.value.message) == (406, ONLY)
        else:
            assert negotiate_output(accept, encoded=served.encoded, standard=served.standard) == expected


@pytest.mark.parametrize(("accept", "streams", "expected"), [
    (f"{PB};stream=watch", BUILTIN.streams, PB),
    (f"{PB}, {JSON}", BUILTIN.streams, PB),
    (f"{PB};{POM}, {JSON}", CUSTOM.streams, PB),
    (f"{PB}, {JSON}", CUSTOM.streams, JSON),
    (YAML, BUILTIN.streams, JSON),
])
def test_watch_stream_media_types(accept: str, streams: tuple[str, ...], expected: str) -> None:
    standard = CUSTOM.standard if streams is CUSTOM.streams else None
    assert negotiate_output(accept, encoded=streams, standard=standard).media_type == expected


@pytest.mark.parametrize(("accept", "expected"), [
    (None, JSON),
    (PB, PB),
    (f"{PB}, {JSON}", PB),
    (YAML, YAML),
    (f"{PB};{POM}, {JSON};{POM}, {JSON}", JSON),
    (f"{JSON};as=Table;g=meta.k8s.io;v=v1", None),
    ("text/plain", None),
    ("*/*", JSON),
])
def test_error_media_types(accept: str | None, expected: str | None) -> None:
    assert negotiate_error(accept) == expected


def test_error_bodies_in_the_negotiated_media_type() -> None:
    status = ApiError(404, "NotFound", 'pods "x" not found').status()
    body, media_type = error_body(status, PB)
    assert media_type == PB and protobuf.decode(body) == status
    body, media_type = error_body(status, YAML)
    assert media_type == YAML and yaml.safe_load(body) == status
    body, media_type = error_body(status, f"{JSON};{POM}")
    # WriteRawJSON: indented, no final newline.
    assert media_type == JSON and body == orjson.dumps(status, option=orjson.OPT_INDENT_2)


def test_protobuf_bodies_decode_into_the_json_form() -> None:
    pod = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}
    raw = protobuf.encode(pod)
    assert envelope_type(raw) == ("v1", "ConfigMap")
    assert decode_protobuf_body(raw, ("v1", "ConfigMap")) == pod
    with pytest.raises(ApiError) as raised:
        decode_protobuf_body(b"k8s\x00\xff", ("v1", "ConfigMap"))
    assert raised.value.code == 400
    assert raised.value.message.startswith("the object provided is unrecognized (must be of type ConfigMap): ")
    with pytest.raises(ValueError):
        envelope_type(b"{}")


def test_custom_resources_cannot_be_filled_from_protobuf() -> None:
    raw = protobuf.encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    error = custom_resource_error(raw, ("apps.kruise.io/v1alpha1", "CloneSet"))
    assert (error.code, error.message) == (400, (
        'ConfigMap in version "v1" cannot be handled as a CloneSet: object *unstructured.Unstructured does not '
        "implement the protobuf marshalling interface and cannot be encoded to a protobuf message"))
    with pytest.raises(ApiError) as raised:
        decode_protobuf_body(raw, ("apps.kruise.io/v1alpha1", "CloneSet"), custom=True)
    assert raised.value.message == error.message
    assert custom_resource_error(b"nope", ("g/v1", "Widget")).message.startswith(
        "the object provided is unrecognized (must be of type Widget): provided data does not appear")


def test_watch_framings_measure_their_objects() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "resourceVersion": "3"}}
    frame = PROTOBUF_FRAMING.frame("MODIFIED", obj)
    assert protobuf.decode_watch_frames(frame) == [("MODIFIED", obj)]
    assert PROTOBUF_FRAMING.object_size(frame) == len(protobuf.encode(obj))
    # Lengths of two and three varint bytes, and a frame in another field layout.
    for size in (300, 20_000):
        large = {**obj, "data": {"k": "v" * size}}
        assert PROTOBUF_FRAMING.object_size(PROTOBUF_FRAMING.frame("ADDED", large)) == len(protobuf.encode(large))
    body = protobuf.encode(obj)
    reordered = b"\x12" + bytes([len(body) + 2, 0x0A, len(body)]) + body + b"\x0a\x05ADDED"
    assert PROTOBUF_FRAMING.object_size(len(reordered).to_bytes(4, "big") + reordered) == len(body)
    line = JSON_FRAMING.frame("MODIFIED", obj)
    assert JSON_FRAMING.object_size(line) == len(orjson.dumps(obj))
    assert framing_for(PB) is PROTOBUF_FRAMING and framing_for(JSON) is JSON_FRAMING
    assert PROTOBUF_FRAMING.content_type == "application/vnd.kubernetes.protobuf;stream=watch"
