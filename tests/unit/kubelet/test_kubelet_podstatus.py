"""The pod status drawn from the kubelet's memory: phase, containers, conditions, readiness gates."""

import itertools
from dataclasses import replace
from typing import Any

from kubeloop.kubelet.behaviour import PodBehaviour
from kubeloop.kubelet.containers import BackOff
from kubeloop.kubelet.podstate import PodMemo, advance_pod, new_pod_memo
from kubeloop.kubelet.podstatus import format_time_of, render_status, unschedulable_status

T0 = 1_700_000_000.0
PLAIN = PodBehaviour(start_delay=1.0, ready_delay=2.0, termination_delay=1.0)
BACK_OFF = BackOff()
CONTAINER_IDS = itertools.count(1)


def make_pod(*containers: tuple[str, str], gates: tuple[str, ...] = (), status: dict[str, Any] | None = None,
             init: tuple[str, ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": n, "image": i} for n, i in containers], "nodeName": "node-1"}
    if gates:
        spec["readinessGates"] = [{"conditionType": g} for g in gates]
    if init:
        spec["initContainers"] = [{"name": n, "image": "busybox"} for n in init]
    return {"metadata": {"name": "web-1", "namespace": "default", "uid": "u1"}, "spec": spec,
            "status": status if status is not None else {"phase": "Pending", "qosClass": "BestEffort"}}


def step(pod: dict[str, Any], memo: PodMemo, now: float, behaviour: PodBehaviour = PLAIN
         ) -> tuple[PodMemo, dict[str, Any]]:
    memo, _ = advance_pod(pod, memo, behaviour, now, lambda: f"containerd://{next(CONTAINER_IDS)}", BACK_OFF)
    return memo, render_status(pod, memo, behaviour, now)


def conditions(status: dict[str, Any]) -> dict[str, tuple[str, str | None, str]]:
    return {c["type"]: (c["status"], c.get("reason"), c["lastTransitionTime"]) for c in status["conditions"]}


def test_a_pod_moves_from_creating_to_running_to_ready() -> None:
    pod = make_pod(("app", "nginx"))
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)

    memo, status = step(pod, memo, T0)
    assert status["phase"] == "Pending"
    assert status["qosClass"] == "BestEffort"  # not the kubelet's: kept
    assert (status["hostIP"], status["podIP"], status["startTime"]) == ("10.0.0.2", "10.244.1.2", format_time_of(T0))
    assert status["podIPs"] == [{"ip": "10.244.1.2"}] and status["hostIPs"] == [{"ip": "10.0.0.2"}]
    [creating] = status["containerStatuses"]
    assert creating["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert (creating["ready"], creating["restartCount"], creating["imageID"]) == (False, 0, "")
    assert "containerID" not in creating
    stamp0 = format_time_of(T0)
    assert conditions(status) == {
        "Initialized": ("True", None, stamp0),
        "Ready": ("False", "ContainersNotReady", stamp0),
        "ContainersReady": ("False", "ContainersNotReady", stamp0),
        "PodScheduled": ("True", None, stamp0),
    }

    pod = {**pod, "status": status}
    memo, status = step(pod, memo, T0 + 1)
    assert status["phase"] == "Running"
    [running] = status["containerStatuses"]
    assert running["state"] == {"running": {"startedAt": format_time_of(T0 + 1)}}
    assert running["image"] == "nginx:latest"
    assert running["imageID"].startswith("nginx@sha256:")
    assert running["containerID"].startswith("containerd://")
    assert running["started"] is True and running["ready"] is False
    assert conditions(status)["Ready"] == ("False", "ContainersNotReady", stamp0)

    pod = {**pod, "status": status}
    memo, status = step(pod, memo, T0 + 3)
    assert status["containerStatuses"][0]["ready"] is True
    stamp3 = format_time_of(T0 + 3)
    assert conditions(status) == {
        "Initialized": ("True", None, stamp0),
        "Ready": ("True", None, stamp3),
        "ContainersReady": ("True", None, stamp3),
        "PodScheduled": ("True", None, stamp0),
    }

    # Nothing changed: rendering again gives the very same status (the kubelet writes nothing).
    pod = {**pod, "status": status}
    _, again = step(pod, memo, T0 + 60)
    assert again == status


def test_ready_waits_for_every_readiness_gate() -> None:
    pod = make_pod(("app", "nginx"), gates=("InPlaceUpdateReady", "example.com/gate"))
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    memo, status = step(pod, memo, T0 + 3)
    assert conditions(status)["ContainersReady"][0] == "True"
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ReadinessGatesNotReady")
    assert "InPlaceUpdateReady" in ready["message"] and "example.com/gate" in ready["message"]

    # A controller sets one gate True and the other False: still not Ready.
    gate_conditions = [{"type": "InPlaceUpdateReady", "status": "True", "lastTransitionTime": "x"},
                       {"type": "example.com/gate", "status": "False", "lastTransitionTime": "x"}]
    pod = {**pod, "status": {**status, "conditions": status["conditions"] + gate_conditions}}
    memo, status = step(pod, memo, T0 + 4)
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and "example.com/gate" in ready["message"]
    assert "InPlaceUpdateReady" not in ready["message"]
    # The controller's conditions are kept untouched.
    assert [c for c in status["conditions"] if c["type"] not in ("Ready", "ContainersReady", "Initialized",
                                                               "PodScheduled")] == gate_conditions

    # Both gates True: Ready, with the transition time of this change.
    flipped = [c if c["type"] != "example.com/gate" else {**c, "status": "True"} for c in status["conditions"]]
    pod = {**pod, "status": {**status, "conditions": flipped}}
    memo, status = step(pod, memo, T0 + 5)
    assert conditions(status)["Ready"] == ("True", None, format_time_of(T0 + 5))

    # A gate turning False again takes Ready down although the containers stay ready.
    flipped = [c if c["type"] != "InPlaceUpdateReady" else {**c, "status": "False"} for c in status["conditions"]]
    pod = {**pod, "status": {**status, "conditions": flipped}}
    _, status = step(pod, memo, T0 + 6)
    assert conditions(status)["Ready"] == ("False", "ReadinessGatesNotReady", format_time_of(T0 + 6))
    assert conditions(status)["ContainersReady"][0] == "True"


def test_the_scheduler_s_pod_scheduled_condition_keeps_its_time() -> None:
    scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": "2020-01-01T00:00:00Z"}
    pod = make_pod(("app", "nginx"), status={"phase": "Pending", "conditions": [scheduled]})
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    _, status = step(pod, memo, T0)
    assert status["conditions"][0] == scheduled
    assert [c["type"] for c in status["conditions"]] == ["PodScheduled", "Initialized", "Ready", "ContainersReady"]


def test_an_in_place_restart_reports_the_new_container_and_the_old_one_s_end() -> None:
    pod = make_pod(("app", "nginx:1"))
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    memo, status = step(pod, memo, T0 + 5)
    before = status["containerStatuses"][0]
    assert before["ready"] is True

    updated = make_pod(("app", "nginx:2"), status=status)
    memo, status = step(updated, memo, T0 + 10)
    after = status["containerStatuses"][0]
    assert after["restartCount"] == 1
    assert after["image"] == "nginx:2" and after["imageID"] != before["imageID"]
    assert after["containerID"] != before["containerID"]
    assert after["state"] == {"running": {"startedAt": format_time_of(T0 + 10)}}
    assert after["lastState"]["terminated"]["containerID"] == before["containerID"]
    assert after["lastState"]["terminated"]["exitCode"] == 0
    assert after["ready"] is False
    assert conditions(status)["ContainersReady"] == ("False", "ContainersNotReady", format_time_of(T0 + 10))

    memo, status = step({**updated, "status": status}, memo, T0 + 12)
    assert conditions(status)["ContainersReady"] == ("True", None, format_time_of(T0 + 12))


def test_container_statuses_are_sorted_by_name_and_phase_waits_for_all() -> None:
    pod = make_pod(("web", "nginx"), ("sidecar", "envoy"))
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    memo, status = step(pod, memo, T0 + 1, replace(PLAIN, image_pull_error=True))
    assert [s["name"] for s in status["containerStatuses"]] == ["sidecar", "web"]
    assert status["phase"] == "Pending"
    assert {s["state"]["waiting"]["reason"] for s in status["containerStatuses"]} == {"ErrImagePull"}
    memo, status = step(pod, memo, T0 + 11, replace(PLAIN, image_pull_error=True))
    assert {s["state"]["waiting"]["reason"] for s in status["containerStatuses"]} == {"ImagePullBackOff"}


def test_a_crash_looping_pod_is_running_but_never_ready() -> None:
    crashing = replace(PLAIN, crash_loop=True)
    pod = make_pod(("app", "nginx"))
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    memo, status = step(pod, memo, T0 + 1, crashing)
    [container] = status["containerStatuses"]
    assert status["phase"] == "Running"
    assert container["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert container["lastState"]["terminated"]["exitCode"] == 1
    assert container["imageID"] != "" and container["started"] is False
    assert conditions(status)["Ready"][0] == "False"


def test_init_containers_are_reported_completed() -> None:
    pod = make_pod(("app", "nginx"), init=("setup",))
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    _, status = step(pod, memo, T0)
    [init] = status["initContainerStatuses"]
    assert init["name"] == "setup" and init["state"]["terminated"]["reason"] == "Completed" and init["ready"]


def test_render_status_does_not_modify_the_pod() -> None:
    pod = make_pod(("app", "nginx"), gates=("g",))
    snapshot = {**pod, "status": dict(pod["status"])}
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    step(pod, memo, T0 + 5)
    assert pod == snapshot


def test_unschedulable_status() -> None:
    pod = make_pod(("app", "nginx"), status={"phase": "Pending", "qosClass": "BestEffort"})
    status = unschedulable_status(pod, "no node can take the pod", T0)
    assert status["qosClass"] == "BestEffort" and status["phase"] == "Pending"
    [condition] = status["conditions"]
    assert condition == {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                         "message": "no node can take the pod", "lastProbeTime": None,
                         "lastTransitionTime": format_time_of(T0)}
    again = unschedulable_status({**pod, "status": status}, "no node can take the pod", T0 + 30)
    assert again == status


def test_a_terminating_pod_reports_not_ready_but_keeps_its_containers_running() -> None:
    pod = make_pod(("app", "nginx"), ("side", "busybox"))
    memo = new_pod_memo(pod, "node-1", "10.0.0.2", "10.244.1.2", T0)
    memo, status = step(pod, memo, T0)
    memo, status = step({**pod, "status": status}, memo, T0 + 5)
    assert conditions(status)["Ready"][0] == "True"
    running = {**pod, "status": status}

    terminating = render_status(running, memo, PLAIN, T0 + 6, terminating=True)

    assert [(s["name"], s["ready"], list(s["state"])) for s in terminating["containerStatuses"]] == [
        ("app", False, ["running"]), ("side", False, ["running"])]
    found = {c["type"]: c for c in terminating["conditions"]}
    for condition_type in ("Ready", "ContainersReady"):
        assert (found[condition_type]["status"], found[condition_type]["reason"]) == ("False", "ContainersNotReady")
        assert found[condition_type]["message"] == "unready containers: [app side]"
        assert found[condition_type]["lastTransitionTime"] == format_time_of(T0 + 6)
    assert found["PodScheduled"]["status"] == "True" and terminating["phase"] == "Running"
    # Rendering again changes nothing, so the kubelet writes the terminating status once.
    assert render_status({**pod, "status": terminating}, memo, PLAIN, T0 + 7, terminating=True) == terminating
