"""Deployment status, conditions and progress deadlines (upstream
``pkg/controller/deployment/sync.go`` ``calculateStatus``, ``progress.go`` ``syncRolloutStatus``,
``requeueStuckDeployment``; ``util`` ``DeploymentComplete``, ``DeploymentProgressing``, ``DeploymentTimedOut``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from deployment_builders import Obj, deployment, replica_set

from kubeloop.api.meta import format_time
from kubeloop.controllers.deployment import conditions as cond
from kubeloop.controllers.deployment.status import (
    calculate_status,
    deployment_complete,
    deployment_progressing,
    deployment_timed_out,
    paused_condition_status,
    rollout_status,
    status_equal,
    stuck_deployment_requeue,
)

MAX_INT32 = 2**31 - 1
TEST_TIME = datetime(2017, 2, 15, 18, 49, 0, tzinfo=UTC)


def _counts(replicas: int, updated: int, ready: int, available: int) -> Obj:
    return {"replicas": replicas, "updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": available}


@pytest.mark.parametrize(
    ("replicas", "current", "updated", "available", "unavailable", "surge", "expected"),
    [
        (5, 5, 5, 4, 1, 0, False),  # minimum availability reached, not all available
        (5, 5, 5, 3, 1, 0, False),
        (5, 5, 5, 5, 0, 0, True),
        (5, 5, 4, 5, 0, 0, False),  # not all updated
        (1, 2, 1, 1, 0, 1, False),  # an old pod still runs
        (1, 1, 1, 0, 1, 1, False),  # never comes up
    ],
)
def test_deployment_complete(
    replicas: int, current: int, updated: int, available: int, unavailable: int, surge: int, expected: bool
) -> None:
    d = deployment(
        replicas, max_surge=surge, max_unavailable=unavailable, status=_counts(current, updated, 0, available)
    )
    assert deployment_complete(d, d["status"]) is expected


def test_deployment_complete_needs_the_generation_observed() -> None:
    d = deployment(2, generation=3, status={**_counts(2, 2, 2, 2), "observedGeneration": 2})
    assert not deployment_complete(d, d["status"])
    assert deployment_complete(d, {**d["status"], "observedGeneration": 3})


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ((10, 4, 4, 4), (10, 6, 4, 4), True),  # more updated
        ((10, 4, 4, 4), (10, 4, 4, 4), False),
        ((10, 4, 6, 6), (8, 4, 6, 6), True),  # fewer old pods
        ((10, 7, 3, 3), (10, 6, 3, 3), False),  # fewer updated is no progress
        ((10, 4, 7, 7), (8, 8, 5, 5), True),  # fewer in total but more updated
        ((10, 10, 9, 8), (10, 10, 10, 8), True),  # more ready
        ((10, 10, 10, 9), (10, 10, 10, 10), True),  # more available
    ],
)
def test_deployment_progressing(
    before: tuple[int, int, int, int], after: tuple[int, int, int, int], expected: bool
) -> None:
    assert deployment_progressing(deployment(10, status=_counts(*before)), _counts(*after)) is expected


def _progressing(reason: str, status: str = "True", at: datetime = TEST_TIME) -> Obj:
    return {
        "type": "Progressing",
        "status": status,
        "reason": reason,
        "lastUpdateTime": format_time(at),
        "lastTransitionTime": format_time(at),
    }


def _at(minute: int, second: int) -> datetime:
    return datetime(2016, 1, 1, 0, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(
    ("deadline", "reason", "since", "now", "expected"),
    [
        (None, "", _at(1, 9), _at(1, 20), False),
        (MAX_INT32, "", _at(1, 9), _at(1, 20), False),
        (10, "", _at(1, 9), _at(1, 20), True),  # 11 s since the last progress
        (10, "", _at(1, 11), _at(1, 20), False),  # 9 s
        (10, "", _at(1, 10), _at(1, 20), False),  # exactly the deadline: not yet (strictly before)
        (None, cond.NEW_RS_AVAILABLE, _at(1, 9), _at(1, 20), False),
        (10, cond.NEW_RS_AVAILABLE, _at(1, 9), _at(1, 20), False),  # a finished rollout never times out
        (10, cond.TIMED_OUT, _at(1, 19), _at(1, 20), True),  # already reported
    ],
)
def test_deployment_timed_out(
    deadline: int | None, reason: str, since: datetime, now: datetime, expected: bool
) -> None:
    d = deployment(1, progress_deadline=deadline)
    status = {"conditions": [_progressing(reason, at=since)]}
    assert deployment_timed_out(d, status, now) is expected
    assert deployment_timed_out(d, {}, now) is False  # no Progressing condition: nothing to measure


STUCK_AT = datetime(2017, 2, 15, 18, 49, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("deadline", "counts", "condition", "now", "expected"),
    [
        (None, (4, 3, 3, 2), None, STUCK_AT, None),
        (MAX_INT32, (4, 3, 3, 2), _progressing(cond.REPLICA_SET_UPDATED, at=STUCK_AT), STUCK_AT, None),
        (60, (4, 3, 3, 2), None, STUCK_AT, None),
        (60, (3, 3, 3, 3), _progressing(cond.REPLICA_SET_UPDATED, at=STUCK_AT), STUCK_AT, None),  # complete
        (60, (3, 3, 3, 0), _progressing(cond.TIMED_OUT, "False", STUCK_AT), STUCK_AT, None),
        (60, (3, 3, 3, 1), _progressing(cond.REPLICA_SET_UPDATED, at=STUCK_AT), STUCK_AT + timedelta(seconds=30), 30),
        (60, (3, 3, 3, 1), _progressing(cond.REPLICA_SET_UPDATED, at=STUCK_AT), STUCK_AT + timedelta(seconds=59), 1),
        (
            60,
            (3, 3, 3, 1),
            _progressing(cond.REPLICA_SET_UPDATED, at=STUCK_AT),
            STUCK_AT + timedelta(seconds=59, microseconds=1),
            0,
        ),
        (60, (3, 3, 3, 1), _progressing(cond.REPLICA_SET_UPDATED, at=STUCK_AT), STUCK_AT + timedelta(seconds=60), 0),
        (60, (3, 3, 3, 1), _progressing(cond.REPLICA_SET_UPDATED, at=STUCK_AT), STUCK_AT + timedelta(seconds=61), 0),
        (60, (3, 3, 3, 1), _progressing(cond.REPLICA_SET_UPDATED, at=STUCK_AT), STUCK_AT + timedelta(minutes=2), 0),
    ],
)
def test_stuck_deployment_requeue(
    deadline: int | None, counts: tuple[int, int, int, int], condition: Obj | None, now: datetime, expected: int | None
) -> None:
    replicas, current, updated, available = counts
    status = {"replicas": current, "updatedReplicas": updated, "availableReplicas": available}
    if condition is not None:
        status["conditions"] = [condition]
    d = deployment(replicas, strategy="Recreate", progress_deadline=deadline, status=status)
    delay = stuck_deployment_requeue(d, d["status"], now)
    assert delay == (None if expected is None else timedelta(seconds=expected))


def _rollout_deployment(
    deadline: int | None, replicas: int, counts: tuple[int, int, int], conditions: list[Obj]
) -> Obj:
    current, updated, available = counts
    status = {"replicas": current, "updatedReplicas": updated, "availableReplicas": available, "conditions": conditions}
    d = deployment(replicas, strategy="Recreate", progress_deadline=deadline, status=status)
    d["metadata"]["name"] = "progress-test"
    return d


def _rs(name: str, spec: int, current: int, available: int) -> Obj:
    return replica_set(name, spec, status_replicas=current, available=available)


LATER = datetime(2026, 1, 1, tzinfo=UTC)
TIMED_OUT = {"type": "Progressing", "status": "False", "reason": cond.TIMED_OUT}
AVAILABLE_AT_TEST_TIME = _progressing(cond.NEW_RS_AVAILABLE)
UPDATED_AT_TEST_TIME = _progressing(cond.REPLICA_SET_UPDATED)

ROLLOUT_CASES: list[
    tuple[str, Obj, list[Obj], Obj | None, tuple[str, str] | None, datetime | None, datetime | None]
] = [
    # name, deployment, old ReplicaSets, new ReplicaSet, (status, reason), kept update time, kept transition time
    (
        "no deadline: Progressing removed",
        _rollout_deployment(None, 3, (2, 2, 2), [UPDATED_AT_TEST_TIME]),
        [_rs("bar", 0, 1, 1)],
        _rs("foo", 3, 2, 2),
        None,
        None,
        None,
    ),
    (
        "one active ReplicaSet after completion: no estimation",
        _rollout_deployment(60, 3, (3, 3, 3), [AVAILABLE_AT_TEST_TIME]),
        [_rs("bar", 3, 3, 3)],
        None,
        ("True", cond.NEW_RS_AVAILABLE),
        TEST_TIME,
        TEST_TIME,
    ),
    (
        "progress keeps lastTransitionTime of a True condition",
        _rollout_deployment(60, 3, (2, 2, 2), [UPDATED_AT_TEST_TIME]),
        [_rs("bar", 0, 1, 1)],
        _rs("foo", 3, 2, 2),
        ("True", cond.REPLICA_SET_UPDATED),
        LATER,
        TEST_TIME,
    ),
    (
        "progress after a timeout replaces everything",
        _rollout_deployment(60, 3, (2, 2, 2), [TIMED_OUT]),
        [_rs("bar", 0, 1, 1)],
        _rs("foo", 3, 2, 2),
        ("True", cond.REPLICA_SET_UPDATED),
        LATER,
        LATER,
    ),
    (
        "progress creates the condition",
        _rollout_deployment(60, 3, (2, 2, 2), []),
        [_rs("bar", 0, 1, 1)],
        _rs("foo", 3, 2, 2),
        ("True", cond.REPLICA_SET_UPDATED),
        LATER,
        LATER,
    ),
    (
        "completion keeps lastTransitionTime of a True condition",
        _rollout_deployment(60, 3, (3, 3, 3), [UPDATED_AT_TEST_TIME]),
        [],
        _rs("foo", 3, 3, 3),
        ("True", cond.NEW_RS_AVAILABLE),
        LATER,
        TEST_TIME,
    ),
    (
        "completion after a timeout",
        _rollout_deployment(60, 3, (3, 3, 3), [TIMED_OUT]),
        [],
        _rs("foo", 3, 3, 3),
        ("True", cond.NEW_RS_AVAILABLE),
        LATER,
        LATER,
    ),
    (
        "completion creates the condition",
        _rollout_deployment(60, 3, (3, 3, 3), []),
        [],
        _rs("foo", 3, 3, 3),
        ("True", cond.NEW_RS_AVAILABLE),
        LATER,
        LATER,
    ),
    (
        "scaled to zero without a new ReplicaSet",
        _rollout_deployment(60, 0, (3, 3, 3), [UPDATED_AT_TEST_TIME]),
        [_rs("foo", 0, 0, 0)],
        None,
        ("True", cond.NEW_RS_AVAILABLE),
        LATER,
        TEST_TIME,  # same status, new reason: the transition time stays
    ),
    (
        "no progress past the deadline",
        _rollout_deployment(60, 3, (2, 2, 2), [UPDATED_AT_TEST_TIME]),
        [],
        _rs("foo", 3, 2, 2),
        ("False", cond.TIMED_OUT),
        LATER,
        LATER,
    ),
    (
        "an existing timeout stays as it is",
        _rollout_deployment(60, 3, (2, 2, 2), [_progressing(cond.TIMED_OUT, "False")]),
        [],
        _rs("foo", 3, 2, 2),
        ("False", cond.TIMED_OUT),
        TEST_TIME,
        TEST_TIME,
    ),
]


@pytest.mark.parametrize(
    ("d", "old", "new", "expected", "update_time", "transition_time"),
    [case[1:] for case in ROLLOUT_CASES],
    ids=[case[0] for case in ROLLOUT_CASES],
)
def test_rollout_status(
    d: Obj,
    old: list[Obj],
    new: Obj | None,
    expected: tuple[str, str] | None,
    update_time: datetime | None,
    transition_time: datetime | None,
) -> None:
    status = rollout_status([*old, new], new, d, LATER)
    progressing = cond.get_condition(status, cond.PROGRESSING)
    if expected is None:
        assert progressing is None
        return
    assert progressing is not None
    assert (progressing["status"], progressing["reason"]) == expected
    assert update_time is not None and transition_time is not None
    assert progressing["lastUpdateTime"] == format_time(update_time)
    assert progressing["lastTransitionTime"] == format_time(transition_time)


def test_rollout_status_messages() -> None:
    d = _rollout_deployment(60, 3, (3, 3, 3), [])
    complete = cond.get_condition(
        rollout_status([_rs("foo", 3, 3, 3)], _rs("foo", 3, 3, 3), d, LATER), cond.PROGRESSING
    )
    assert complete is not None and complete["message"] == 'ReplicaSet "foo" has successfully progressed.'
    without_new = cond.get_condition(
        rollout_status([], None, _rollout_deployment(60, 0, (1, 0, 0), []), LATER), "Progressing"
    )
    assert (
        without_new is not None and without_new["message"] == 'Deployment "progress-test" has successfully progressed.'
    )
    stuck = _rollout_deployment(60, 3, (2, 2, 2), [UPDATED_AT_TEST_TIME])
    timed_out = cond.get_condition(
        rollout_status([_rs("foo", 3, 2, 2)], _rs("foo", 3, 2, 2), stuck, LATER), "Progressing"
    )
    assert timed_out is not None and timed_out["message"] == 'ReplicaSet "foo" has timed out progressing.'


def test_replica_failure_is_copied_from_the_new_replica_set_first() -> None:
    failure_old = {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedDelete",
        "message": "old",
        "lastTransitionTime": "2020-01-01T00:00:00Z",
    }
    failure_new = {**failure_old, "reason": "FailedCreate", "message": "quota exceeded"}
    d = _rollout_deployment(None, 3, (2, 2, 2), [])
    old = replica_set("old", 1, conditions=[failure_old])
    new = replica_set("new", 2, conditions=[failure_new])
    status = rollout_status([old, new], new, d, LATER)
    assert cond.get_condition(status, "ReplicaFailure") == {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": "quota exceeded",
        "lastUpdateTime": "2020-01-01T00:00:00Z",
        "lastTransitionTime": "2020-01-01T00:00:00Z",
    }
    status = rollout_status([old, replica_set("new", 2)], replica_set("new", 2), d, LATER)
    failure = cond.get_condition(status, "ReplicaFailure")
    assert failure is not None and failure["reason"] == "FailedDelete"
    cleared = {**d, "status": status}
    assert cond.get_condition(rollout_status([replica_set("new", 2)], None, cleared, LATER), "ReplicaFailure") is None


def test_calculate_status_counts_and_availability() -> None:
    foreign = {"type": "StatusUpdate", "status": "True", "reason": "E2E", "message": "Set from e2e test"}
    d = deployment(
        10, max_surge=3, max_unavailable=2, generation=4, status={"collisionCount": 1, "conditions": [foreign]}
    )
    old = replica_set("old", 8, status_replicas=9, ready=8, available=8)
    new = replica_set("new", 5, status_replicas=4, ready=1, available=0)
    status = calculate_status([old, new], new, d, LATER)
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        "observedGeneration": 4,
        "replicas": 13,
        "updatedReplicas": 4,
        "readyReplicas": 9,
        "availableReplicas": 8,
        "unavailableReplicas": 5,  # Σ spec 13 - 8 available, not R - available
        "terminatingReplicas": 0,  # no ReplicaSet synced yet: none counted
        "collisionCount": 1,
    }
    assert status["conditions"][0] == foreign  # foreign conditions survive
    available = cond.get_condition(status, cond.AVAILABLE)
    assert available is not None
    assert (available["status"], available["reason"], available["message"]) == (
        "True",
        cond.MINIMUM_REPLICAS_AVAILABLE,
        "Deployment has minimum availability.",
    )
    short = calculate_status([replica_set("old", 8, available=7), new], new, d, LATER)
    unavailable = cond.get_condition(short, cond.AVAILABLE)
    assert unavailable is not None
    assert (unavailable["status"], unavailable["reason"], unavailable["message"]) == (
        "False",
        cond.MINIMUM_REPLICAS_UNAVAILABLE,
        "Deployment does not have minimum availability.",
    )
    assert d["status"]["conditions"] == [foreign]  # the input is untouched


def test_calculate_status_terminating_replicas() -> None:
    d = deployment(2)
    synced = replica_set("a", 1, observed_generation=1)
    synced["status"]["terminatingReplicas"] = 2
    unsynced = replica_set("b", 1)
    assert calculate_status([synced, unsynced], None, d, LATER)["terminatingReplicas"] == 2
    silent = replica_set("c", 1, observed_generation=1)
    assert "terminatingReplicas" not in calculate_status([synced, silent], None, d, LATER)


def test_available_condition_keeps_its_times_while_unchanged() -> None:
    d = deployment(1, max_unavailable=1)
    first = calculate_status([replica_set("a", 1, available=1)], None, d, TEST_TIME)
    again = calculate_status([replica_set("a", 1, available=1)], None, {**d, "status": first}, LATER)
    assert cond.get_condition(again, cond.AVAILABLE) == cond.get_condition(first, cond.AVAILABLE)
    assert status_equal(first, again)


def test_paused_and_resumed_conditions() -> None:
    paused = deployment(1, progress_deadline=600, paused=True)
    status = paused_condition_status(paused, TEST_TIME)
    assert status is not None
    progressing = cond.get_condition(status, cond.PROGRESSING)
    assert progressing is not None
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "Unknown",
        cond.PAUSED,
        "Deployment is paused",
    )
    assert paused_condition_status({**paused, "status": status}, LATER) is None
    resumed = deployment(1, progress_deadline=600, status=status)
    after = paused_condition_status(resumed, LATER)
    assert after is not None
    progressing = cond.get_condition(after, cond.PROGRESSING)
    assert progressing is not None and progressing["reason"] == cond.RESUMED
    assert progressing["lastUpdateTime"] == format_time(LATER)
    assert paused_condition_status(deployment(1, paused=True), LATER) is None  # no deadline
    timed_out = deployment(1, progress_deadline=600, paused=True, status={"conditions": [TIMED_OUT]})
    assert paused_condition_status(timed_out, LATER) is None


def test_status_equal_ignores_omitted_zero_fields() -> None:
    assert status_equal({"replicas": 3}, {"replicas": 3, "readyReplicas": 0, "conditions": []})
    assert not status_equal({"replicas": 3}, {"replicas": 2})
    assert not status_equal({}, {"collisionCount": 0})
    assert not status_equal({}, {"terminatingReplicas": 0})


def test_condition_helpers() -> None:
    progressing = {"type": "Progressing", "status": "False", "reason": "ForSomeReason"}
    available = {"type": "Available", "status": "True", "reason": "AwesomeController"}
    status = {"conditions": [progressing, available]}
    assert cond.get_condition(status, "Available") == available
    assert cond.get_condition(status, "ReplicaFailure") is None

    assert cond.with_condition({}, available)["conditions"] == [available]
    assert cond.with_condition({"conditions": [progressing]}, available)["conditions"] == [progressing, available]
    better = {"type": "Progressing", "status": "True", "reason": "BecauseItIs"}
    assert cond.with_condition({"conditions": [progressing]}, better)["conditions"] == [better]

    assert cond.without_condition({}, "Progressing")["conditions"] == []
    assert cond.without_condition({"conditions": [progressing]}, "Progressing")["conditions"] == []
    assert cond.without_condition(status, "ReplicaFailure")["conditions"] == [progressing, available]


def test_setting_a_condition_keeps_times_by_upstream_rules() -> None:
    old = cond.new_condition("Progressing", "True", "A", "first", TEST_TIME)
    same = cond.with_condition({"conditions": [old]}, cond.new_condition("Progressing", "True", "A", "again", LATER))
    assert same["conditions"] == [old]  # same status and reason: nothing changes
    reason = cond.with_condition({"conditions": [old]}, cond.new_condition("Progressing", "True", "B", "new", LATER))
    assert reason["conditions"][0]["lastTransitionTime"] == format_time(TEST_TIME)
    assert reason["conditions"][0]["lastUpdateTime"] == format_time(LATER)
    flipped = cond.with_condition({"conditions": [old]}, cond.new_condition("Progressing", "False", "B", "x", LATER))
    assert flipped["conditions"][0]["lastTransitionTime"] == format_time(LATER)
