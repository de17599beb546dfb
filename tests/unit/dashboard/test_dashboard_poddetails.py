"""One pod's details (kubeloop.dashboard.poddetails) and the route serving them."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from kubeloop.dashboard.app import dashboard_app
from kubeloop.dashboard.feed import DashboardFeed
from kubeloop.dashboard.model import ADDED, ClusterModel, Collection
from kubeloop.dashboard.poddetails import container_state, pod_details
from tests.unit.dashboard.builders import NOW, deployment, event, pod, replica_set


@pytest.mark.parametrize(("state", "words"), [
    ({"running": {"startedAt": "x"}}, "Running"),
    ({"waiting": {"reason": "CrashLoopBackOff"}}, "Waiting (CrashLoopBackOff)"),
    ({"waiting": {}}, "Waiting"),
    ({"terminated": {"reason": "Error", "exitCode": 1}}, "Terminated (Error, exit code 1)"),
    ({"terminated": {"exitCode": 0}}, "Terminated (exit code 0)"),
    ({}, ""),
    (None, ""),
])
def test_container_state_in_kubectl_words(state: Any, words: str) -> None:
    assert container_state(state) == words


def test_pod_details() -> None:
    web = deployment("web")
    rs = replica_set(web, "aaa", 1, image="app:1", replicas=1)
    crashing = pod("web-1", rs, waiting="CrashLoopBackOff", restarts=3)
    crashing["status"]["initContainerStatuses"] = [{"name": "init", "image": "busybox", "restartCount": 2,
                                                    "ready": True, "state": {"terminated": {"exitCode": 0}}}]
    crashing["status"]["containerStatuses"][0]["lastState"] = {"terminated": {"reason": "Error", "exitCode": 1}}
    details = pod_details(crashing, [{"reason": "BackOff"}])
    assert (details["name"], details["namespace"], details["phase"], details["node"]) == \
        ("web-1", "default", "Running", "node-1")
    assert details["restarts"] == 5  # init containers' restarts count too, as kubectl's RESTARTS does
    assert [(c["name"], c["init"], c["state"], c["lastState"], c["restartCount"]) for c in details["containers"]] == [
        ("init", True, "Terminated (exit code 0)", "", 2),
        ("c", False, "Waiting (CrashLoopBackOff)", "Terminated (Error, exit code 1)", 3),
    ]
    assert [c["type"] for c in details["conditions"]] == ["PodScheduled", "Ready"]
    assert details["events"] == [{"reason": "BackOff"}] and details["deleting"] == ""
    assert crashing["status"]["containerStatuses"][0]["restartCount"] == 3  # the cached pod is untouched


async def test_pod_route_reads_the_model() -> None:
    feed = DashboardFeed(ClusterModel(), interval=0.0, tick=60.0, clock=lambda: NOW)
    web = deployment("web")
    rs = replica_set(web, "aaa", 1, image="app:1", replicas=1)
    one = pod("web-1", rs, restarts=1)
    for collection, obj in ((Collection.DEPLOYMENTS, web), (Collection.REPLICA_SETS, rs), (Collection.PODS, one),
                            (Collection.EVENTS, event("e1", one, "Pod", "Started", at=1)),
                            (Collection.EVENTS, event("e2", one, "Pod", "Pulled", at=0)),
                            (Collection.EVENTS, event("e3", rs, "ReplicaSet", "SuccessfulCreate", at=2))):
        feed.apply(collection, ADDED, obj)
    http: TestClient[Any, Any] = TestClient(TestServer(dashboard_app(feed)))
    await http.start_server()
    try:
        found = await http.get("/api/pods/default/web-1")
        assert found.status == 200
        details = await found.json()
        assert details["restarts"] == 1
        assert [e["reason"] for e in details["events"]] == ["Started", "Pulled"]  # the pod's only, newest first
        missing = await http.get("/api/pods/default/web-2")
        assert missing.status == 404
        assert (await missing.json())["message"] == 'pod "web-2" not found in namespace "default"'
    finally:
        await http.close()
