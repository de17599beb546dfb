"""Hostile requests of issue #18 answered as kube-apiserver does, never poisoning the store.

One server per module (persistent, so the SQLite path is exercised); each test names the finding
it reproduces. A deep object at the body limit must still be served by every reader; anything
deeper is a 400 at decoding, and the store itself refuses what it could not serve back.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from server_harness import ServerThread, raw_request

from kubeloop.server.app import ServerConfig
from kubeloop.server.nesting import MAX_DEPTH, depth_exceeds

JSON = "application/json"
JSON_PATCH = "application/json-patch+json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
BLOBS = "/apis/hardening.example.com/v1/namespaces/default/blobs"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    data_dir: Path = tmp_path_factory.mktemp("hardening") / "data"
    thread = ServerThread(ServerConfig(data_dir=data_dir, port=0, memory=False))
    try:
        yield thread
    finally:
        thread.stop()


def call(server: ServerThread, method: str, path: str, body: Any = None, content_type: str = JSON,
         accept: str | None = None) -> tuple[int, bytes]:
    headers = {"Content-Type": content_type}
    if accept:
        headers["Accept"] = accept
    raw = body if body is None or isinstance(body, bytes) else orjson.dumps(body)
    status, _, answer = raw_request(server, method, path, headers=headers, body=raw)
    return status, answer


def deep_json(depth: int) -> bytes:
    """The JSON text of :func:`nested` (``orjson`` itself refuses to write past 254 levels)."""
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


def nested(depth: int) -> Any:
    """An object nesting exactly ``depth`` containers."""
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def readers_answer(server: ServerThread, collection: str) -> list[int]:
    """The statuses of every way a client reads a collection of custom resources back (they have
    no protobuf form: that is a 406 upstream too)."""
    return [call(server, "GET", collection)[0], call(server, "GET", collection, accept=TABLE)[0],
            call(server, "GET", collection + "?watch=1&timeoutSeconds=1")[0]]


@pytest.fixture(scope="module")
def blobs(server: ServerThread) -> str:
    """A custom resource whose ``spec`` keeps anything: the one place a body can nest freely."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "blobs.hardening.example.com"},
           "spec": {"group": "hardening.example.com", "scope": "Namespaced",
                    "names": {"plural": "blobs", "singular": "blob", "kind": "Blob", "listKind": "BlobList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {
                            "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
    assert call(server, "POST", CRD, crd)[0] == 201
    for _ in range(100):
        if call(server, "GET", BLOBS)[0] == 200:
            return BLOBS
        time.sleep(0.05)
    raise AssertionError("the CRD's resource was never served")


def blob(name: str, spec: Any) -> dict[str, Any]:
    return {"apiVersion": "hardening.example.com/v1", "kind": "Blob", "metadata": {"name": name}, "spec": spec}


def test_an_object_at_the_depth_limit_is_served_by_every_reader(server: ServerThread, blobs: str) -> None:
    # body -> spec -> ... : the body itself is one level, spec the second.
    status, _ = call(server, "POST", blobs, blob("at-limit", nested(MAX_DEPTH - 1)))
    assert status == 201
    assert readers_answer(server, blobs) == [200, 200, 200]
    assert call(server, "PATCH", blobs + "/at-limit", {"metadata": {"labels": {"a": "b"}}},
                "application/merge-patch+json")[0] == 200
    assert call(server, "DELETE", blobs + "/at-limit")[0] == 200


@pytest.mark.parametrize("content_type", [JSON, "application/yaml"])
@pytest.mark.parametrize("depth", [MAX_DEPTH, 252, 300, 1000])
def test_deeper_bodies_are_400_and_nothing_is_stored(server: ServerThread, blobs: str, content_type: str,
                                                     depth: int) -> None:
    # Issue #18 item 1: 252 deep was stored and then every LIST of the type answered 500.
    head = b'{"apiVersion":"hardening.example.com/v1","kind":"Blob","metadata":{"name":"deep"},"spec":'
    status, answer = call(server, "POST", blobs, head + deep_json(depth) + b"}", content_type)
    assert status == 400, answer
    assert b"exceeded max depth" in answer
    assert call(server, "GET", blobs + "/deep")[0] == 404
    head = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":'
    status, answer = call(server, "POST", CONFIGMAPS, head + deep_json(depth) + b"}", content_type)
    assert status == 400, answer
    assert call(server, "GET", blobs)[0] == 200


def put_back(server: ServerThread, url: str, content_type: str = JSON) -> tuple[int, bytes]:
    """PUT an object as it was read, managed fields and all (as ``kubectl replace`` does)."""
    status, answer = call(server, "GET", url)
    assert status == 200, answer
    body = orjson.loads(answer)
    raw = orjson.dumps(body) if content_type == JSON else yaml.safe_dump(body).encode()
    return call(server, "PUT", url, raw, content_type)


def test_patches_cannot_grow_an_object_past_what_a_body_may_hold(server: ServerThread, blobs: str) -> None:
    # A JSON patch's path is a string: each one can add a body's depth below the last. One bound
    # holds for bodies and patch results, so whatever a patch stored can be written back whole.
    url = blobs + "/growing"
    assert call(server, "POST", blobs, blob("growing", nested(MAX_DEPTH - 10)))[0] == 201
    deepest = "/spec" + "/a" * (MAX_DEPTH - 12)
    status, answer = call(server, "PATCH", url, [{"op": "add", "path": deepest + "/b", "value": nested(11)}],
                          JSON_PATCH)
    assert status == 422, answer
    refusal = orjson.loads(answer)
    assert refusal["reason"] == "Invalid"
    assert refusal["details"]["causes"][0]["field"] == "patch"
    assert f"exceeded max depth of {MAX_DEPTH}" in refusal["message"]
    status, answer = call(server, "PATCH", url, [{"op": "add", "path": deepest + "/b", "value": nested(10)}],
                          JSON_PATCH)
    assert status == 200, answer
    assert readers_answer(server, blobs) == [200, 200, 200]
    for content_type in (JSON, "application/yaml"):
        status, answer = put_back(server, url, content_type)
        assert status == 200, answer
    assert call(server, "DELETE", url)[0] == 200


def test_an_object_at_the_limit_with_its_managed_fields_can_be_sent_back(server: ServerThread, blobs: str) -> None:
    # Managed fields mirror the object a few levels deeper: they are measured apart.
    url = blobs + "/managed"
    status, answer = call(server, "POST", blobs + "?fieldManager=deep", blob("managed", nested(MAX_DEPTH - 1)))
    assert status == 201, answer
    managed = orjson.loads(answer)["metadata"]["managedFields"]
    assert depth_exceeds(managed, MAX_DEPTH - 1)
    for content_type in (JSON, "application/yaml"):
        status, answer = put_back(server, url, content_type)
        assert status == 200, answer
    assert call(server, "DELETE", url)[0] == 200


def test_a_yaml_alias_bomb_is_400(server: ServerThread) -> None:
    # Issue #18 item 1: 313 bytes stored 33 MB, past the body and ConfigMap limits.
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: bomb}", "data:",
             "  a: &a " + "lol" * 3]
    lines[-1] = "  l0: &l0 [" + ",".join(['"lol"'] * 9) + "]"
    for level in range(1, 9):
        lines.append(f"  l{level}: &l{level} [" + ",".join([f"*l{level - 1}"] * 9) + "]")
    status, answer = call(server, "POST", CONFIGMAPS, "\n".join(lines).encode(), "application/yaml")
    assert status == 400
    assert orjson.loads(answer)["message"] == "error decoding YAML body: yaml: document contains excessive aliasing"
    assert call(server, "GET", CONFIGMAPS + "/bomb")[0] == 404


