"""Controllers refuse to create pods their own selector would not match (issue #18 item 7: a
CloneSet whose template had no labels, written around admission, made 624 ownerless pods in
53 s). The bad objects are written straight into the store, as admission would refuse them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from controller_kit import NAMESPACE, ControllerRunner, list_pods, pod_template

from kubeloop.api import kruise
from kubeloop.client import EVENTS, REPLICA_SETS, ApiClient
from kubeloop.controllers.cloneset.control import CLONESETS
from kubeloop.server.app import KubeServer
from kubeloop.server.storage import ResourceType
from kubeloop.testing.polling import eventually

Obj = dict[str, Any]
LABELS = {"app": "guarded"}


def write_around_admission(server: KubeServer, rt: ResourceType, obj: Obj, template_labels: dict[str, str]) -> None:
    """Replace the stored object's template labels and scale it to 3, as no API write could."""
    assert server.state is not None
    spec = {**obj["spec"], "replicas": 3, "template": {**obj["spec"]["template"], "metadata": {
        "labels": template_labels} if template_labels else {}}}
    server.state.storage.update(rt, {**obj, "spec": spec})


async def failed_create_events(client: ApiClient, name: str) -> list[str]:
    listed = await client.list(EVENTS, namespace=NAMESPACE)
    return [event["message"] for event in listed["items"]
            if event["involvedObject"]["name"] == name and event["reason"] == "FailedCreate"]


@pytest.mark.parametrize(("template_labels", "message"), [
    ({}, "Error creating: unable to create pods, no labels"),
    ({"app": "other"}, "Error creating: unable to create pods, selector does not match template labels"),
])
async def test_a_replica_set_creates_no_pod_its_selector_would_not_match(
        server: KubeServer, client: ApiClient, runner: ControllerRunner, template_labels: dict[str, str],
        message: str) -> None:
    rs = await client.create(REPLICA_SETS, {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": NAMESPACE},
        "spec": {"replicas": 0, "selector": {"matchLabels": LABELS}, "template": pod_template(LABELS)}},
        namespace=NAMESPACE)
    write_around_admission(server, ResourceType("apps", "replicasets"), rs, template_labels)
    await runner.start("replicaset")
    events = await eventually(lambda: failed_create_events(client, "rs"), what="a FailedCreate event")
    assert events[0] == message
    await asyncio.sleep(0.5)  # the retry with back-off: still nothing created
    assert await list_pods(client) == []
    status = (await client.get(REPLICA_SETS, "rs", namespace=NAMESPACE)).get("status") or {}
    failure = [c for c in status.get("conditions") or [] if c["type"] == "ReplicaFailure"]
    assert failure and failure[0]["reason"] == "FailedCreate"


@pytest.mark.parametrize(("template_labels", "message"), [
    ({}, "failed to create pods: unable to create pods, selector does not match template labels"),
    ({"app": "other"}, "failed to create pods: unable to create pods, selector does not match template labels"),
])
async def test_a_cloneset_creates_no_pod_its_selector_would_not_match(
        server: KubeServer, client: ApiClient, runner: ControllerRunner, template_labels: dict[str, str],
        message: str) -> None:
    cs = await client.create(CLONESETS, {
        "apiVersion": kruise.API_VERSION, "kind": "CloneSet", "metadata": {"name": "cs", "namespace": NAMESPACE},
        "spec": {"replicas": 0, "selector": {"matchLabels": LABELS}, "template": pod_template(LABELS)}},
        namespace=NAMESPACE)
    write_around_admission(server, ResourceType("apps.kruise.io", "clonesets"), cs, template_labels)
    await runner.start("cloneset")
    events = await eventually(lambda: failed_create_events(client, "cs"), what="a FailedCreate event")
    assert events[0] == message
    await asyncio.sleep(0.5)
    assert await list_pods(client) == []
