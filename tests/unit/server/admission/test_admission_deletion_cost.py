"""The pod-deletion-cost rule on pod templates, and the update allowance for values stored
before the rule (upstream: ``ValidatePodTemplateSpec`` -> ``ValidatePodSpecificAnnotations``
with ``AllowInvalidPodDeletionCost`` from ``GetValidationOptionsFromPodTemplate``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.api.status import FieldError, invalid, required
from kubeloop.server.admission import default_object, validate_create, validate_update
from kubeloop.server.admission.deletioncost import allowed_by_stored_costs, deletion_cost_errors

COST = "controller.kubernetes.io/pod-deletion-cost"
LABELS = {"app": "web"}
POD_SPEC = {"containers": [{"name": "c", "image": "nginx:1.25"}]}


def template(cost: str | None, restart: str = "Always") -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": dict(LABELS)}
    if cost is not None:
        meta["annotations"] = {COST: cost}
    return {"metadata": meta, "spec": {**copy.deepcopy(POD_SPEC), "restartPolicy": restart}}


def workload(group: str, kind: str, cost: str | None) -> dict[str, Any]:
    meta = {"name": "w", "namespace": "default", "uid": "u", "resourceVersion": "1"}
    api_version = f"{group}/v1" if group else "v1"
    if kind == "CronJob":
        spec: dict[str, Any] = {"schedule": "*/5 * * * *",
                                "jobTemplate": {"spec": {"template": template(cost, "Never")}}}
    elif kind == "Job":
        spec = {"template": template(cost, "Never")}
    elif kind == "PodTemplate":
        return {"apiVersion": api_version, "kind": kind, "metadata": meta, "template": template(cost)}
    else:
        spec = {"selector": {"matchLabels": dict(LABELS)}, "template": template(cost)}
        if kind == "ReplicationController":
            spec["selector"] = dict(LABELS)
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}


KINDS = [
    ("apps", "Deployment", "spec.template.metadata"),
    ("apps", "ReplicaSet", "spec.template.metadata"),
    ("apps", "DaemonSet", "spec.template.metadata"),
    ("batch", "Job", "spec.template.metadata"),
    ("batch", "CronJob", "spec.jobTemplate.spec.template.metadata"),
    ("", "ReplicationController", "spec.template.metadata"),
    ("", "PodTemplate", "template.metadata"),
]


def cost_errors(errors: list[FieldError]) -> list[str]:
    return [str(e) for e in errors if COST in e.field]


@pytest.mark.parametrize(("group", "kind", "meta_path"), KINDS)
@pytest.mark.parametrize(("cost", "refused"), [("10", False), (None, False), ("+10", True), ("008", True),
                                               ("abc", True)])
def test_templates_refuse_invalid_costs(group: str, kind: str, meta_path: str, cost: str | None,
                                        refused: bool) -> None:
    obj = workload(group, kind, cost)
    default_object(group, "v1", kind, obj)
    errors = validate_create(group, "v1", kind, obj, namespaced=True)
    expected = [f'{meta_path}.annotations[{COST}]: Invalid value: "{cost}": must be a 32bit integer']
    assert cost_errors(errors) == (expected if refused else [])
    if not refused:
        assert [str(e) for e in errors] == []


@pytest.mark.parametrize(("group", "kind", "meta_path"), KINDS)
@pytest.mark.parametrize(("old_cost", "new_cost", "refused"), [
    ("1", "+10", True),
    (None, "abc", True),
    ("+10", "+10", False),  # stored before the rule: the object may still be updated
    ("+10", "008", False),
    ("+10", "5", False),
])
def test_template_updates_allow_what_was_stored(group: str, kind: str, meta_path: str, old_cost: str | None,
                                                new_cost: str, refused: bool) -> None:
    old = workload(group, kind, old_cost)
    default_object(group, "v1", kind, old)
    new = workload(group, kind, new_cost)
    default_object(group, "v1", kind, new)
    errors = validate_update(group, "v1", kind, new, old, namespaced=True)
    expected = [f'{meta_path}.annotations[{COST}]: Invalid value: "{new_cost}": must be a 32bit integer']
    assert cost_errors(errors) == (expected if refused else [])


def test_the_rule() -> None:
    assert deletion_cost_errors({COST: "7"}, "metadata") == []
    assert deletion_cost_errors({}, "metadata") == []
    assert deletion_cost_errors({COST: ""}, "spec.template.metadata") == [
        invalid(f"spec.template.metadata.annotations[{COST}]", "", "must be a 32bit integer")]


STORED_INVALID = {"metadata": {"annotations": {COST: "+1"}},
                  "spec": {"template": {"metadata": {"annotations": {COST: "5"}}}}}


@pytest.mark.parametrize(
    ("error", "kept"),
    [
        (invalid(f"metadata.annotations[{COST}]", "x", "must be a 32bit integer"), False),  # stored "+1"
        (invalid(f"spec.template.metadata.annotations[{COST}]", "x", "must be a 32bit integer"), True),  # "5"
        (invalid(f"spec.jobTemplate.spec.template.metadata.annotations[{COST}]", "x", "m"), True),  # absent
        (required(f"metadata.annotations[{COST}]"), True),  # another kind of error
        (invalid("metadata.annotations[other]", "x", "m"), True),
    ],
)
def test_allowed_by_stored_costs(error: FieldError, kept: bool) -> None:
    assert allowed_by_stored_costs([error], STORED_INVALID) == ([error] if kept else [])
