"""One container's simulated life, stepped with explicit clock readings."""

import itertools
from collections.abc import Callable
from dataclasses import replace

import pytest

from kubeloop.kubelet.behaviour import PodBehaviour
from kubeloop.kubelet.containers import (
    BackOff,
    ContainerRun,
    RunState,
    Termination,
    is_container_ready,
    new_container_run,
    step_container,
)

PLAIN = PodBehaviour(start_delay=1.0, ready_delay=2.0, termination_delay=1.0)
BACK_OFF = BackOff(initial=10.0, maximum=40.0)


def ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"containerd://{next(counter)}"


@pytest.mark.parametrize(
    ("failures", "delay"), [(0, 10.0), (1, 10.0), (2, 20.0), (3, 40.0), (4, 40.0), (500, 40.0)]
)
def test_back_off_doubles_up_to_the_maximum(failures: int, delay: float) -> None:
    assert BACK_OFF.delay(failures) == delay


def test_a_new_container_waits_for_the_start_delay_then_runs_then_becomes_ready() -> None:
    new_id = ids()
    run = new_container_run("app", "nginx", accepted_at=100.0)
    waiting, due = step_container(run, "nginx", PLAIN, 100.5, new_id, BACK_OFF)
    assert (waiting.state, due, waiting.container_id) == (RunState.CREATING, 101.0, "")

    running, due = step_container(waiting, "nginx", PLAIN, 101.0, new_id, BACK_OFF)
    assert running.state is RunState.RUNNING
    assert (running.container_id, running.started_at, running.restart_count) == ("containerd://1", 101.0, 0)
    assert due == 103.0
    assert not is_container_ready(running, PLAIN, 102.9)

    later, due = step_container(running, "nginx", PLAIN, 103.0, new_id, BACK_OFF)
    assert later == running and due is None
    assert is_container_ready(later, PLAIN, 103.0)


def test_stepping_late_applies_every_transition_due_at_its_own_time() -> None:
    run, due = step_container(new_container_run("app", "nginx", 0.0), "nginx", PLAIN, 50.0, ids(), BACK_OFF)
    assert run.state is RunState.RUNNING and run.started_at == 1.0 and due is None
    assert is_container_ready(run, PLAIN, 50.0)


def test_a_late_look_at_a_crash_loop_catches_up_on_the_restarts_missed() -> None:
    behaviour = replace(PLAIN, crash_loop=True)
    run, due = step_container(new_container_run("app", "nginx", 0.0), "nginx", behaviour, 35.0, ids(), BACK_OFF)
    # Started at 1 and crashed; restarted at 11 (back-off 10) and at 31 (back-off 20); next at 71.
    assert (run.state, run.restart_count, run.since, due) == (RunState.CRASHED, 2, 31.0, 71.0)


def test_never_ready_runs_without_becoming_ready() -> None:
    behaviour = replace(PLAIN, never_ready=True)
    run, due = step_container(new_container_run("app", "nginx", 0.0), "nginx", behaviour, 1.0, ids(), BACK_OFF)
    assert run.state is RunState.RUNNING and due is None
    assert not is_container_ready(run, behaviour, 1_000_000.0)


def test_crash_loop_restarts_with_growing_back_off_and_restart_count() -> None:
    behaviour = replace(PLAIN, crash_loop=True)
    new_id = ids()
    run, due = step_container(new_container_run("app", "nginx", 0.0), "nginx", behaviour, 1.0, new_id, BACK_OFF)
    assert run.state is RunState.CRASHED
    assert (run.restart_count, run.container_id, due) == (0, "containerd://1", 11.0)
    assert run.last_termination == Termination(1, "Error", 1.0, 1.0, "containerd://1")

    run, due = step_container(run, "nginx", behaviour, 10.0, new_id, BACK_OFF)
    assert run.restart_count == 0 and due == 11.0  # still backing off

    run, due = step_container(run, "nginx", behaviour, 11.0, new_id, BACK_OFF)
    assert (run.state, run.restart_count, run.container_id, due) == (RunState.CRASHED, 1, "containerd://2", 31.0)

    run, due = step_container(run, "nginx", behaviour, 31.0, new_id, BACK_OFF)
    assert (run.restart_count, due) == (2, 71.0)
    assert not is_container_ready(run, behaviour, 1000.0)


