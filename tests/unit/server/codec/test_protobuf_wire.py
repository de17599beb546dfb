"""Protobuf bodies byte for byte: golden cases, kubectl's own bodies, and malformed ones.

Expected bytes are assembled here from field numbers with a small varint helper of the test's
own, or are Go's: the bodies kubectl 1.33 sent for ``kubectl create ...`` (captured from the
wire into kubectl133/, with the JSON ``--dry-run=client -o json`` shows for the same command).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.server.codec import protobuf
from kubeloop.server.codec.gotext import format_duration, parse_duration
from kubeloop.server.kinds.decode import IGNORE, decode_object

CAPTURES = Path(__file__).parent / "kubectl133"


def varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = b""
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out += bytes([low | 0x80])
        else:
            return out + bytes([low])


def ld(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def vi(number: int, value: int) -> bytes:
    """A varint field."""
    return varint(number << 3) + varint(value)


def empty_strings(*numbers: int) -> bytes:
    return b"".join(ld(number, b"") for number in numbers)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + ld(3, b"") + ld(4, b"")


def object_meta(name: str, namespace: str = "", labels: dict[str, str] | None = None,
                resource_version: str = "") -> bytes:
    # ObjectMeta: name 1, generateName 2, namespace 3, selfLink 4, uid 5, resourceVersion 6 (strings),
    # generation 7 (int64), creationTimestamp 8 (Time: empty when zero), labels 11 (map).
    return (ld(1, name) + ld(2, b"") + ld(3, namespace) + ld(4, b"") + ld(5, b"") + ld(6, resource_version)
            + vi(7, 0) + ld(8, b"") + b"".join(ld(11, ld(1, k) + ld(2, v)) for k, v in sorted((labels or {}).items())))


def list_meta(resource_version: str) -> bytes:
    # ListMeta: selfLink 1, resourceVersion 2, continue 3; remainingItemCount 4 is a pointer.
    return ld(1, b"") + ld(2, resource_version) + ld(3, b"")


def container(name: str, image: str) -> bytes:
    # Container's non-pointer fields: name 1, image 2, workingDir 5, resources 8 (struct),
    # terminationMessagePath 13, imagePullPolicy 14, stdin 16, stdinOnce 17, tty 18,
    # terminationMessagePolicy 20.
    return (ld(1, name) + ld(2, image) + ld(5, b"") + ld(8, b"") + ld(13, b"") + ld(14, b"")
            + vi(16, 0) + vi(17, 0) + vi(18, 0) + ld(20, b""))


def pod_spec(containers: bytes, restart_policy: str = "") -> bytes:
    # PodSpec: containers 2 (repeated); non-pointer: restartPolicy 3, dnsPolicy 6,
    # serviceAccountName 8, serviceAccount 9, nodeName 10, hostNetwork 11, hostPID 12, hostIPC 13,
    # hostname 16, subdomain 17, schedulerName 19, priorityClassName 24.
    return (containers + ld(3, restart_policy) + ld(6, b"") + ld(8, b"") + ld(9, b"") + ld(10, b"")
            + vi(11, 0) + vi(12, 0) + vi(13, 0) + ld(16, b"") + ld(17, b"") + ld(19, b"") + ld(24, b""))


def pod_status(phase: str) -> bytes:
    # PodStatus' non-pointer fields: phase 1, message 3, reason 4, hostIP 5, podIP 6, qosClass 9,
    # nominatedNodeName 11, resize 14 (strings), observedGeneration 17 (int64).
    return (ld(1, phase) + ld(3, b"") + ld(4, b"") + ld(5, b"") + ld(6, b"") + ld(9, b"") + ld(11, b"")
            + ld(14, b"") + vi(17, 0))


POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "front"}},
       "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}], "restartPolicy": "Always"},
       "status": {"phase": "Pending"}}
POD_MESSAGE = (ld(1, object_meta("web", "default", {"tier": "front", "app": "web"}))
               + ld(2, pod_spec(ld(2, container("nginx", "nginx:1.25")), "Always"))
               + ld(3, pod_status("Pending")))


def test_pod_golden() -> None:
    assert protobuf.encode(POD) == envelope("v1", "Pod", POD_MESSAGE)


def test_pod_list_golden() -> None:
    pods = {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "42"},
            "items": [{k: v for k, v in POD.items() if k not in ("apiVersion", "kind")}] * 2}
    # PodList: metadata 1, items 2 (repeated Pod, without apiVersion and kind).
    expected = ld(1, list_meta("42")) + ld(2, POD_MESSAGE) + ld(2, POD_MESSAGE)
    assert protobuf.encode(pods) == envelope("v1", "PodList", expected)


def test_deployment_golden() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "creationTimestamp": "2024-05-01T10:00:00Z"},
                  "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}},
                           "strategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}}}}
    meta = object_meta("web")
    # creationTimestamp 8: seconds 1 and nanos 2 of 2024-05-01T10:00:00Z (1714557600).
    meta = meta.replace(ld(8, b""), ld(8, vi(1, 1_714_557_600) + vi(2, 0)))
    template = ld(1, object_meta("", labels={"app": "web"})) + ld(2, pod_spec(ld(2, container("nginx", "nginx"))))
    # IntOrString: type 1 (0 int, 1 string), intVal 2, strVal 3, all always written.
    rolling = ld(1, vi(1, 1) + vi(2, 0) + ld(3, "25%")) + ld(2, vi(1, 0) + vi(2, 1) + ld(3, b""))
    # DeploymentSpec: replicas 1 (pointer: written at 0), selector 2 (LabelSelector: matchLabels 1),
    # template 3, strategy 4 (type 1, rollingUpdate 2), minReadySeconds 5, paused 7.
    spec = (vi(1, 0) + ld(2, ld(1, ld(1, "app") + ld(2, "web"))) + ld(3, template)
            + ld(4, ld(1, "RollingUpdate") + ld(2, rolling)) + vi(5, 0) + vi(7, 0))
    # DeploymentStatus: observedGeneration 1, replicas 2, updated 3, available 4, unavailable 5, ready 7.
    status = vi(1, 0) + vi(2, 0) + vi(3, 0) + vi(4, 0) + vi(5, 0) + vi(7, 0)
    body = envelope("apps/v1", "Deployment", ld(1, meta) + ld(2, spec) + ld(3, status))
    assert protobuf.encode(deployment) == body
    back = protobuf.decode(body)
    assert back["spec"]["replicas"] == 0
    assert back["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": "25%", "maxSurge": 1}
    assert back["metadata"] == {"name": "web", "creationTimestamp": "2024-05-01T10:00:00Z"}
    assert back["status"] == {}


STATUS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
          "message": 'pods "x" not found', "reason": "NotFound", "details": {"name": "x", "kind": "pods"},
          "code": 404}


def test_status_golden() -> None:
    # Status: metadata 1 (ListMeta), status 2, message 3, reason 4, details 5 (pointer), code 6.
    # StatusDetails: name 1, group 2, kind 3, causes 4 (repeated), retryAfterSeconds 5, uid 6.
    details = ld(1, "x") + ld(2, b"") + ld(3, "pods") + vi(5, 0) + ld(6, b"")
    expected = (ld(1, list_meta("")) + ld(2, "Failure") + ld(3, 'pods "x" not found') + ld(4, "NotFound")
                + ld(5, details) + vi(6, 404))
    assert protobuf.encode(STATUS) == envelope("v1", "Status", expected)
    assert protobuf.decode(envelope("v1", "Status", expected)) == STATUS


def test_watch_frame_golden() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"},
                  "data": {"b": "2", "a": "1"}, "binaryData": {"bin": "AAE="}}
    # ConfigMap: metadata 1, data 2 (map), binaryData 3 (map of bytes), immutable 4 (pointer).
    message = (ld(1, object_meta("c", "ns")) + ld(2, ld(1, "a") + ld(2, "1")) + ld(2, ld(1, "b") + ld(2, "2"))
               + ld(3, ld(1, "bin") + ld(2, b"\x00\x01")))
    # The frame: a 4-byte big-endian length, then WatchEvent {type 1, object 2 = RawExtension {raw 1}}
    # with no magic and no envelope of its own; raw is the object's whole body, magic included.
    event = ld(1, "MODIFIED") + ld(2, ld(1, envelope("v1", "ConfigMap", message)))
    frame = protobuf.encode_watch_event("MODIFIED", config_map)
    assert frame == struct.pack(">I", len(event)) + event
    assert protobuf.decode_watch_frames(frame + frame[:7]) == [("MODIFIED", config_map)]


def test_values_pointers_and_omitempty_read_as_json_writes_them() -> None:
    # A Go client's Deployment: replicas is a pointer (0 is a value), minReadySeconds and paused
    # are omitempty (zero means absent), a zero creationTimestamp is JSON's null (absent).
    spec = vi(1, 0) + vi(5, 0) + vi(7, 0) + ld(3, ld(1, object_meta("")) + ld(2, b""))
    body = envelope("apps/v1", "Deployment", ld(1, object_meta("d")) + ld(2, spec) + ld(3, b""))
    assert protobuf.decode(body) == {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"},
                                     "spec": {"replicas": 0, "template": {"metadata": {}, "spec": {}}},
                                     "status": {}}


def test_map_keys_in_gos_order_a_prefix_first() -> None:
    # gogo's Marshal sorts map keys with sortkeys.Strings, bytewise: "" before everything, a key
    # before the keys it is a prefix of (the protobuf library does the reverse).
    labels = {"b": "2", "app.kubernetes.io/name": "4", "": "0", "app": "1", "\u00e9": "3", "a": "5"}
    meta = protobuf.encode_message({"metadata": {"name": "x", "labels": labels}}, "v1", "ConfigMap")
    want = ld(1, object_meta("x", labels=labels))
    assert meta == want


def test_special_types_round_trip() -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "xs.example.com", "managedFields": [
               {"manager": "m", "operation": "Apply", "time": "2024-05-01T10:00:00Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
           "spec": {"group": "example.com", "names": {"plural": "xs", "kind": "X"}, "scope": "Namespaced",
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True,
                        "properties": {"a": {"type": "array", "items": {"type": "string"}, "default": ["x"]},
                                       "b": {"type": "object", "additionalProperties": False},
                                       "c": {"type": "object", "additionalProperties": {"type": "integer"},
                                             "maximum": 2.5, "minimum": 1}}}}}]}}
    back = protobuf.decode(protobuf.encode(crd))
    assert back["spec"]["versions"][0]["schema"] == crd["spec"]["versions"][0]["schema"]  # type: ignore[index]
    assert back["metadata"]["managedFields"] == crd["metadata"]["managedFields"]  # type: ignore[index]
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
             "eventTime": "2024-05-01T10:00:00.123456Z", "reportingController": "c", "reportingInstance": "i",
             "action": "A", "reason": "R", "type": "Normal"}
    assert protobuf.decode(protobuf.encode(event))["eventTime"] == "2024-05-01T10:00:00.123456Z"
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "metadata": {},
              "spec": {"token": "t"}, "status": {"authenticated": True, "user": {
                  "username": "u", "extra": {"scopes": ["a", "b"]}}}}
    assert protobuf.decode(protobuf.encode(review))["status"]["user"]["extra"] == {"scopes": ["a", "b"]}
    resources = {"apiVersion": "v1", "kind": "APIResourceList", "groupVersion": "v1",
                 "resources": [{"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                                "verbs": ["get", "list"]}]}
    assert protobuf.decode(protobuf.encode(resources))["resources"][0]["verbs"] == ["get", "list"]


@pytest.mark.parametrize(("nanos", "text"), [
    (0, "0s"), (1, "1ns"), (1_500, "1.5µs"), (300_000_000, "300ms"), (1_500_000_000, "1.5s"),
    (90 * 10**9, "1m30s"), (3600 * 10**9, "1h0m0s"), (-(2 * 3600 + 3) * 10**9 - 5 * 10**6, "-2h0m3.005s"),
])
def test_durations_as_go_writes_them(nanos: int, text: str) -> None:
    assert format_duration(nanos) == text
    assert parse_duration(text) == nanos


@pytest.mark.parametrize("capture", sorted(CAPTURES.glob("*.pb")), ids=lambda path: path.stem)
def test_kubectl_bodies(capture: Path) -> None:
    """kubectl 1.33's protobuf body decodes to what the JSON path stores for its JSON body, and
    that dict encodes back to kubectl's bytes exactly."""
    body = capture.read_bytes()
    expected: dict[str, Any] = json.loads(capture.with_suffix(".json").read_text())
    group, _, version = expected["apiVersion"].rpartition("/")
    decode_object(group, version, expected["kind"], expected, IGNORE)
    assert protobuf.decode(body, (expected["apiVersion"], expected["kind"])) == expected
    assert protobuf.encode(expected) == body


