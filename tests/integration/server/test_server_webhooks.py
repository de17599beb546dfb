"""Admission webhooks called by the embedded server, over HTTPS, as kube-apiserver calls them.

One API server and one webhook server (:mod:`webhook_harness`) for the module; each test
registers its own configurations, selecting its objects by a label or namespace of its own,
and removes them afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from server_harness import Cluster, ServerThread, make_api_client
from test_server_crd import GROUP, PLURAL, VERSION, widget, widget_crd
from test_server_objects import deployment, pod
from webhook_harness import SERVICE_NAME, SERVICE_NAMESPACE, WebhookServer

from kubeloop.server.app import ServerConfig
from kubeloop.server.storage import ResourceType

Obj = dict[str, Any]
TIMEOUT = 20


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    server = ServerThread(ServerConfig(data_dir=tmp_path_factory.mktemp("data"), port=0, memory=True))
    api = make_api_client(server.server.kubeconfig_path)
    try:
        yield Cluster(server, api, server.server.kubeconfig_path)
    finally:
        api.close()
        server.stop()


@pytest.fixture(scope="module")
def hooks(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebhookServer]:
    webhook = WebhookServer(cluster.server, tmp_path_factory.mktemp("hooks"))
    try:
        yield webhook
    finally:
        webhook.stop()


def rule(resources: list[str], operations: list[str] | None = None, groups: list[str] | None = None) -> Obj:
    return {"operations": operations or ["CREATE"], "apiGroups": groups if groups is not None else [""],
            "apiVersions": ["v1"], "resources": resources}


def webhook(name: str, client_config: Obj, rules: list[Obj], selector: str | None = None, **extra: Any) -> Obj:
    hook: Obj = {"name": name, "clientConfig": client_config, "rules": rules, "sideEffects": "None",
                 "admissionReviewVersions": ["v1"]}
    if selector is not None:
        hook["objectSelector"] = {"matchLabels": {"test": selector}}
    hook.update(extra)
    return hook


@contextlib.contextmanager
def configured(cluster: Cluster, mutating: Sequence[tuple[str, list[Obj]]] = (),
               validating: Sequence[tuple[str, list[Obj]]] = ()) -> Iterator[None]:
    api = client.AdmissionregistrationV1Api(cluster.api)
    for name, hooks in mutating:
        api.create_mutating_webhook_configuration({"metadata": {"name": name}, "webhooks": hooks})
    for name, hooks in validating:
        api.create_validating_webhook_configuration({"metadata": {"name": name}, "webhooks": hooks})
    try:
        yield
    finally:
        for name, _ in mutating:
            api.delete_mutating_webhook_configuration(name)
        for name, _ in validating:
            api.delete_validating_webhook_configuration(name)


def config_map(name: str, selector: str, data: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"test": selector}},
            "data": data or {"a": "1"}}


def status_of(caught: pytest.ExceptionInfo[ApiException]) -> Obj:
    body: Obj = orjson.loads(caught.value.body)
    return body


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_mutating_then_validating_with_the_patch_stored(cluster: Cluster, hooks: WebhookServer) -> None:
    with configured(cluster,
                    mutating=[("order-m", [webhook("m.order.example.com", hooks.client_config("/label/mutated"),
                                                   [rule(["configmaps"])], "order")])],
                    validating=[("order-v", [webhook("v.order.example.com", hooks.client_config("/require-mutated"),
                                                     [rule(["configmaps"])], "order")])]):
        status, headers, body = cluster.raw("POST", "/api/v1/namespaces/default/configmaps",
                                            headers={"Content-Type": "application/json"},
                                            body=orjson.dumps(config_map("ordered", "order")))
        assert status == 201, body
        assert headers.get("Warning") == '299 - "labelled mutated"'
        stored = cluster.core.read_namespaced_config_map("ordered", "default")
        assert stored.metadata.labels == {"test": "order", "mutated": "yes"}
        mutated_request = hooks.seen("/label/mutated")[-1]["request"]
        validated_request = hooks.seen("/require-mutated")[-1]["request"]
        generated = config_map("", "order")
        generated["metadata"] = {"generateName": "gen-", "labels": {"test": "order"}}
        named = cluster.core.create_namespaced_config_map("default", generated).metadata.name
    generated_request = hooks.seen("/label/mutated")[-1]["request"]
    assert named.startswith("gen-") and "name" not in generated_request
    assert "name" not in generated_request["object"]["metadata"]
    assert hooks.seen("/require-mutated")[-1]["request"]["name"] == named
    assert validated_request["object"]["metadata"]["labels"]["mutated"] == "yes"
    assert mutated_request["object"]["metadata"]["labels"] == {"test": "order"}
    # Mutating webhooks run before upstream's BeforeCreate, validating ones after it.
    assert "uid" not in mutated_request["object"]["metadata"]
    assert "creationTimestamp" not in mutated_request["object"]["metadata"]
    assert validated_request["object"]["metadata"]["uid"] == stored.metadata.uid
    for field in ("uid", "userInfo", "options"):
        assert field in mutated_request
    assert {key: mutated_request[key] for key in (
        "kind", "resource", "requestKind", "requestResource", "name", "namespace", "operation", "dryRun",
        "oldObject", "options")} == {
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
        "name": "ordered", "namespace": "default", "operation": "CREATE", "dryRun": False, "oldObject": None,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}}
    assert mutated_request["userInfo"]["username"] == "kubernetes-admin"
    assert mutated_request["uid"] != validated_request["uid"]


def test_server_side_apply_creates_then_updates_through_webhooks(cluster: Cluster, hooks: WebhookServer) -> None:
    path = "/api/v1/namespaces/default/configmaps/applied?fieldManager=tester"
    apply = {"Content-Type": "application/apply-patch+yaml"}
    before = len(hooks.seen("/label/applied"))
    rules = [rule(["configmaps"], ["CREATE", "UPDATE"])]
    with configured(cluster, mutating=[("apply", [webhook("apply.example.com", hooks.client_config("/label/applied"),
                                                          rules, "apply")])]):
        for data in ("1", "2"):
            status, _, raw = cluster.raw("PATCH", path, headers=apply, body=orjson.dumps(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "labels": {"test": "apply"}},
                 "data": {"a": data}}))
            assert status in (200, 201), raw
    calls = [review["request"] for review in hooks.seen("/label/applied")[before:]]
    assert [(c["operation"], c["options"]) for c in calls] == [
        ("CREATE", {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"}),
        ("UPDATE", {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"})]
    stored = cluster.core.read_namespaced_config_map("applied", "default")
    assert stored.data == {"a": "2"} and stored.metadata.labels["applied"] == "yes"


def test_reinvocation_if_needed(cluster: Cluster, hooks: WebhookServer) -> None:
    # "a-first" (IfNeeded) runs before "b-second", whose change makes it run once more.
    before = len(hooks.seen("/label/first"))
    with configured(cluster, mutating=[
            ("a-first", [webhook("first.reinvoke.example.com", hooks.client_config("/label/first"),
                                 [rule(["configmaps"])], "reinvoke", reinvocationPolicy="IfNeeded")]),
            ("b-second", [webhook("second.reinvoke.example.com", hooks.client_config("/label/second"),
                                  [rule(["configmaps"])], "reinvoke")])]):
        cluster.core.create_namespaced_config_map("default", config_map("reinvoked", "reinvoke"))
    calls = hooks.seen("/label/first")[before:]
    assert len(calls) == 2
    assert "second" in calls[1]["request"]["object"]["metadata"]["labels"]
    labels = cluster.core.read_namespaced_config_map("reinvoked", "default").metadata.labels
    assert labels == {"test": "reinvoke", "first": "yes", "second": "yes"}


def test_denial_passes_the_webhook_status(cluster: Cluster, hooks: WebhookServer) -> None:
    with configured(cluster, validating=[("deny", [webhook("deny.example.com", hooks.client_config("/deny"),
                                                           [rule(["configmaps"])], "deny")])],
                    mutating=[("deny-warn", [webhook("warn.deny.example.com", hooks.client_config("/label/warned"),
                                                     [rule(["configmaps"])], "deny")])]):
        with pytest.raises(ApiException) as caught:
            cluster.core.create_namespaced_config_map("default", config_map("denied", "deny"))
        # Objects the selector does not pick are not sent.
        cluster.core.create_namespaced_config_map("default", config_map("allowed", "other"))
    assert caught.value.status == 403
    assert caught.value.headers["Warning"] == '299 - "labelled warned"'
    assert status_of(caught) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                 "message": 'admission webhook "deny.example.com" denied the request: no thanks',
                                 "reason": "Forbidden", "code": 403}
    with pytest.raises(ApiException) as missing:
        cluster.core.read_namespaced_config_map("denied", "default")
    assert missing.value.status == 404


def test_failure_policy_with_a_webhook_that_is_down(cluster: Cluster, hooks: WebhookServer) -> None:
    port = closed_port()
    down = {"url": f"https://127.0.0.1:{port}/down", "caBundle": hooks.ca_bundle}
    with configured(cluster, validating=[("down", [
            webhook("fail.down.example.com", down, [rule(["configmaps"])], "down-fail", failurePolicy="Fail"),
            webhook("ignore.down.example.com", down, [rule(["configmaps"])], "down-ignore", failurePolicy="Ignore")])]):
        with pytest.raises(ApiException) as caught:
            cluster.core.create_namespaced_config_map("default", config_map("refused", "down-fail"))
        cluster.core.create_namespaced_config_map("default", config_map("ignored", "down-ignore"))
    assert caught.value.status == 500
    body = status_of(caught)
    text = (f'failed calling webhook "fail.down.example.com": failed to call webhook: Post '
            f'"https://127.0.0.1:{port}/down?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused')
    assert (body["reason"], body["message"]) == ("InternalError", f"Internal error occurred: {text}")
    assert body["details"] == {"causes": [{"message": text}]}


def test_a_slow_webhook_times_out(cluster: Cluster, hooks: WebhookServer) -> None:
    slow = webhook("slow.example.com", hooks.client_config("/slow"), [rule(["configmaps"])], "slow", timeoutSeconds=1)
    with configured(cluster, validating=[("slow", [slow])]), pytest.raises(ApiException) as caught:
        # The client gives up long before the webhook would answer: only the server's bound ends it.
        cluster.core.create_namespaced_config_map("default", config_map("slow", "slow"), _request_timeout=15)
    assert caught.value.status == 500
    assert status_of(caught)["message"] == (
        f'Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post '
        f'"{hooks.url("/slow")}?timeout=1s": context deadline exceeded')


def test_a_webhook_answering_garbage(cluster: Cluster, hooks: WebhookServer) -> None:
    garbage = webhook("garbage.example.com", hooks.client_config("/garbage"), [rule(["configmaps"])], "garbage")
    failing = webhook("error.example.com", hooks.client_config("/error"), [rule(["configmaps"])], "error")
    with configured(cluster, mutating=[("garbage", [garbage, failing])]):
        with pytest.raises(ApiException) as caught:
            cluster.core.create_namespaced_config_map("default", config_map("garbage", "garbage"))
        with pytest.raises(ApiException) as errored:
            cluster.core.create_namespaced_config_map("default", config_map("error", "error"))
    assert caught.value.status == 500
    assert status_of(caught)["message"].startswith(
        'Internal error occurred: failed calling webhook "garbage.example.com": failed to call webhook: '
        "couldn't get version/kind; json parse error: ")
    assert status_of(errored)["message"] == (
        'Internal error occurred: failed calling webhook "error.example.com": failed to call webhook: '
        'an error on the server ("boom") has prevented the request from succeeding')


def test_a_patch_of_the_wrong_type(cluster: Cluster, hooks: WebhookServer) -> None:
    bad = webhook("bad.type.example.com", hooks.client_config("/bad-type"), [rule(["configmaps"])], "badtype")
    with configured(cluster, mutating=[("badtype", [bad])]), pytest.raises(ApiException) as caught:
        cluster.core.create_namespaced_config_map("default", config_map("badtype", "badtype"))
    body = status_of(caught)
    assert (caught.value.status, body["reason"]) == (500, "InternalError")
    assert body["message"].startswith("Internal error occurred: json: cannot unmarshal string into Go struct field")


def test_a_webhook_with_an_unknown_ca(cluster: Cluster, hooks: WebhookServer) -> None:
    noca = webhook("noca.example.com", {"url": hooks.url("/allow")}, [rule(["configmaps"])], "noca")
    bad = webhook("bad.ca.example.com", {"url": hooks.url("/allow"), "caBundle": "bm90IGEgY2VydA=="},
                  [rule(["configmaps"])], "badca")
    with configured(cluster, validating=[("noca", [noca, bad])]):
        with pytest.raises(ApiException) as caught:
            cluster.core.create_namespaced_config_map("default", config_map("noca", "noca"))
        with pytest.raises(ApiException) as unparsable:
            cluster.core.create_namespaced_config_map("default", config_map("badca", "badca"))
    assert status_of(caught)["message"].endswith(
        "tls: failed to verify certificate: x509: certificate signed by unknown authority")
    assert status_of(unparsable)["message"] == (
        'Internal error occurred: failed calling webhook "bad.ca.example.com": could not get REST client: '
        "unable to load root certificates: unable to parse bytes as PEM block")


def test_namespace_selector(cluster: Cluster, hooks: WebhookServer) -> None:
    for name, team in (("team-a", "a"), ("team-b", "b")):
        cluster.core.create_namespace({"metadata": {"name": name, "labels": {"team": team}}})
    deny_a = webhook("ns.deny.example.com", hooks.client_config("/deny"),
                     [rule(["configmaps", "namespaces"], ["CREATE", "DELETE"])],
                     namespaceSelector={"matchLabels": {"team": "a"}})
    with configured(cluster, validating=[("ns", [deny_a])]):
        with pytest.raises(ApiException) as caught:
            cluster.core.create_namespaced_config_map("team-a", {"metadata": {"name": "c"}})
        cluster.core.create_namespaced_config_map("team-b", {"metadata": {"name": "c"}})
        # A namespace is selected by its own labels.
        with pytest.raises(ApiException) as namespace_denied:
            cluster.core.create_namespace({"metadata": {"name": "team-a2", "labels": {"team": "a"}}})
        cluster.core.create_namespace({"metadata": {"name": "team-c", "labels": {"team": "c"}}})
        # Its DELETE: by its stored labels, the namespace being its own.
        with pytest.raises(ApiException) as delete_denied:
            cluster.core.delete_namespace("team-a")
        cluster.core.delete_namespace("team-c")
    assert caught.value.status == 403 and namespace_denied.value.status == 403 and delete_denied.value.status == 403
    assert hooks.seen("/deny")[-1]["request"]["namespace"] == "team-a"


def test_subresources_scale_and_status(cluster: Cluster, hooks: WebhookServer) -> None:
    cluster.apps.create_namespaced_deployment("default", deployment("scaled"))
    cluster.core.create_namespaced_pod("default", pod("statused", labels={"test": "status"}))
    scale_rule = rule(["deployments/scale"], ["UPDATE"], ["apps"])
    status_rule = rule(["pods/status"], ["UPDATE"])
    with configured(cluster, mutating=[("scale", [webhook("scale.example.com", hooks.client_config("/replicas"),
                                                          [scale_rule])])],
                    validating=[("status", [webhook("status.example.com", hooks.client_config("/deny-failed-phase"),
                                                    [status_rule], "status")])]):
        scaled = cluster.apps.patch_namespaced_deployment_scale("scaled", "default", {"spec": {"replicas": 2}})
        with pytest.raises(ApiException) as caught:
            cluster.core.patch_namespaced_pod_status("statused", "default", {"status": {"phase": "Failed"}})
        running = cluster.core.patch_namespaced_pod_status("statused", "default", {"status": {"phase": "Running"}})
        # The main resource is not the status subresource: the rule does not select it.
        cluster.core.patch_namespaced_pod("statused", "default", {"metadata": {"annotations": {"a": "b"}}})
    assert scaled.spec.replicas == 7
    assert cluster.apps.read_namespaced_deployment("scaled", "default").spec.replicas == 7
    request = hooks.seen("/replicas")[-1]["request"]
    assert (request["kind"], request["resource"], request["subResource"], request["requestSubResource"]) == (
        {"group": "autoscaling", "version": "v1", "kind": "Scale"},
        {"group": "apps", "version": "v1", "resource": "deployments"}, "scale", "scale")
    assert (request["object"]["spec"]["replicas"], request["oldObject"]["spec"]["replicas"]) == (2, 1)
    assert caught.value.status == 400
    assert status_of(caught)["message"] == (
        'admission webhook "status.example.com" denied the request: phase Failed refused')
    assert running.status.phase == "Running"
    status_requests = hooks.seen("/deny-failed-phase")
    assert len(status_requests) == 2 and status_requests[-1]["request"]["subResource"] == "status"


def test_binding_and_eviction_are_sent_as_such(cluster: Cluster, hooks: WebhookServer) -> None:
    for name in ("bound", "evicted"):
        cluster.core.create_namespaced_pod("default", pod(name))
    with configured(cluster, mutating=[("binding", [webhook("binding.example.com", hooks.client_config("/binding"),
                                                            [rule(["pods/binding"])])])],
                    validating=[("eviction", [webhook("eviction.example.com", hooks.client_config("/deny"),
                                                      [rule(["pods/eviction"], groups=[""])])])]):
        bound, _, _ = cluster.raw("POST", "/api/v1/namespaces/default/pods/bound/binding", body=orjson.dumps(
            {"metadata": {"name": "bound"}, "target": {"kind": "Node", "name": "node-a"}}),
                                  headers={"Content-Type": "application/json"})
        evicted, _, raw = cluster.raw("POST", "/api/v1/namespaces/default/pods/evicted/eviction", body=orjson.dumps(
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "evicted"}}),
                                      headers={"Content-Type": "application/json"})
    assert bound == 201
    assert cluster.core.read_namespaced_pod("bound", "default").spec.node_name == "node-b"
    binding = hooks.seen("/binding")[-1]["request"]
    assert (binding["kind"], binding["subResource"], binding["operation"]) == (
        {"group": "", "version": "v1", "kind": "Binding"}, "binding", "CREATE")
    assert evicted == 403, raw
    eviction = hooks.seen("/deny")[-1]["request"]
    assert (eviction["kind"]["kind"], eviction["subResource"], eviction["name"]) == ("Eviction", "eviction", "evicted")
    assert cluster.core.read_namespaced_pod("evicted", "default").metadata.deletion_timestamp is None


def test_delete_and_deletecollection(cluster: Cluster, hooks: WebhookServer) -> None:
    cluster.core.create_namespace({"metadata": {"name": "deleting"}})
    for name in ("one", "two"):
        cluster.core.create_namespaced_config_map("deleting", config_map(name, "delete"))
    before = len(hooks.seen("/label/never"))
    with configured(cluster, mutating=[("delete-m", [webhook("m.delete.example.com",
                                                             hooks.client_config("/label/never"),
                                                             [rule(["configmaps"], ["DELETE"])], "delete")])],
                    validating=[("delete-v", [webhook("v.delete.example.com", hooks.client_config("/deny"),
                                                      [rule(["configmaps"], ["DELETE"])], "delete")])]):
        with pytest.raises(ApiException) as caught:
            cluster.core.delete_namespaced_config_map("one", "deleting", propagation_policy="Background")
        with pytest.raises(ApiException) as collection:
            cluster.core.delete_collection_namespaced_config_map("deleting", label_selector="test=delete")
    assert caught.value.status == 403 and collection.value.status == 403
    calls = hooks.seen("/label/never")[before:]
    request = calls[0]["request"]
    assert (request["operation"], request["object"], request["oldObject"]["metadata"]["name"]) == (
        "DELETE", None, "one")
    assert request["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                  "propagationPolicy": "Background"}
    per_item = calls[1]["request"]
    assert "name" not in per_item and per_item["namespace"] == "deleting"
    assert per_item["oldObject"]["metadata"]["labels"]["test"] == "delete"
    assert len(cluster.core.list_namespaced_config_map("deleting", label_selector="test=delete").items) == 2
    # The denied delete left the object as it was: the mutating webhook's patch is not applied.
    assert "never" not in (cluster.core.read_namespaced_config_map("one", "deleting").metadata.labels or {})


def test_dry_run_reaches_webhooks_without_side_effects(cluster: Cluster, hooks: WebhookServer) -> None:
    with configured(cluster, mutating=[("dry", [webhook("dry.example.com", hooks.client_config("/label/dry"),
                                                        [rule(["configmaps"])], "dry", sideEffects="NoneOnDryRun")])]):
        answered = cluster.core.create_namespaced_config_map("default", config_map("dry", "dry"), dry_run="All")
    assert answered.metadata.labels == {"test": "dry", "dry": "yes"}
    request = hooks.seen("/label/dry")[-1]["request"]
    assert request["dryRun"] is True and request["options"]["dryRun"] == ["All"]
    with pytest.raises(ApiException) as caught:
        cluster.core.read_namespaced_config_map("dry", "default")
    assert caught.value.status == 404


def test_a_webhook_with_side_effects_refuses_dry_run(cluster: Cluster, hooks: WebhookServer) -> None:
    # v1 validation admits only None and NoneOnDryRun; a configuration from before (v1beta1 allowed
    # Unknown and Some) is written to the store directly.
    configuration = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                     "metadata": {"name": "effects"},
                     "webhooks": [webhook("effects.example.com", hooks.client_config("/allow"), [rule(["configmaps"])],
                                          "effects", sideEffects="Unknown", failurePolicy="Ignore")]}
    rt = ResourceType("admissionregistration.k8s.io", "validatingwebhookconfigurations")
    server = cluster.server.server
    assert server.state is not None
    state = server.state
    cluster.server.run(lambda: state.storage.create(rt, configuration))
    try:
        with pytest.raises(ApiException) as caught:
            cluster.core.create_namespaced_config_map("default", config_map("effects", "effects"), dry_run="All")
        cluster.core.create_namespaced_config_map("default", config_map("effects", "effects"))
    finally:
        client.AdmissionregistrationV1Api(cluster.api).delete_validating_webhook_configuration("effects")
    # Not subject to the failure policy: a 400, as upstream.
    assert caught.value.status == 400
    assert status_of(caught)["message"] == 'admission webhook "effects.example.com" does not support dry run'


def test_service_through_an_external_name_to_localhost(cluster: Cluster, hooks: WebhookServer) -> None:
    cluster.core.create_namespace({"metadata": {"name": SERVICE_NAMESPACE}})
    cluster.core.create_namespaced_service(SERVICE_NAMESPACE, {
        "metadata": {"name": SERVICE_NAME}, "spec": {"type": "ExternalName", "externalName": "localhost"}})
    service = {"service": {"namespace": SERVICE_NAMESPACE, "name": SERVICE_NAME, "path": "/label/service",
                           "port": hooks.port}, "caBundle": hooks.ca_bundle}
    missing = {"service": {"namespace": SERVICE_NAMESPACE, "name": "absent", "path": "/x", "port": hooks.port},
               "caBundle": hooks.ca_bundle}
    with configured(cluster, mutating=[("svc", [
            webhook("svc.example.com", service, [rule(["configmaps"])], "svc"),
            webhook("absent.example.com", missing, [rule(["configmaps"])], "absent")])]):
        created = cluster.core.create_namespaced_config_map("default", config_map("svc", "svc"))
        with pytest.raises(ApiException) as caught:
            cluster.core.create_namespaced_config_map("default", config_map("absent", "absent"))
    assert created.metadata.labels["service"] == "yes"
    assert status_of(caught)["message"] == (
        f'Internal error occurred: failed calling webhook "absent.example.com": failed to call webhook: Post '
        f'"https://absent.{SERVICE_NAMESPACE}.svc:{hooks.port}/x?timeout=10s": service "absent" not found')


def test_v1beta1_only_webhook_and_a_custom_resource(cluster: Cluster, hooks: WebhookServer) -> None:
    beta = webhook("beta.example.com", hooks.client_config("/v1beta1"), [rule(["configmaps"])], "beta",
                   admissionReviewVersions=["v1beta1"])
    with configured(cluster, mutating=[("beta", [beta])]):
        created = cluster.core.create_namespaced_config_map("default", config_map("beta", "beta"))
    assert created.metadata.labels["beta"] == "yes"
    assert hooks.seen("/v1beta1")[-1]["apiVersion"] == "admission.k8s.io/v1beta1"


def test_equivalent_match_policy_calls_at_the_webhook_version(cluster: Cluster, hooks: WebhookServer) -> None:
    v1_rule = {"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v1"],
               "resources": ["horizontalpodautoscalers"]}
    cpu = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "equivalent", "labels": {"test": "equivalent"}},
          "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                   "maxReplicas": 3, "metrics": [cpu]}}
    exact = webhook("exact.example.com", hooks.client_config("/deny"), [v1_rule], "equivalent", matchPolicy="Exact")
    with configured(cluster, mutating=[("equivalent", [webhook("hpa.example.com", hooks.client_config("/hpa-v1"),
                                                               [v1_rule], "equivalent")])],
                    validating=[("exact", [exact])]):
        status, _, raw = cluster.raw("POST", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
                                     headers={"Content-Type": "application/json"}, body=orjson.dumps(v2))
    assert status == 201, raw
    request = hooks.seen("/hpa-v1")[-1]["request"]
    assert (request["kind"]["version"], request["requestKind"]["version"], request["resource"]["version"]) == (
        "v1", "v2", "v1")
    assert request["object"]["spec"]["targetCPUUtilizationPercentage"] == 60
    answered = orjson.loads(raw)
    assert answered["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 77


def test_a_custom_resource_is_patched_then_defaulted_again(cluster: Cluster, hooks: WebhookServer) -> None:
    cluster.extensions.create_custom_resource_definition(widget_crd())
    body = widget("mutated", replicas=3)
    body["metadata"]["labels"] = {"test": "widget"}
    crd_rule = {"operations": ["CREATE"], "apiGroups": [GROUP], "apiVersions": ["*"], "resources": [PLURAL]}
    with configured(cluster, mutating=[("widget", [webhook("widget.example.com", hooks.client_config("/widget"),
                                                           [crd_rule], "widget")])]):
        created = cluster.custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
    assert created["spec"] == {"size": 1, "replicas": 1, "color": "blue"}
    request = hooks.seen("/widget")[-1]["request"]
    assert request["kind"] == {"group": GROUP, "version": VERSION, "kind": "Widget"}


def test_a_patch_racing_a_webhook_is_applied_again(cluster: Cluster, hooks: WebhookServer) -> None:
    cluster.core.create_namespaced_config_map("default", config_map("repatched", "repatch"))
    outcome: list[Any] = []
    hooks.arm()

    def patch() -> None:
        outcome.append(cluster.core.patch_namespaced_config_map("repatched", "default", {"data": {"hold": "yes"}}))

    with configured(cluster, validating=[("repatch", [webhook("repatch.example.com", hooks.client_config("/hold"),
                                                              [rule(["configmaps"], ["UPDATE"])], "repatch",
                                                              timeoutSeconds=30)])]):
        writer = threading.Thread(target=patch)
        writer.start()
        try:
            assert hooks.held.wait(TIMEOUT)
            cluster.core.patch_namespaced_config_map("repatched", "default", {"data": {"b": "2"}})
        finally:
            hooks.release()
            writer.join(TIMEOUT)
    assert outcome and outcome[0].data == {"a": "1", "b": "2", "hold": "yes"}
    assert [r["request"]["object"]["data"] for r in hooks.seen("/hold")][-1] == {"a": "1", "b": "2", "hold": "yes"}


def test_a_write_racing_a_webhook_conflicts(cluster: Cluster, hooks: WebhookServer) -> None:
    created = cluster.core.create_namespaced_config_map("default", config_map("raced", "race"))
    hooks.arm()
    body = cluster.api.sanitize_for_serialization(created)
    body["data"] = {"hold": "yes"}
    outcome: list[Any] = []

    def replace() -> None:
        try:
            outcome.append(cluster.core.replace_namespaced_config_map("raced", "default", body))
        except ApiException as error:
            outcome.append(error)

    with configured(cluster, validating=[("race", [webhook("race.example.com", hooks.client_config("/hold"),
                                                           [rule(["configmaps"], ["UPDATE"])], "race",
                                                           timeoutSeconds=30)])]):
        writer = threading.Thread(target=replace)
        writer.start()
        try:
            assert hooks.held.wait(TIMEOUT)
            cluster.core.patch_namespaced_config_map("raced", "default", {"data": {"b": "2"}})
        finally:
            hooks.release()
            writer.join(TIMEOUT)
    assert isinstance(outcome[0], ApiException) and outcome[0].status == 409
    assert cluster.core.read_namespaced_config_map("raced", "default").data == {"a": "1", "b": "2"}


KUBECTLS = sorted({path for path in ("/usr/lib/google-cloud-sdk/bin/kubectl.1.33",
                                      *os.environ.get("KUBELOOP_KUBECTL", "").split(os.pathsep))
                   if path and Path(path).exists()} | ({shutil.which("kubectl")} - {None}))[:1]


@pytest.mark.e2e
@pytest.mark.parametrize("binary", KUBECTLS)
def test_kubectl_prints_webhook_warnings(cluster: Cluster, hooks: WebhookServer, tmp_path: Path,
                                         binary: str) -> None:
    with configured(cluster, mutating=[("warn", [webhook("warn.example.com", hooks.client_config("/label/kubectl"),
                                                         [rule(["configmaps"])])])]):
        done = subprocess.run([binary, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir", str(tmp_path),
                               "create", "configmap", "warned", "--from-literal=a=b"],
                              capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Warning: labelled kubectl" in done.stderr
