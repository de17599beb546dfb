"""Events drawn from two states of the kubelet's memory of a pod."""

from dataclasses import replace

from kubeloop.kubelet.containers import ContainerRun, RunState
from kubeloop.kubelet.podevents import PodEvent, container_events
from kubeloop.kubelet.podstate import PodMemo

CREATING = ContainerRun("app", "nginx", RunState.CREATING, since=0.0)
RUNNING = replace(CREATING, state=RunState.RUNNING, container_id="containerd://1", started_at=1.0)


def memo(*runs: ContainerRun, deleting_since: float | None = None) -> PodMemo:
    return PodMemo("uid", "node", "10.0.0.2", "10.244.1.2", 0.0, runs, deleting_since)


def test_a_start_is_reported_once() -> None:
    assert container_events(memo(CREATING), memo(RUNNING)) == [
        PodEvent("Normal", "Started", "Started container app (image nginx)")]
    assert container_events(memo(RUNNING), memo(RUNNING)) == []


def test_a_restart_in_place_is_a_new_start() -> None:
    restarted = replace(RUNNING, image="nginx:2", container_id="containerd://2", restart_count=1)
    assert [e.reason for e in container_events(memo(RUNNING), memo(restarted))] == ["Started"]


def test_crashes_report_each_back_off() -> None:
    crashed = replace(RUNNING, state=RunState.CRASHED, failures=1)
    assert [e.reason for e in container_events(memo(CREATING), memo(crashed))] == ["Started", "BackOff"]
    assert container_events(memo(crashed), memo(crashed)) == []
    again = replace(crashed, container_id="containerd://2", failures=2, restart_count=1)
    assert [e.reason for e in container_events(memo(crashed), memo(again))] == ["Started", "BackOff"]


def test_pull_failures_are_warnings() -> None:
    failing = replace(CREATING, state=RunState.PULL_FAILED, failures=1)
    assert container_events(memo(CREATING), memo(failing)) == [
        PodEvent("Warning", "Failed", "Failed to pull image 'nginx' (simulated)")]
    assert container_events(memo(failing), memo(failing)) == []


def test_deletion_kills_running_containers_once() -> None:
    waiting = replace(CREATING, name="sidecar")
    assert container_events(memo(RUNNING, waiting), memo(RUNNING, waiting, deleting_since=5.0)) == [
        PodEvent("Normal", "Killing", "Stopping container app")]
    assert container_events(memo(RUNNING, deleting_since=5.0), memo(RUNNING, deleting_since=5.0)) == []


def test_a_memo_rebuilt_after_a_restart_reports_nothing_already_done() -> None:
    assert container_events(memo(RUNNING), memo(RUNNING)) == []
    assert [e.reason for e in container_events(None, memo(RUNNING))] == ["Started"]
