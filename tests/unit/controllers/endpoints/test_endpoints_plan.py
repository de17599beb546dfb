"""The Endpoints controller's pure core: which pods count, their addresses and ports, repacking,
labels, the trigger-time annotation and when nothing needs writing."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.controllers.endpoints.plan import desired_subsets, plan_endpoints
from kubeloop.controllers.endpointutil.pods import find_port, services_selecting, should_be_in_endpoints
from kubeloop.controllers.endpointutil.triggertime import TriggerTimeTracker

Obj = dict[str, Any]


def pod(name: str, ip: str | None = "10.244.0.1", *, ready: bool = True, labels: dict[str, str] | None = None,
        phase: str = "Running", deleting: bool = False, ports: list[Obj] | None = None,
        ready_since: str = "2024-05-01T10:00:00Z", **spec: Any) -> Obj:
    status: Obj = {"phase": phase, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ready_since}]}
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels or {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2024-05-01T11:00:00Z"
    return {"metadata": meta, "status": status,
            "spec": {"nodeName": "node-1", "containers": [{"name": "app", "ports": ports or []}], **spec}}


def service(ports: list[Obj] | None = None, **spec: Any) -> Obj:
    return {"metadata": {"name": "web", "namespace": "default", "uid": "svc-uid", "labels": {"team": "a"},
                         "creationTimestamp": "2024-05-01T09:00:00Z"},
            "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.0.10", "ipFamilies": ["IPv4"],
                     "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}] if ports is None else ports,
                     **spec}}


def address(name: str, ip: str, **extra: Any) -> Obj:
    return {"ip": ip, **extra, "nodeName": "node-1",
            "targetRef": {"kind": "Pod", "namespace": "default", "name": name, "uid": f"uid-{name}"}}


def test_ready_and_not_ready_pods_share_one_subset_per_port_set() -> None:
    pods = [pod("b", "10.244.0.2"), pod("a", "10.244.0.10"), pod("c", "10.244.0.3", ready=False)]
    assert desired_subsets(service(), pods) == [{
        "addresses": [address("b", "10.244.0.2"), address("a", "10.244.0.10")],
        "notReadyAddresses": [address("c", "10.244.0.3")],
        "ports": [{"port": 8080, "protocol": "TCP"}],
    }]


@pytest.mark.parametrize(("candidate", "include_terminating", "expected"), [
    (pod("p"), False, True),
    (pod("p", ip=None), False, False),
    (pod("p", phase="Succeeded"), True, False),
    (pod("p", phase="Failed"), True, False),
    (pod("p", deleting=True), False, False),
    (pod("p", deleting=True), True, True),
])
def test_which_pods_count(candidate: Obj, include_terminating: bool, expected: bool) -> None:
    assert should_be_in_endpoints(candidate, include_terminating) is expected


def test_publish_not_ready_addresses_lists_unready_and_terminating_pods_as_ready() -> None:
    pods = [pod("a", "10.244.0.1", ready=False), pod("b", "10.244.0.2", deleting=True)]
    assert desired_subsets(service(publishNotReadyAddresses=True), pods) == [{
        "addresses": [address("a", "10.244.0.1"), address("b", "10.244.0.2")],
        "ports": [{"port": 8080, "protocol": "TCP"}]}]
    assert desired_subsets(service(), pods) == [{
        "notReadyAddresses": [address("a", "10.244.0.1")], "ports": [{"port": 8080, "protocol": "TCP"}]}]


def test_named_target_ports_resolve_per_pod_and_split_subsets() -> None:
    svc = service([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "web"}])
    pods = [pod("a", "10.244.0.1", ports=[{"name": "web", "containerPort": 8080, "protocol": "TCP"}]),
            pod("b", "10.244.0.2", ports=[{"name": "web", "containerPort": 9090}]),
            pod("c", "10.244.0.3", ports=[{"name": "other", "containerPort": 7070}])]
    assert desired_subsets(svc, pods) == [
        {"addresses": [address("a", "10.244.0.1")], "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]},
        {"addresses": [address("b", "10.244.0.2")], "ports": [{"name": "http", "port": 9090, "protocol": "TCP"}]},
    ]


@pytest.mark.parametrize(("service_port", "expected"), [
    ({"targetPort": 8080}, 8080),
    ({"targetPort": "8081"}, 8081),
    ({"targetPort": "web", "protocol": "TCP"}, 9000),
    ({"targetPort": "web", "protocol": "UDP"}, None),
    ({"targetPort": "nope"}, None),
])
def test_find_port(service_port: Obj, expected: int | None) -> None:
    candidate = pod("p", ports=[{"name": "web", "containerPort": 9000, "protocol": "TCP"}])
    assert find_port(candidate, service_port) == expected


def test_headless_services_without_ports_list_bare_addresses_and_get_the_headless_label() -> None:
    svc = service([], clusterIP="None")
    pods = [pod("a", "10.244.0.1", hostname="a", subdomain="web")]
    written = plan_endpoints(svc, pods, None, None)
    assert written is not None
    assert written["subsets"] == [{"addresses": [address("a", "10.244.0.1", hostname="a")]}]
    assert written["metadata"]["labels"] == {"team": "a", "service.kubernetes.io/headless": "",
                                             "endpoints.kubernetes.io/managed-by": "endpoint-controller"}
    assert "annotations" not in written["metadata"]


def test_a_plan_is_empty_when_the_current_endpoints_are_right_and_carries_the_trigger_time_otherwise() -> None:
    svc = service()
    pods = [pod("a", "10.244.0.1")]
    first = plan_endpoints(svc, pods, None, "2024-05-01T10:00:00Z")
    assert first is not None
    assert first["metadata"]["annotations"] == {
        "endpoints.kubernetes.io/last-change-trigger-time": "2024-05-01T10:00:00Z"}
    assert first["metadata"]["name"] == "web" and first["metadata"]["namespace"] == "default"
    stored = {**first, "metadata": {**first["metadata"], "resourceVersion": "7"}}
    assert plan_endpoints(svc, pods, stored, None) is None
    relabelled = {**svc, "metadata": {**svc["metadata"], "labels": {"team": "b"}}}
    again = plan_endpoints(relabelled, pods, stored, None)
    assert again is not None
    assert again["metadata"]["resourceVersion"] == "7"
    assert again["metadata"]["labels"]["team"] == "b"
    assert "annotations" not in again["metadata"]
    emptied = plan_endpoints(svc, [], stored, "2024-05-01T11:00:00Z")
    assert emptied is not None and "subsets" not in emptied


def test_trigger_time_is_the_earliest_change_since_the_last_sync() -> None:
    tracker = TriggerTimeTracker()
    svc = service()
    a = pod("a", ready_since="2024-05-01T10:00:00Z")
    b = pod("b", ready_since="2024-05-01T10:05:00Z")
    # First sync: the Service itself is new, and is the earliest change.
    assert tracker.compute("default/web", svc, [a, b]) == "2024-05-01T09:00:00Z"
    assert tracker.compute("default/web", svc, [a, b]) is None
    b2 = pod("b", ready_since="2024-05-01T10:30:00Z")
    c = pod("c", ready_since="2024-05-01T10:20:00Z")
    assert tracker.compute("default/web", svc, [a, b2, c]) == "2024-05-01T10:20:00Z"
    tracker.forget("default/web")
    assert tracker.compute("default/web", svc, [a]) == "2024-05-01T09:00:00Z"


def test_services_selecting_a_pod_are_those_of_its_namespace_whose_selector_matches() -> None:
    match = service()
    other_namespace = {**service(), "metadata": {"name": "web", "namespace": "other"}}
    selectorless = {"metadata": {"name": "x", "namespace": "default"}, "spec": {}}
    external = {**service(), "spec": {**service()["spec"], "type": "ExternalName"}}
    mismatch = {**service(), "spec": {**service()["spec"], "selector": {"app": "db"}}}
    found = services_selecting(pod("a"), [match, other_namespace, selectorless, external, mismatch])
    assert found == [match]
