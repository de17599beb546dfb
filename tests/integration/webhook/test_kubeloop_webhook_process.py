"""``kubeloop webhook`` as a process, under a ServiceAccount with exactly the webhook's rules,
called by an embedded server with RBAC enforced and without OpenKruise's in-process admission
(``ServerConfig(kruise_admission=False)``, as a real kube-apiserver): every CloneSet default,
CloneSet denial and pod barrier env seen here can only have come from the webhook.

The Service the configurations name is an ``ExternalName`` to ``localhost`` and the
configurations' ``service.port`` is the process's port (docs/webhooks.md: how a webhook on this
machine is reached by service); everything else is :func:`webhook_configurations` as installed.
"""

from __future__ import annotations

import asyncio
import base64
import signal
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import yaml
from process_harness import KubeloopProcess, free_port

from kubeloop.api import kruise
from kubeloop.client import PODS, SECRETS, ApiClient, ApiException, load_kubeconfig
from kubeloop.server.app import KubeServer, ServerConfig
from kubeloop.webhook.configuration import (
    CERT_SECRET,
    CLONESET_DEFAULTING,
    CLONESET_VALIDATION,
    MUTATING_CONFIGURATION,
    POD_MUTATION,
    SERVICE_NAME,
    VALIDATING_CONFIGURATION,
    WEBHOOK_CLUSTER_RULES,
    WEBHOOK_NAMESPACE_RULES,
    webhook_configurations,
)
from kubeloop.webhook.provision import MUTATING, VALIDATING

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(180)]

NAMESPACE = "kubeloop-system"
ACCOUNT = "kubeloop-webhook"
CLONESETS = f"clonesets.{kruise.GROUP}"
RBAC = "rbac.authorization.k8s.io/v1"
Obj = dict[str, Any]


@dataclass
class Setup:
    server: KubeServer
    admin: ApiClient
    kubeconfig: Path
    port: int
    cert_dir: Path


async def _grant(admin: ApiClient) -> None:
    """The ServiceAccount, with WEBHOOK_CLUSTER_RULES cluster-wide and WEBHOOK_NAMESPACE_RULES in NAMESPACE."""
    subject = [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": NAMESPACE}]
    await admin.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    await admin.create("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                           "metadata": {"name": ACCOUNT, "namespace": NAMESPACE}}, namespace=NAMESPACE)
    await admin.create("clusterroles", {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": ACCOUNT},
                                        "rules": list(WEBHOOK_CLUSTER_RULES)})
    await admin.create("clusterrolebindings", {
        "apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": ACCOUNT}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ACCOUNT}})
    await admin.create("roles", {"apiVersion": RBAC, "kind": "Role",
                                 "metadata": {"name": ACCOUNT, "namespace": NAMESPACE},
                                 "rules": list(WEBHOOK_NAMESPACE_RULES)}, namespace=NAMESPACE)
    await admin.create("rolebindings", {
        "apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": ACCOUNT, "namespace": NAMESPACE},
        "subjects": subject, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ACCOUNT}},
        namespace=NAMESPACE)


async def _token_kubeconfig(admin: ApiClient, server: KubeServer, path: Path) -> Path:
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "metadata": {"name": ACCOUNT, "namespace": NAMESPACE}, "spec": {"expirationSeconds": 3600}}
    answer = await admin.create("serviceaccounts", request, namespace=NAMESPACE, subresource="token")
    assert server.credentials is not None
    text = yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "webhook",
        "clusters": [{"name": "embedded", "cluster": {"server": server.url,
                                                       "certificate-authority": str(server.credentials.ca_cert)}}],
        "users": [{"name": ACCOUNT, "user": {"token": answer["status"]["token"]}}],
        "contexts": [{"name": "webhook", "context": {"cluster": "embedded", "user": ACCOUNT}}]})
    await asyncio.to_thread(path.write_text, text)
    return path


