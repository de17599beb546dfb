"""The pod-controller index: a sync looks at its own pods and the orphans only, and decides
exactly as with a scan of the whole namespace."""

from __future__ import annotations

from typing import Any

from kubeloop.controllers.replicaset.controller import (
    POD_CONTROLLER_INDEX,
    ReplicaSetController,
    pod_controller_index,
)
from kubeloop.runtime.handlers import Request
from tests.unit.controllers.controller_fakes import FakeApi, FakeRecorder, cache

Obj = dict[str, Any]
LABELS = {"app": "web"}


def replica_set() -> Obj:
    return {"metadata": {"name": "rs", "namespace": "default", "uid": "rs-uid", "generation": 1,
                         "resourceVersion": "5"},
            "spec": {"replicas": 2, "selector": {"matchLabels": dict(LABELS)},
                     "template": {"metadata": {"labels": dict(LABELS)},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def pod(name: str, namespace: str = "default", controller_uid: str | None = None) -> Obj:
    metadata: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": dict(LABELS),
                     "resourceVersion": "1"}
    if controller_uid is not None:
        metadata["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x",
                                        "uid": controller_uid, "controller": True}]
    return {"metadata": metadata, "spec": {}, "status": {"phase": "Running"}}


PODS = [pod("own", controller_uid="rs-uid"), pod("orphan"), pod("taken", controller_uid="other-uid"),
        pod("elsewhere", namespace="other")]


def test_index_values_name_the_namespace_and_the_controller() -> None:
    assert [pod_controller_index(p) for p in PODS] == [["default/rs-uid"], ["default/"], ["default/other-uid"],
                                                       ["other/"]]


def build(indexed: bool) -> tuple[ReplicaSetController, FakeApi]:
    pods = cache(*PODS)
    if indexed:
        pods.add_indexers({POD_CONTROLLER_INDEX: pod_controller_index})
    api = FakeApi()
    api.objects[("replicasets", "rs")] = replica_set()
    rsc = ReplicaSetController(api, cache(replica_set()), pods, FakeRecorder())
    return rsc, api


async def test_a_sync_makes_the_same_calls_with_and_without_the_index() -> None:
    calls = []
    for indexed in (True, False):
        rsc, api = build(indexed)
        await rsc.reconcile(Request("default", "rs"))
        calls.append(sorted(api.calls))
    assert calls[0] == calls[1]
    assert ("patch", "pods", "orphan") in calls[0] and not any(name == "taken" for _v, _r, name in calls[0])
