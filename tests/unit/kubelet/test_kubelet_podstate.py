"""Resuming from a pod's status after a kubelet restart, and when Terminating pods go."""

import itertools
from dataclasses import replace
from typing import Any

import pytest

from kubeloop.kubelet.behaviour import PodBehaviour
from kubeloop.kubelet.containers import BackOff, RunState
from kubeloop.kubelet.podstate import (
    PodMemo,
    advance_pod,
    deletion_deadline,
    deletion_started,
    memo_from_status,
    new_pod_memo,
)
from kubeloop.kubelet.podstatus import format_time_of, render_status

T0 = 1_700_000_000.0
PLAIN = PodBehaviour(start_delay=1.0, ready_delay=2.0, termination_delay=5.0)
IDS = itertools.count(1)


def make_pod(image: str = "nginx", **metadata: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1", **metadata},
            "spec": {"containers": [{"name": "app", "image": image}], "nodeName": "node-1"}, "status": {}}


def run_to(pod: dict[str, Any], memo: PodMemo, now: float, behaviour: PodBehaviour = PLAIN
           ) -> tuple[PodMemo, dict[str, Any]]:
    memo, _ = advance_pod(pod, memo, behaviour, now, lambda: f"containerd://{next(IDS)}", BackOff())
    return memo, {**pod, "status": render_status(pod, memo, behaviour, now)}


def test_a_pod_never_seen_gets_a_fresh_memo() -> None:
    memo = memo_from_status(make_pod(), "node-1", "10.0.0.2", "10.244.1.2", T0)
    assert memo == new_pod_memo(make_pod(), "node-1", "10.0.0.2", "10.244.1.2", T0)
    assert [run.state for run in memo.containers] == [RunState.CREATING]


def test_a_running_pod_resumes_without_restarting_its_container() -> None:
    memo = new_pod_memo(make_pod(), "node-1", "10.0.0.2", "10.244.1.2", T0)
    memo, pod = run_to(make_pod(), memo, T0 + 10)

    resumed = memo_from_status(pod, "node-1", "10.0.0.2", "10.244.1.99", T0 + 20)
    assert resumed.pod_ip == "10.244.1.2"  # the address in the status wins
    assert resumed.accepted_at == T0
    [run] = resumed.containers
    assert (run.state, run.image, run.container_id) == (RunState.RUNNING, "nginx", memo.containers[0].container_id)
    _, again = run_to(pod, resumed, T0 + 20)
    assert again["status"] == pod["status"]


@pytest.mark.parametrize(
    ("behaviour", "state"),
    [
        (PodBehaviour(1.0, 2.0, 5.0, crash_loop=True), RunState.CRASHED),
        (PodBehaviour(1.0, 2.0, 5.0, image_pull_error=True), RunState.PULL_FAILED),
        (PodBehaviour(100.0, 2.0, 5.0), RunState.CREATING),
    ],
)
def test_waiting_containers_resume_in_their_state(behaviour: PodBehaviour, state: RunState) -> None:
    memo = new_pod_memo(make_pod(), "node-1", "10.0.0.2", "10.244.1.2", T0)
    memo, pod = run_to(make_pod(), memo, T0 + 5, behaviour)
    resumed = memo_from_status(pod, "node-1", "10.0.0.2", "10.244.1.2", T0 + 6)
    [run] = resumed.containers
    assert run.state is state
    assert run.restart_count == memo.containers[0].restart_count


def test_an_image_changed_while_the_kubelet_was_down_restarts_the_container() -> None:
    memo = new_pod_memo(make_pod("nginx:1"), "node-1", "10.0.0.2", "10.244.1.2", T0)
    _, pod = run_to(make_pod("nginx:1"), memo, T0 + 10)
    changed = {**make_pod("nginx:2"), "status": pod["status"]}
    resumed = memo_from_status(changed, "node-1", "10.0.0.2", "10.244.1.2", T0 + 20)
    _, after = run_to(changed, resumed, T0 + 20)
    [status] = after["status"]["containerStatuses"]
    assert (status["image"], status["restartCount"]) == ("nginx:2", 1)


@pytest.mark.parametrize(
    ("grace", "delay", "deadline"),
    [
        (30, 5.0, T0 + 5),     # the container exits long before its grace period ends
        (2, 5.0, T0 + 2),      # the grace period cuts a slow exit short
        (0, 5.0, T0),
        (None, 5.0, T0),
        (30, 0.0, T0),
    ],
)
def test_deletion_deadline(grace: int | None, delay: float, deadline: float) -> None:
    pod = make_pod(deletionGracePeriodSeconds=grace) if grace is not None else make_pod()
    behaviour = PodBehaviour(1.0, 1.0, delay)
    assert deletion_deadline(pod, T0, behaviour) == deadline


def test_deletion_started_is_the_kubelet_s_first_sighting() -> None:
    memo = new_pod_memo(make_pod(), "node-1", "10.0.0.2", "10.244.1.2", T0)
    deleting = make_pod(deletionTimestamp=format_time_of(T0 + 30), deletionGracePeriodSeconds=30)
    # Seen for the first time by a kubelet that knows the pod: now.
    assert deletion_started(deleting, memo, T0 + 100.25) == T0 + 100.25
    # Seen before: that earlier sighting.
    assert deletion_started(deleting, replace(memo, deleting_since=T0 + 3.5), T0 + 100) == T0 + 3.5
    # A kubelet that restarted knows only the timestamp: its deadline less the grace period.
    assert deletion_started(deleting, None, T0 + 100) == T0
    assert deletion_started(deleting, None, T0 - 5) == T0 - 5  # never in the future
    assert deletion_started(make_pod(), None, T0 + 7) == T0 + 7