async def _install(admin: ApiClient, port: int) -> None:
    await admin.create("services", {"apiVersion": "v1", "kind": "Service",
                                    "metadata": {"name": SERVICE_NAME, "namespace": NAMESPACE},
                                    "spec": {"type": "ExternalName", "externalName": "localhost"}},
                       namespace=NAMESPACE)
    for configuration in webhook_configurations(NAMESPACE):
        for hook in configuration["webhooks"]:
            hook["clientConfig"]["service"]["port"] = port
        resource = MUTATING if configuration["kind"] == "MutatingWebhookConfiguration" else VALIDATING
        await admin.create(resource, configuration)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Setup]:
    directory = tmp_path_factory.mktemp("webhook")
    server = KubeServer(ServerConfig(data_dir=directory / "data", port=0, memory=True, kruise_admission=False))
    await server.start()
    try:
        async with ApiClient(load_kubeconfig(str(server.kubeconfig_path))) as admin:
            await _grant(admin)
            port = free_port()
            await _install(admin, port)
            kubeconfig = await _token_kubeconfig(admin, server, directory / "webhook.kubeconfig")
            yield Setup(server, admin, kubeconfig, port, directory / "certs")
    finally:
        await server.stop()


def start(setup: Setup, *extra: str) -> KubeloopProcess:
    return KubeloopProcess("webhook", "--kubeconfig", str(setup.kubeconfig), "--namespace", NAMESPACE,
                           "--port", str(setup.port), "--cert-dir", str(setup.cert_dir), *extra)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def webhook(setup: Setup) -> AsyncIterator[KubeloopProcess]:
    process = start(setup)
    try:
        # The process talks to the server on this loop: wait for it off the loop.
        await asyncio.to_thread(process.wait_for_line, "kubeloop webhook serving on port", 60)
        yield process
    finally:
        process.close()


def cloneset(name: str, **spec: Any) -> Obj:
    labels = {"app": name}
    body: Obj = {"selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}
    body.update(spec)
    return {"apiVersion": f"{kruise.GROUP}/{kruise.VERSION}", "kind": "CloneSet",
            "metadata": {"name": name, "namespace": "default"}, "spec": body}


async def test_secret_is_created_and_its_ca_is_every_webhooks_bundle(setup: Setup,
                                                                     webhook: KubeloopProcess) -> None:
    secret = await setup.admin.get(SECRETS, CERT_SECRET, namespace=NAMESPACE)
    assert {"ca-cert.pem", "ca-key.pem", "cert.pem", "key.pem", "tls.crt", "tls.key"} <= set(secret["data"])
    bundles = []
    for resource, name in ((MUTATING, MUTATING_CONFIGURATION), (VALIDATING, VALIDATING_CONFIGURATION)):
        configuration = await setup.admin.get(resource, name)
        bundles += [hook["clientConfig"].get("caBundle") for hook in configuration["webhooks"]]
    assert len(bundles) == 3 and set(bundles) == {secret["data"]["ca-cert.pem"]}


async def test_cloneset_is_defaulted_by_the_webhook(setup: Setup, webhook: KubeloopProcess) -> None:
    stored = await setup.admin.create(CLONESETS, cloneset("plain"), namespace="default")
    spec = stored["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"]) == (1, 10)
    assert spec["updateStrategy"] == {"type": "ReCreate", "partition": 0, "maxUnavailable": "20%", "maxSurge": 0}
    container = spec["template"]["spec"]["containers"][0]
    assert (container["terminationMessagePath"], container["imagePullPolicy"]) == ("/dev/termination-log", "Always")


async def test_cloneset_is_refused_with_the_webhooks_field_errors(setup: Setup, webhook: KubeloopProcess) -> None:
    with pytest.raises(ApiException) as refused:
        await setup.admin.create(CLONESETS, cloneset("negative", replicas=-1), namespace="default")
    assert refused.value.code == 422
    assert refused.value.message == (f'admission webhook "{CLONESET_VALIDATION.name}" denied the request: '
                                     "spec.replicas: Invalid value: -1: must be greater than or equal to 0")
    # podsToDelete reads pods with the webhook's own identity.
    with pytest.raises(ApiException) as refused:
        await setup.admin.create(CLONESETS, cloneset("missing", scaleStrategy={"podsToDelete": ["nope"]}),
                                 namespace="default")
    assert refused.value.message.endswith('spec.scaleStrategy.podsToDelete: Invalid value: "nope": '
                                          'find pod nope failed: pods "nope" not found')


