"""Namespace lifecycle over HTTP: Terminating, the namespace finalizer, finalize, default content.

Upstream references: pkg/registry/core/namespace/storage (DELETE, finalize),
pkg/controller/namespace/deletion (content deletion and conditions),
plugin/pkg/admission/namespace/lifecycle and plugin/pkg/admission/serviceaccount.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from server_harness import Cluster, ServerThread, make_api_client, raw_request

from kubeloop.server import namespace_content
from kubeloop.server.objects import create_object
from kubeloop.testing.polling import eventually_blocking

NS = "/api/v1/namespaces"



def _get(server: ServerThread, path: str) -> tuple[int, Any]:
    status, _, body = raw_request(server, "GET", path)
    return status, orjson.loads(body)


def _gone(server: ServerThread, name: str) -> bool:
    return _get(server, f"{NS}/{name}")[0] == 404


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def _condition(namespace: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [c for c in namespace["status"].get("conditions", []) if c["type"] == kind]
    assert len(found) == 1, namespace["status"]
    return dict(found[0])


def test_delete_marks_terminating_then_the_finalizer_empties_and_removes_it(cluster: Cluster) -> None:
    cluster.core.create_namespace({"metadata": {"name": "team"}})
    cluster.core.create_namespaced_config_map("team", {"metadata": {"name": "x"}})
    status, _, body = cluster.raw("DELETE", f"{NS}/team")
    answer = orjson.loads(body)
    assert status == 200
    assert answer["kind"] == "Namespace"
    assert answer["metadata"]["deletionTimestamp"]
    assert answer["status"]["phase"] == "Terminating"
    assert answer["spec"]["finalizers"] == ["kubernetes"]
    eventually_blocking(lambda: _gone(cluster.server, "team"), what="namespace team to go", timeout=30)
    assert cluster.core.list_namespaced_config_map("team").items == []
    assert cluster.core.list_namespaced_service_account("team").items == []


def test_create_in_a_terminating_namespace_is_forbidden(cluster: Cluster) -> None:
    cluster.core.create_namespace({"metadata": {"name": "team"}})
    cluster.core.create_namespaced_pod("team", {**_pod("held"), "metadata": {"name": "held", "finalizers": ["x/y"]}})
    cluster.core.delete_namespace("team")
    status, _, body = cluster.raw("POST", f"{NS}/team/configmaps", body=b'{"metadata":{"name":"late"}}')
    error = orjson.loads(body)
    assert status == 403
    assert error["message"] == ('configmaps "late" is forbidden: unable to create new content in namespace team '
                                "because it is being terminated")
    assert error["details"]["causes"] == [{"reason": "NamespaceTerminating",
                                           "message": "namespace team is being terminated",
                                           "field": "metadata.namespace"}]
    status, _, body = cluster.raw("POST", f"{NS}/team/configmaps", body=b'{"metadata":{"generateName":"g-"}}')
    assert status == 403 and orjson.loads(body)["message"].startswith('configmaps "g-" is forbidden')
    cluster.core.patch_namespaced_pod("held", "team", {"metadata": {"finalizers": None}})
    eventually_blocking(lambda: _gone(cluster.server, "team"), what="namespace team to go", timeout=30)


def test_a_pod_with_a_finalizer_holds_the_namespace_with_conditions(cluster: Cluster) -> None:
    cluster.core.create_namespace({"metadata": {"name": "team"}})
    cluster.core.create_namespaced_pod("team", {**_pod("held"), "metadata": {"name": "held", "finalizers": ["x/y"]}})
    cluster.core.create_namespaced_config_map("team", {"metadata": {"name": "kept"}})
    cluster.core.delete_namespace("team")

    def held() -> bool:
        found = _get(cluster.server, f"{NS}/team")[1]
        return any(c["type"] == "NamespaceFinalizersRemaining" and c["status"] == "True"
                   for c in found["status"].get("conditions", []))

    eventually_blocking(held, what="the finalizers-remaining condition", timeout=30)
    namespace = _get(cluster.server, f"{NS}/team")[1]
    assert namespace["status"]["phase"] == "Terminating"
    remaining = _condition(namespace, "NamespaceContentRemaining")
    assert (remaining["status"], remaining["reason"], remaining["message"]) == (
        "True", "SomeResourcesRemain", "Some resources are remaining: pods. has 1 resource instances")
    finalizers = _condition(namespace, "NamespaceFinalizersRemaining")
    assert (finalizers["reason"], finalizers["message"]) == (
        "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: x/y in 1 resource instances")
    for kind, reason in [("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered"),
                         ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions"),
                         ("NamespaceDeletionContentFailure", "ContentDeleted")]:
        condition = _condition(namespace, kind)
        assert (condition["status"], condition["reason"]) == ("False", reason)
    # Pods go first (OrderedNamespaceDeletion): the rest waits while a pod remains.
    assert cluster.core.read_namespaced_config_map("kept", "team").metadata.deletion_timestamp is None
    assert cluster.core.read_namespaced_pod("held", "team").metadata.deletion_timestamp is not None
    cluster.core.patch_namespaced_pod("held", "team", {"metadata": {"finalizers": None}})
    eventually_blocking(lambda: _gone(cluster.server, "team"), what="namespace team to go", timeout=30)
    assert cluster.core.list_namespaced_config_map("team").items == []


def test_finalize_subresource_and_spec_finalizers(cluster: Cluster) -> None:
    cluster.core.create_namespace({"metadata": {"name": "team"},
                                   "spec": {"finalizers": ["kubernetes", "example.com/f"]}})
    # The main endpoint cannot change spec.finalizers.
    cluster.core.patch_namespace("team", {"spec": {"finalizers": []}})
    assert cluster.core.read_namespace("team").spec.finalizers == ["kubernetes", "example.com/f"]
    status, _, _ = cluster.raw("GET", f"{NS}/team/finalize")
    assert status == 405
    cluster.core.delete_namespace("team")
    # The finalizer removes "kubernetes"; example.com/f keeps the namespace.
    eventually_blocking(lambda: _get(cluster.server, f"{NS}/team")[1]["spec"]["finalizers"] == ["example.com/f"],
                        what="the kubernetes finalizer to go", timeout=30)
    assert not _gone(cluster.server, "team")
    body = _get(cluster.server, f"{NS}/team")[1]
    body["spec"]["finalizers"] = []
    body["status"] = {"phase": "Active"}
    status, _, answer = cluster.raw("PUT", f"{NS}/team/finalize", body=orjson.dumps(body))
    assert status == 200, answer
    assert orjson.loads(answer)["status"]["phase"] == "Terminating"
    assert _gone(cluster.server, "team")


def test_immortal_namespaces_cannot_be_deleted(cluster: Cluster) -> None:
    for name in ("default", "kube-system", "kube-public"):
        status, _, body = cluster.raw("DELETE", f"{NS}/{name}")
        assert status == 403
        assert orjson.loads(body)["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'


def test_every_namespace_has_its_default_service_account_and_root_ca(cluster: Cluster) -> None:
    ca = Path(cluster.server.ca_file).read_text()
    cluster.core.create_namespace({"metadata": {"name": "team"}})
    for namespace in ("default", "kube-system", "kube-public", "kube-node-lease", "team"):
        assert cluster.core.read_namespaced_service_account("default", namespace).metadata.name == "default"
        config_map = cluster.core.read_namespaced_config_map("kube-root-ca.crt", namespace)
        assert config_map.data == {"ca.crt": ca}
    cluster.core.delete_namespaced_service_account("default", "team")
    cluster.core.delete_namespaced_config_map("kube-root-ca.crt", "team")
    eventually_blocking(lambda: _get(cluster.server, f"{NS}/team/serviceaccounts/default")[0] == 200,
                        what="the account to return", timeout=30)
    eventually_blocking(lambda: _get(cluster.server, f"{NS}/team/configmaps/kube-root-ca.crt")[0] == 200,
                        what="the CA to return", timeout=30)
    cluster.core.patch_namespaced_config_map("kube-root-ca.crt", "team", {"data": {"ca.crt": "tampered"}})
    eventually_blocking(lambda: _get(cluster.server, f"{NS}/team/configmaps/kube-root-ca.crt")[1]["data"]
                        == {"ca.crt": ca}, what="the CA data to be restored", timeout=30)


def test_pods_need_an_existing_service_account(cluster: Cluster) -> None:
    cluster.core.create_namespace({"metadata": {"name": "team"}})
    created = cluster.core.create_namespaced_pod("team", _pod("p"))
    assert created.spec.service_account_name == "default"
    with pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_pod("team", _pod("x", serviceAccountName="sa"))
    assert caught.value.status == 403
    assert orjson.loads(caught.value.body)["message"] == (
        'pods "x" is forbidden: error looking up service account team/sa: serviceaccount "sa" not found')
    cluster.core.create_namespaced_service_account("team", {"metadata": {"name": "sa"}})
    assert cluster.core.create_namespaced_pod("team", _pod("x", serviceAccountName="sa")).spec.service_account_name \
        == "sa"


def test_a_terminating_namespace_is_finished_after_a_restart(start_server: Callable[..., ServerThread],
                                                             tmp_path: Path) -> None:
    data = tmp_path / "persistent"
    first = start_server(data_dir=data, memory=False)
    api = make_api_client(first.server.kubeconfig_path)
    try:
        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "team"}})
        core.create_namespaced_pod("team", {**_pod("held"), "metadata": {"name": "held", "finalizers": ["x/y"]}})
        for index in range(20):
            core.create_namespaced_config_map("team", {"metadata": {"name": f"cm-{index}"}})
        core.delete_namespace("team")
        eventually_blocking(lambda: core.read_namespaced_pod("held", "team").metadata.deletion_timestamp is not None,
                            what="the pod to be deleted", timeout=30)
    finally:
        api.close()
    first.stop()
    second = start_server(data_dir=data, memory=False)
    status, namespace = _get(second, f"{NS}/team")
    assert status == 200 and namespace["status"]["phase"] == "Terminating"
    status, _, _ = raw_request(second, "PATCH", f"{NS}/team/pods/held",
                               headers={"Content-Type": "application/merge-patch+json"},
                               body=b'{"metadata":{"finalizers":null}}')
    assert status == 200
    eventually_blocking(lambda: _gone(second, "team"), what="namespace team to go after the restart", timeout=30)
    assert _get(second, f"{NS}/team/configmaps")[1]["items"] == []


def test_a_large_namespace_is_emptied_while_the_server_answers(cluster: Cluster,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The purge yields to the event loop between pages, so requests are answered part-way.

    The purge is held at its first page boundary inside the ConfigMaps (by a stand-in for the
    module's ``asyncio.sleep``) until the client has listed them: the answer must then show some
    but not all of them gone. Holding it makes the check independent of how fast this machine is.
    """
    count = 4000
    server = cluster.server
    state = server.server.state
    assert state is not None
    info = state.registry.lookup("", "v1", "configmaps")
    assert info is not None

    def fill() -> None:
        create_object(state, state.namespace_info(),
                      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "big"}}, dry_run=False)
        for index in range(count):
            create_object(state, info, {"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": f"cm-{index:05}", "namespace": "big"}}, dry_run=False)

    server.run(fill)
    before = cluster.core.list_namespaced_config_map("big", limit=1)
    assert len(before.items) + before.metadata.remaining_item_count == count + 1  # and kube-root-ca.crt

    released = threading.Event()
    held = threading.Event()

    async def held_sleep(delay: float) -> None:
        left = len(state.storage.list(info.resource_type, "big")[0])
        if not released.is_set() and 0 < left < count:
            held.set()
            await asyncio.to_thread(released.wait, 60)
        await asyncio.sleep(delay)

    monkeypatch.setattr(namespace_content, "asyncio", SimpleNamespace(sleep=held_sleep))
    cluster.core.delete_namespace("big")
    assert held.wait(60), "the purge never reached a page boundary inside the ConfigMaps"
    # The purge is paused between pages: this request is answered while it is part-way.
    listed = cluster.core.list_namespaced_config_map("big", limit=1)
    part_way = len(listed.items) + int(listed.metadata.remaining_item_count or 0)
    released.set()
    assert 0 < part_way < count
    eventually_blocking(lambda: _gone(server, "big"), what="namespace big to go", timeout=30)
    assert cluster.core.list_namespaced_config_map("big").items == []


