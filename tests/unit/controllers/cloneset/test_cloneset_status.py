"""Status counters and the Progressing condition (kruise ``cloneset_status.go``,
the rows of ``cloneset_status_test.go``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from cloneset_pods import NOW, make_cloneset, make_pod

from kubeloop.api import kruise
from kubeloop.api.meta import format_time
from kubeloop.controllers.cloneset.status import (
    calculate_status,
    status_changed,
    with_failure_condition,
    with_progressing_condition,
)

FIELDS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "updatedReadyReplicas",
    "updatedAvailableReplicas",
    "expectedUpdatedReplicas",
    "currentRevision",
    "updateRevision",
)
OLD = NOW - timedelta(seconds=30)


def _status(values: tuple[Any, ...], previous: tuple[str, str, Any] | None = None) -> dict[str, Any]:
    status = dict(zip(FIELDS, values))
    if previous is not None:
        state, reason, updated = previous
        stamp = format_time(updated)
        status["conditions"] = [
            {
                "type": kruise.CONDITION_PROGRESSING,
                "status": state,
                "reason": reason,
                "lastUpdateTime": stamp,
                "lastTransitionTime": stamp,
            }
        ]
    return status


def _cs(
    replicas: int, *, partition: str | None = None, paused: bool = False, deadline: int | None = 10
) -> dict[str, Any]:
    cs = make_cloneset(replicas, partition=partition, paused=paused)
    if deadline is not None:
        cs["spec"]["progressDeadlineSeconds"] = deadline
    return cs


def _reason(cs: dict[str, Any], status: dict[str, Any]) -> tuple[str, str] | None:
    result, _ = with_progressing_condition(cs, status, NOW)
    for condition in result.get("conditions", []):
        if condition["type"] == kruise.CONDITION_PROGRESSING:
            return condition["status"], condition["reason"]
    return None


T, F = "True", "False"
UPDATED = (T, kruise.REASON_UPDATED)
AVAILABLE = (T, kruise.REASON_AVAILABLE)
PAUSED = (T, kruise.REASON_PAUSED)
PARTITION = (T, kruise.REASON_PARTITION_AVAILABLE)
EXCEEDED = (F, kruise.REASON_DEADLINE_EXCEEDED)


@pytest.mark.parametrize(
    ("cs", "values", "previous", "expected"),
    [
        (_cs(10, deadline=None), (10,) * 7 + ("1", "1"), (T, kruise.REASON_UPDATED, NOW), None),
        (_cs(10, deadline=kruise.MAX_INT32), (10,) * 7 + ("1", "1"), (T, kruise.REASON_AVAILABLE, NOW), None),
        (_cs(10), (5, 4, 3, 2, 1, 1, 2, "1", "2"), None, UPDATED),
        (_cs(10, paused=True), (5, 4, 3, 2, 1, 1, 2, "1", "2"), None, PAUSED),
        (_cs(10), (10,) * 7 + ("1", "1"), None, AVAILABLE),
        (_cs(1), (10,) * 7 + ("1", "1"), None, UPDATED),
        (_cs(10, partition="90%"), (10, 10, 10, 1, 1, 1, 1, "1", "2"), None, PARTITION),
        (_cs(10), (5, 5, 5, 5, 5, 5, 10, "1", "1"), (T, kruise.REASON_AVAILABLE, NOW), UPDATED),
        (_cs(10), (5, 5, 5, 5, 5, 5, 10, "1", "2"), (T, kruise.REASON_UPDATED, OLD), EXCEEDED),
        (_cs(10), (5, 5, 5, 5, 5, 5, 10, "1", "2"), (T, kruise.REASON_AVAILABLE, NOW), UPDATED),
        (_cs(10, partition="50%"), (10, 10, 10, 5, 5, 5, 5, "1", "2"), (T, kruise.REASON_UPDATED, NOW), PARTITION),
        (_cs(6, partition="10%"), (10, 10, 10, 8, 8, 8, 5, "1", "2"), (T, kruise.REASON_UPDATED, NOW), PARTITION),
        (_cs(10), (10, 10, 10, 6, 6, 6, 8, "1", "2"), (T, kruise.REASON_UPDATED, NOW), UPDATED),
        (_cs(10), (10, 10, 10, 6, 6, 6, 8, "1", "2"), (T, kruise.REASON_UPDATED, OLD), EXCEEDED),
        (_cs(20), (20,) * 7 + ("2", "2"), (T, kruise.REASON_UPDATED, NOW), AVAILABLE),
        (_cs(10, paused=True), (10, 10, 10, 6, 6, 6, 8, "1", "2"), (T, kruise.REASON_UPDATED, NOW), PAUSED),
        (_cs(10, paused=True), (10, 10, 10, 6, 6, 6, 8, "1", "2"), (T, kruise.REASON_PAUSED, NOW), PAUSED),
        (_cs(10), (10, 10, 10, 6, 6, 6, 8, "1", "2"), (T, kruise.REASON_PAUSED, NOW), UPDATED),
        (_cs(10, paused=True), (10, 10, 10, 6, 6, 6, 8, "1", "2"), (F, kruise.REASON_DEADLINE_EXCEEDED, OLD), PAUSED),
        (_cs(10), (10, 10, 10, 6, 6, 6, 8, "1", "2"), (F, kruise.REASON_DEADLINE_EXCEEDED, NOW), EXCEEDED),
        (_cs(10), (10, 10, 10, 3, 3, 3, 5, "1", "2"), (T, kruise.REASON_PARTITION_AVAILABLE, NOW), UPDATED),
        (_cs(10), (10, 10, 10, 5, 5, 5, 5, "1", "2"), (T, kruise.REASON_UPDATED, NOW), PARTITION),
    ],
)
def test_progressing_condition(
    cs: dict[str, Any], values: tuple[Any, ...], previous: tuple[str, str, Any] | None, expected: tuple[str, str] | None
) -> None:
    assert _reason(cs, _status(values, previous)) == expected


def test_same_reason_keeps_the_condition_and_requeues_at_the_deadline() -> None:
    status = _status((5, 4, 3, 2, 1, 1, 2, "1", "2"), (T, kruise.REASON_UPDATED, NOW - timedelta(seconds=4)))
    result, delay = with_progressing_condition(_cs(10), status, NOW)
    assert result["conditions"] == status["conditions"]
    assert delay == pytest.approx(7.0)
    _, short = with_progressing_condition(
        _cs(10), _status((5, 4, 3, 2, 1, 1, 2, "1", "2"), (T, kruise.REASON_UPDATED, NOW - timedelta(seconds=10))), NOW
    )
    assert short == pytest.approx(0.0)


def test_reason_change_keeps_the_transition_time() -> None:
    status = _status((10,) * 7 + ("1", "1"), (T, kruise.REASON_UPDATED, OLD))
    result, delay = with_progressing_condition(_cs(10), status, NOW)
    condition = result["conditions"][0]
    assert condition["reason"] == kruise.REASON_AVAILABLE
    assert condition["lastTransitionTime"] == format_time(OLD)
    assert condition["lastUpdateTime"] == format_time(NOW)
    assert delay is None


def test_calculate_status_counts_pods() -> None:
    cs = make_cloneset(4, partition=1, min_ready_seconds=60)
    cs["metadata"]["generation"] = 3
    pods = [
        make_pod("a", "new"),
        make_pod("b", "new", ready_since=NOW - timedelta(seconds=5)),
        make_pod("c", "new", state=kruise.STATE_PREPARING_NORMAL),
        make_pod("d", "old", ready=False),
        make_pod("e", "old", in_place_ready=False),
    ]
    status, delay = calculate_status(
        cs, pods, update_revision="new", current_revision="old", collision_count=0, label_selector="app=cs", now=NOW
    )
    assert delay is None
    assert {k: status[k] for k in FIELDS} == {
        "replicas": 5,
        "readyReplicas": 3,
        "availableReplicas": 1,
        "updatedReplicas": 3,
        "updatedReadyReplicas": 3,
        "updatedAvailableReplicas": 1,
        "expectedUpdatedReplicas": 3,
        "currentRevision": "old",
        "updateRevision": "new",
    }
    assert status["observedGeneration"] == 3
    assert status["labelSelector"] == "app=cs"


def test_current_revision_flips_when_every_pod_is_updated() -> None:
    cs = make_cloneset(2)
    pods = [make_pod("a", "new", ready=False), make_pod("b", "new", ready=False)]
    status, _ = calculate_status(
        cs, pods, update_revision="new", current_revision="old", collision_count=0, label_selector="", now=NOW
    )
    assert status["currentRevision"] == "new"


def test_status_changed() -> None:
    old = _status((1,) * 7 + ("a", "a"))
    old["observedGeneration"] = 2
    same = dict(old)
    assert not status_changed(old, same)
    assert status_changed(old, {**old, "readyReplicas": 0})
    assert status_changed(old, {**old, "observedGeneration": 3})
    failed = with_failure_condition(old, kruise.CONDITION_FAILED_SCALE, "boom", NOW)
    assert failed["conditions"][0]["message"] == "boom"
    assert not status_changed(old, failed)
    with_progressing = _status((1,) * 7 + ("a", "a"), (T, kruise.REASON_UPDATED, NOW))
    with_progressing["observedGeneration"] = 2
    assert status_changed(old, with_progressing)