DEPLOYMENT_BODY = (CAPTURES / "deployment.pb").read_bytes()


_MALFORMED: list[tuple[bytes, tuple[str, str] | None, str]] = [
    (b"", ("v1", "Pod"), "the object provided is unrecognized (must be of type Pod): empty data (<empty>)"),
    (b'{"kind":"Pod"}', ("v1", "Pod"), "the object provided is unrecognized (must be of type Pod): provided data "
     'does not appear to be a protobuf message, expected prefix [107 56 115 0] ({"kind":"Pod"})'),
    (b"k8s\x00", ("v1", "Pod"), "the object provided is unrecognized (must be of type Pod): empty body (6b387300)"),
    (b"k8s\x00\x0a\x09\x0a", ("v1", "Pod"),
     "the object provided is unrecognized (must be of type Pod): unexpected EOF (6b3873000a090a)"),
    (b"k8s\x00\x08\x01", ("v1", "Pod"), "the object provided is unrecognized (must be of type Pod): "
     "proto: wrong wireType = 0 for field TypeMeta (6b3873000801)"),
    (b"k8s\x00\x00", ("v1", "Pod"), "the object provided is unrecognized (must be of type Pod): "
     "proto: Unknown: illegal tag 0 (wire type 0) (6b38730000)"),
    (b"k8s\x00\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", ("v1", "Pod"),
     "the object provided is unrecognized (must be of type Pod): proto: integer overflow "
     "(6b3873000affffffffffffffffffff01)"),
    (DEPLOYMENT_BODY[:-12], ("apps/v1", "Deployment"),
     "the object provided is unrecognized (must be of type Deployment): unexpected EOF "
     f"({DEPLOYMENT_BODY[:30].hex()} ...)"),
    (envelope("v1", "Pod", vi(1, 5)), ("v1", "Pod"),
     'Pod in version "v1" cannot be handled as a Pod: proto: wrong wireType = 0 for field ObjectMeta'),
    (envelope("v1", "Pod", ld(1, b"\x0a\x05ab")), ("v1", "Pod"),
     'Pod in version "v1" cannot be handled as a Pod: unexpected EOF'),
    (envelope("v1", "Pod", ld(2, b"\x12\x02\x0c\x00")), ("v1", "Pod"),
     'Pod in version "v1" cannot be handled as a Pod: proto: Container: wiretype end group for non-group'),
    (envelope("v1", "Pod", ld(1, b"\x0f")), ("v1", "Pod"),
     'Pod in version "v1" cannot be handled as a Pod: proto: wrong wireType = 7 for field Name'),
    (envelope("v1", "Pod", ld(1, varint(99 << 3 | 7))), ("v1", "Pod"),
     'Pod in version "v1" cannot be handled as a Pod: proto: illegal wireType 7'),
    (envelope("apps/v1", "Deployment", ld(2, vi(0, 1))), ("apps/v1", "Deployment"),
     'Deployment in version "v1" cannot be handled as a Deployment: '
     "proto: DeploymentSpec: illegal tag 0 (wire type 0)"),
    (envelope("v1", "Pod", ld(1, b"\x0a" + varint(2**63))), ("v1", "Pod"),
     'Pod in version "v1" cannot be handled as a Pod: proto: negative length found during unmarshaling'),
    (envelope("v1", "Pod", ld(1, ld(8, b"\x08"))), ("v1", "Pod"),
     'Pod in version "v1" cannot be handled as a Pod: unexpected EOF'),
    (envelope("v1", "Pod", ld(1, ld(8, b"\x00"))), ("v1", "Pod"),
     'Pod in version "v1" cannot be handled as a Pod: proto: Timestamp: illegal tag 0 (wire type 0)'),
    (envelope("v1", "Pods", b""), ("v1", "Pod"), 'Pods in version "v1" cannot be handled as a Pod: '
     'no kind "Pods" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"'),
    (envelope("", "", b""), None, "Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:\"\", Kind:\"\"}'"),
    (envelope("", "Pod", b""), None,
     "Object 'apiVersion' is missing in 'runtime.TypeMeta{APIVersion:\"\", Kind:\"Pod\"}'"),
]