# The kubectl releases 1.27-1.33 (1.32+ send protobuf).
KUBECTLS = [str(path) for minor in range(27, 34)
            if (path := Path(f"/usr/lib/google-cloud-sdk/bin/kubectl.1.{minor}")).exists()]


def _kubectl(binary: str, cluster: Cluster, tmp_path: Path, *args: str) -> list[str]:
    return [binary, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args]


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_shows_terminating_and_waits_for_the_namespace_to_go(cluster: Cluster, tmp_path: Path,
                                                                     binary: str) -> None:
    cluster.core.create_namespace({"metadata": {"name": "team"}})
    cluster.core.create_namespaced_pod("team", {**_pod("held"), "metadata": {"name": "held", "finalizers": ["x/y"]}})
    done = subprocess.run(_kubectl(binary, cluster, tmp_path, "delete", "ns", "team", "--wait=false"),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(_kubectl(binary, cluster, tmp_path, "get", "ns", "team"), capture_output=True, text=True,
                            timeout=60, check=False)
    assert listed.stdout.splitlines()[1].split()[:2] == ["team", "Terminating"], listed.stdout
    waiting = subprocess.Popen(_kubectl(binary, cluster, tmp_path, "delete", "ns", "team"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        eventually_blocking(lambda: cluster.core.read_namespace("team").status.phase == "Terminating",
                            what="the namespace", timeout=30)
        # While the pod holds the namespace, kubectl keeps waiting (a kubectl that did not wait
        # would have printed and exited by now).
        time.sleep(1.0)
        assert waiting.poll() is None
        cluster.core.patch_namespaced_pod("held", "team", {"metadata": {"finalizers": None}})
        out, err = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, err
    assert 'namespace "team" deleted' in out
    # kubectl returned only once the namespace was gone.
    assert _gone(cluster.server, "team")