def test_yaml_binary_is_stored_as_its_bytes(server: ServerThread) -> None:
    # Issue #18 item 8: !!binary was stored as "b'hello'".
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: binary}\ndata:\n  a: !!binary aGVsbG8=\n"
    assert call(server, "POST", CONFIGMAPS, body, "application/yaml")[0] == 201
    _, answer = call(server, "GET", CONFIGMAPS + "/binary")
    assert orjson.loads(answer)["data"] == {"a": "hello"}


CLONESETS = "/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets"


@pytest.mark.parametrize("spec", [{"spec": "x"}, {"spec": {"updateStrategy": "x"}},
                                  {"spec": {"scaleStrategy": {"podsToDelete": 5}}},
                                  {"spec": {"volumeClaimTemplates": 5}}])
def test_cloneset_updates_of_the_wrong_shape_are_422_on_every_write(server: ServerThread, spec: dict[str, Any]) -> None:
    # Issue #18 item 3: AttributeError / TypeError in admission/cloneset.py, on PUT and every patch type.
    labels = {"app": "shapes"}
    cloneset = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "shapes"},
                "spec": {"selector": {"matchLabels": labels}, "template": {
                    "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    assert call(server, "POST", CLONESETS, cloneset)[0] == 201
    try:
        stored = orjson.loads(call(server, "GET", CLONESETS + "/shapes")[1])
        replaced = {**stored, "spec": {**stored["spec"], **spec["spec"]} if isinstance(spec["spec"], dict)
                    else spec["spec"]}
        field, value = next(iter(spec["spec"].items())) if isinstance(spec["spec"], dict) else ("", spec["spec"])
        pointer = "/spec" + (f"/{field}" if field else "")
        answers = [
            call(server, "PUT", CLONESETS + "/shapes", replaced),
            call(server, "PATCH", CLONESETS + "/shapes", spec, "application/merge-patch+json"),
            call(server, "PATCH", CLONESETS + "/shapes", [{"op": "replace" if not field else "add", "path": pointer,
                                                          "value": value}], JSON_PATCH),
        ]
        for status, answer in answers:
            assert status == 422, answer
    finally:
        assert call(server, "DELETE", CLONESETS + "/shapes")[0] == 200


def test_selector_lists_skip_labels_of_a_shape_no_write_could_store(server: ServerThread) -> None:
    # Issue #18 item 3: a stored ``labels: "x"`` (from a store written before typed decoding)
    # made every label-selector LIST of the type answer 500.
    from kubeloop.server.storage import ResourceType

    state = server.server.state
    assert state is not None
    odd = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "odd-labels", "namespace": "default", "uid": "odd", "labels": "x"}}
    server.run(lambda: state.storage.create(ResourceType("", "configmaps"), odd))
    try:
        for selector in ("a%3Db", "a", "!a", "a%20in%20(b)", "a%20notin%20(b)"):
            status, answer = call(server, "GET", CONFIGMAPS + "?labelSelector=" + selector)
            assert status == 200, answer
            names = [item["metadata"]["name"] for item in orjson.loads(answer)["items"]]
            assert ("odd-labels" in names) == (selector in ("!a", "a%20notin%20(b)"))
    finally:
        assert call(server, "DELETE", CONFIGMAPS + "/odd-labels")[0] == 200


