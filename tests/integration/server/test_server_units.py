"""Tables for the server's pure pieces: query parsing, routing, generation rules, watch filtering."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.app import build_registry
from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.registry import ResourceInfo
from kubeloop.server.requests import (
    decode_continue,
    delete_options,
    encode_continue,
    parse_bool,
    parse_int,
)
from kubeloop.server.routing import DiscoveryTarget, Target, resolve
from kubeloop.server.storage import Storage, WatchEvent
from kubeloop.server.strategy import bump_generation, generate_name, is_finalized_deletion, pod_qos_class
from kubeloop.server.watch import filtered_line

INFOS = {(i.group, i.resource): i for i in BUILTIN_RESOURCES}


@pytest.mark.parametrize(("text", "value"), [
    ("1", True), ("t", True), ("T", True), ("TRUE", True), ("true", True), ("True", True),
    ("0", False), ("f", False), ("F", False), ("FALSE", False), ("false", False), ("False", False),
])
def test_parse_bool_accepts_what_go_accepts(text: str, value: bool) -> None:
    assert parse_bool("watch", text) is value


@pytest.mark.parametrize("text", ["yes", "tRUE", "", " true", "2"])
def test_parse_bool_refuses_the_rest(text: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_bool("watch", text)
    assert caught.value.code == 400


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("-5", -5), ("+7", 7), ("9223372036854775807", 2**63 - 1)])
def test_parse_int(text: str, value: int) -> None:
    assert parse_int("limit", text) == value


@pytest.mark.parametrize("text", ["", "1.5", "abc", "9223372036854775808", "\u0661"])
def test_parse_int_refuses(text: str) -> None:
    with pytest.raises(ApiError):
        parse_int("limit", text)


def test_continue_tokens_round_trip_and_reject_junk() -> None:
    token = encode_continue(42, "default", "web-1")
    decoded = decode_continue(token, namespaced=True)
    assert (decoded.rv, decoded.namespace, decoded.name) == (42, "default", "web-1")
    assert decode_continue(encode_continue(3, "", "node-1"), namespaced=False).name == "node-1"
    for junk in ("%%%", "e30", token[:-3]):
        with pytest.raises(ApiError) as caught:
            decode_continue(junk, namespaced=True)
        assert caught.value.code == 400


@pytest.mark.parametrize(("body", "query", "policy", "grace"), [
    (None, {}, None, None),
    (None, {"propagationPolicy": "Foreground", "gracePeriodSeconds": "3"}, "Foreground", 3),
    (None, {"orphanDependents": "true"}, "Orphan", None),
    ({"propagationPolicy": "Background"}, {"propagationPolicy": "Orphan"}, "Background", None),
    ({"orphanDependents": False}, {}, "Background", None),
    ({"gracePeriodSeconds": 0}, {}, None, 0),
])
def test_delete_options_from_body_or_query(body: Any, query: dict[str, str], policy: str | None,
                                           grace: int | None) -> None:
    options = delete_options(body, query, [])
    assert (options.propagation_policy, options.grace_period_seconds) == (policy, grace)


def test_delete_options_refuse_both_orphan_and_policy() -> None:
    with pytest.raises(ApiError) as caught:
        delete_options({"orphanDependents": True, "propagationPolicy": "Background"}, {}, [])
    assert caught.value.code == 422


@pytest.mark.parametrize(("path", "resource", "namespace", "name", "subresource"), [
    ("/api/v1/namespaces/default/pods", "pods", "default", None, None),
    ("/api/v1/pods", "pods", None, None, None),
    ("/api/v1/namespaces/default/pods/p/status", "pods", "default", "p", "status"),
    ("/api/v1/namespaces/default", "namespaces", None, "default", None),
    ("/api/v1/namespaces/default/status", "namespaces", None, "default", "status"),
    ("/api/v1/namespaces", "namespaces", None, None, None),
    ("/apis/apps/v1/namespaces/x/deployments/web/scale", "deployments", "x", "web", "scale"),
    ("/api/v1/nodes/n1", "nodes", None, "n1", None),
])
def test_routing(path: str, resource: str, namespace: str | None, name: str | None, subresource: str | None) -> None:
    target = resolve(build_registry(Storage.open(None, memory=True)), path)
    assert isinstance(target, Target)
    assert (target.info.resource, target.namespace, target.name, target.subresource) == (
        resource, namespace, name, subresource)


@pytest.mark.parametrize("path", ["/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1"])
def test_routing_discovery(path: str) -> None:
    assert isinstance(resolve(build_registry(Storage.open(None, memory=True)), path), DiscoveryTarget)


@pytest.mark.parametrize("path", ["/", "/api/v2", "/apis/apps/v2/deployments", "/api/v1/namespaces/x/nodes",
                                  "/api/v1/namespaces/d/configmaps/c/status", "/api/v1/pods/p",
                                  "/apis/apps/v1/namespaces/d/controllerrevisions/r/scale", "/api/v1/widgets"])
def test_routing_unknown_paths(path: str) -> None:
    with pytest.raises(ApiError) as caught:
        resolve(build_registry(Storage.open(None, memory=True)), path)
    assert caught.value.code == 404


def _obj(spec: Any = None, annotations: Any = None, generation: int = 1, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "x", "generation": generation}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec or {}, **extra}


@pytest.mark.parametrize(("resource", "old", "new", "generation"), [
    (("apps", "deployments"), _obj({"replicas": 1}), _obj({"replicas": 2}), 2),
    (("apps", "deployments"), _obj(), _obj(annotations={"a": "b"}), 2),
    (("apps", "deployments"), _obj(), _obj(status={"replicas": 3}), 1),
    (("apps", "replicasets"), _obj(), _obj(annotations={"a": "b"}), 1),
    (("apps", "replicasets"), _obj({"replicas": 1}), _obj({"replicas": 3}), 2),
    (("", "configmaps"), _obj(), _obj({"x": 1}), 1),
])
def test_generation_rules(resource: tuple[str, str], old: dict[str, Any], new: dict[str, Any],
                          generation: int) -> None:
    bump_generation(INFOS[resource], new, old)
    assert new["metadata"]["generation"] == generation


def test_generate_name_shape() -> None:
    name = generate_name("a" * 70)
    assert len(name) == 63 and name.startswith("a" * 58)
    assert all(c in "bcdfghjklmnpqrstvwxz2456789" for c in name[58:])


@pytest.mark.parametrize(("resources", "qos"), [
    ({}, "BestEffort"),
    ({"requests": {"cpu": "1"}}, "Burstable"),
    ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
    ({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}, "Burstable"),
])
def test_pod_qos_class(resources: dict[str, Any], qos: str) -> None:
    assert pod_qos_class({"spec": {"containers": [{"name": "a", "resources": resources}]}}) == qos


def _cm(labels: dict[str, str], rv: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "d", "labels": labels, "resourceVersion": str(rv)}}


def _matching(obj: dict[str, Any]) -> bool:
    return bool(obj["metadata"]["labels"].get("on") == "yes")


@pytest.mark.parametrize(("event_type", "before", "after", "expected"), [
    ("MODIFIED", {"on": "yes"}, {"on": "yes"}, "MODIFIED"),
    ("MODIFIED", {"on": "no"}, {"on": "yes"}, "ADDED"),
    ("MODIFIED", {"on": "yes"}, {"on": "no"}, "DELETED"),
    ("MODIFIED", {"on": "no"}, {"on": "no"}, None),
    ("ADDED", None, {"on": "yes"}, "ADDED"),
    ("ADDED", None, {"on": "no"}, None),
    ("DELETED", {"on": "yes"}, {"on": "yes"}, "DELETED"),
])
def test_selector_transitions(event_type: str, before: dict[str, str] | None, after: dict[str, str],
                              expected: str | None) -> None:
    info: ResourceInfo = INFOS[("", "configmaps")]
    event = WatchEvent(event_type, 9, _cm(after, 9), _cm(before, 5) if before is not None else None)
    line = filtered_line(event, _matching, info)
    if expected is None:
        assert line is None
        return
    assert line is not None
    decoded = orjson.loads(line)
    assert decoded["type"] == expected
    assert decoded["object"]["metadata"]["resourceVersion"] == "9"
    if expected == "DELETED" and event_type == "MODIFIED":
        assert decoded["object"]["metadata"]["labels"] == before


def test_a_taken_generated_name_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubeloop.api.status import ApiError
    from kubeloop.server import objects
    from kubeloop.server.app import bootstrap, build_registry
    from kubeloop.server.state import ServerState
    from kubeloop.server.storage import Storage

    storage = Storage.open(None, memory=True)
    state = ServerState(storage, build_registry(storage))
    bootstrap(state)
    info = state.registry.lookup("", "v1", "configmaps")
    assert info is not None
    draws = iter(["cm-aaaaa", "cm-aaaaa", "cm-bbbbb"] + ["cm-aaaaa"] * 8)
    monkeypatch.setattr(objects, "generate_name", lambda prefix: next(draws))

    def body() -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cm-", "namespace": "default"}}

    assert objects.create_object(state, info, body(), dry_run=False)["metadata"]["name"] == "cm-aaaaa"
    assert objects.create_object(state, info, body(), dry_run=False)["metadata"]["name"] == "cm-bbbbb"
    with pytest.raises(ApiError) as raised:
        objects.create_object(state, info, body(), dry_run=False)
    assert raised.value.code == 409 and "not able to generate a unique name" in raised.value.message


@pytest.mark.parametrize(("meta", "goes"), [
    ({"deletionTimestamp": "t", "deletionGracePeriodSeconds": 0}, True),
    ({"deletionTimestamp": "t"}, True),
    ({"deletionTimestamp": "t", "deletionGracePeriodSeconds": 30}, False),  # a pod in its grace period
    ({"deletionTimestamp": "t", "deletionGracePeriodSeconds": 0, "finalizers": ["x/y"]}, False),
    ({"deletionGracePeriodSeconds": 0}, False),
])
def test_an_update_removes_a_deleted_object_only_without_finalizers_or_grace(meta: dict[str, Any], goes: bool) -> None:
    assert is_finalized_deletion({"metadata": meta}) is goes
