"""Serving basics: TLS, token, kubeconfig, health endpoints, default namespaces, discovery."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from server_harness import Cluster, ServerThread, make_api_client


def test_default_namespaces_exist_from_the_start(cluster: Cluster) -> None:
    names = {ns.metadata.name for ns in cluster.core.list_namespace().items}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
    assert cluster.core.read_namespace("default").status.phase == "Active"


def test_kubeconfig_is_private_and_names_the_server(cluster: Cluster) -> None:
    mode = stat.S_IMODE(cluster.kubeconfig.stat().st_mode)
    assert mode == 0o600
    document = yaml.safe_load(cluster.kubeconfig.read_text())
    assert document["clusters"][0]["cluster"]["server"] == cluster.server.url
    assert document["users"][0]["user"]["token"] == cluster.server.token
    assert cluster.server.url.startswith("https://127.0.0.1:")


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/version"])
def test_public_endpoints_need_no_token(cluster: Cluster, path: str) -> None:
    status, _, body = cluster.raw("GET", path, auth=False)
    assert status == 200
    if path == "/version":
        assert orjson.loads(body)["gitVersion"] == "v1.33.0"


@pytest.mark.parametrize("header", ["Bearer wrong", "bearer wrong", "Bearer wrong extra"])
def test_tokens_that_do_not_authenticate_get_401_status(cluster: Cluster, header: str) -> None:
    status, _, body = cluster.raw("GET", "/api/v1/namespaces", headers={"Authorization": header}, auth=False)
    assert status == 401
    assert orjson.loads(body) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_official_client_rejects_a_wrong_token(cluster: Cluster) -> None:
    configuration = client.Configuration()
    configuration.host = cluster.server.url
    configuration.ssl_ca_cert = cluster.server.ca_file
    configuration.api_key = {"authorization": "Bearer nope"}
    with client.ApiClient(configuration) as api, pytest.raises(ApiException) as caught:
        client.CoreV1Api(api).list_namespace()
    assert caught.value.status == 401


def test_token_and_ca_are_reused_across_restarts(start_server: Callable[..., ServerThread], tmp_path: Path) -> None:
    first = start_server(data_dir=tmp_path / "d", memory=False)
    token, ca = first.token, Path(first.ca_file).read_bytes()
    first.stop()
    second = start_server(data_dir=tmp_path / "d", memory=False)
    assert second.token == token
    assert Path(second.ca_file).read_bytes() == ca
    api = make_api_client(second.server.kubeconfig_path)
    try:
        assert client.CoreV1Api(api).read_namespace("kube-system").metadata.name == "kube-system"
    finally:
        api.close()


def test_discovery_lists_groups_resources_and_subresources(cluster: Cluster) -> None:
    groups = {g.name: g for g in client.ApisApi(cluster.api).get_api_versions().groups}
    assert {"apps", "events.k8s.io", "coordination.k8s.io", "apiextensions.k8s.io"} <= set(groups)
    assert groups["apps"].preferred_version.group_version == "apps/v1"
    assert client.CoreApi(cluster.api).get_api_versions().versions == ["v1"]
    apps = {r.name: r for r in cluster.apps.get_api_resources().resources}
    assert apps["deployments"].short_names == ["deploy"]
    assert apps["deployments"].categories == ["all"]
    assert apps["deployments/scale"].group == "autoscaling"
    assert apps["deployments/scale"].kind == "Scale"
    assert sorted(apps["replicasets/status"].verbs) == ["get", "patch", "update"]
    core = {r.name: r for r in cluster.core.get_api_resources().resources}
    assert core["namespaces"].namespaced is False
    assert "deletecollection" not in core["namespaces"].verbs
    assert core["pods"].short_names == ["po"]
    assert "pods/status" in core
    crds = {r.name: r for r in cluster.extensions.get_api_resources().resources}
    assert crds["customresourcedefinitions"].short_names == ["crd", "crds"]


def test_unknown_paths_answer_a_not_found_status(cluster: Cluster) -> None:
    for path in ("/apis/nope/v1", "/api/v2", "/api/v1/widgets", "/foo", "/apis/apps/v1/namespaces/default/x/y/z/w"):
        status, _, body = cluster.raw("GET", path)
        assert status == 404, path
        assert orjson.loads(body)["reason"] == "NotFound"


def test_readyz_follows_the_ready_check(tmp_path: Path) -> None:
    from kubeloop.server.app import ServerConfig

    ready = False
    server = ServerThread(ServerConfig(data_dir=tmp_path / "r", port=0, memory=True, ready_check=lambda: ready))
    try:
        api = make_api_client(server.server.kubeconfig_path)
        cluster = Cluster(server, api, server.server.kubeconfig_path)
        status, _, body = cluster.raw("GET", "/readyz", auth=False)
        assert status == 500 and b"readyz check failed" in body
        ready = True
        assert cluster.raw("GET", "/readyz", auth=False)[0] == 200
        api.close()
    finally:
        server.stop()
