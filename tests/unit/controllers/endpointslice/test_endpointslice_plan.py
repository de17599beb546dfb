"""The EndpointSlice controller's pure reconciler and its staleness tracker."""

from __future__ import annotations

from typing import Any

from kubeloop.controllers.endpointslice.plan import MAX_ENDPOINTS_PER_SLICE, plan_slices, port_key
from kubeloop.controllers.endpointslice.tracker import SliceTracker

Obj = dict[str, Any]
TRIGGER = "endpoints.kubernetes.io/last-change-trigger-time"


def pod(index: int, *, ready: bool = True, deleting: bool = False, port_name: str = "web",
        port: int = 8080) -> Obj:
    meta: Obj = {"name": f"p{index}", "namespace": "default", "uid": f"uid-{index}", "labels": {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2024-05-01T11:00:00Z"
    return {"metadata": meta,
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "ports": [
                {"name": port_name, "containerPort": port, "protocol": "TCP"}]}]},
            "status": {"phase": "Running", "podIP": f"10.244.{index // 250}.{index % 250 + 1}",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def service(target: Any = 8080, uid: str = "svc-uid", **spec: Any) -> Obj:
    return {"metadata": {"name": "web", "namespace": "default", "uid": uid, "labels": {"team": "a"}},
            "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.0.10", "ipFamilies": ["IPv4"],
                     "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": target}], **spec}}


def stored(slices: list[Obj]) -> list[Obj]:
    """The created slices as the server would store them (named, with a resourceVersion)."""
    out = []
    for i, slice_ in enumerate(slices):
        meta = {k: v for k, v in slice_["metadata"].items() if k != "generateName"}
        out.append({**slice_, "metadata": {**meta, "name": f"web-{i}", "resourceVersion": str(i + 1)}})
    return out


def addresses(slice_: Obj) -> list[str]:
    return [e["addresses"][0] for e in slice_["endpoints"]]


def test_a_new_service_gets_one_slice_with_labels_owner_ports_and_conditions() -> None:
    plan = plan_slices(service(), [pod(1), pod(2, ready=False), pod(3, deleting=True)], [], "2024-05-01T10:00:00Z")
    assert not plan.update and not plan.delete
    [created] = plan.create
    assert created["metadata"]["generateName"] == "web-"
    assert created["metadata"]["labels"] == {
        "team": "a", "kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    assert created["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "web",
                                                       "uid": "svc-uid", "controller": True,
                                                       "blockOwnerDeletion": True}]
    assert created["metadata"]["annotations"] == {TRIGGER: "2024-05-01T10:00:00Z"}
    assert created["addressType"] == "IPv4"
    assert created["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert [(e["addresses"], e["conditions"]) for e in created["endpoints"]] == [
        (["10.244.0.2"], {"ready": True, "serving": True, "terminating": False}),
        (["10.244.0.3"], {"ready": False, "serving": False, "terminating": False}),
        (["10.244.0.4"], {"ready": False, "serving": True, "terminating": True}),
    ]
    assert created["endpoints"][0]["nodeName"] == "node-1"
    assert created["endpoints"][0]["targetRef"] == {"kind": "Pod", "namespace": "default", "name": "p1",
                                                    "uid": "uid-1"}


def test_nothing_to_do_when_the_slices_are_right() -> None:
    pods = [pod(1), pod(2)]
    existing = stored(plan_slices(service(), pods, [], None).create)
    assert plan_slices(service(), pods, existing, None).empty()


def test_changed_pods_update_the_slice_in_place_and_a_service_without_pods_keeps_a_placeholder() -> None:
    existing = stored(plan_slices(service(), [pod(1), pod(2)], [], None).create)
    plan = plan_slices(service(), [pod(2, ready=False), pod(3)], existing, "2024-05-01T10:00:00Z")
    assert not plan.create and not plan.delete
    [updated] = plan.update
    assert updated["metadata"]["name"] == "web-0" and updated["metadata"]["resourceVersion"] == "1"
    assert addresses(updated) == ["10.244.0.3", "10.244.0.4"]
    assert updated["endpoints"][0]["conditions"]["ready"] is False
    assert updated["metadata"]["annotations"] == {TRIGGER: "2024-05-01T10:00:00Z"}

    emptied = plan_slices(service(), [], existing, None)
    # The emptied slice is reused as the placeholder rather than deleted and created again.
    assert not emptied.create and not emptied.delete
    [placeholder] = emptied.update
    assert placeholder["metadata"]["name"] == "web-0"
    assert placeholder["endpoints"] == [] and placeholder["ports"] == []
    assert plan_slices(service(), [], stored([placeholder]), None).empty()


