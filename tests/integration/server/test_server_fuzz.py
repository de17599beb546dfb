"""Random requests never produce a 500, and never leave an object behind that fails validation.

Paths are built from real resource paths with random names, subresources and junk segments;
bodies are random JSON documents (often object-shaped like real ones), random bytes, or huge;
query strings mix real parameter names with random values; content types are drawn from the
ones clients send plus junk. After the run every stored object must survive a no-op update
(which re-runs validation) with 200.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import quote

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_harness import ServerThread, raw_request

COLLECTIONS = [
    "/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/configmaps", "/api/v1/namespaces",
    "/api/v1/nodes", "/api/v1/namespaces/default/secrets", "/api/v1/namespaces/default/events",
    "/api/v1/namespaces/default/serviceaccounts", "/api/v1/namespaces/default/persistentvolumeclaims",
    "/apis/apps/v1/namespaces/default/deployments", "/apis/apps/v1/namespaces/default/replicasets",
    "/apis/apps/v1/namespaces/default/controllerrevisions", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
    "/apis/events.k8s.io/v1/namespaces/default/events", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "/api/v1/pods", "/apis/apps/v1/deployments",
]
PARAMETERS = ["watch", "labelSelector", "fieldSelector", "limit", "continue", "resourceVersion",
              "resourceVersionMatch", "timeoutSeconds", "dryRun", "gracePeriodSeconds", "propagationPolicy",
              "orphanDependents", "allowWatchBookmarks", "junk"]
CONTENT_TYPES = [None, "application/json", "application/yaml", "application/json-patch+json",
                 "application/merge-patch+json", "application/strategic-merge-patch+json",
                 "application/apply-patch+yaml", "text/plain", "application/vnd.kubernetes.protobuf", "!!"]
NAMES = st.sampled_from(["a", "web", "x-1", "Bad_Name", "", "%20", "..", "a" * 300, "default"])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
field_names = st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status", "data", "name", "namespace",
                               "labels", "finalizers", "replicas", "selector", "containers", "resourceVersion",
                               "generateName", "uid", "deletionTimestamp", "template", "image"])
shaped = st.recursive(json_values, lambda children: st.dictionaries(field_names, children, max_size=5), max_leaves=30)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, dict[str, str], bytes | None]:
    path = draw(st.sampled_from(COLLECTIONS))
    if draw(st.booleans()):
        path += "/" + quote(draw(NAMES), safe="")
        if draw(st.booleans()):
            path += "/" + draw(st.sampled_from(["status", "scale", "log", "x", ""]))
    if draw(st.integers(0, 9)) == 0:
        path += "/" + quote(draw(st.text(max_size=8)), safe="")
    pairs = draw(st.lists(st.tuples(st.sampled_from(PARAMETERS), st.text(max_size=12)), max_size=4))
    if pairs:
        path += "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in pairs)
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]))
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    headers = {"Content-Type": content_type} if content_type else {}
    kind = draw(st.integers(0, 9))
    body: bytes | None
    if kind == 0:
        body = None
    elif kind == 1:
        body = draw(st.binary(max_size=64))
    elif kind == 2:
        body = b'{"metadata":{"name":"big"},"data":{"a":"' + b"x" * (3 * 1024 * 1024 + 10) + b'"}}'
    else:
        # The standard encoder, because it writes integers of any size (orjson refuses them).
        body = json.dumps(draw(shaped) if kind > 5 else draw(json_values)).encode()
    return method, path, headers, body


def test_random_requests_never_fail_with_500(start_server: Callable[..., ServerThread]) -> None:
    server = start_server()

    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(requests())
    def one_request(request: tuple[str, str, dict[str, str], bytes | None]) -> None:
        method, path, headers, body = request
        status, _, answer = raw_request(server, method, path, headers=headers, body=body)
        assert status < 500, (method, path, headers, body, answer[:500])
        if status >= 400 and method != "HEAD":
            decoded = orjson.loads(answer)
            assert decoded["kind"] == "Status" and decoded["code"] == status

    one_request()
    _every_stored_object_still_validates(server)


def _every_stored_object_still_validates(server: ServerThread) -> None:
    for collection in COLLECTIONS:
        if collection in ("/api/v1/pods", "/apis/apps/v1/deployments"):
            continue
        status, _, body = raw_request(server, "GET", collection)
        assert status == 200
        for item in orjson.loads(body)["items"]:
            url = f"{collection}/{quote(item['metadata']['name'], safe='')}"
            status, _, answer = raw_request(server, "PUT", url, body=orjson.dumps(item))
            assert status == 200, (url, answer[:500])
