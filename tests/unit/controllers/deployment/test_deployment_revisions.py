"""History clean-up selection and controller-side rollback (upstream
``pkg/controller/deployment/sync.go`` ``cleanupDeployment``, ``rollback.go`` ``rollback``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from deployment_builders import Obj, deployment, pod_template, replica_set

from kubeloop.controllers.deployment.annotations import CHANGE_CAUSE, REVISION, ROLLBACK_TO
from kubeloop.controllers.deployment.revisions import plan_rollback, replica_sets_to_delete
from kubeloop.controllers.deployment.templates import POD_TEMPLATE_HASH

MAX_INT32 = 2**31 - 1
START = datetime(2020, 1, 1, tzinfo=UTC)


def _with_status(name: str, spec: int, status_replicas: int, *, deleting: bool = False) -> Obj:
    return replica_set(name, spec, status_replicas=status_replicas, deleting=deleting, created=START)


@pytest.mark.parametrize(
    ("old", "limit", "deletions"),
    [
        ([("f1", 0, 0), ("f2", 0, 0), ("f3", 0, 0)], 1, 2),
        ([("f1", 0, 0), ("f2", 0, 1), ("f3", 1, 0), ("f4", 1, 1)], 0, 1),  # only spec = status = 0
        ([("f1", 0, 0), ("f2", 0, 0)], 0, 2),
        ([("f1", 1, 1), ("f2", 1, 1)], 0, 0),
        ([("f1", 0, 0), ("f2", 0, 0), ("f3", 0, 0)], MAX_INT32, 0),  # unlimited
    ],
)
def test_cleanup_counts(old: list[tuple[str, int, int]], limit: int, deletions: int) -> None:
    replica_sets = [_with_status(*spec) for spec in old]
    assert len(replica_sets_to_delete(deployment(1, history_limit=limit), replica_sets)) == deletions


def test_cleanup_spares_replica_sets_being_deleted_and_unlimited_deployments() -> None:
    assert replica_sets_to_delete(deployment(1, history_limit=0), [_with_status("f1", 0, 0, deleting=True)]) == []
    assert replica_sets_to_delete(deployment(1), [_with_status("f1", 0, 0)]) == []  # no limit set


def test_cleanup_waits_for_the_replica_set_controller() -> None:
    unsynced = replica_set("f1", 0, created=START, generation=2, observed_generation=1)
    assert replica_sets_to_delete(deployment(1, history_limit=0), [unsynced]) == []


def _ordered(specs: list[tuple[str, str | None, int]]) -> list[Obj]:
    replica_sets = []
    for index, (name, revision, replicas) in enumerate(specs):
        annotations = {REVISION: revision} if revision is not None else {}
        replica_sets.append(
            replica_set(name, replicas, created=START + timedelta(minutes=index), annotations=annotations)
        )
    return replica_sets


@pytest.mark.parametrize(
    ("specs", "limit", "expected"),
    [
        ([("f1", "1", 0), ("f2", "2", 0)], 1, {"f1"}),
        ([("f1", "2", 0), ("f2", "1", 0)], 1, {"f2"}),
        ([("f1", "1", 0), ("f2", None, 0)], 1, {"f2"}),  # a missing revision is 0
        ([("f1", None, 0), ("f2", "2", 0)], 1, {"f1"}),
        ([("f1", "1", 1), ("f2", "2", 0), ("f3", "3", 0)], 1, {"f2"}),  # f1 is busy but uses a slot
        ([("f1", "1", 1), ("f2", "2", 1), ("f3", "3", 0)], 1, set()),
        ([("f1", "3", 0), ("f2", "1", 0), ("f3", "4", 0), ("f4", "2", 0)], 2, {"f2", "f4"}),
    ],
)
def test_cleanup_order(specs: list[tuple[str, str | None, int]], limit: int, expected: set[str]) -> None:
    doomed = replica_sets_to_delete(deployment(1, history_limit=limit), _ordered(specs))
    assert {rs["metadata"]["name"] for rs in doomed} == expected


def _revision_rs(name: str, revision: str, template: Obj, replicas: int = 0, **annotations: str) -> Obj:
    return replica_set(name, replicas, template=template, annotations={REVISION: revision, **annotations})


def test_rollback_to_previous_revision() -> None:
    current = pod_template(image="v2")
    d = deployment(1, template=current, annotations={REVISION: "2", ROLLBACK_TO: "0", CHANGE_CAUSE: "v2"})
    older = _revision_rs(
        "rs1", "1", pod_template({"foo": "bar", POD_TEMPLATE_HASH: "h1"}, image="v1"), **{CHANGE_CAUSE: "v1"}
    )
    newer = _revision_rs("rs2", "2", current, replicas=1)
    plan = plan_rollback(d, [older, newer])
    assert plan is not None and plan.rolled_back
    assert plan.deployment["spec"]["template"] == pod_template(image="v1")
    assert plan.deployment["metadata"]["annotations"] == {REVISION: "2", CHANGE_CAUSE: "v1"}
    assert (plan.event.type, plan.event.reason, plan.event.message) == (
        "Normal",
        "DeploymentRollback",
        'Rolled back deployment "foo" to revision 1',
    )
    assert d["metadata"]["annotations"][ROLLBACK_TO] == "0"  # input untouched


def test_rollback_outcomes_that_only_clear_the_request() -> None:
    current = pod_template(image="v2")
    same = _revision_rs("rs1", "1", current)
    only = _revision_rs("rs2", "2", current, replicas=1)

    unchanged = plan_rollback(deployment(1, template=current, annotations={ROLLBACK_TO: "1"}), [same, only])
    assert unchanged is not None and not unchanged.rolled_back
    assert (unchanged.event.reason, unchanged.event.message) == (
        "DeploymentRollbackTemplateUnchanged",
        'The rollback revision contains the same template as current deployment "foo"',
    )
    assert ROLLBACK_TO not in unchanged.deployment["metadata"]["annotations"]

    no_previous = plan_rollback(deployment(1, template=current, annotations={ROLLBACK_TO: "0"}), [only])
    assert no_previous is not None
    assert (no_previous.event.type, no_previous.event.message) == ("Warning", "Unable to find last revision.")
    assert ROLLBACK_TO not in no_previous.deployment["metadata"]["annotations"]

    missing = plan_rollback(deployment(1, template=current, annotations={ROLLBACK_TO: "7"}), [same, only])
    assert missing is not None
    assert (missing.event.reason, missing.event.message) == (
        "DeploymentRollbackRevisionNotFound",
        "Unable to find the revision to rollback to.",
    )
    assert missing.deployment["spec"]["template"] == current

    assert plan_rollback(deployment(1), [only]) is None
