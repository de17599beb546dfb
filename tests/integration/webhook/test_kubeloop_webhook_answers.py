"""The webhook's core answers as the embedded server's in-process admission does.

For each CloneSet (and pod) the same body is sent to an embedded server with OpenKruise's
admission in-process (dry run) and, as AdmissionReviews, to :func:`kubeloop.webhook.review.admit`:
the defaulting patch applied to the body gives the server's defaulted spec, and the webhook's
422 message is the server's field errors (the server prefixes ``CloneSet... is invalid: ``).
"""

from __future__ import annotations

import base64
import copy
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio

from kubeloop.api import kruise
from kubeloop.client import PODS, ApiClient, Invalid, NotFound, load_kubeconfig
from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.server.patch import apply_json_patch
from kubeloop.webhook.configuration import CLONESET_DEFAULTING, CLONESET_VALIDATION, POD_MUTATION, Route
from kubeloop.webhook.review import admit, pods_to_read

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLONESETS = f"clonesets.{kruise.GROUP}"
NAMESPACE = "default"
Obj = dict[str, Any]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ApiClient]:
    data_dir: Path = tmp_path_factory.mktemp("review")
    server = KubeServer(ServerConfig(data_dir=data_dir, port=0, memory=True))
    await server.start()
    try:
        async with ApiClient(load_kubeconfig(str(server.kubeconfig_path))) as api:
            yield api
    finally:
        await server.stop()


def cloneset(name: str, **spec: Any) -> Obj:
    labels = {"app": name}
    containers = [{"name": "app", "image": "nginx"}]
    body: Obj = {"selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}
    body.update(spec)
    return {"apiVersion": f"{kruise.GROUP}/{kruise.VERSION}", "kind": "CloneSet",
            "metadata": {"name": name, "namespace": NAMESPACE}, "spec": body}


def request(operation: str, obj: Obj, old: Obj | None = None, resource: str = "clonesets") -> Obj:
    sent: Obj = {"uid": "u-1", "operation": operation, "namespace": NAMESPACE,
                 "resource": {"group": "", "version": "v1", "resource": resource}, "object": obj}
    if old is not None:
        sent["oldObject"] = old
    return sent


def patch_of(response: Mapping[str, Any]) -> list[Obj]:
    if "patch" not in response:
        return []
    assert response["patchType"] == "JSONPatch"
    ops: list[Obj] = orjson.loads(base64.b64decode(response["patch"]))
    return ops


def defaulted_by_webhook(operation: str, obj: Obj, old: Obj | None = None) -> Obj:
    response = admit(CLONESET_DEFAULTING, request(operation, obj, old))
    assert response["allowed"] is True
    return apply_json_patch(copy.deepcopy(obj), patch_of(response))


async def validated_by_webhook(client: ApiClient, route: Route, sent: Obj) -> Obj:
    pods: dict[tuple[str, str], Obj | None] = {}
    for namespace, name in pods_to_read(route, sent):
        try:
            pods[(namespace, name)] = await client.get(PODS, name, namespace=namespace)
        except NotFound:
            pods[(namespace, name)] = None
    return admit(route, sent, lambda namespace, name: pods.get((namespace, name)))


def server_errors(error: Invalid, name: str) -> str:
    head = f'CloneSet.apps.kruise.io "{name}" is invalid: '
    assert error.message.startswith(head), error.message
    return error.message[len(head):]


DEFAULTING_CASES = {
    "minimal": cloneset("minimal"),
    "in-place with claims": cloneset(
        "in-place", replicas=3, updateStrategy={"type": "InPlaceIfPossible", "maxUnavailable": 2},
        volumeClaimTemplates=[{"metadata": {"name": "data"},
                               "spec": {"accessModes": ["ReadWriteOnce"],
                                        "resources": {"requests": {"storage": "1Gi"}}}}]),
    "partly set": cloneset("partly", revisionHistoryLimit=3, updateStrategy={"partition": "50%"}),
}


@pytest.mark.parametrize("body", DEFAULTING_CASES.values(), ids=DEFAULTING_CASES.keys())
async def test_create_defaults_patch_to_the_servers_object(client: ApiClient, body: Obj) -> None:
    stored = await client.create(CLONESETS, copy.deepcopy(body), namespace=NAMESPACE, dry_run=True)
    assert defaulted_by_webhook("CREATE", body)["spec"] == stored["spec"]


async def test_defaulted_object_gets_no_patch(client: ApiClient) -> None:
    stored = await client.create(CLONESETS, cloneset("again"), namespace=NAMESPACE, dry_run=True)
    response = admit(CLONESET_DEFAULTING, request("CREATE", stored))
    assert response == {"allowed": True, "status": {"metadata": {}, "code": 200}}


async def test_update_defaults_a_changed_template_as_the_server(client: ApiClient) -> None:
    old = await client.create(CLONESETS, cloneset("changed"), namespace=NAMESPACE)
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"] = [{"name": "app", "image": "nginx:2"},
                                                     {"name": "side", "image": "busybox"}]
    del new["spec"]["replicas"]
    updated = await client.update(CLONESETS, copy.deepcopy(new), namespace=NAMESPACE, dry_run=True)
    assert defaulted_by_webhook("UPDATE", new, old)["spec"] == updated["spec"]


