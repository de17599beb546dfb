from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import pytest

from kubeloop.api.pods import is_pod_available
from kubeloop.dashboard.podstates import PodState, classify_pod, restart_count
from tests.unit.dashboard.builders import NOW, deployment, pod

OWNER = deployment()


def available_after(seconds: int) -> Any:
    def check(p: Mapping[str, Any], now: datetime) -> bool:
        return is_pod_available(p, seconds, now)

    return check


def unscheduled() -> dict[str, Any]:
    p = pod("p", OWNER, phase="Pending", ready=False, node="")
    p["status"] = {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    return p


def failed() -> dict[str, Any]:
    p = pod("p", OWNER, phase="Failed", ready=False)
    p["status"]["reason"] = "Evicted"
    return p


@pytest.mark.parametrize(("make", "min_ready", "state", "reason"), [
    (lambda: pod("p", OWNER), 0, PodState.AVAILABLE, ""),
    # Ready for 5 minutes against a 10-minute minReadySeconds: ready, not yet available.
    (lambda: pod("p", OWNER), 600, PodState.READY, "NotAvailableYet"),
    (lambda: pod("p", OWNER, ready_since=NOW - timedelta(seconds=30)), 10, PodState.AVAILABLE, ""),
    (lambda: pod("p", OWNER, ready=False), 0, PodState.RUNNING, "NotReady"),
    (lambda: pod("p", OWNER, phase="Pending", ready=False, node=""), 0, PodState.PENDING, "Unscheduled"),
    (lambda: pod("p", OWNER, phase="Pending", ready=False, waiting="ContainerCreating"), 0, PodState.PENDING,
     "ContainerCreating"),
    (unscheduled, 0, PodState.PENDING, "Unschedulable"),
    (lambda: pod("p", OWNER, phase="Running", ready=False, waiting="CrashLoopBackOff"), 0, PodState.FAILING,
     "CrashLoopBackOff"),
    (lambda: pod("p", OWNER, phase="Pending", ready=False, waiting="ImagePullBackOff"), 0, PodState.FAILING,
     "ImagePullBackOff"),
    (failed, 0, PodState.FAILING, "Evicted"),
    (lambda: pod("p", OWNER, phase="Succeeded", ready=False), 0, PodState.FAILING, "Succeeded"),
    # Deletion wins over everything, even a pod that is still Ready.
    (lambda: pod("p", OWNER, deleting=True), 0, PodState.TERMINATING, "Terminating"),
    (lambda: pod("p", OWNER, deleting=True, waiting="CrashLoopBackOff"), 0, PodState.TERMINATING, "Terminating"),
])
def test_classify_pod(make: Any, min_ready: int, state: PodState, reason: str) -> None:
    condition = classify_pod(make(), available_after(min_ready), NOW)
    assert (condition.state, condition.reason) == (state, reason)


def test_classify_pod_tolerates_missing_status() -> None:
    bare = {"metadata": {"name": "p"}}
    assert classify_pod(bare, available_after(0), NOW).state is PodState.PENDING


def test_restart_count_sums_containers_and_ignores_junk() -> None:
    p = pod("p", OWNER, restarts=2)
    p["status"]["initContainerStatuses"] = [{"name": "init", "restartCount": 1}, {"restartCount": True}, "junk"]
    assert restart_count(p) == 3