@pytest.mark.parametrize(("body", "into", "text"), _MALFORMED)
def test_malformed_bodies_get_upstreams_text(body: bytes, into: tuple[str, str] | None, text: str) -> None:
    with pytest.raises(protobuf.ProtobufError) as caught:
        protobuf.decode(body, into)
    assert str(caught.value) == text


def test_the_url_fills_what_the_envelope_leaves_out() -> None:
    # upstream's copyKindDefaults: an envelope without kind or version takes the URL's.
    assert protobuf.decode(envelope("", "", b""), ("v1", "Pod")) == {"kind": "Pod", "apiVersion": "v1"}
    assert protobuf.decode(envelope("", "Deployment", b""), ("apps/v1", "Deployment"))["apiVersion"] == "apps/v1"
    # A bare "apps" is a version to Go (schema.ParseGroupVersion), and no such version exists.
    with pytest.raises(protobuf.ProtobufError, match='no kind "Deployment" is registered for version "apps"'):
        protobuf.decode(envelope("apps", "Deployment", b""), ("apps/v1", "Deployment"))


def _decoded(body: bytes, into: tuple[str, str] | None) -> dict[str, Any] | str:
    try:
        return protobuf.decode(body, into)
    except protobuf.ProtobufError as error:
        return f"error: {error}"


