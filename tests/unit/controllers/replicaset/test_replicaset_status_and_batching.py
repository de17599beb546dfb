"""ReplicaSet status, requeues, replica diff and slow-start batches (upstream
``replica_set_utils.go`` ``calculateStatus``, ``replica_set.go`` ``manageReplicas``, ``slowStartBatch``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubeloop.api.meta import format_time
from kubeloop.controllers.replicaset.batching import (
    BURST_REPLICAS,
    replicas_to_manage,
    slow_start_batch,
    slow_start_batch_sizes,
)
from kubeloop.controllers.replicaset.status import (
    availability_recheck_after,
    became_ready_recheck_after,
    calculate_status,
    status_needs_update,
    status_to_write,
)

Obj = dict[str, Any]
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def _replica_set(replicas: int, min_ready: int = 0, status: Obj | None = None, generation: int = 1) -> Obj:
    return {
        "metadata": {"name": "rs", "generation": generation},
        "spec": {
            "replicas": replicas,
            "minReadySeconds": min_ready,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web", "extra": "yes"}}},
        },
        "status": dict(status or {}),
    }


def _pod(ready: bool | None, since: datetime | None = None, labels: dict[str, str] | None = None) -> Obj:
    conditions = []
    if ready is not None:
        condition: Obj = {"type": "Ready", "status": "True" if ready else "False"}
        if since is not None:
            condition["lastTransitionTime"] = format_time(since)
        conditions.append(condition)
    return {
        "metadata": {"labels": labels if labels is not None else {"app": "web", "extra": "yes"}},
        "status": {"phase": "Running", "conditions": conditions},
    }


def test_ready_and_available_with_min_ready_seconds() -> None:
    rs = _replica_set(3, min_ready=3600)
    pods = [_pod(False), _pod(True, NOW), _pod(True, NOW - timedelta(hours=2))]
    status = calculate_status(rs, pods, None, NOW)
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 2, 1)


def test_fully_labeled_replicas_need_every_template_label() -> None:
    pods = [_pod(True, NOW), _pod(True, NOW, labels={"app": "web"})]
    status = calculate_status(_replica_set(2), pods, None, NOW)
    assert (status["replicas"], status["fullyLabeledReplicas"], status["availableReplicas"]) == (2, 1, 2)


def test_replica_failure_condition() -> None:
    failing = calculate_status(_replica_set(3), [_pod(True, NOW)], "pods is forbidden: quota", NOW)
    assert failing["conditions"] == [
        {
            "type": "ReplicaFailure",
            "status": "True",
            "lastTransitionTime": format_time(NOW),
            "reason": "FailedCreate",
            "message": "pods is forbidden: quota",
        }
    ]
    too_many = calculate_status(_replica_set(0), [_pod(True, NOW)], "boom", NOW)
    assert too_many["conditions"][0]["reason"] == "FailedDelete"
    later = NOW + timedelta(minutes=1)
    kept = calculate_status(_replica_set(3, status=failing), [_pod(True, NOW)], "another error", later)
    assert kept["conditions"] == failing["conditions"]  # an existing failure is not rewritten
    cleared = calculate_status(_replica_set(3, status=failing), [_pod(True, NOW)], None, later)
    assert "conditions" not in cleared  # omitted when empty, as upstream's omitempty


def test_terminating_replicas() -> None:
    terminating = calculate_status(_replica_set(1), [_pod(True, NOW)], None, NOW, terminating_pods=[_pod(True, NOW)])
    assert terminating["terminatingReplicas"] == 1
    unknown = calculate_status(_replica_set(1, status={"terminatingReplicas": 4}), [], None, NOW)
    assert "terminatingReplicas" not in unknown


def test_status_update_decision() -> None:
    rs = _replica_set(
        2,
        status={
            "replicas": 2,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "fullyLabeledReplicas": 2,
            "observedGeneration": 1,
        },
    )
    same = calculate_status(rs, [_pod(True, NOW), _pod(True, NOW)], None, NOW)
    assert not status_needs_update(rs, same)
    assert status_needs_update(rs, calculate_status(rs, [_pod(True, NOW)], None, NOW))
    newer_spec = _replica_set(2, status=rs["status"], generation=2)
    assert status_needs_update(newer_spec, same)
    assert status_to_write(newer_spec, same)["observedGeneration"] == 2
    assert status_needs_update(rs, {**same, "terminatingReplicas": 0})


def test_availability_recheck() -> None:
    waiting = _replica_set(2, min_ready=30, status={"readyReplicas": 2, "availableReplicas": 1})
    assert availability_recheck_after(waiting, manage_failed=False) == timedelta(seconds=30)
    assert availability_recheck_after(waiting, manage_failed=True) is None
    done = _replica_set(2, min_ready=30, status={"readyReplicas": 2, "availableReplicas": 2})
    assert availability_recheck_after(done, manage_failed=False) is None
    assert availability_recheck_after(_replica_set(2, status={"readyReplicas": 2}), manage_failed=False) is None
    assert became_ready_recheck_after(_pod(False), _pod(True, NOW), 10) == timedelta(seconds=11)
    assert became_ready_recheck_after(_pod(True, NOW), _pod(True, NOW), 10) is None
    assert became_ready_recheck_after(_pod(False), _pod(True, NOW), 0) is None


@pytest.mark.parametrize(
    ("active", "desired", "expected"),
    [(0, 3, 3), (5, 3, -2), (3, 3, 0), (0, 5000, BURST_REPLICAS), (2000, 0, -BURST_REPLICAS)],
)
def test_replicas_to_manage(active: int, desired: int, expected: int) -> None:
    assert replicas_to_manage(active, desired) == expected


def test_slow_start_batch_sizes() -> None:
    assert slow_start_batch_sizes(10) == [1, 2, 4, 3]
    assert slow_start_batch_sizes(0) == []
    assert slow_start_batch_sizes(500)[:4] == [1, 2, 4, 8] and sum(slow_start_batch_sizes(500)) == 500


@pytest.mark.parametrize(
    ("count", "limit", "successes", "failed", "calls"),
    [(10, 0, 0, True, 1), (10, 10, 10, False, 10), (10, 5, 5, True, 7)],
)
async def test_slow_start_batch(count: int, limit: int, successes: int, failed: bool, calls: int) -> None:
    made = 0

    async def create() -> None:
        nonlocal made
        made += 1
        if made > limit:
            raise RuntimeError("quota exceeded")

    done, error = await slow_start_batch(count, create)
    assert (done, error is not None, made) == (successes, failed, calls)
