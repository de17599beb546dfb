"""Events drawn from two states of the kubelet's memory of a pod."""

from dataclasses import replace

from kubeloop.kubelet.containers import ContainerRun, RunState
from kubeloop.kubelet.podevents import PodEvent, container_events, pod_ref
from kubeloop.kubelet.podstate import PodMemo

CREATING = ContainerRun("app", "nginx", RunState.CREATING, since=0.0)
RUNNING = replace(CREATING, state=RunState.RUNNING, container_id="containerd://1", started_at=1.0)


def memo(*runs: ContainerRun, deleting_since: float | None = None) -> PodMemo:
    return PodMemo("uid", "node", "10.0.0.2", "10.244.1.2", 0.0, runs, deleting_since)


START = ["Pulled", "Created", "Started"]


def test_a_start_is_reported_once_with_the_kubelets_texts() -> None:
    assert container_events(memo(CREATING), memo(RUNNING)) == [
        PodEvent("Normal", "Pulled", 'Container image "nginx" already present on machine'),
        PodEvent("Normal", "Created", "Created container: app"),
        PodEvent("Normal", "Started", "Started container app")]
    assert container_events(memo(RUNNING), memo(RUNNING)) == []


def test_a_restart_in_place_is_a_new_start() -> None:
    restarted = replace(RUNNING, image="nginx:2", container_id="containerd://2", restart_count=1)
    assert [e.reason for e in container_events(memo(RUNNING), memo(restarted))] == START


def test_crashes_report_each_back_off() -> None:
    crashed = replace(RUNNING, state=RunState.CRASHED, failures=1)
    assert [e.reason for e in container_events(memo(CREATING), memo(crashed))] == [*START, "BackOff"]
    assert container_events(memo(crashed), memo(crashed)) == []
    again = replace(crashed, container_id="containerd://2", failures=2, restart_count=1)
    events = container_events(memo(crashed), memo(again), "web_default(uid)")
    assert [e.reason for e in events] == [*START, "BackOff"]
    assert events[-1] == PodEvent("Warning", "BackOff", "Back-off restarting failed container app in pod "
                                                        "web_default(uid)")


def test_pull_failures_are_warnings() -> None:
    failing = replace(CREATING, state=RunState.PULL_FAILED, failures=1)
    assert container_events(memo(CREATING), memo(failing)) == [
        PodEvent("Normal", "Pulling", 'Pulling image "nginx"'),
        PodEvent("Warning", "Failed", 'Failed to pull image "nginx": simulated pull failure (sim.kubeloop.io)'),
        PodEvent("Warning", "Failed", "Error: ErrImagePull")]
    assert container_events(memo(failing), memo(failing)) == []
    backing_off = replace(failing, failures=2)
    assert container_events(memo(failing), memo(backing_off)) == [
        PodEvent("Normal", "BackOff", 'Back-off pulling image "nginx"'),
        PodEvent("Warning", "Failed", "Error: ImagePullBackOff")]


def test_deletion_kills_running_containers_once() -> None:
    waiting = replace(CREATING, name="sidecar")
    assert container_events(memo(RUNNING, waiting), memo(RUNNING, waiting, deleting_since=5.0)) == [
        PodEvent("Normal", "Killing", "Stopping container app")]
    assert container_events(memo(RUNNING, deleting_since=5.0), memo(RUNNING, deleting_since=5.0)) == []


def test_a_memo_rebuilt_after_a_restart_reports_nothing_already_done() -> None:
    assert container_events(memo(RUNNING), memo(RUNNING)) == []
    assert [e.reason for e in container_events(None, memo(RUNNING))] == START


def test_pod_ref_is_the_kubelets_format() -> None:
    assert pod_ref({"metadata": {"name": "web", "namespace": "default", "uid": "u-1"}}) == "web_default(u-1)"
