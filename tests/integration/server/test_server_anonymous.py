"""Requests without credentials are system:anonymous: 403 with RBAC's texts, public-info paths open."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from server_harness import Cluster

ANON = 'User "system:anonymous"'


def _forbidden(message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "Forbidden", "details": details, "code": 403}


@pytest.mark.parametrize(("method", "path", "headers", "message", "details"), [
    ("GET", "/api", {}, f'forbidden: {ANON} cannot get path "/api"', {}),
    ("GET", "/apis/apps/v1", {}, f'forbidden: {ANON} cannot get path "/apis/apps/v1"', {}),
    ("GET", "/openapi/v2", {}, f'forbidden: {ANON} cannot get path "/openapi/v2"', {}),
    ("POST", "/healthz/ping", {}, f'forbidden: {ANON} cannot post path "/healthz/ping"', {}),
    ("GET", "/api/v1/namespaces/default/pods", {},
     f'pods is forbidden: {ANON} cannot list resource "pods" in API group "" in the namespace "default"',
     {"kind": "pods"}),
    ("GET", "/api/v1/namespaces/default/pods?watch=true", {},
     f'pods is forbidden: {ANON} cannot watch resource "pods" in API group "" in the namespace "default"',
     {"kind": "pods"}),
    ("GET", "/api/v1/namespaces/default/pods/web/log", {},
     f'pods "web" is forbidden: {ANON} cannot get resource "pods/log" in API group "" in the namespace "default"',
     {"name": "web", "kind": "pods"}),
    ("GET", "/apis/apps/v1/deployments", {},
     f'deployments.apps is forbidden: {ANON} cannot list resource "deployments" in API group "apps" at the '
     "cluster scope", {"group": "apps", "kind": "deployments"}),
    ("DELETE", "/apis/apps/v1/namespaces/x/deployments", {"Authorization": "Basic abc"},
     f'deployments.apps is forbidden: {ANON} cannot deletecollection resource "deployments" in API group "apps" '
     'in the namespace "x"', {"group": "apps", "kind": "deployments"}),
    ("GET", "/api/v1/namespaces/kube-system", {"Authorization": "Bearer"},
     f'namespaces "kube-system" is forbidden: {ANON} cannot get resource "namespaces" in API group "" in the '
     'namespace "kube-system"', {"name": "kube-system", "kind": "namespaces"}),
    ("GET", "/api/v1/nodes?fieldSelector=metadata.name%3Dn1", {},
     f'nodes "n1" is forbidden: {ANON} cannot list resource "nodes" in API group "" at the cluster scope',
     {"name": "n1", "kind": "nodes"}),
])
def test_anonymous_requests_are_forbidden_with_rbac_texts(cluster: Cluster, method: str, path: str,
                                                          headers: dict[str, str], message: str,
                                                          details: dict[str, Any]) -> None:
    status, response_headers, body = cluster.raw(method, path, headers=headers, auth=False)
    assert status == 403
    assert response_headers["Content-Type"].startswith("application/json")
    assert body.endswith(b"\n")
    assert orjson.loads(body) == _forbidden(message, details)


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/version", "/version/"])
def test_public_info_paths_stay_open_to_anonymous(cluster: Cluster, path: str) -> None:
    status, _, _ = cluster.raw("GET", path, auth=False)
    assert status == 200


def test_a_bad_token_is_401_even_on_public_paths(cluster: Cluster) -> None:
    status, _, body = cluster.raw("GET", "/healthz", headers={"Authorization": "Bearer wrong"}, auth=False)
    assert status == 401 and orjson.loads(body)["reason"] == "Unauthorized"
