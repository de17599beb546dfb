"""Kubernetes protobuf over real HTTP: request bodies, negotiated answers, errors and watches.

One server for the module. Bodies are built with the codec (its own byte-level tests live with
it); what is checked here is the server's plumbing: which requests read and answer protobuf,
with which status codes and Content-Types, and that a protobuf body takes the same path as
JSON (typed decoding, defaulting, admission).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from server_harness import ServerThread, raw_request
from test_server_crd import GROUP, PLURAL, VERSION, widget, widget_crd

from kubeloop.server.app import ServerConfig
from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.codec import protobuf
from kubeloop.server.codec.watchframes import JSON_FRAMING, PROTOBUF_FRAMING
from kubeloop.server.storage import WatchEvent
from kubeloop.server.watch import filtered_line

Obj = dict[str, Any]
PB = "application/vnd.kubernetes.protobuf"
JSON = "application/json"
NS = "/api/v1/namespaces/default"
CONFIGMAPS = f"{NS}/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
WIDGETS = f"/apis/{GROUP}/{VERSION}/namespaces/default/{PLURAL}"
ONLY = ("only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf")
# What client-go's metadata client (garbage collector, metadata informers) sends.
CLIENT_GO_GET = (f"{PB};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
                 f"{JSON};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,{JSON}")
CLIENT_GO_LIST = (f"{PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                  f"{JSON};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,{JSON}")
WATCH_CACHE = 20


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    data_dir: Path = tmp_path_factory.mktemp("protobuf")
    thread = ServerThread(ServerConfig(data_dir=data_dir, port=0, memory=True, watch_cache_size=WATCH_CACHE))
    try:
        status, _, body = raw_request(thread, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                      body=orjson.dumps(widget_crd()), headers={"Content-Type": JSON})
        assert status == 201, body
        yield thread
    finally:
        thread.stop()


def call(server: ServerThread, method: str, path: str, body: Obj | bytes | None = None, *,
         content_type: str = PB, accept: str = PB) -> tuple[int, str, Any]:
    """One request; a dict body is sent encoded as ``content_type``. Returns the status, the
    answer's Content-Type and its body decoded by that Content-Type."""
    if isinstance(body, dict):
        data = protobuf.encode(body) if content_type == PB else orjson.dumps(body)
    else:
        data = body
    headers = {"Accept": accept}
    if data is not None:
        headers["Content-Type"] = content_type
    status, answer_headers, answer = raw_request(server, method, path, headers=headers, body=data)
    media_type = answer_headers.get("Content-Type", "")
    if media_type == PB:
        return status, media_type, protobuf.decode(answer)
    if media_type == "application/yaml":
        return status, media_type, yaml.safe_load(answer)
    return status, media_type, orjson.loads(answer) if answer else None


def _field(number: int, data: bytes) -> bytes:
    assert len(data) < 128
    return bytes([number << 3 | 2, len(data)]) + data


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """A protobuf body around ``raw`` (what a Go client would send; the codec cannot encode
    custom resources, which have no message)."""
    type_meta = _field(1, api_version.encode()) + _field(2, kind.encode())
    return b"k8s\x00" + _field(1, type_meta) + _field(2, raw)


def config_map(name: str, **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": dict(data)}


def deployment(name: str) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}


def pod(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}


def test_create_read_list_and_delete_in_protobuf(server: ServerThread) -> None:
    status, media_type, created = call(server, "POST", CONFIGMAPS, config_map("pb", mode="fast"))
    assert (status, media_type) == (201, PB)
    assert created["kind"] == "ConfigMap" and created["data"] == {"mode": "fast"}
    _, media_type, read = call(server, "GET", f"{CONFIGMAPS}/pb", accept=JSON)
    assert media_type == JSON and read == created
    status, media_type, listed = call(server, "GET", CONFIGMAPS)
    assert (status, media_type, listed["kind"]) == (200, PB, "ConfigMapList")
    assert "pb" in [item["metadata"]["name"] for item in listed["items"]]
    options = {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "preconditions": {"uid": "other"}}
    status, media_type, refused = call(server, "DELETE", f"{CONFIGMAPS}/pb", options)
    # The protobuf DeleteOptions was read: its precondition refuses the delete.
    assert (status, media_type, refused["kind"], refused["reason"]) == (409, PB, "Status", "Conflict")
    options["preconditions"] = {"uid": created["metadata"]["uid"]}
    status, media_type, deleted = call(server, "DELETE", f"{CONFIGMAPS}/pb", options)
    assert (status, media_type, deleted["kind"], deleted["status"]) == (200, PB, "Status", "Success")


