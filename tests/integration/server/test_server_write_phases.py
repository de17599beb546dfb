"""The phases of a write (kubeloop.server.objects ``*_steps``), driven by hand on a memory store."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.app import build_registry
from kubeloop.server.objects import Mutating, Validating, create_object, create_steps, delete_steps, update_steps
from kubeloop.server.requests import DeleteOptions
from kubeloop.server.state import ServerState, copy_object
from kubeloop.server.storage import Storage

Obj = dict[str, Any]


@pytest.fixture
def state() -> ServerState:
    storage = Storage.open(None, memory=True)
    made = ServerState(storage, build_registry(storage))
    create_object(made, made.namespace_info(), {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": "default"}}, dry_run=False)
    return made


def deployment(name: str) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def info_of(state: ServerState, group: str, resource: str) -> Any:
    found = state.registry.lookup(group, "v1", resource)
    assert found is not None
    return found


def test_create_pauses_before_validation_and_before_the_store_write(state: ServerState) -> None:
    info = info_of(state, "apps", "deployments")
    steps = create_steps(state, info, deployment("web"), dry_run=False)
    mutating = next(steps)
    assert isinstance(mutating, Mutating) and mutating.obj["spec"]["replicas"] == 1  # defaulted already
    mutating.obj["spec"].pop("replicas")
    mutating.obj["metadata"]["labels"] = {"added": "yes"}
    mutating.redefault()
    validating = steps.send(None)
    assert isinstance(validating, Validating) and validating.obj is not None
    assert validating.obj["spec"]["replicas"] == 1  # defaulted again
    assert state.storage.get(info.resource_type, "default", "web") is None
    with pytest.raises(StopIteration) as done:
        steps.send(None)
    assert done.value.value["metadata"]["labels"] == {"added": "yes"}
    assert state.storage.get(info.resource_type, "default", "web") is not None


def test_a_change_at_the_mutating_step_is_validated(state: ServerState) -> None:
    steps = create_steps(state, info_of(state, "apps", "deployments"), deployment("bad"), dry_run=False)
    mutating = next(steps)
    assert isinstance(mutating, Mutating)
    mutating.obj["spec"]["replicas"] = -1
    with pytest.raises(ApiError) as caught:
        steps.send(None)
    assert caught.value.code == 422 and "spec.replicas" in caught.value.message


def test_a_write_between_the_steps_makes_the_update_conflict(state: ServerState) -> None:
    info = info_of(state, "apps", "deployments")
    stored = create_object(state, info, deployment("raced"), dry_run=False)
    requested = copy_object(stored)
    requested["spec"]["replicas"] = 3
    steps = update_steps(state, info, requested, stored, status=False, dry_run=False)
    assert isinstance(next(steps), Mutating)
    assert isinstance(steps.send(None), Validating)
    other = copy_object(stored)
    other["metadata"]["labels"] = {"other": "write"}
    state.storage.update(info.resource_type, other)
    with pytest.raises(ApiError) as caught:
        steps.send(None)
    assert caught.value.code == 409


def test_delete_pauses_once_with_the_object_being_deleted(state: ServerState) -> None:
    info = info_of(state, "apps", "deployments")
    stored = create_object(state, info, deployment("gone"), dry_run=False)
    steps = delete_steps(state, info, stored, DeleteOptions())
    step = next(steps)
    assert isinstance(step, Validating) and step.obj is None and step.old is stored
    assert state.storage.get(info.resource_type, "default", "gone") is not None
    with pytest.raises(StopIteration) as done:
        steps.send(None)
    assert done.value.value[1] is True
    assert state.storage.get(info.resource_type, "default", "gone") is None
