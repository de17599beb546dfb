from __future__ import annotations

from typing import Any

import pytest

from kubeloop.dashboard.progress import CLONESET, DEPLOYMENT, RolloutPhase, rollout_verdict, workload_progress
from tests.unit.dashboard.builders import cloneset, deployment


@pytest.mark.parametrize(("replicas", "strategy", "surge", "unavailable"), [
    # 25% of 4: surge rounds up to 1, unavailable rounds down to 1.
    (4, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}, 1, 1),
    # 25% of 10: surge ceil(2.5)=3, unavailable floor(2.5)=2.
    (10, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}, 3, 2),
    # Both round to 0: unavailable becomes 1 so the rollout can move.
    (3, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "10%"}}, 0, 1),
    (5, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}}, 2, 0),
    # Recreate has no budget at all.
    (5, {"type": "Recreate"}, 0, 0),
])
def test_deployment_bounds(replicas: int, strategy: dict[str, Any], surge: int, unavailable: int) -> None:
    progress = workload_progress(DEPLOYMENT, deployment(replicas=replicas, strategy=strategy))
    assert (progress.max_surge, progress.max_unavailable) == (surge, unavailable)
    assert progress.max_pods == replicas + surge
    assert progress.min_available == replicas - unavailable
    assert progress.as_json()["maxPods"] == replicas + surge


@pytest.mark.parametrize(("kwargs", "surge", "unavailable", "expected_updated"), [
    # Default maxUnavailable 20% of 4 rounds up (no surge): 1.
    ({}, 0, 1, 4),
    # With a surge, maxUnavailable rounds down: 20% of 4 -> 0.
    ({"max_surge": "50%"}, 2, 0, 4),
    ({"max_surge": 1, "max_unavailable": 2}, 1, 2, 4),
    # A partition keeps pods on the old revision: 4 - ceil(50% of 4) = 2 to update.
    ({"partition": "50%"}, 0, 1, 2),
    ({"partition": 3}, 0, 1, 1),
    # Unparsable values count as nothing, as in the controller.
    ({"max_surge": "lots"}, 0, 1, 4),
])
def test_cloneset_bounds(kwargs: dict[str, Any], surge: int, unavailable: int, expected_updated: int) -> None:
    cs = cloneset(**kwargs)
    del cs["status"]["updateRevision"]
    progress = workload_progress(CLONESET, cs)
    assert (progress.max_surge, progress.max_unavailable, progress.expected_updated) == (
        surge, unavailable, expected_updated)


def test_cloneset_expected_updated_prefers_status() -> None:
    cs = cloneset(partition=1, status={"expectedUpdatedReplicas": 2})
    assert workload_progress(CLONESET, cs).expected_updated == 2


def progressing(reason: str) -> dict[str, Any]:
    return {"conditions": [{"type": "Progressing", "status": "False", "reason": reason}]}


@pytest.mark.parametrize(("obj", "phase", "message"), [
    (deployment(generation=3, observed=2), RolloutPhase.WAITING,
     "Waiting for deployment spec update to be observed..."),
    (deployment(status={"replicas": 5, "updatedReplicas": 2, **progressing("ProgressDeadlineExceeded")}),
     RolloutPhase.FAILED, 'deployment "web" exceeded its progress deadline'),
    (deployment(status={"replicas": 5, "updatedReplicas": 2}), RolloutPhase.PROGRESSING,
     'Waiting for deployment "web" rollout to finish: 2 out of 4 new replicas have been updated...'),
    (deployment(status={"replicas": 5, "updatedReplicas": 4, "availableReplicas": 4}), RolloutPhase.PROGRESSING,
     'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...'),
    (deployment(status={"replicas": 4, "updatedReplicas": 4, "availableReplicas": 3}), RolloutPhase.PROGRESSING,
     'Waiting for deployment "web" rollout to finish: 3 of 4 updated replicas are available...'),
    (deployment(status={"replicas": 4, "updatedReplicas": 4, "availableReplicas": 4}), RolloutPhase.COMPLETE,
     'deployment "web" successfully rolled out'),
])
def test_deployment_verdict(obj: dict[str, Any], phase: RolloutPhase, message: str) -> None:
    verdict = rollout_verdict(DEPLOYMENT, obj)
    assert (verdict.phase, verdict.message) == (phase, message)
    assert verdict.as_json() == {"phase": phase.value, "message": message}


@pytest.mark.parametrize(("obj", "phase", "fragment"), [
    (cloneset(generation=2, observed=1), RolloutPhase.WAITING, "spec update to be observed"),
    (cloneset(status=progressing("ProgressDeadlineExceeded")), RolloutPhase.FAILED, "exceeded its progress deadline"),
    (cloneset(status={"replicas": 4, "updatedReplicas": 1}), RolloutPhase.PROGRESSING,
     "1 out of 4 new replicas have been updated"),
    # A partition of 2: two updated and available pods complete the rollout, old pods stay.
    (cloneset(partition=2, status={"replicas": 4, "updatedReplicas": 2, "updatedAvailableReplicas": 2,
                                   "availableReplicas": 4}), RolloutPhase.COMPLETE, "successfully rolled out"),
    (cloneset(partition=2, status={"replicas": 4, "updatedReplicas": 2, "updatedAvailableReplicas": 1}),
     RolloutPhase.PROGRESSING, "1 of 2 updated replicas are available"),
    # A surge pod not yet removed.
    (cloneset(status={"replicas": 5, "updatedReplicas": 4, "updatedAvailableReplicas": 4}),
     RolloutPhase.PROGRESSING, "1 old replicas are pending termination"),
])
def test_cloneset_verdict(obj: dict[str, Any], phase: RolloutPhase, fragment: str) -> None:
    verdict = rollout_verdict(CLONESET, obj)
    assert verdict.phase == phase
    assert fragment in verdict.message
    assert 'cloneset "cs"' in verdict.message or verdict.phase is RolloutPhase.WAITING