def test_endpoints_fill_slices_of_at_most_one_hundred() -> None:
    pods = [pod(i) for i in range(250)]
    plan = plan_slices(service(), pods, [], None)
    assert [len(s["endpoints"]) for s in plan.create] == [100, 100, 50]
    existing = stored(plan.create)
    more = plan_slices(service(), [pod(i) for i in range(310)], existing, None)
    # The slice with room takes 50 of the 60 new pods; the other 10 go to a new slice.
    assert not more.delete
    assert {s["metadata"]["name"]: len(s["endpoints"]) for s in more.update} == {"web-2": MAX_ENDPOINTS_PER_SLICE}
    assert [len(s["endpoints"]) for s in more.create] == [10]
    fewer = plan_slices(service(), [pod(i) for i in range(100, 250)], existing, None)
    # The first slice lost every pod: it is deleted; the others keep theirs.
    assert [s["metadata"]["name"] for s in fewer.delete] == ["web-0"]
    assert not fewer.create and not fewer.update


def test_pods_resolving_different_ports_get_different_slices() -> None:
    pods = [pod(1, port=8080), pod(2, port=9090), pod(3, port_name="other")]
    plan = plan_slices(service(target="web"), pods, [], None)
    by_ports = {port_key(s["ports"]): addresses(s) for s in plan.create}
    assert by_ports == {(("http", 8080, "TCP"),): ["10.244.0.2"], (("http", 9090, "TCP"),): ["10.244.0.3"],
                        (): ["10.244.0.4"]}


def test_slices_of_an_earlier_service_of_the_same_name_are_replaced() -> None:
    old = stored(plan_slices(service(uid="old"), [pod(1)], [], None).create)
    plan = plan_slices(service(uid="new"), [pod(1)], old, None)
    assert [s["metadata"]["name"] for s in plan.delete] == ["web-0"]
    [created] = plan.create
    assert created["metadata"]["ownerReferences"][0]["uid"] == "new"


def test_label_changes_of_the_service_reach_its_slices() -> None:
    existing = stored(plan_slices(service(), [pod(1)], [], None).create)
    relabelled = service()
    relabelled["metadata"]["labels"] = {"team": "b"}
    [updated] = plan_slices(relabelled, [pod(1)], existing, None).update
    assert updated["metadata"]["labels"]["team"] == "b"
    headless = service(clusterIP="None")
    [marked] = plan_slices(headless, [pod(1)], existing, None).update
    assert marked["metadata"]["labels"]["service.kubernetes.io/headless"] == ""


def test_the_tracker_holds_a_service_back_until_the_cache_shows_its_writes() -> None:
    tracker = SliceTracker()
    cache: dict[str, Obj] = {}
    assert not tracker.stale("default/web", cache.get)
    tracker.wrote("default/web", {"metadata": {"name": "web-a", "resourceVersion": "5"}})
    tracker.removed("default/web", "web-b")
    cache["web-b"] = {"metadata": {"name": "web-b", "resourceVersion": "3"}}
    assert tracker.stale("default/web", cache.get)
    cache["web-a"] = {"metadata": {"name": "web-a", "resourceVersion": "4"}}
    assert tracker.stale("default/web", cache.get)
    cache["web-a"] = {"metadata": {"name": "web-a", "resourceVersion": "5"}}
    assert tracker.stale("default/web", cache.get)  # web-b still cached
    tracker.deleted("default/web", "web-b")
    assert not tracker.stale("default/web", cache.get)
