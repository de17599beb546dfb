"""What the pod admission plugins read from the store, read once: the ServiceAccount found by the
create's existence check is the one the token mount uses, and the ``globalDefault``
PriorityClass is memoised per change of the PriorityClasses (``Storage.last_change``), so every
create still sees the classes as they are now. Driven on a memory store, without HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.app import build_registry
from kubeloop.server.objects import create_object, delete_steps, run, update_object
from kubeloop.server.requests import DeleteOptions
from kubeloop.server.state import ServerState
from kubeloop.server.storage import ResourceType, Storage

Obj = dict[str, Any]
PRIORITY_CLASSES = ResourceType("scheduling.k8s.io", "priorityclasses")


def info_of(state: ServerState, group: str, resource: str) -> Any:
    found = state.registry.lookup(group, "v1", resource)
    assert found is not None
    return found


@pytest.fixture
def state() -> ServerState:
    storage = Storage.open(None, memory=True)
    made = ServerState(storage, build_registry(storage))
    create_object(made, made.namespace_info(), {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": "default"}}, dry_run=False)
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "default"}}
    create_object(made, info_of(made, "", "serviceaccounts"), account, dry_run=False)
    return made


def create_pod(state: ServerState, name: str, **spec: Any) -> Obj:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}
    return create_object(state, info_of(state, "", "pods"), body, dry_run=False)


def priority_class(name: str, value: int, global_default: bool, policy: str = "PreemptLowerPriority") -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": global_default, "preemptionPolicy": policy}


def test_the_default_priority_class_follows_every_change_of_the_classes(state: ServerState) -> None:
    classes = info_of(state, "scheduling.k8s.io", "priorityclasses")
    first = create_pod(state, "p0")
    assert (first["spec"]["priority"], first["spec"].get("priorityClassName")) == (0, None)

    create_object(state, classes, priority_class("high", 1000, True), dry_run=False)
    second = create_pod(state, "p1")
    assert (second["spec"]["priority"], second["spec"]["priorityClassName"]) == (1000, "high")

    # Of several global defaults, the lowest value wins (upstream's choice).
    create_object(state, classes, priority_class("low", 10, True, "Never"), dry_run=False)
    third = create_pod(state, "p2")
    assert (third["spec"]["priority"], third["spec"]["priorityClassName"], third["spec"]["preemptionPolicy"]) == (
        10, "low", "Never")

    # An update that takes "low"'s default away is seen by the next create.
    old = state.storage.get(PRIORITY_CLASSES, "", "low")
    assert old is not None
    changed = {**old, "globalDefault": False}
    update_object(state, classes, changed, old, status=False, dry_run=False)
    fourth = create_pod(state, "p3")
    assert (fourth["spec"]["priority"], fourth["spec"]["priorityClassName"]) == (1000, "high")

    # And so is a deletion.
    current = state.storage.get(PRIORITY_CLASSES, "", "high")
    assert current is not None
    run(delete_steps(state, classes, current, DeleteOptions()))
    fifth = create_pod(state, "p4")
    assert (fifth["spec"]["priority"], fifth["spec"].get("priorityClassName")) == (0, None)


def test_last_change_moves_with_every_write_of_its_type_only(state: ServerState) -> None:
    storage = state.storage
    classes = info_of(state, "scheduling.k8s.io", "priorityclasses")
    seen = [storage.last_change(PRIORITY_CLASSES)]
    create_object(state, classes, priority_class("a", 1, False), dry_run=False)
    seen.append(storage.last_change(PRIORITY_CLASSES))
    create_pod(state, "unrelated")  # another type's write leaves it alone
    assert storage.last_change(PRIORITY_CLASSES) == seen[-1]
    old = storage.get(PRIORITY_CLASSES, "", "a")
    assert old is not None
    update_object(state, classes, {**old, "description": "changed"}, old, status=False, dry_run=False)
    seen.append(storage.last_change(PRIORITY_CLASSES))
    current = storage.get(PRIORITY_CLASSES, "", "a")
    assert current is not None
    run(delete_steps(state, classes, current, DeleteOptions()))
    seen.append(storage.last_change(PRIORITY_CLASSES))
    assert len(set(seen)) == len(seen)


def test_the_token_mount_uses_the_service_account_the_create_found(state: ServerState) -> None:
    accounts = info_of(state, "", "serviceaccounts")
    create_object(state, accounts, {"apiVersion": "v1", "kind": "ServiceAccount",
                                    "metadata": {"name": "quiet", "namespace": "default"},
                                    "automountServiceAccountToken": False,
                                    "imagePullSecrets": [{"name": "registry"}]}, dry_run=False)
    quiet = create_pod(state, "quiet", serviceAccountName="quiet")
    assert "volumes" not in quiet["spec"] and "volumeMounts" not in quiet["spec"]["containers"][0]
    assert quiet["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    loud = create_pod(state, "loud")
    assert loud["spec"]["serviceAccountName"] == "default"
    assert loud["spec"]["volumes"][0]["name"].startswith("kube-api-access-")
    with pytest.raises(ApiError) as refused:
        create_pod(state, "lost", serviceAccountName="missing")
    assert refused.value.code == 403