def test_protobuf_bodies_take_the_typed_path(server: ServerThread) -> None:
    status, media_type, created = call(server, "POST", DEPLOYMENTS, deployment("typed"), accept=JSON)
    assert (status, media_type) == (201, JSON)
    # Defaulted as a JSON body is.
    assert created["spec"]["strategy"]["type"] == "RollingUpdate" and created["spec"]["revisionHistoryLimit"] == 10
    changed = {**created, "spec": {**created["spec"], "replicas": 3}}
    status, _, updated = call(server, "PUT", f"{DEPLOYMENTS}/typed", changed)
    assert (status, updated["spec"]["replicas"], updated["metadata"]["generation"]) == (200, 3, 2)
    status, media_type, scale = call(server, "GET", f"{DEPLOYMENTS}/typed/scale")
    assert (status, media_type, scale["kind"], scale["spec"]["replicas"]) == (200, PB, "Scale", 3)
    scale["spec"]["replicas"] = 5
    status, _, scaled = call(server, "PUT", f"{DEPLOYMENTS}/typed/scale", scale)
    assert (status, scaled["apiVersion"], scaled["spec"]["replicas"]) == (200, "autoscaling/v1", 5)
    bad = deployment("invalid")
    bad["spec"]["replicas"] = -1
    status, media_type, refused = call(server, "POST", DEPLOYMENTS, bad)
    assert (status, media_type, refused["reason"]) == (422, PB, "Invalid")
    assert "spec.replicas: Invalid value: -1" in refused["message"]


def test_binding_status_eviction_and_reviews_in_protobuf(server: ServerThread) -> None:
    status, _, _ = call(server, "POST", f"{NS}/pods", pod("bound"))
    assert status == 201
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bound"},
               "target": {"kind": "Node", "name": "node-a"}}
    status, media_type, answer = call(server, "POST", f"{NS}/pods/bound/binding", binding)
    assert (status, media_type, answer["kind"], answer["status"]) == (201, PB, "Status", "Success")
    _, _, current = call(server, "GET", f"{NS}/pods/bound")
    assert current["spec"]["nodeName"] == "node-a"
    current["status"] = {**current.get("status", {}), "phase": "Running"}
    status, _, updated = call(server, "PUT", f"{NS}/pods/bound/status", current)
    assert (status, updated["status"]["phase"]) == (200, "Running")
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "bound"},
                "deleteOptions": {"gracePeriodSeconds": 0}}
    status, media_type, answer = call(server, "POST", f"{NS}/pods/bound/eviction", eviction)
    assert (status, media_type, answer["status"]) == (201, PB, "Success")
    status, _, gone = call(server, "GET", f"{NS}/pods/bound")
    assert (status, gone["reason"]) == (404, "NotFound")
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}
    status, media_type, answer = call(server, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                      review)
    assert (status, media_type, answer["status"]["allowed"]) == (201, PB, True)


def test_malformed_protobuf_is_400(server: ServerThread) -> None:
    body = protobuf.encode(config_map("cut"))[:-7]
    status, media_type, answer = call(server, "POST", CONFIGMAPS, body)
    assert (status, media_type, answer["reason"]) == (400, PB, "BadRequest")
    with pytest.raises(protobuf.ProtobufError) as raised:
        protobuf.decode(body, ("v1", "ConfigMap"))
    assert answer["message"] == str(raised.value)
    status, _, answer = call(server, "POST", CONFIGMAPS, b"{}")
    assert (status, answer["reason"]) == (400, "BadRequest")
    assert answer["message"].startswith("the object provided is unrecognized (must be of type ConfigMap): "
                                        "provided data does not appear to be a protobuf message")


def test_patches_keep_their_json_media_types(server: ServerThread) -> None:
    call(server, "POST", CONFIGMAPS, config_map("patched"))
    status, media_type, answer = call(server, "PATCH", f"{CONFIGMAPS}/patched", config_map("patched", a="b"))
    assert (status, media_type, answer["reason"]) == (415, PB, "UnsupportedMediaType")
    assert answer["message"] == ("the body of the request was in an unknown format - accepted media types include: "
                                 "application/json-patch+json, application/merge-patch+json, "
                                 "application/strategic-merge-patch+json, application/apply-patch+yaml")
    status, media_type, answer = call(server, "PATCH", f"{CONFIGMAPS}/patched", {"data": {"a": "b"}},
                                      content_type="application/merge-patch+json")
    assert (status, media_type, answer["data"]) == (200, PB, {"a": "b"})
    status, _, answer = call(server, "POST", CONFIGMAPS, b"x", content_type="text/plain")
    assert (status, answer["message"]) == (415, "the body of the request was in an unknown format - accepted "
                                                 f"media types include: application/json, application/yaml, {PB}")


