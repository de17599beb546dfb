"""Pod rows: the STATUS reason logic of upstream's pod printer, READY, RESTARTS and wide cells."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubeloop.server.tables import pod_status, printer_for

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def running(ready: bool = True, restarts: int = 0) -> dict[str, Any]:
    return {"name": "c", "ready": ready, "restartCount": restarts, "state": {"running": {"startedAt": "x"}}}


def waiting(reason: str, restarts: int = 0) -> dict[str, Any]:
    return {"name": "c", "ready": False, "restartCount": restarts, "state": {"waiting": {"reason": reason}}}


def terminated(reason: str = "", exit_code: int = 0, signal: int = 0, restarts: int = 0) -> dict[str, Any]:
    state: dict[str, Any] = {"exitCode": exit_code}
    if reason:
        state["reason"] = reason
    if signal:
        state["signal"] = signal
    return {"name": "c", "ready": False, "restartCount": restarts, "state": {"terminated": state}}


def pod(phase: str = "Running", containers: list[dict[str, Any]] | None = None,
        init: list[dict[str, Any]] | None = None, init_count: int | None = None, reason: str = "",
        ready_condition: bool = False, deleting: bool = False, app_count: int | None = None) -> dict[str, Any]:
    containers = containers or []
    status: dict[str, Any] = {"phase": phase, "containerStatuses": containers}
    if init is not None:
        status["initContainerStatuses"] = init
    if reason:
        status["reason"] = reason
    if ready_condition:
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    metadata: dict[str, Any] = {"name": "p", "creationTimestamp": "2024-05-01T11:55:00Z"}
    if deleting:
        metadata["deletionTimestamp"] = "2024-05-01T11:59:00Z"
    count = app_count if app_count is not None else max(len(containers), 1)
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}"} for i in range(count)]}
    if init is not None:
        spec["initContainers"] = [{"name": f"i{i}"} for i in range(init_count or len(init))]
    return {"metadata": metadata, "spec": spec, "status": status}


@pytest.mark.parametrize(("obj", "expected"), [
    (pod("Pending"), ("Pending", 0, 0)),
    (pod(containers=[running(restarts=3), running(ready=False, restarts=3)]), ("Running", 1, 6)),
    (pod(containers=[running(restarts=3), waiting("ContainerWaitingReason", 3)]), ("ContainerWaitingReason", 1, 6)),
    (pod("Pending", [waiting("ContainerCreating")]), ("ContainerCreating", 0, 0)),
    (pod(containers=[waiting("CrashLoopBackOff", 5)]), ("CrashLoopBackOff", 0, 5)),
    (pod("Pending", [waiting("ErrImagePull")]), ("ErrImagePull", 0, 0)),
    (pod(containers=[running(), terminated("ContainerTerminatedReason", 1)]), ("ContainerTerminatedReason", 1, 0)),
    (pod(containers=[terminated(exit_code=1)]), ("ExitCode:1", 0, 0)),
    (pod(containers=[terminated(exit_code=137, signal=9)]), ("Signal:9", 0, 0)),
    (pod("Succeeded", [terminated("Completed")]), ("Completed", 0, 0)),
    (pod(containers=[running(), terminated("Completed")], ready_condition=True), ("Running", 1, 0)),
    (pod(containers=[running(), terminated("Completed")]), ("NotReady", 1, 0)),
    (pod("Failed", [terminated("Error", 1)], reason="Evicted"), ("Error", 0, 0)),
    (pod("Failed", [], reason="Evicted"), ("Evicted", 0, 0)),
    (pod(containers=[running()], deleting=True), ("Terminating", 1, 0)),
    (pod("Unknown", [running()], reason="NodeLost", deleting=True), ("Unknown", 1, 0)),
    (pod("Pending", [], init=[], init_count=2), ("Pending", 0, 0)),
    (pod("Pending", [], init=[waiting("", 0), waiting("", 0)]), ("Init:0/2", 0, 0)),
    (pod("Pending", [], init=[terminated("Completed", 0, restarts=1), waiting("PodInitializing", 2)]),
     ("Init:1/2", 0, 3)),
    (pod("Pending", [], init=[waiting("ErrImagePull", 4)]), ("Init:ErrImagePull", 0, 4)),
    (pod("Pending", [], init=[terminated("Error", 1)]), ("Init:Error", 0, 0)),
    (pod("Pending", [], init=[terminated(exit_code=2)]), ("Init:ExitCode:2", 0, 0)),
    (pod("Pending", [], init=[terminated(exit_code=2, signal=15)]), ("Init:Signal:15", 0, 0)),
    (pod("Pending", [waiting("PodInitializing", 7)], init=[running(ready=False)], init_count=1),
     ("Init:0/1", 0, 0)),
    (pod(containers=[running(restarts=2)], init=[terminated("Completed", 0, restarts=9)]), ("Running", 1, 2)),
    (pod("Pending", [], init=[waiting("CrashLoopBackOff", 1)], deleting=True), ("Terminating", 0, 1)),
])
def test_pod_status_reason_ready_and_restarts(obj: dict[str, Any], expected: tuple[str, int, int]) -> None:
    assert pod_status(obj) == expected


def test_pod_row_and_wide_cells() -> None:
    printer = printer_for("", "v1", "Pod")
    assert [c.name for c in printer.columns] == ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node",
                                                 "Nominated Node", "Readiness Gates"]
    assert [c.priority for c in printer.columns] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    obj = pod(containers=[running(restarts=1), running(restarts=2)])
    obj["spec"]["nodeName"] = "node-1"
    obj["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}, {"conditionType": "Other"}]
    obj["status"]["podIPs"] = [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}]
    obj["status"]["conditions"] = [{"type": "InPlaceUpdateReady", "status": "True"},
                                   {"type": "Other", "status": "False"}]
    assert printer.cells(obj, NOW) == ["p", "2/2", "Running", 3, "5m", "10.0.0.5", "node-1", "<none>", "1/2"]


def test_wide_cells_of_a_fresh_pod() -> None:
    printer = printer_for("", "v1", "Pod")
    fresh = pod("Pending")
    assert printer.cells(fresh, NOW)[5:] == ["<none>", "<none>", "<none>", "<none>"]
    fresh["status"]["podIP"] = "10.1.1.1"
    fresh["status"]["nominatedNodeName"] = "node-2"
    assert printer.cells(fresh, NOW)[5:8] == ["10.1.1.1", "<none>", "node-2"]


@pytest.mark.parametrize(("phase", "conditions"), [
    ("Succeeded", [{"type": "Completed", "status": "True", "reason": "Succeeded",
                    "message": "The pod has completed successfully."}]),
    ("Failed", [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]),
    ("Running", []),
])
def test_row_conditions_of_finished_pods(phase: str, conditions: list[dict[str, str]]) -> None:
    assert printer_for("", "v1", "Pod").conditions(pod(phase)) == conditions


def test_garbage_status_does_not_raise() -> None:
    broken = {"metadata": {"name": "x"}, "spec": {"containers": "nope"},
              "status": {"containerStatuses": [None, {"state": "weird", "restartCount": "3"}],
                         "initContainerStatuses": "bad"}}
    assert printer_for("", "v1", "Pod").cells(broken, NOW)[:5] == ["x", "0/0", "", 0, "<unknown>"]