_KNOWN = [(envelope(api_version, kind, b""), into) for into in (("v1", "Pod"), ("apps/v1", "Deployment"), None)
          for api_version, kind in (("v1", "Pod"), ("apps/v1", "Deployment"), ("", ""), ("", "Pod"))]
"""Bodies whose envelopes the decoder then knows, for each endpoint (and none)."""


@pytest.mark.parametrize(("body", "into"), [(body, into) for body, into, _ in _MALFORMED] + [
    (DEPLOYMENT_BODY, ("apps/v1", "Deployment")), (DEPLOYMENT_BODY, None), (DEPLOYMENT_BODY, ("v1", "Pod")),
    (protobuf.encode(POD), ("v1", "Pod")), (envelope("", "", b""), ("v1", "Pod")),
    (envelope("", "", b""), ("apps/v1", "Deployment")), (envelope("", "Deployment", b""), ("apps/v1", "Deployment")),
    (envelope("v1", "", b""), ("v1", "Pod")),
    (envelope("v1", "Pod", ld(1, object_meta("p"))) + b"\x1a\x00", ("v1", "Pod")),
    (envelope("v1", "Pod", ld(1, object_meta("p"))) + b"\x1a\x00\x22\x00", ("v1", "Pod")),
    (envelope("v1", "Pod", ld(1, object_meta("p")))[:-1], ("v1", "Pod")),
    # a known typeMeta followed by another field than raw: contentType's bytes are no object
    (b"k8s\x00" + ld(1, ld(1, "v1") + ld(2, "Pod")) + ld(4, b"\x0a\x02ab"), ("v1", "Pod"))])