def test_custom_resources_in_protobuf_only_as_metadata(server: ServerThread) -> None:
    status, _, created = call(server, "POST", WIDGETS, widget("w"), content_type=JSON, accept=JSON)
    assert status == 201
    body = envelope(f"{GROUP}/{VERSION}", "Widget", b"\x0a\x00")
    # The answer is negotiated first (upstream too): a custom resource cannot answer in protobuf.
    status, media_type, refused = call(server, "POST", WIDGETS, body)
    assert (status, media_type, refused["reason"]) == (406, PB, "NotAcceptable")
    status, media_type, refused = call(server, "POST", WIDGETS, body, accept=f"{PB}, {JSON}")
    # An error Status may be protobuf (ErrorNegotiated has no custom resource restriction).
    assert (status, media_type, refused["reason"]) == (400, PB, "BadRequest")
    assert refused["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: object *unstructured.Unstructured does not implement '
        "the protobuf marshalling interface and cannot be encoded to a protobuf message")
    # In full: JSON or YAML only; a protobuf-only Accept is a 406 whose Status is protobuf.
    status, media_type, refused = call(server, "GET", f"{WIDGETS}/w")
    assert (status, media_type, refused["reason"], refused["message"]) == (406, PB, "NotAcceptable", ONLY)
    status, media_type, read = call(server, "GET", f"{WIDGETS}/w", accept=f"{PB}, {JSON}")
    assert (status, media_type, read) == (200, JSON, created)
    status, media_type, meta = call(server, "GET", f"{WIDGETS}/w", accept=CLIENT_GO_GET)
    assert (status, media_type) == (200, PB)
    assert meta == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": created["metadata"]}
    status, media_type, listed = call(server, "GET", WIDGETS, accept=CLIENT_GO_LIST)
    assert (status, media_type, listed["kind"]) == (200, PB, "PartialObjectMetadataList")
    assert [item["metadata"]["uid"] for item in listed["items"]] == [created["metadata"]["uid"]]
    # Metadata informers watch them in protobuf too; a plain watch falls back to JSON.
    status, headers, body = raw_request(server, "GET", f"{WIDGETS}?watch=1&timeoutSeconds=1",
                                        headers={"Accept": CLIENT_GO_GET})
    assert (status, headers["Content-Type"]) == (200, f"{PB};stream=watch")
    assert protobuf.decode_watch_frames(body) == [("ADDED", meta)]
    status, headers, body = raw_request(server, "GET", f"{WIDGETS}?watch=1&timeoutSeconds=1",
                                        headers={"Accept": f"{PB}, {JSON}"})
    assert (status, headers["Content-Type"]) == (200, JSON)
    assert orjson.loads(body) == {"type": "ADDED", "object": created}


def test_error_statuses_follow_accept(server: ServerThread) -> None:
    missing = f"{CONFIGMAPS}/missing"
    for accept, expected in ((PB, PB), ("application/yaml", "application/yaml"), (f"{PB};q=0.5, {JSON}", JSON)):
        status, media_type, answer = call(server, "GET", missing, accept=accept)
        assert (status, media_type, answer["kind"], answer["reason"]) == (404, expected, "Status", "NotFound")
    table_only = f"{PB};as=Table;g=meta.k8s.io;v=v1"
    status, headers, body = raw_request(server, "GET", CONFIGMAPS, headers={"Accept": table_only})
    # Table is never protobuf; nothing else is acceptable, so the Status is WriteRawJSON's.
    assert (status, headers["Content-Type"]) == (406, JSON)
    assert body == orjson.dumps(orjson.loads(body), option=orjson.OPT_INDENT_2)
    status, media_type, table = call(server, "GET", CONFIGMAPS,
                                     accept=f"{table_only}, {JSON};as=Table;g=meta.k8s.io;v=v1")
    assert (status, media_type, table["kind"]) == (200, JSON, "Table")


def test_protobuf_watch_streams(server: ServerThread) -> None:
    call(server, "POST", CONFIGMAPS, config_map("watched"))
    status, headers, body = raw_request(
        server, "GET", f"{CONFIGMAPS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                       "&allowWatchBookmarks=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dwatched",
        headers={"Accept": f"{PB};stream=watch"})
    assert (status, headers["Content-Type"]) == (200, f"{PB};stream=watch")
    events = protobuf.decode_watch_frames(body)
    assert [kind for kind, _ in events][:2] == ["ADDED", "BOOKMARK"]
    assert events[0][1]["metadata"]["name"] == "watched" and events[0][1]["kind"] == "ConfigMap"
    assert events[1][1]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    for index in range(WATCH_CACHE + 5):
        call(server, "PUT", f"{CONFIGMAPS}/watched", config_map("watched", n=str(index)))
    status, headers, body = raw_request(server, "GET", f"{CONFIGMAPS}?watch=1&resourceVersion=2&timeoutSeconds=1",
                                        headers={"Accept": f"{PB}, {JSON}"})
    assert (status, headers["Content-Type"]) == (200, f"{PB};stream=watch")
    [(kind, expired)] = protobuf.decode_watch_frames(body)
    assert (kind, expired["kind"], expired["code"], expired["reason"]) == ("ERROR", "Status", 410, "Expired")


def test_watch_frames_are_shared_per_event_and_framing() -> None:
    info = next(i for i in BUILTIN_RESOURCES if (i.group, i.resource) == ("", "configmaps"))
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared", "namespace": "d",
                                                                 "resourceVersion": "9"}}
    event = WatchEvent("ADDED", 9, obj, None)
    first = filtered_line(event, None, info, framing=PROTOBUF_FRAMING)
    assert first is not None and filtered_line(event, None, info, framing=PROTOBUF_FRAMING) is first
    assert protobuf.decode_watch_frames(first) == [("ADDED", obj)]
    line = filtered_line(event, None, info, framing=JSON_FRAMING)
    assert line is not None and orjson.loads(line) == {"type": "ADDED", "object": obj}
    assert filtered_line(event, None, info, framing=JSON_FRAMING) is line
