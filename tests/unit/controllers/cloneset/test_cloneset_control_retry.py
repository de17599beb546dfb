"""The CloneSet's read-modify-write calls retry conflicts through the runtime's one
``retry_on_conflict`` (client-go's ``DefaultRetry``: five attempts): the first attempt from the
copy the controller holds when the pod's containers are ready (as upstream starts from the
informer's), else from a fresh read; each retry on a fresh read."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.client import Resource
from kubeloop.controllers.cloneset.control import CloneSetControl
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.runtime.expectations import ResourceVersionExpectations, ScaleExpectations
from tests.unit.controllers.controller_fakes import FakeApi, FakeRecorder, conflict

Obj = dict[str, Any]
SETTLED: Obj = {"conditions": [{"type": "ContainersReady", "status": "True"}]}


class ReadingApi(FakeApi):
    """Each read returns a copy, as a real client does (the caller may change it)."""

    async def get(self, resource: Resource | str, name: str, *, namespace: str | None = None) -> Obj:
        return copy.deepcopy(await super().get(resource, name, namespace=namespace))


def cloneset(version: str, pods_to_delete: list[str]) -> Obj:
    return {"metadata": {"name": "cs", "namespace": "ns", "uid": "cs-uid", "resourceVersion": version},
            "spec": {"scaleStrategy": {"podsToDelete": pods_to_delete}}}


def control(conflicts: int, verb: str) -> tuple[CloneSetControl, FakeApi]:
    api = ReadingApi()
    left = conflicts

    def fail(called: str, plural: str, name: str) -> Exception | None:
        nonlocal left
        if called == verb and left > 0:
            left -= 1
            return conflict()
        return None

    api.fail = fail
    api.objects[("clonesets", "cs")] = cloneset("9", ["a", "b"])
    api.objects[("pods", "p")] = {"metadata": {"name": "p", "namespace": "ns", "uid": "p-uid", "resourceVersion": "4"}}
    recorder = FakeRecorder()
    cs_control = CloneSetControl(api, recorder, ScaleExpectations(), ResourceVersionExpectations(),
                                 CloneSetFeatureGates())
    return cs_control, api


async def test_status_write_retries_on_a_fresh_read() -> None:
    cs_control, api = control(conflicts=1, verb="update_status")
    await cs_control.write_status(cloneset("3", []), {"replicas": 2})
    assert api.verbs() == [("update_status", "clonesets"), ("get", "clonesets"), ("update_status", "clonesets")]
    assert [b["metadata"]["resourceVersion"] for b in api.bodies] == ["3", "9"]
    assert api.bodies[-1]["status"] == {"replicas": 2}


async def test_pods_to_delete_truncation_retries_on_a_fresh_read() -> None:
    cs_control, api = control(conflicts=2, verb="update")
    await cs_control.truncate_pods_to_delete(cloneset("3", ["a", "gone"]), {"a"})
    assert api.verbs() == [("update", "clonesets"), ("get", "clonesets"), ("update", "clonesets"),
                           ("get", "clonesets"), ("update", "clonesets")]
    # The fresh copy lists "a" and "b"; "b" no longer exists either.
    assert [b["spec"]["scaleStrategy"]["podsToDelete"] for b in api.bodies] == [["a"], ["a"], ["a"]]
    assert [b["metadata"]["resourceVersion"] for b in api.bodies] == ["3", "9", "9"]


async def test_pod_rewrites_give_up_after_five_conflicts() -> None:
    cs_control, api = control(conflicts=5, verb="update")
    with pytest.raises(Exception, match="modified"):
        await cs_control.update_pod({"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "2"},
                                     "status": SETTLED}, lambda pod: dict(pod))
    assert api.verbs() == [("update", "pods")] + [("get", "pods"), ("update", "pods")] * 4
    assert [b["metadata"]["resourceVersion"] for b in api.bodies] == ["2", "4", "4", "4", "4"]


async def test_pod_rewrites_succeed_after_four_conflicts() -> None:
    cs_control, api = control(conflicts=4, verb="update_status")
    cached = {"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "2"}, "status": SETTLED}
    written = await cs_control.update_pod_status(cached, lambda pod: dict(pod))
    assert written is not None and written["metadata"]["name"] == "p"
    assert api.verbs() == [("update_status", "pods")] + [("get", "pods"), ("update_status", "pods")] * 4
    assert cached == {"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "2"}, "status": SETTLED}


async def test_a_pod_still_starting_is_read_first() -> None:
    cs_control, api = control(conflicts=0, verb="update_status")
    starting = {"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "2"},
                "status": {"conditions": [{"type": "ContainersReady", "status": "False"}]}}
    await cs_control.update_pod_status(starting, lambda pod: dict(pod))
    assert api.verbs() == [("get", "pods"), ("update_status", "pods")]
    assert api.bodies[0]["metadata"]["resourceVersion"] == "4"


async def test_pod_rewrite_without_a_conflict_reads_nothing() -> None:
    cs_control, api = control(conflicts=0, verb="update")
    written = await cs_control.update_pod(
        {"metadata": {"name": "p", "namespace": "ns", "uid": "p-uid", "resourceVersion": "4"}, "status": SETTLED},
        lambda pod: {**pod, "spec": {"x": 1}})
    assert written is not None and api.verbs() == [("update", "pods")]
    assert api.bodies[0]["spec"] == {"x": 1}
