"""Revision and replicas annotations (upstream ``deployment/util/deployment_util.go``
``SetNewReplicaSetAnnotations``, ``SetReplicasAnnotations``, ``ReplicasAnnotationsNeedUpdate``)."""

from __future__ import annotations

import pytest
from deployment_builders import Obj, deployment, replica_set

from kubeloop.controllers.deployment.annotations import (
    CHANGE_CAUSE,
    DESIRED_REPLICAS,
    LAST_APPLIED_CONFIGURATION,
    MAX_REPLICAS,
    REVISION,
    REVISION_HISTORY,
    ROLLBACK_TO,
    RevisionError,
    annotations_for_rollback,
    last_revision,
    max_revision,
    parse_int64,
    replicas_annotations_need_update,
    revision_of,
    rollback_revision_requested,
    set_replicas_annotations,
    with_new_replica_set_annotations,
)


def _revised(*revisions: str | None) -> list[Obj]:
    return [
        replica_set(f"rs{i}", 0, annotations={REVISION: value} if value is not None else {})
        for i, value in enumerate(revisions)
    ]


def test_revisions() -> None:
    assert revision_of(replica_set("a", 1)) == 0
    assert revision_of(replica_set("a", 1, annotations={REVISION: "3546343826724305832"})) == 3546343826724305832
    with pytest.raises(RevisionError):
        revision_of(replica_set("a", 1, annotations={REVISION: "one"}))
    assert max_revision(_revised("3", "x", "7", None)) == 7
    assert max_revision([]) == 0
    assert last_revision(_revised("1", "3", "2")) == 2
    assert last_revision(_revised("3", "1", "2")) == 2
    assert last_revision(_revised("4")) == 0
    assert last_revision(_revised("4", "4")) == 4  # a repeated maximum counts twice


@pytest.mark.parametrize(
    ("text", "expected"),
    [("12", 12), ("+3", 3), ("-2", -2), (" 1", None), ("1_000", None), ("9223372036854775808", None), ("", None)],
)
def test_parse_int64_follows_go(text: str, expected: int | None) -> None:
    assert parse_int64(text) == expected


def test_revision_history_keeps_a_bounded_tail() -> None:
    d = deployment(1, annotations={REVISION: "1"})
    rs = replica_set("rs", 1)
    for i in range(10, 20):
        rs, changed = with_new_replica_set_annotations(d, rs, i + 1, exists=True, limit_chars=5)
        assert changed
        assert rs["metadata"]["annotations"][REVISION] == str(i + 1)
        if i >= 12:
            assert rs["metadata"]["annotations"][REVISION_HISTORY] == f"{i - 1},{i}"


def test_new_replica_set_annotations_copy_and_skip() -> None:
    d = deployment(
        3,
        max_surge=1,
        annotations={
            CHANGE_CAUSE: "kubectl set image",
            "test": "should-copy-to-replica-set",
            LAST_APPLIED_CONFIGURATION: "should-not-copy",
            REVISION: "9",
            ROLLBACK_TO: "2",
        },
    )
    rs = replica_set("rs", 0, annotations={"kept": "yes"})
    created, changed = with_new_replica_set_annotations(d, rs, 4, exists=False)
    assert changed
    assert created["metadata"]["annotations"] == {
        "kept": "yes",
        CHANGE_CAUSE: "kubectl set image",
        "test": "should-copy-to-replica-set",
        REVISION: "4",
        DESIRED_REPLICAS: "3",
        MAX_REPLICAS: "4",
    }
    assert rs["metadata"]["annotations"] == {"kept": "yes"}
    again, changed = with_new_replica_set_annotations(d, created, 4, exists=True)
    assert not changed and again == created
    lower, changed = with_new_replica_set_annotations(d, created, 3, exists=True)
    assert not changed and lower["metadata"]["annotations"][REVISION] == "4"  # never lowered


def test_unparsable_revision_is_left_alone() -> None:
    d = deployment(1, annotations={"note": "x"})
    rs = replica_set("rs", 1, annotations={REVISION: "abc"})
    updated, changed = with_new_replica_set_annotations(d, rs, 5, exists=True)
    assert not changed
    assert updated["metadata"]["annotations"] == {REVISION: "abc", "note": "x"}


def test_replicas_annotations() -> None:
    annotations: dict[str, str] = {}
    assert set_replicas_annotations(annotations, 10, 11)
    assert annotations == {DESIRED_REPLICAS: "10", MAX_REPLICAS: "11"}
    assert not set_replicas_annotations(annotations, 10, 11)


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, True),
        ({DESIRED_REPLICAS: "8", MAX_REPLICAS: "20"}, True),
        ({DESIRED_REPLICAS: "10", MAX_REPLICAS: "16"}, True),
        ({DESIRED_REPLICAS: "10", MAX_REPLICAS: "20"}, False),
    ],
)
def test_replicas_annotations_need_update(annotations: dict[str, str] | None, expected: bool) -> None:
    assert replicas_annotations_need_update(replica_set("rs", 1, annotations=annotations), 10, 20) is expected


def test_annotations_for_rollback() -> None:
    d = deployment(1, annotations={REVISION: "3", CHANGE_CAUSE: "edit", "only-on-deployment": "x"})
    rs = replica_set("rs", 1, annotations={REVISION: "1", CHANGE_CAUSE: "create", DESIRED_REPLICAS: "1"})
    assert annotations_for_rollback(d, rs) == {REVISION: "3", CHANGE_CAUSE: "create"}


@pytest.mark.parametrize(("value", "expected"), [(None, None), ("", None), ("0", 0), ("4", 4), ("four", None)])
def test_rollback_revision_requested(value: str | None, expected: int | None) -> None:
    annotations = {ROLLBACK_TO: value} if value is not None else {}
    assert rollback_revision_requested(deployment(1, annotations=annotations)) == expected
