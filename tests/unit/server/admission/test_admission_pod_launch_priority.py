"""OpenKruise's pod webhook for container launch priority, run as create-time pod admission."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.api import kruise
from kubeloop.api.status import ApiError
from kubeloop.server.admission import default_object, validate_create, validate_update
from kubeloop.server.admission.launchpriority import (
    PriorityParseError,
    barrier_env,
    inject_launch_priority,
    parse_go_int,
    requested_priorities,
)

ORDERED = {kruise.CONTAINER_LAUNCH_PRIORITY_ANNOTATION: kruise.CONTAINER_LAUNCH_ORDERED}


def priority_env(value: str) -> dict[str, str]:
    return {"name": kruise.CONTAINER_PRIORITY_ENV, "value": value}


def pod_with(envs: list[list[dict[str, Any]]], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    containers = [{"name": f"c{i}", "image": "nginx", "env": copy.deepcopy(env)} for i, env in enumerate(envs)]
    metadata: dict[str, Any] = {"name": "web-abcde", "namespace": "default"}
    if annotations is not None:
        metadata["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": containers}}


def barrier_keys(pod: dict[str, Any]) -> list[str | None]:
    keys: list[str | None] = []
    for container in pod["spec"]["containers"]:
        barriers = [e for e in container.get("env") or [] if e["name"] == kruise.CONTAINER_BARRIER_ENV]
        assert len(barriers) <= 1
        keys.append(barriers[0]["valueFrom"]["configMapKeyRef"]["key"] if barriers else None)
    return keys


@pytest.mark.parametrize(
    ("envs", "annotations", "expected"),
    [
        # nginx unset (0), redis 10: both get a barrier.
        ([[], [priority_env("10")]], None, ["p_0", "p_10"]),
        # Negative and signed values are integers too.
        ([[priority_env("-3")], [priority_env("+2")], []], None, ["p_-3", "p_2", "p_0"]),
        # Ordered: spec order, the first highest; it wins over priority envs.
        ([[], [], []], ORDERED, ["p_0", "p_-1", "p_-2"]),
        ([[priority_env("1")], [priority_env("9")]], ORDERED, ["p_0", "p_-1"]),
        # Any other annotation value means nothing.
        ([[], [priority_env("5")]], {kruise.CONTAINER_LAUNCH_PRIORITY_ANNOTATION: "ordered"}, ["p_0", "p_5"]),
        ([[], []], {kruise.CONTAINER_LAUNCH_PRIORITY_ANNOTATION: "ordered"}, [None, None]),
        # All the same priority, or none asked: no order, nothing injected.
        ([[priority_env("5")], [priority_env("5")]], None, [None, None]),
        ([[priority_env("0")], [priority_env("0")]], None, [None, None]),
        ([[], []], None, [None, None]),
        # A single container never gets one, whatever it asks.
        ([[priority_env("10")]], None, [None]),
        ([[]], ORDERED, [None]),
        # The last priority env of a container counts.
        ([[priority_env("7"), priority_env("1")], [priority_env("1")]], None, [None, None]),
    ],
)
def test_barriers(envs: list[list[dict[str, Any]]], annotations: dict[str, str] | None,
                  expected: list[str | None]) -> None:
    pod = pod_with(envs, annotations)
    inject_launch_priority(pod)
    assert barrier_keys(pod) == expected
    for position, container in enumerate(pod["spec"]["containers"]):
        assert container["env"][: len(envs[position])] == envs[position]


def test_barrier_env_points_at_the_pods_barrier_config_map() -> None:
    pod = pod_with([[], [priority_env("10")]])
    inject_launch_priority(pod)
    assert pod["spec"]["containers"][1]["env"][-1] == barrier_env("web-abcde", 10) == {
        "name": "KRUISE_CONTAINER_BARRIER",
        "valueFrom": {"configMapKeyRef": {"name": "web-abcde-barrier", "key": "p_10"}},
    }


def test_containers_without_env_get_one() -> None:
    pod = pod_with([[], []], ORDERED)
    del pod["spec"]["containers"][0]["env"]
    inject_launch_priority(pod)
    assert pod["spec"]["containers"][0]["env"] == [barrier_env("web-abcde", 0)]


@pytest.mark.parametrize(
    ("text", "value"),
    [("0", 0), ("10", 10), ("-10", -10), ("+10", 10), ("007", 7),
     (str(2**63 - 1), 2**63 - 1), (str(-(2**63)), -(2**63))],
)
def test_parse_go_int(text: str, value: int) -> None:
    assert parse_go_int(text) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'strconv.Atoi: parsing "": invalid syntax'),
        ("x", 'strconv.Atoi: parsing "x": invalid syntax'),
        (" 1", 'strconv.Atoi: parsing " 1": invalid syntax'),
        ("1_0", 'strconv.Atoi: parsing "1_0": invalid syntax'),
        ("1.5", 'strconv.Atoi: parsing "1.5": invalid syntax'),
        ("+", 'strconv.Atoi: parsing "+": invalid syntax'),
        ("\u0661", 'strconv.Atoi: parsing "\u0661": invalid syntax'),
        (str(2**63), f'strconv.Atoi: parsing "{2**63}": value out of range'),
    ],
)
def test_parse_go_int_refuses(text: str, message: str) -> None:
    with pytest.raises(PriorityParseError) as caught:
        parse_go_int(text)
    assert str(caught.value) == message


def test_priority_from_a_value_reference_does_not_parse() -> None:
    env = {"name": kruise.CONTAINER_PRIORITY_ENV, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    with pytest.raises(PriorityParseError):
        requested_priorities([{"name": "a", "env": [env]}, {"name": "b"}])


def test_bad_priority_fails_the_create_as_the_webhook_does() -> None:
    pod = pod_with([[priority_env("high")], []])
    default_object("", "v1", "Pod", pod)
    with pytest.raises(ApiError) as caught:
        validate_create("", "v1", "Pod", pod, namespaced=True)
    denied = 'admission webhook "mpod.kb.io" denied the request: strconv.Atoi: parsing "high": invalid syntax'
    assert caught.value.status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f"Internal error occurred: {denied}", "reason": "InternalError",
        "details": {"causes": [{"message": denied}]}, "code": 500,
    }


def test_bad_priority_on_a_single_container_pod_is_not_looked_at() -> None:
    pod = pod_with([[priority_env("high")]])
    default_object("", "v1", "Pod", pod)
    assert validate_create("", "v1", "Pod", pod, namespaced=True) == []


def test_create_admission_injects_and_the_pod_is_valid() -> None:
    pod = pod_with([[], [priority_env("10")]])
    default_object("", "v1", "Pod", pod)
    assert validate_create("", "v1", "Pod", pod, namespaced=True) == []
    assert barrier_keys(pod) == ["p_0", "p_10"]


def stored(pod: dict[str, Any]) -> dict[str, Any]:
    default_object("", "v1", "Pod", pod)
    assert validate_create("", "v1", "Pod", pod, namespaced=True) == []
    pod["metadata"].update(uid="u1", resourceVersion="1", creationTimestamp="2024-01-01T00:00:00Z")
    return pod


def test_updates_are_not_mutated() -> None:
    # Only creations pass the webhook: adding the Ordered annotation later changes nothing.
    old = stored(pod_with([[], []]))
    new = copy.deepcopy(old)
    new["metadata"]["annotations"] = dict(ORDERED)
    default_object("", "v1", "Pod", new)
    assert validate_update("", "v1", "Pod", new, old, namespaced=True) == []
    assert barrier_keys(new) == [None, None]
    # A pod that has its barriers keeps exactly those.
    old = stored(pod_with([[], [priority_env("10")]]))
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:2"
    default_object("", "v1", "Pod", new)
    assert validate_update("", "v1", "Pod", new, old, namespaced=True) == []
    assert barrier_keys(new) == ["p_0", "p_10"]


@pytest.mark.parametrize("junk", [None, "x", 3, ["x"], [{"env": "x"}, {"env": 4}]])
def test_wrong_types_never_raise(junk: Any) -> None:
    pod = {"metadata": {"name": "p", "annotations": ORDERED}, "spec": {"containers": copy.deepcopy(junk)}}
    inject_launch_priority(pod)
    assert pod["spec"]["containers"] == junk
