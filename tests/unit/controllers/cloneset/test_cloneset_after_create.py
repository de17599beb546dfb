"""A created CloneSet pod's ``InPlaceUpdateReady`` condition is written right after its create,
from the object the create answered (no GET), and from a fresh read after a conflict
(kubeloop/controllers/cloneset/aftercreate.py; upstream's ``inplaceupdate.Refresh`` ->
``updateCondition``)."""

from __future__ import annotations

import copy
from typing import Any

from cloneset_pods import NOW

from kubeloop.api import kruise
from kubeloop.api.conditions import find_condition, status_conditions
from kubeloop.api.meta import format_time
from kubeloop.client import Forbidden, Resource
from kubeloop.controllers.cloneset.aftercreate import ready_condition_after_create
from kubeloop.controllers.cloneset.control import CloneSetControl
from kubeloop.controllers.cloneset.options import CloneSetFeatureGates
from kubeloop.controllers.cloneset.scaleplan import PodCreation
from kubeloop.runtime.expectations import ResourceVersionExpectations, ScaleExpectations
from tests.unit.controllers.controller_fakes import FakeApi, FakeRecorder, conflict

Obj = dict[str, Any]
CS: Obj = {"metadata": {"name": "cs", "namespace": "ns", "uid": "cs-uid"},
           "spec": {"selector": {"matchLabels": {"app": "cs"}}}}
IN_PLACE_READY = {"type": kruise.INPLACE_UPDATE_READY, "status": "True", "lastTransitionTime": format_time(NOW)}


def new_pod(name: str = "cs-a", gates: tuple[str, ...] = (kruise.INPLACE_UPDATE_READY,)) -> Obj:
    """A pod as the CloneSet creates it: lifecycle PreparingNormal, its readiness gates, no status."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns",
                         "labels": {"app": "cs", kruise.LIFECYCLE_STATE_LABEL: kruise.STATE_PREPARING_NORMAL}},
            "spec": {"containers": [{"name": "c", "image": "img:1"}],
                     "readinessGates": [{"conditionType": gate} for gate in gates]}}


class StoringApi(FakeApi):
    """Creates store the answered pod; reads return a copy of the stored one."""

    async def create(self, resource: Resource | str, obj: Any, *, namespace: str | None = None) -> Obj:
        created = await super().create(resource, obj, namespace=namespace)
        self.objects[("pods", created["metadata"]["name"])] = copy.deepcopy(created)
        return created

    async def get(self, resource: Resource | str, name: str, *, namespace: str | None = None) -> Obj:
        return copy.deepcopy(await super().get(resource, name, namespace=namespace))


def control(api: FakeApi) -> tuple[CloneSetControl, ResourceVersionExpectations]:
    versions = ResourceVersionExpectations()
    return CloneSetControl(api, FakeRecorder(), ScaleExpectations(), versions, CloneSetFeatureGates()), versions


def test_the_condition_is_refresh_s_write_on_a_new_pod() -> None:
    written = ready_condition_after_create(new_pod(), NOW)
    assert written is not None
    assert status_conditions(written) == [IN_PLACE_READY]
    assert written["metadata"] == new_pod()["metadata"] and written["spec"] == new_pod()["spec"]


def test_nothing_to_write_without_the_gate_or_with_the_condition() -> None:
    assert ready_condition_after_create(new_pod(gates=()), NOW) is None
    has_it = new_pod()
    has_it["status"] = {"conditions": [dict(IN_PLACE_READY, lastTransitionTime="2020-01-01T00:00:00Z")]}
    assert ready_condition_after_create(has_it, NOW) is None


def test_a_pod_waiting_for_kruise_pod_ready_is_left_to_the_refresh_pass() -> None:
    # The refresh pass writes KruisePodReady first; writing InPlaceUpdateReady before it
    # would change the conditions' order.
    pod = new_pod(gates=(kruise.INPLACE_UPDATE_READY, kruise.KRUISE_POD_READY))
    assert ready_condition_after_create(pod, NOW) is None


async def test_create_then_status_from_the_create_s_answer_without_a_read() -> None:
    api = StoringApi()
    cs_control, versions = control(api)
    assert await cs_control.create_pods(CS, [PodCreation(new_pod(), [])], NOW) == 1
    assert api.verbs() == [("create", "pods"), ("update_status", "pods")]
    body = api.bodies[-1]
    assert body["metadata"]["resourceVersion"] == "1" and body["metadata"]["uid"] == "uid-cs-a"
    assert find_condition(status_conditions(body), kruise.INPLACE_UPDATE_READY) == IN_PLACE_READY
    # The next sync waits for the cache to show the written version.
    assert versions.pending() == ["uid-cs-a"]


async def test_a_conflict_falls_back_to_a_fresh_read() -> None:
    api = StoringApi()
    left = 1

    def fail(verb: str, plural: str, name: str) -> Exception | None:
        nonlocal left
        if verb == "update_status" and left:
            left -= 1
            # The kubelet bound the pod between the create and this write.
            api.objects[("pods", name)]["metadata"]["resourceVersion"] = "2"
            api.objects[("pods", name)]["spec"]["nodeName"] = "node-1"
            return conflict()
        return None

    api.fail = fail
    cs_control, _ = control(api)
    assert await cs_control.create_pods(CS, [PodCreation(new_pod(), [])], NOW) == 1
    assert api.verbs() == [("create", "pods"), ("update_status", "pods"), ("get", "pods"), ("update_status", "pods")]
    retried = api.bodies[-1]
    assert retried["metadata"]["resourceVersion"] == "2" and retried["spec"]["nodeName"] == "node-1"
    assert find_condition(status_conditions(retried), kruise.INPLACE_UPDATE_READY) == IN_PLACE_READY


async def test_a_fresh_read_that_has_the_condition_is_not_written_again() -> None:
    api = StoringApi()

    def fail(verb: str, plural: str, name: str) -> Exception | None:
        if verb == "update_status" and len(api.calls) == 2:
            stored = api.objects[("pods", name)]
            stored["metadata"]["resourceVersion"] = "2"
            stored["status"] = {"conditions": [dict(IN_PLACE_READY)]}
            return conflict()
        return None

    api.fail = fail
    cs_control, _ = control(api)
    await cs_control.create_pods(CS, [PodCreation(new_pod(), [])], NOW)
    assert api.verbs() == [("create", "pods"), ("update_status", "pods"), ("get", "pods")]


async def test_a_failed_status_write_does_not_fail_the_create() -> None:
    api = StoringApi()
    api.fail = lambda verb, plural, name: (Forbidden(code=403, reason="Forbidden", message="no")
                                           if verb == "update_status" else None)
    cs_control, versions = control(api)
    assert await cs_control.create_pods(CS, [PodCreation(new_pod(), [])], NOW) == 1
    assert api.verbs() == [("create", "pods"), ("update_status", "pods")]
    assert versions.pending() == []


async def test_without_a_time_only_the_create() -> None:
    api = StoringApi()
    cs_control, _ = control(api)
    await cs_control.create_pods(CS, [PodCreation(new_pod(), [])])
    assert api.verbs() == [("create", "pods")]