def test_a_known_envelope_reads_as_a_new_one(body: bytes, into: tuple[str, str] | None) -> None:
    """Envelopes read before are settled from their typeMeta bytes and the endpoint: a body
    then reads (or fails) exactly as it does the first time."""
    protobuf.clear_cache()
    first = _decoded(body, into)
    for known, known_into in _KNOWN:
        _decoded(known, known_into)
    _decoded(body, into)
    assert _decoded(body, into) == first
    protobuf.clear_cache()


def test_known_envelopes_are_kept_per_endpoint() -> None:
    protobuf.clear_cache()
    assert protobuf.decode(envelope("", "", b""), ("v1", "Pod")) == {"kind": "Pod", "apiVersion": "v1"}
    assert protobuf._KNOWN_HEADS, "the envelope read is kept"
    assert protobuf.decode(envelope("", "", b""), ("apps/v1", "Deployment")) == {
        "kind": "Deployment", "apiVersion": "apps/v1"}
    protobuf.clear_cache()


def test_fields_in_any_order_read_as_go_reads_them() -> None:
    # Go writes fields in number order, and the reader reads that order straight through; gogo's
    # Unmarshal takes any order (the last value of a field wins, repeated fields add up).
    labels = ld(11, ld(1, "a") + ld(2, "1"))
    meta = vi(7, 3) + ld(3, "ns") + labels + ld(1, "first") + ld(8, b"") + ld(1, "p") + ld(11, ld(1, "b") + ld(2, "2"))
    spec = ld(2, container("b", "img-b")) + ld(3, "Always") + ld(1, ld(1, "v")) + ld(2, container("c", "img-c"))
    pod = protobuf.decode(envelope("v1", "Pod", ld(3, b"") + ld(2, spec) + ld(1, meta)))
    assert pod["metadata"] == {"generation": 3, "namespace": "ns", "labels": {"a": "1", "b": "2"}, "name": "p"}
    assert [c["name"] for c in pod["spec"]["containers"]] == ["b", "c"]
    assert pod["spec"]["restartPolicy"] == "Always"
    assert pod["spec"]["volumes"] == [{"name": "v"}]
    in_order = protobuf.decode(envelope("v1", "Pod", ld(1, object_meta("p", "ns", {"a": "1", "b": "2"}) + vi(7, 3))))
    assert in_order["metadata"] == pod["metadata"]


