"""Planners never modify the objects they are given (they come from a shared informer cache)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

from deployment_builders import NEWER, OLD, OLDER, deployment, pod_template, replica_set

from kubeloop.controllers.deployment.annotations import DESIRED_REPLICAS, MAX_REPLICAS, REVISION, ROLLBACK_TO
from kubeloop.controllers.deployment.new_replica_set import replica_set_to_create, sync_existing_new_replica_set
from kubeloop.controllers.deployment.revisions import plan_rollback
from kubeloop.controllers.deployment.rolling import reconcile_new_replica_set, reconcile_old_replica_sets
from kubeloop.controllers.deployment.scaling import plan_scale
from kubeloop.controllers.deployment.status import rollout_status

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def test_planners_leave_their_inputs_alone() -> None:
    d = deployment(
        10,
        max_surge=3,
        max_unavailable=2,
        progress_deadline=600,
        history_limit=1,
        annotations={REVISION: "3", ROLLBACK_TO: "0", "note": "x"},
        template=pod_template(image="v3"),
        status={
            "replicas": 9,
            "conditions": [{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}],
        },
    )
    sized = {DESIRED_REPLICAS: "8", MAX_REPLICAS: "11", REVISION: "2"}
    old = replica_set(
        "v1", 4, available=2, created=OLDER, annotations={REVISION: "1"}, template=pod_template(image="v1")
    )
    middle = replica_set("v2", 5, available=5, created=OLD, annotations=sized, template=pod_template(image="v2"))
    new = replica_set("v3", 2, available=1, created=NEWER, annotations=sized, template=pod_template(image="v3"))
    inputs = [d, old, middle, new]
    before = copy.deepcopy(inputs)

    reconcile_new_replica_set(d, [old, middle, new], new)
    reconcile_old_replica_sets(d, [old, middle, new], [old, middle], new)
    plan_scale(d, new, [old, middle])
    rollout_status([old, middle, new], new, d, NOW)
    plan_rollback(d, [old, middle, new])
    replica_set_to_create(d, [old, middle])
    sync_existing_new_replica_set(d, new, [old, middle], NOW)

    assert inputs == before
