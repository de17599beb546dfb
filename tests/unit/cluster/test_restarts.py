"""The supervisor's restart policy: doubling delays, a bounded run of crashes, reset after a healthy run."""

from __future__ import annotations

import signal

import pytest

from kubeloop.cluster.restarts import Decision, RestartPolicy, describe_exit

POLICY = RestartPolicy(initial=1.0, maximum=5.0, limit=4, reset_after=60.0)


@pytest.mark.parametrize(("previous", "ran_for", "expected"), [
    (0, 0.5, Decision(1, 1.0)),     # first crash: the initial delay
    (1, 0.5, Decision(2, 2.0)),     # doubling...
    (2, 10.0, Decision(3, 4.0)),
    (3, 10.0, Decision(4, 5.0)),    # ...capped at the maximum
    (4, 10.0, Decision(5, None)),   # past the limit: give up
    (4, 60.0, Decision(1, 1.0)),    # a child that ran long enough counts as healthy again
    (9, 3600.0, Decision(1, 1.0)),
])
def test_decisions(previous: int, ran_for: float, expected: Decision) -> None:
    assert POLICY.decide(previous, ran_for) == expected


@pytest.mark.parametrize(("returncode", "text"), [
    (1, "exited with code 1"),
    (0, "exited with code 0"),
    (-signal.SIGKILL, "was killed by SIGKILL"),
    (-signal.SIGSEGV, "was killed by SIGSEGV"),
    (-200, "was killed by signal 200"),
])
def test_exits_described(returncode: int, text: str) -> None:
    assert describe_exit(returncode) == text