def test_the_data_directory_is_private_to_its_owner(tmp_path: Path) -> None:
    # Issue #18 item 6: storage.sqlite3 and its -wal/-shm were 0644 in a 0755 directory, so any
    # local user could read Secrets out of the WAL. An older run's wider modes are narrowed too.
    import os
    import stat

    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    for name in ("storage.sqlite3-wal", "storage.sqlite3-shm"):
        (data_dir / name).touch(mode=0o644)
    previous = os.umask(0o022)
    try:
        thread = ServerThread(ServerConfig(data_dir=data_dir, port=0, memory=False))
        try:
            secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}}
            assert call(thread, "POST", "/api/v1/namespaces/default/secrets", secret)[0] == 201
            modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in data_dir.iterdir()}
        finally:
            thread.stop()
    finally:
        os.umask(previous)
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert {"storage.sqlite3", "storage.sqlite3-wal", "storage.sqlite3-shm", "token"} <= set(modes)
    assert modes == dict.fromkeys(modes, 0o600)


NAMESPACE_MISMATCH = "the namespace of the provided object does not match the namespace sent on the request"


def test_binding_and_scale_bodies_naming_another_namespace_are_400(server: ServerThread) -> None:
    # Issue #18 item 8: the body's namespace was silently ignored.
    pods, deployments = "/api/v1/namespaces/default/pods", "/apis/apps/v1/namespaces/default/deployments"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bind-me"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert call(server, "POST", pods, pod)[0] == 201
    labels = {"app": "scaled"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "scaled"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
                      "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    assert call(server, "POST", deployments, deployment)[0] == 201
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bind-me", "namespace": "other"},
               "target": {"kind": "Node", "name": "n"}}
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "scaled", "namespace": "other"},
             "spec": {"replicas": 3}}
    answers = [
        call(server, "POST", pods + "/bind-me/binding", binding),
        call(server, "PUT", deployments + "/scaled/scale", scale),
        call(server, "PATCH", deployments + "/scaled/scale", {"metadata": {"namespace": "other"}},
             "application/merge-patch+json"),
    ]
    for status, answer in answers:
        assert status == 400, answer
        assert orjson.loads(answer)["message"] == NAMESPACE_MISMATCH
    assert "nodeName" not in orjson.loads(call(server, "GET", pods + "/bind-me")[1])["spec"]
    assert orjson.loads(call(server, "GET", deployments + "/scaled")[1])["spec"]["replicas"] == 1
    # The same bodies in the URL's namespace are accepted.
    binding["metadata"]["namespace"] = scale["metadata"]["namespace"] = "default"
    assert call(server, "POST", pods + "/bind-me/binding", binding)[0] == 201
    assert call(server, "PUT", deployments + "/scaled/scale", scale)[0] == 200


