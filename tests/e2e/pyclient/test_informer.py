"""The official Python client's SharedInformer e2e cases (upstream
``kubernetes/e2e_test/test_informer.py``), restated against the embedded cluster: list then
watch ConfigMaps, fire handlers, keep the cache and the resourceVersion current, resync."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.informer import ADDED, DELETED, MODIFIED, SharedInformer

from kubeloop.testing.polling import eventually_blocking

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TIMEOUT = 30.0
Obj = dict[str, Any]


def uid() -> str:
    return str(uuid.uuid4())[-12:]


def config_map(name: str, label: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {label: "1"}},
            "data": {"k": "v"}}


def name_of(obj: Any) -> str | None:
    return obj.metadata.name if hasattr(obj, "metadata") else (obj.get("metadata") or {}).get("name")


def data_of(obj: Any) -> dict[str, str]:
    return obj.data if hasattr(obj, "data") else (obj.get("data") or {})



class Setup:
    """One test's ConfigMap label (so informers see only their own objects) and cleanups."""

    def __init__(self, core: client.CoreV1Api) -> None:
        self.core = core
        self.label = "inf-e2e-" + uid()
        self.informers: list[SharedInformer] = []

    def informer(self, **kwargs: Any) -> SharedInformer:
        made = SharedInformer(list_func=self.core.list_namespaced_config_map, namespace="default",
                              label_selector=f"{self.label}=1", **kwargs)
        self.informers.append(made)
        return made

    def create(self, name: str) -> None:
        self.core.create_namespaced_config_map(body=config_map(name, self.label), namespace="default")


@pytest.fixture
def setup(api_client: client.ApiClient) -> Iterator[Setup]:
    made = Setup(client.CoreV1Api(api_client))
    yield made
    # SharedInformer.stop() joins a thread blocked reading the watch until the next event (a
    # watch without timeoutSeconds stays open for 30-60 minutes, on kube-apiserver too): stop
    # in the background, then make an event for every informer by deleting the label's objects.
    made.create("inf-sentinel-" + uid())
    stoppers = [threading.Thread(target=informer.stop) for informer in made.informers]
    for stopper in stoppers:
        stopper.start()
    made.core.delete_collection_namespaced_config_map("default", label_selector=f"{made.label}=1")
    for stopper in stoppers:
        stopper.join(TIMEOUT)
        assert not stopper.is_alive(), "SharedInformer.stop() did not return"


def on(informer: SharedInformer, event: str, name: str) -> threading.Event:
    seen = threading.Event()
    informer.add_event_handler(event, lambda obj: seen.set() if name_of(obj) == name else None)
    return seen


def test_cache_populated_after_start(setup: Setup) -> None:
    name = "inf-pre-" + uid()
    setup.create(name)
    informer = setup.informer()
    informer.start()
    eventually_blocking(lambda: informer.cache.get_by_key(f"default/{name}") is not None, what="the cache entry",
                        timeout=TIMEOUT)
    cached = informer.cache.get_by_key(f"default/{name}")
    assert name_of(cached) == name
    assert data_of(cached).get("k") == "v"


def test_added_event_and_cache_entry(setup: Setup) -> None:
    name = "inf-add-" + uid()
    informer = setup.informer()
    added = on(informer, ADDED, name)
    informer.start()
    eventually_blocking(lambda: informer._resource_version is not None, what="the initial list", timeout=TIMEOUT)
    setup.create(name)
    assert added.wait(TIMEOUT)
    assert informer.cache.get_by_key(f"default/{name}") is not None


def test_modified_event_and_cache_refresh(setup: Setup) -> None:
    name = "inf-mod-" + uid()
    informer = setup.informer()
    modified = on(informer, MODIFIED, name)
    informer.start()
    setup.create(name)
    eventually_blocking(lambda: informer.cache.get_by_key(f"default/{name}") is not None, what="the cache entry",
                        timeout=TIMEOUT)
    setup.core.patch_namespaced_config_map(name=name, namespace="default", body={"data": {"k": "updated"}})
    assert modified.wait(TIMEOUT)
    assert data_of(informer.cache.get_by_key(f"default/{name}")).get("k") == "updated"


def test_deleted_event_removes_from_cache(setup: Setup) -> None:
    name = "inf-del-" + uid()
    informer = setup.informer()
    deleted = on(informer, DELETED, name)
    informer.start()
    setup.create(name)
    eventually_blocking(lambda: informer.cache.get_by_key(f"default/{name}") is not None, what="the cache entry",
                        timeout=TIMEOUT)
    setup.core.delete_namespaced_config_map(name=name, namespace="default")
    assert deleted.wait(TIMEOUT)
    assert informer.cache.get_by_key(f"default/{name}") is None


def test_resource_version_advances(setup: Setup) -> None:
    name = "inf-rv-" + uid()
    informer = setup.informer()
    added = on(informer, ADDED, name)
    informer.start()
    eventually_blocking(lambda: informer._resource_version is not None, what="the initial list", timeout=TIMEOUT)
    before = int(informer._resource_version)
    setup.create(name)
    assert added.wait(TIMEOUT)
    eventually_blocking(lambda: int(informer._resource_version) > before, what="the resourceVersion to advance",
                        timeout=TIMEOUT)


def test_resync_fires_modified_for_existing_objects(setup: Setup) -> None:
    """A resync (every 5 s here) re-lists and fires MODIFIED for objects already cached."""
    name = "inf-rsync-" + uid()
    setup.create(name)
    informer = setup.informer(resync_period=5)
    added = on(informer, ADDED, name)
    resynced = on(informer, MODIFIED, name)
    informer.start()
    assert added.wait(TIMEOUT)
    assert resynced.wait(TIMEOUT)
    assert data_of(informer.cache.get_by_key(f"default/{name}")).get("k") == "v"
