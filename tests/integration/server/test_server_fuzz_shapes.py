"""Wrong types at schema paths, out-of-range integers, deep nesting and YAML aliases and tags, on
every write verb and patch type, never produce a 5xx nor store what the server cannot serve back
(issue #18's fuzz suite, the shapes half; ``test_server_fuzz.py`` fuzzes paths and parameters).

Each example takes a valid object of one of the kinds the audit named, replaces the value at one
of its paths by a hostile one, and sends it as a create, an update, or a patch of each type.
After the run every collection must still LIST (JSON and Table) and WATCH, and every stored
object must survive a no-op update (which re-runs decoding and validation).
``KUBELOOP_FUZZ_EXAMPLES`` raises the example count for long local runs.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_harness import ServerThread, raw_request

EXAMPLES = int(os.environ.get("KUBELOOP_FUZZ_EXAMPLES", "250"))

LABELS = {"app": "fuzz"}
POD_SPEC = {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"cpu": "1"}}}], "securityContext": {"runAsUser": 1}}
KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "pod": ("/api/v1/namespaces/default/pods",
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "labels": LABELS}, "spec": POD_SPEC,
             "status": {"phase": "Pending"}}),
    "configmap": ("/api/v1/namespaces/default/configmaps",
                  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "annotations": {"a": "b"}},
                   "data": {"k": "v"}}),
    "node": ("/api/v1/nodes",
             {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}, "spec": {"unschedulable": False},
              "status": {"capacity": {"cpu": "4"}, "conditions": [{"type": "Ready", "status": "True"}]}}),
    "deployment": ("/apis/apps/v1/namespaces/default/deployments",
                   {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                    "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                             "strategy": {"rollingUpdate": {"maxSurge": 1}},
                             "template": {"metadata": {"labels": LABELS}, "spec": POD_SPEC}}}),
    "lease": ("/apis/coordination.k8s.io/v1/namespaces/default/leases",
              {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "x"},
               "spec": {"holderIdentity": "h", "leaseDurationSeconds": 10,
                        "renewTime": "2026-01-01T00:00:00.000000Z"}}),
    "cloneset": ("/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets",
                 {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "x"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                           "template": {"metadata": {"labels": LABELS}, "spec": POD_SPEC},
                           "updateStrategy": {"type": "InPlaceIfPossible", "partition": 0},
                           "scaleStrategy": {"podsToDelete": []}}}),
}
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"


def paths(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from paths(item, (*prefix, index))


MUTABLE_PATHS = {kind: [p for p in paths(body) if p[:2] != ("metadata", "name") and p[0] not in ("apiVersion", "kind")]
                 for kind, (_, body) in KINDS.items()}


def nested(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


hostile = st.one_of(
    st.sampled_from(["x", "", True, False, 1.5, -1, 0, [], {}, [1], {"a": 1}, None]),
    st.sampled_from([2**31 - 1, 2**31, -(2**31) - 1, 2**53, 2**63 - 1, 2**63, -(2**63) - 1, 10**30]),
    st.integers(30, 130).map(nested),
    st.text(max_size=8),
)

YAML_BODIES = [
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: {a: !!binary aGk=}\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: {a: 2001-12-14}\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: &d {a: b}\nx: *d\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\nx: &a [1, *a]\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: !!set {a, b}\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\nx: " + b"[" * 300 + b"]" * 300 + b"\n",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\nx:\n  a: &a [x,x,x,x,x,x,x,x,x,x]\n"
    + b"".join(f"  {c}: &{c} [{','.join(['*' + p] * 10)}]\n".encode() for p, c in zip("abcdef", "bcdefg")),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    from kubeloop.server.app import ServerConfig

    thread = ServerThread(ServerConfig(data_dir=tmp_path_factory.mktemp("fuzz") / "data", port=0, memory=True))
    try:
        for collection, body in KINDS.values():
            status, _, answer = raw_request(thread, "POST", collection, headers={"Content-Type": "application/json"},
                                            body=orjson.dumps(body))
            assert status == 201, answer
        yield thread
    finally:
        thread.stop()


def mutated(kind: str, path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    body = copy.deepcopy(KINDS[kind][1])
    parent: Any = body
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return body


def patch_for(body: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    """The merge patch that sets ``path`` to its value in ``body`` (lists are sent whole)."""
    head = path[0]
    return {head: body[head]} if not isinstance(head, int) else body


@st.composite
def hostile_requests(draw: st.DrawFn) -> tuple[str, str, str, bytes]:
    kind = draw(st.sampled_from(sorted(KINDS)))
    collection = KINDS[kind][0]
    path = draw(st.sampled_from(MUTABLE_PATHS[kind]))
    body = mutated(kind, path, draw(hostile))
    verb = draw(st.sampled_from(["create", "update", "merge", "strategic", "json-patch", "apply", "yaml"]))
    if verb == "yaml":
        return "POST", "/api/v1/namespaces/default/configmaps", "application/yaml", draw(st.sampled_from(YAML_BODIES))
    text = json.dumps(body).encode()  # the standard encoder writes integers of any size
    if verb == "create":
        if isinstance(body.get("metadata"), dict):
            body["metadata"]["name"] = draw(st.sampled_from(["a", "b", "c"]))
        return "POST", collection, "application/json", json.dumps(body).encode()
    if verb == "update":
        return "PUT", f"{collection}/x", "application/json", text
    if verb == "apply":
        return "PATCH", f"{collection}/x?fieldManager=fuzz&force=true", APPLY, text
    if verb == "json-patch":
        pointer = "/" + "/".join(str(p) for p in path)
        value = body
        for step in path:
            value = value[step]
        return "PATCH", f"{collection}/x", JSON_PATCH, json.dumps([{"op": "replace", "path": pointer,
                                                                     "value": value}]).encode()
    patch_type = MERGE if verb == "merge" or kind == "cloneset" else STRATEGIC
    return "PATCH", f"{collection}/x", patch_type, json.dumps(patch_for(body, path)).encode()


def test_hostile_shapes_never_fail_with_5xx_nor_poison_a_collection(server: ServerThread) -> None:
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(hostile_requests())
    def one_request(request: tuple[str, str, str, bytes]) -> None:
        method, path, content_type, body = request
        status, _, answer = raw_request(server, method, path, headers={"Content-Type": content_type}, body=body)
        assert status < 500, (method, path, content_type, body[:300], answer[:500])

    one_request()
    collections = [collection for collection, _ in KINDS.values()]
    for collection in collections:
        for accept in ("application/json", "application/json;as=Table;v=v1;g=meta.k8s.io"):
            status, _, answer = raw_request(server, "GET", collection, headers={"Accept": accept})
            assert status == 200, (collection, accept, answer[:300])
            orjson.loads(answer)
        status, _, answer = raw_request(server, "GET", collection + "?watch=1&timeoutSeconds=1")
        assert status == 200
        for line in answer.splitlines():
            orjson.loads(line)
        for item in orjson.loads(raw_request(server, "GET", collection)[2])["items"]:
            url = f"{collection}/{item['metadata']['name']}"
            status, _, answer = raw_request(server, "PUT", url, headers={"Content-Type": "application/json"},
                                            body=orjson.dumps(item))
            assert status == 200, (url, answer[:500])