def test_a_content_type_without_a_media_type_is_415(server: ServerThread) -> None:
    # Issue #18 item 8: ``;;;;`` was read as JSON; Go's mime.ParseMediaType refuses it.
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "semicolons"}}
    status, answer = call(server, "POST", CONFIGMAPS, body, ";;;;")
    assert status == 415, answer
    assert orjson.loads(answer)["reason"] == "UnsupportedMediaType"
    assert call(server, "POST", CONFIGMAPS, body, "application/json; charset=utf-8")[0] == 201


def raw_http1(server: ServerThread, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as bytes over TLS (HTTP/1.1); the status, headers and body of the answer."""
    import socket
    import ssl
    from urllib.parse import urlsplit

    context = ssl.create_default_context(cafile=server.ca_file)
    context.set_alpn_protocols(["http/1.1"])
    address = urlsplit(server.url)
    with socket.create_connection((address.hostname, address.port), timeout=20) as plain, \
            context.wrap_socket(plain, server_hostname=address.hostname) as conn:
        conn.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received and (chunk := conn.recv(65536)):
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
        while len(body) < int(headers.get("content-length", "0")) and (chunk := conn.recv(65536)):
            body += chunk
    return int(lines[0].split(" ")[1]), headers, body


@pytest.mark.parametrize("request_bytes", [
    b"GET /api HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
    b"FOO /api HTTP/1.1\r\nHost: x\r\n\r\n",
    b"CONNECT /api HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /api HTTP/1.1\r\nHost: x\r\nX-Nul: a\x00b\r\n\r\n",
], ids=["header-over-8KiB", "FOO", "CONNECT", "NUL"])
def test_unparseable_requests_get_a_status_and_no_traceback(server: ServerThread, request_bytes: bytes,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    # Issue #18 item 8: aiohttp's plain-text 400, and an ERROR traceback in the log for a NUL.
    status, headers, body = raw_http1(server, request_bytes)
    assert headers["content-type"].startswith("application/json")
    answer = orjson.loads(body)
    assert (answer["kind"], answer["status"], answer["code"]) == ("Status", "Failure", status)
    # CONNECT parses, and is refused by the server itself (anonymous: 403); the rest by the parser.
    assert status == (403 if request_bytes.startswith(b"CONNECT") else 400)
    assert not [record for record in caplog.records if record.levelno >= 40]


def test_a_dry_run_create_of_a_taken_name_is_409(server: ServerThread) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "taken"}}
    assert call(server, "POST", CONFIGMAPS, body)[0] == 201
    status, answer = call(server, "POST", CONFIGMAPS + "?dryRun=All", body)
    assert status == 409
    assert orjson.loads(answer)["message"] == 'configmaps "taken" already exists'
    assert call(server, "POST", CONFIGMAPS + "?dryRun=All", {**body, "metadata": {"name": "free"}})[0] == 201
    assert call(server, "GET", CONFIGMAPS + "/free")[0] == 404


def test_deleting_a_stored_pod_with_a_bad_status_shape_is_no_500(server: ServerThread) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "n1"}}
    assert call(server, "POST", "/api/v1/namespaces/default/pods", pod)[0] == 201

    def corrupt() -> None:
        # Written around admission, as an older server (or a hand-edited database) could have.
        state = server.server.state
        assert state is not None
        info = state.registry.lookup("", "v1", "pods")
        assert info is not None
        stored = state.storage.get(info.resource_type, "default", "odd")
        assert stored is not None
        state.storage.update(info.resource_type, {**stored, "status": "x"},
                             expected_rv=int(stored["metadata"]["resourceVersion"]))

    server.run(corrupt)
    status, _ = call(server, "DELETE", "/api/v1/namespaces/default/pods/odd")
    assert status == 200