INVALID_CASES = {
    "negative replicas": cloneset("negative", replicas=-1),
    "selector misses labels": {**cloneset("misses"), "spec": {**cloneset("misses")["spec"],
                                                              "selector": {"matchLabels": {"app": "other"}}}},
    "several errors": cloneset("several", updateStrategy={"type": "Sideways", "partition": "abc",
                                                          "maxUnavailable": 0}),
    "restart policy": {**cloneset("restart"), "spec": {**cloneset("restart")["spec"], "template": {
        "metadata": {"labels": {"app": "restart"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "app", "image": "nginx"}]}}}},
    "pod to delete missing": cloneset("missing", scaleStrategy={"podsToDelete": ["nope"]}),
    "pods to delete twice": cloneset("twice", scaleStrategy={"podsToDelete": ["a", "a"]}),
}


@pytest.mark.parametrize("body", INVALID_CASES.values(), ids=INVALID_CASES.keys())
async def test_create_denials_carry_the_servers_field_errors(client: ApiClient, body: Obj) -> None:
    name = body["metadata"]["name"]
    with pytest.raises(Invalid) as refused:
        await client.create(CLONESETS, copy.deepcopy(body), namespace=NAMESPACE, dry_run=True)
    # kube-apiserver calls the validating webhook with the object its mutating webhook defaulted.
    response = await validated_by_webhook(client, CLONESET_VALIDATION, request("CREATE", defaulted_by_webhook(
        "CREATE", body)))
    assert response == {"allowed": False,
                        "status": {"metadata": {}, "message": server_errors(refused.value, name), "code": 422}}


async def test_update_denial_carries_the_servers_field_errors(client: ApiClient) -> None:
    old = await client.create(CLONESETS, cloneset("reselect"), namespace=NAMESPACE)
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "reselect", "tier": "web"}}
    new["spec"]["updateStrategy"]["type"] = "InPlaceOnly"
    new["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    with pytest.raises(Invalid) as refused:
        await client.update(CLONESETS, copy.deepcopy(new), namespace=NAMESPACE, dry_run=True)
    defaulted = defaulted_by_webhook("UPDATE", new, old)
    response = await validated_by_webhook(client, CLONESET_VALIDATION, request("UPDATE", defaulted, old))
    assert response["allowed"] is False
    assert response["status"]["message"] == server_errors(refused.value, "reselect")


async def test_valid_cloneset_is_allowed_and_deletion_is_not_checked(client: ApiClient) -> None:
    stored = await client.create(CLONESETS, cloneset("fine"), namespace=NAMESPACE, dry_run=True)
    assert (await validated_by_webhook(client, CLONESET_VALIDATION, request("CREATE", stored)))["allowed"] is True
    assert admit(CLONESET_VALIDATION, request("DELETE", {}, stored))["allowed"] is True


def pod(name: str, *containers: Obj, annotations: Mapping[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": NAMESPACE}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": list(containers)}}


ORDERED = {kruise.CONTAINER_LAUNCH_PRIORITY_ANNOTATION: kruise.CONTAINER_LAUNCH_ORDERED}


def container(name: str, priority: str | None = None) -> Obj:
    body: Obj = {"name": name, "image": "busybox"}
    if priority is not None:
        body["env"] = [{"name": kruise.CONTAINER_PRIORITY_ENV, "value": priority}]
    return body


POD_CASES = {
    "ordered": pod("ordered", container("a"), container("b"), container("c"), annotations=ORDERED),
    "priority env": pod("by-env", container("a", "1"), container("b")),
}


@pytest.mark.parametrize("body", POD_CASES.values(), ids=POD_CASES.keys())
async def test_pod_barrier_env_is_the_servers(client: ApiClient, body: Obj) -> None:
    stored = await client.create(PODS, copy.deepcopy(body), namespace=NAMESPACE, dry_run=True)
    response = admit(POD_MUTATION, request("CREATE", body, resource="pods"))
    mutated = apply_json_patch(copy.deepcopy(body), patch_of(response))
    barrier = kruise.CONTAINER_BARRIER_ENV
    assert [[e for e in c.get("env", []) if e["name"] == barrier] for c in mutated["spec"]["containers"]] == [
        [e for e in c.get("env", []) if e["name"] == barrier] for c in stored["spec"]["containers"]]
    assert any(c.get("env") for c in mutated["spec"]["containers"])


async def test_a_server_without_kruise_admission_leaves_all_this_to_the_webhook(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    server = KubeServer(ServerConfig(data_dir=tmp_path_factory.mktemp("bare"), port=0, memory=True,
                                     kruise_admission=False))
    await server.start()
    try:
        async with ApiClient(load_kubeconfig(str(server.kubeconfig_path))) as bare:
            stored = await bare.create(CLONESETS, cloneset("bare", replicas=-1), namespace=NAMESPACE, dry_run=True)
            assert stored["spec"]["replicas"] == -1 and "updateStrategy" not in stored["spec"]
            made = await bare.create(PODS, copy.deepcopy(POD_CASES["ordered"]), namespace=NAMESPACE, dry_run=True)
            assert all("env" not in c for c in made["spec"]["containers"])
    finally:
        await server.stop()
