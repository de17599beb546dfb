"""Pure cores of the namespace lifecycle: conditions, content outcomes, admission rules."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.api.status import ApiError
from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.namespace_conditions import CONDITION_TYPES, DeletionReport, updated_conditions
from kubeloop.server.namespace_content import FINALIZER_ESTIMATE_SECONDS, outcome_of, pod_grace_estimate
from kubeloop.server.namespace_lifecycle import check_open_for_create, keep_spec_finalizers, without_finalizer
from kubeloop.server.serviceaccount_admission import admit_pod_service_account

INFOS = {info.resource: info for info in BUILTIN_RESOURCES if info.version == "v1"}


def _item(*finalizers: str) -> dict[str, Any]:
    return {"metadata": {"name": "x", "finalizers": list(finalizers)}}


def test_conditions_start_fine_and_transition_only_on_status_change() -> None:
    fine = updated_conditions([], DeletionReport(), "T1")
    assert fine is not None
    assert [c["type"] for c in fine] == list(CONDITION_TYPES)
    assert {c["status"] for c in fine} == {"False"} and {c["lastTransitionTime"] for c in fine} == {"T1"}
    assert updated_conditions(fine, DeletionReport(), "T2") is None
    report = DeletionReport()
    report.add_remaining("", "pods", 2, {"a/b": 2})
    report.add_remaining("apps", "deployments", 1, {"a/b": 1, "c/d": 1})
    held = updated_conditions(fine, report, "T3")
    assert held is not None
    by_type = {c["type"]: c for c in held}
    assert by_type["NamespaceContentRemaining"] == {
        "type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": "T3",
        "reason": "SomeResourcesRemain",
        "message": "Some resources are remaining: deployments.apps has 1 resource instances, "
                   "pods. has 2 resource instances"}
    assert by_type["NamespaceFinalizersRemaining"]["message"] == (
        "Some content in the namespace has finalizers remaining: a/b in 3 resource instances, "
        "c/d in 1 resource instances")
    assert by_type["NamespaceDeletionContentFailure"]["lastTransitionTime"] == "T1"
    failed = DeletionReport(errors=["z", "a"])
    content = {c["type"]: c for c in updated_conditions(held, failed, "T4") or []}["NamespaceDeletionContentFailure"]
    assert (content["reason"], content["message"]) == (
        "ContentDeletionFailed", "Failed to delete all resource types, 2 remaining: a, z")


@pytest.mark.parametrize(("remaining", "estimate", "expected"), [
    ([], 30, (0, 0, {}, None)),
    ([_item()], 30, (30, 1, {}, None)),
    ([_item("a/b"), _item("a/b")], 0, (FINALIZER_ESTIMATE_SECONDS, 2, {"a/b": 2}, None)),
    ([_item()], 0, (0, 1, {}, "unexpected items still remain in namespace: ns for gvr: /v1, Resource=pods")),
])
def test_what_remains_is_waited_for_or_reported(remaining: list[dict[str, Any]], estimate: int,
                                                expected: tuple[Any, ...]) -> None:
    outcome = outcome_of(INFOS["pods"], "ns", remaining, estimate)
    assert (outcome.estimate, outcome.remaining, outcome.finalizers, outcome.error) == expected


def test_pod_grace_estimate_ignores_finished_pods() -> None:
    pods = [{"spec": {"terminationGracePeriodSeconds": 40}, "status": {"phase": "Succeeded"}},
            {"spec": {"terminationGracePeriodSeconds": 20}, "status": {"phase": "Running"}}, {"spec": {}}]
    assert pod_grace_estimate(pods) == 20


def test_spec_finalizers_rules() -> None:
    new: dict[str, Any] = {"spec": {"finalizers": []}}
    keep_spec_finalizers(new, {"spec": {"finalizers": ["kubernetes"]}})
    assert new == {"spec": {"finalizers": ["kubernetes"]}}
    assert without_finalizer(["x/y", "kubernetes", "a/b", "x/y"], "kubernetes") == ["a/b", "x/y"]


def test_lifecycle_admission() -> None:
    with pytest.raises(ApiError) as caught:
        check_open_for_create(INFOS["configmaps"], {"metadata": {"name": "c"}}, "gone", None)
    assert caught.value.message == 'namespaces "gone" not found'
    terminating = {"metadata": {"name": "t", "deletionTimestamp": "2024-01-01T00:00:00Z"}}
    with pytest.raises(ApiError) as caught:
        check_open_for_create(INFOS["configmaps"], {"metadata": {}}, "t", terminating)
    assert caught.value.message.startswith('configmaps "Unknown" is forbidden: unable to create new content')
    check_open_for_create(INFOS["configmaps"], {"metadata": {}}, "t", {"metadata": {"name": "t"}})


def test_service_account_admission_defaults_and_checks() -> None:
    accounts = {("ns", "default")}

    def lookup(_: Any, namespace: str, name: str) -> dict[str, Any] | None:
        return {} if (namespace, name) in accounts else None

    pod: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {}}
    admit_pod_service_account(pod, "ns", lookup)
    assert pod["spec"] == {"serviceAccountName": "default", "serviceAccount": "default"}
    legacy: dict[str, Any] = {"metadata": {"generateName": "g-"}, "spec": {"serviceAccount": "old"}}
    with pytest.raises(ApiError) as caught:
        admit_pod_service_account(legacy, "ns", lookup)
    assert caught.value.code == 403
    assert caught.value.message == ('pods "g-" is forbidden: error looking up service account ns/old: '
                                    'serviceaccount "old" not found')
    mirror: dict[str, Any] = {"metadata": {"name": "m", "annotations": {"kubernetes.io/config.mirror": "x"}},
                              "spec": {"serviceAccountName": "none"}}
    admit_pod_service_account(mirror, "ns", lookup)