async def test_ordered_pod_gets_one_barrier_env_per_container(setup: Setup, webhook: KubeloopProcess) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "ordered", "namespace": "default",
                        "annotations": {kruise.CONTAINER_LAUNCH_PRIORITY_ANNOTATION: kruise.CONTAINER_LAUNCH_ORDERED}},
           "spec": {"containers": [{"name": "first", "image": "busybox"}, {"name": "second", "image": "busybox"}]}}
    stored = await setup.admin.create(PODS, pod, namespace="default")
    envs = [container.get("env") for container in stored["spec"]["containers"]]
    assert envs == [[{"name": kruise.CONTAINER_BARRIER_ENV,
                      "valueFrom": {"configMapKeyRef": {"name": "ordered-barrier", "key": f"p_{priority}"}}}]
                    for priority in (0, -1)]
    # A pod with only generateName is named by the webhook, and keeps that name: its barrier's.
    del pod["metadata"]["name"]
    pod["metadata"]["generateName"] = "drawn-"
    stored = await setup.admin.create(PODS, pod, namespace="default")
    barrier = stored["spec"]["containers"][1]["env"][0]["valueFrom"]["configMapKeyRef"]
    name = stored["metadata"]["name"]
    assert name.startswith("drawn-") and barrier["name"] == f"{name}-barrier"


async def _get(setup: Setup, path: str) -> str:
    secret = await setup.admin.get(SECRETS, CERT_SECRET, namespace=NAMESPACE)
    context = ssl.create_default_context(cadata=base64.b64decode(secret["data"]["ca-cert.pem"]).decode())
    context.check_hostname = False  # the certificate names the Service; the test dials loopback
    async with aiohttp.ClientSession() as session, session.get(f"https://127.0.0.1:{setup.port}{path}",
                                                               ssl=context) as response:
        assert response.status == 200
        return await response.text()


async def test_every_route_was_called_and_health_answers(setup: Setup, webhook: KubeloopProcess) -> None:
    assert await _get(setup, "/healthz") == "ok" and await _get(setup, "/readyz") == "ok"
    metrics = await _get(setup, "/metrics")
    for route in (CLONESET_DEFAULTING, CLONESET_VALIDATION, POD_MUTATION):
        assert f'path="{route.path}",allowed="true"' in metrics
    assert f'path="{CLONESET_VALIDATION.path}",allowed="false",code="422"' in metrics


async def test_sigterm_stops_cleanly_and_a_restart_keeps_secret_and_bundles(setup: Setup,
                                                                            webhook: KubeloopProcess) -> None:
    def versions(*objects: Obj) -> list[str]:
        return [o["metadata"]["resourceVersion"] for o in objects]

    async def current() -> list[str]:
        return versions(await setup.admin.get(SECRETS, CERT_SECRET, namespace=NAMESPACE),
                        await setup.admin.get(MUTATING, MUTATING_CONFIGURATION),
                        await setup.admin.get(VALIDATING, VALIDATING_CONFIGURATION))

    before = await current()
    assert await asyncio.to_thread(webhook.signal, signal.SIGTERM) == 0
    output = webhook.all_output()
    assert "kubeloop webhook stopped" in output[-1]
    # Zero RBAC denials: nothing the process did was refused.
    assert not [line for line in output if "403" in line or "orbidden" in line], output
    again = start(setup, "--resync-period", "0.2")
    try:
        await asyncio.to_thread(again.wait_for_line, "kubeloop webhook serving on port", 60)
        assert await current() == before
        stored = await setup.admin.create(CLONESETS, cloneset("after-restart"), namespace="default")
        assert stored["spec"]["replicas"] == 1
        # A configuration re-applied without its caBundle gets it back at the next check.
        configuration = await setup.admin.get(MUTATING, MUTATING_CONFIGURATION)
        bundle = configuration["webhooks"][0]["clientConfig"].pop("caBundle")
        await setup.admin.update(MUTATING, configuration)
        for _ in range(100):
            configuration = await setup.admin.get(MUTATING, MUTATING_CONFIGURATION)
            if configuration["webhooks"][0]["clientConfig"].get("caBundle") == bundle:
                break
            await asyncio.sleep(0.1)
        assert configuration["webhooks"][0]["clientConfig"].get("caBundle") == bundle
    finally:
        again.close()