def test_unknown_fields_are_skipped_as_go_skips_them() -> None:
    meta = object_meta("p") + vi(900, 1) + ld(901, b"xyz") + varint(902 << 3 | 1) + b"\x00" * 8
    assert protobuf.decode(envelope("v1", "Pod", ld(1, meta))) == {"kind": "Pod", "apiVersion": "v1",
                                                                    "metadata": {"name": "p"}}


@settings(max_examples=300, deadline=None, database=None)
@given(st.binary(max_size=40), st.integers(0, len(DEPLOYMENT_BODY) - 1), st.binary(min_size=1, max_size=3))
def test_garbage_is_a_protobuf_error_and_nothing_else(tail: bytes, at: int, patch: bytes) -> None:
    for body in (b"k8s\x00" + tail, DEPLOYMENT_BODY[:at] + patch + DEPLOYMENT_BODY[at + len(patch):],
                 DEPLOYMENT_BODY[:at]):
        try:
            decoded = protobuf.decode(body, ("apps/v1", "Deployment"))
        except protobuf.ProtobufError:
            continue
        orjson.dumps(decoded)
    frame = protobuf.encode_watch_event("ADDED", POD)
    for data in (struct.pack(">I", len(tail)) + tail, frame[:at % len(frame)] + patch + frame[at % len(frame) + 1:]):
        try:
            events = protobuf.decode_watch_frames(data)
        except protobuf.ProtobufError:
            continue
        orjson.dumps(events)


def test_written_messages_are_reused_only_for_the_same_object() -> None:
    pod = json.loads(json.dumps(POD))
    first = protobuf.encode(pod)
    assert protobuf.encode(json.loads(json.dumps(POD))) == first
    pod["status"]["phase"] = "Running"
    changed = protobuf.encode(pod)
    assert changed != first
    assert protobuf.decode(changed)["status"] == {"phase": "Running"}
    listed = protobuf.encode({"apiVersion": "v1", "kind": "PodList", "metadata": {},
                              "items": [{k: v for k, v in pod.items() if k not in ("apiVersion", "kind")}]})
    assert protobuf.decode(listed)["items"][0]["status"] == {"phase": "Running"}
