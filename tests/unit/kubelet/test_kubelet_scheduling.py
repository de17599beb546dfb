"""Which pods the simulated scheduler takes, and where it puts them."""

from typing import Any

import pytest

from kubeloop.kubelet.scheduling import node_fit_changed, node_fits, pick_node, wants_scheduling


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def node(name: str, *, ready: bool = True, unschedulable: bool = False, pods: str = "110",
         **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "spec": {"unschedulable": True} if unschedulable else {},
            "status": {"allocatable": {"pods": pods},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


@pytest.mark.parametrize(
    ("target", "wanted"),
    [
        (pod(), True),
        (pod(schedulerName="default-scheduler"), True),
        (pod(schedulerName="unschedulable"), False),
        (pod(nodeName="n1"), False),
        (pod(schedulingGates=[{"name": "wait"}]), False),
        ({**pod(), "metadata": {"name": "p", "deletionTimestamp": "2020-01-01T00:00:00Z"}}, False),
        ({**pod(), "status": {"phase": "Succeeded"}}, False),
    ],
)
def test_wants_scheduling(target: dict[str, Any], wanted: bool) -> None:
    assert wants_scheduling(target) is wanted


def test_another_scheduler_name_is_served_by_a_kubelet_configured_for_it() -> None:
    assert wants_scheduling(pod(schedulerName="mine"), "mine")
    assert not wants_scheduling(pod(), "mine")


@pytest.mark.parametrize(
    ("target", "candidate", "load", "reason"),
    [
        (pod(), node("n1"), 0, None),
        (pod(), node("n1", ready=False), 0, "node is not ready"),
        (pod(), node("n1", unschedulable=True), 0, "node is cordoned"),
        (pod(), node("n1", pods="2"), 2, "node is full"),
        (pod(), node("n1", pods="2"), 1, None),
        (pod(nodeSelector={"disk": "ssd"}), node("n1"), 0, "node does not match the pod's nodeSelector"),
        (pod(nodeSelector={"disk": "ssd"}), node("n1", disk="ssd"), 0, None),
        (pod(nodeSelector={"disk": "ssd", "zone": "a"}), node("n1", disk="ssd"), 0,
         "node does not match the pod's nodeSelector"),
    ],
)
def test_node_fits(target: dict[str, Any], candidate: dict[str, Any], load: int, reason: str | None) -> None:
    assert node_fits(target, candidate, load) == reason


def test_pick_node_takes_the_least_loaded_then_the_first_by_name() -> None:
    nodes = [node("n3"), node("n1"), node("n2")]
    assert pick_node(pod(), nodes, {"n1": 2, "n2": 1, "n3": 1}) == ("n2", "")
    assert pick_node(pod(), nodes, {}) == ("n1", "")


def test_pick_node_respects_the_node_selector_over_load() -> None:
    nodes = [node("n1"), node("n2", zone="b")]
    assert pick_node(pod(nodeSelector={"zone": "b"}), nodes, {"n1": 0, "n2": 50}) == ("n2", "")


def test_pick_node_explains_why_nothing_fits() -> None:
    nodes = [node("n1"), node("n2"), node("n3", ready=False)]
    choice, why = pick_node(pod(nodeSelector={"zone": "x"}), nodes, {})
    assert choice is None
    assert why == ("no node can take the pod (0 of 3): 2 node does not match the pod's nodeSelector, "
                   "1 node is not ready.")
    assert pick_node(pod(), [], {}) == (None, "no node can take the pod (0 of 0).")


def heartbeat(candidate: dict[str, Any], at: str) -> dict[str, Any]:
    conditions = [{**c, "lastHeartbeatTime": at} for c in candidate["status"]["conditions"]]
    return {**candidate, "status": {**candidate["status"], "conditions": conditions}}


@pytest.mark.parametrize(
    ("new", "changed"),
    [
        (heartbeat(node("n1"), "2026-01-01T00:00:10Z"), False),
        ({**node("n1"), "metadata": {**node("n1")["metadata"], "resourceVersion": "9"}}, False),
        (node("n1", unschedulable=True), True),
        (node("n1", ready=False), True),
        (node("n1", disk="ssd"), True),
        (node("n1", pods="20"), True),
    ],
)
def test_node_fit_changed_ignores_heartbeats(new: dict[str, Any], changed: bool) -> None:
    assert node_fit_changed(heartbeat(node("n1"), "2026-01-01T00:00:00Z"), new) is changed