def test_a_crashing_container_recovers_when_the_annotation_goes() -> None:
    crashing = replace(PLAIN, crash_loop=True)
    new_id = ids()
    run, _ = step_container(new_container_run("app", "nginx", 0.0), "nginx", crashing, 1.0, new_id, BACK_OFF)
    run, due = step_container(run, "nginx", PLAIN, 11.0, new_id, BACK_OFF)
    assert (run.state, run.restart_count, run.failures, due) == (RunState.RUNNING, 1, 0, 13.0)


def test_a_running_container_starts_crashing_when_the_annotation_appears() -> None:
    run, _ = step_container(new_container_run("app", "nginx", 0.0), "nginx", PLAIN, 1.0, ids(), BACK_OFF)
    crashed, due = step_container(run, "nginx", replace(PLAIN, crash_loop=True), 5.0, ids(), BACK_OFF)
    assert crashed.state is RunState.CRASHED and due == 15.0
    assert crashed.last_termination == Termination(1, "Error", 1.0, 5.0, run.container_id)


def test_image_pull_errors_never_start_the_container() -> None:
    behaviour = replace(PLAIN, image_pull_error=True)
    run, due = step_container(new_container_run("app", "nginx", 0.0), "nginx", behaviour, 1.0, ids(), BACK_OFF)
    assert (run.state, run.failures, run.container_id, due) == (RunState.PULL_FAILED, 1, "", 11.0)
    run, due = step_container(run, "nginx", behaviour, 11.0, ids(), BACK_OFF)
    assert (run.state, run.failures, run.restart_count, due) == (RunState.PULL_FAILED, 2, 0, 31.0)
    assert not run.has_started


def test_a_pull_error_clears_when_the_annotation_goes() -> None:
    failing = replace(PLAIN, image_pull_error=True)
    run, _ = step_container(new_container_run("app", "nginx", 0.0), "nginx", failing, 1.0, ids(), BACK_OFF)
    run, due = step_container(run, "nginx", PLAIN, 2.0, ids(), BACK_OFF)
    assert (run.state, run.restart_count, run.started_at, due) == (RunState.RUNNING, 0, 2.0, 4.0)


def test_an_image_change_restarts_the_running_container_in_place() -> None:
    new_id = ids()
    run, _ = step_container(new_container_run("app", "nginx:1", 0.0), "nginx:1", PLAIN, 1.0, new_id, BACK_OFF)
    run, _ = step_container(run, "nginx:1", PLAIN, 5.0, new_id, BACK_OFF)
    assert is_container_ready(run, PLAIN, 5.0)

    restarted, due = step_container(run, "nginx:2", PLAIN, 6.0, new_id, BACK_OFF)
    assert restarted == ContainerRun(
        name="app", image="nginx:2", state=RunState.RUNNING, since=6.0, container_id="containerd://2",
        started_at=6.0, restart_count=1, last_termination=Termination(0, "Completed", 1.0, 6.0, "containerd://1"),
        ran_image="nginx:2",
    )
    assert due == 8.0
    assert not is_container_ready(restarted, PLAIN, 7.9)
    assert is_container_ready(restarted, PLAIN, 8.0)


def test_an_image_change_while_crashing_takes_effect_at_the_next_start() -> None:
    crashing = replace(PLAIN, crash_loop=True)
    new_id = ids()
    run, _ = step_container(new_container_run("app", "v1", 0.0), "v1", crashing, 1.0, new_id, BACK_OFF)
    run, due = step_container(run, "v2", crashing, 2.0, new_id, BACK_OFF)
    assert run.image == "v1" and due == 11.0
    run, _ = step_container(run, "v2", PLAIN, 11.0, new_id, BACK_OFF)
    assert (run.image, run.state, run.restart_count) == ("v2", RunState.RUNNING, 1)


def test_zero_delays_run_and_become_ready_at_once() -> None:
    instant = PodBehaviour(0.0, 0.0, 0.0)
    run, due = step_container(new_container_run("app", "nginx", 7.0), "nginx", instant, 7.0, ids(), BACK_OFF)
    assert run.state is RunState.RUNNING and due is None and is_container_ready(run, instant, 7.0)
