"""Create, get, update, delete and the global revision, in memory and in SQLite."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from storage_testkit import DEPLOYMENTS, NAMESPACES, PODS, make_object, revision_of

from kubeloop.server.storage import (
    KeyExists,
    KeyNotFound,
    ResourceType,
    RevisionMismatch,
    Storage,
    StorageError,
)


def test_new_store_is_at_revision_zero(store: Storage) -> None:
    assert store.revision == 0
    assert store.get(PODS, "default", "a") is None
    assert store.resource_types() == []


def test_every_write_takes_the_next_global_revision(store: Storage) -> None:
    pod = store.create(PODS, make_object("a"))
    namespace = store.create(NAMESPACES, make_object("default", ""))
    deployment = store.create(DEPLOYMENTS, make_object("web"))
    updated = store.update(PODS, make_object("a", spec={"x": 1}))
    deleted = store.delete(NAMESPACES, "", "default")
    assert [revision_of(o) for o in (pod, namespace, deployment, updated, deleted)] == [1, 2, 3, 4, 5]
    assert store.revision == 5


def test_create_stamps_the_revision_and_leaves_the_callers_dict_alone(store: Storage) -> None:
    given = make_object("a", spec={"containers": [{"name": "c"}]})
    snapshot = copy.deepcopy(given)
    stored = store.create(PODS, given)
    assert given == snapshot
    assert stored["metadata"] == {"name": "a", "namespace": "default", "resourceVersion": "1"}
    assert stored["spec"] == given["spec"]
    assert store.get(PODS, "default", "a") is stored


def test_create_ignores_a_client_supplied_revision(store: Storage) -> None:
    given = make_object("a")
    given["metadata"]["resourceVersion"] = "999"
    assert store.create(PODS, given)["metadata"]["resourceVersion"] == "1"


def test_create_of_an_existing_key_raises_and_changes_nothing(store: Storage) -> None:
    store.create(PODS, make_object("a"))
    with pytest.raises(KeyExists) as raised:
        store.create(PODS, make_object("a", spec={"other": True}))
    assert (raised.value.namespace, raised.value.name) == ("default", "a")
    assert store.revision == 1
    assert "spec" not in store.get(PODS, "default", "a")  # type: ignore[operator]


def test_same_name_in_other_namespace_or_type_is_another_key(store: Storage) -> None:
    store.create(PODS, make_object("a", "one"))
    store.create(PODS, make_object("a", "two"))
    store.create(DEPLOYMENTS, make_object("a", "one"))
    store.create(ResourceType("apps.kruise.io", "pods"), make_object("a", "one"))
    assert store.count(PODS) == 2
    assert store.count(DEPLOYMENTS) == 1
    assert set(store.resource_types()) == {PODS, DEPLOYMENTS, ResourceType("apps.kruise.io", "pods")}


def test_update_replaces_the_object(store: Storage) -> None:
    store.create(PODS, make_object("a", spec={"v": 1}))
    stored = store.update(PODS, make_object("a", spec={"v": 2}))
    assert stored["spec"] == {"v": 2}
    assert revision_of(stored) == 2
    assert store.get(PODS, "default", "a") is stored


def test_update_checks_the_expected_revision(store: Storage) -> None:
    store.create(PODS, make_object("a"))
    store.create(PODS, make_object("b"))
    with pytest.raises(RevisionMismatch) as raised:
        store.update(PODS, make_object("a", spec={}), expected_rv=2)
    assert (raised.value.expected, raised.value.current) == (2, 1)
    assert store.revision == 2
    assert revision_of(store.update(PODS, make_object("a", spec={}), expected_rv=1)) == 3


def test_update_of_a_missing_object_raises(store: Storage) -> None:
    with pytest.raises(KeyNotFound):
        store.update(PODS, make_object("a"))
    assert store.revision == 0


def test_identical_update_still_takes_a_revision(store: Storage) -> None:
    store.create(PODS, make_object("a"))
    assert revision_of(store.update(PODS, make_object("a"))) == 2


def test_delete_returns_the_last_state_at_the_delete_revision(store: Storage) -> None:
    store.create(PODS, make_object("a", spec={"v": 1}))
    store.create(PODS, make_object("b"))
    last = store.delete(PODS, "default", "a")
    assert last["spec"] == {"v": 1}
    assert revision_of(last) == 3
    assert store.get(PODS, "default", "a") is None
    assert store.count(PODS) == 1


def test_delete_checks_existence_and_revision(store: Storage) -> None:
    with pytest.raises(KeyNotFound):
        store.delete(PODS, "default", "a")
    store.create(PODS, make_object("a"))
    with pytest.raises(RevisionMismatch):
        store.delete(PODS, "default", "a", expected_rv=7)
    assert revision_of(store.delete(PODS, "default", "a", expected_rv=1)) == 2


def test_deleted_name_can_be_created_again(store: Storage) -> None:
    store.create(PODS, make_object("a"))
    store.delete(PODS, "default", "a")
    assert revision_of(store.create(PODS, make_object("a"))) == 3


def test_resource_types_lists_only_types_with_objects(store: Storage) -> None:
    store.create(PODS, make_object("a"))
    store.create(DEPLOYMENTS, make_object("a"))
    store.delete(DEPLOYMENTS, "default", "a")
    assert store.resource_types() == [PODS]


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"metadata": {}},
        {"metadata": {"name": ""}},
        {"metadata": {"name": "a", "namespace": 3}},
        {"metadata": {"name": "a\0b"}},
        {"metadata": {"name": "a", "namespace": "x\0"}},
    ],
)
def test_objects_without_a_usable_key_are_refused(store: Storage, bad: dict[str, object]) -> None:
    with pytest.raises(StorageError):
        store.create(PODS, bad)
    assert store.revision == 0


def test_closed_store_refuses_writes(store: Storage) -> None:
    store.close()
    with pytest.raises(StorageError):
        store.create(PODS, make_object("a"))
    store.close()


def test_memory_store_leaves_no_files(tmp_path: Path) -> None:
    memory = Storage.open(tmp_path / "data", memory=True)
    memory.create(PODS, make_object("a"))
    memory.close()
    assert not (tmp_path / "data").exists()
    for data_dir in (None, ":memory:"):
        throwaway = Storage.open(data_dir)
        assert not throwaway.persistent
        throwaway.close()


def test_watch_cache_size_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Storage.open(tmp_path, watch_cache_size=0)


def test_sqlite_store_refuses_objects_that_are_not_json(tmp_path: Path) -> None:
    store = Storage.open(tmp_path)
    with pytest.raises(StorageError):
        store.create(PODS, make_object("a", spec={1: object()}))
    assert store.revision == 0
    assert store.get(PODS, "default", "a") is None
    store.close()
