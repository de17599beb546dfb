"""Jobs and CronJobs: upstream's defaults, the generated selector, and the validation rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeloop.server.admission import default_object, validate_create, validate_update
from kubeloop.server.admission.cron import schedule_errors

UID = "0b1c2d3e-0000-4000-8000-000000000001"
POD = {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}


def job(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": {"spec": copy.deepcopy(POD)}}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi", "namespace": "default", "uid": UID, "resourceVersion": "1"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def cron_job(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"schedule": "*/5 * * * *",
                            "jobTemplate": {"spec": {"template": {"spec": copy.deepcopy(POD)}}}}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "tick", "namespace": "default", "resourceVersion": "1"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def created(kind: str, obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    default_object("batch", "v1", kind, obj)
    errs = validate_create("batch", "v1", kind, obj, namespaced=True)
    return obj, [str(e) for e in errs]


def test_job_defaults_and_generated_selector() -> None:
    obj, errs = created("Job", job())
    assert errs == []
    spec = obj["spec"]
    assert {k: spec[k] for k in ("completions", "parallelism", "backoffLimit", "completionMode", "suspend",
                                 "podReplacementPolicy", "manualSelector")} == {
        "completions": 1, "parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": False}
    labels = {"batch.kubernetes.io/controller-uid": UID, "batch.kubernetes.io/job-name": "pi",
              "controller-uid": UID, "job-name": "pi"}
    assert spec["template"]["metadata"]["labels"] == labels
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}
    assert obj["metadata"]["labels"] == labels  # read back through the defaulting decoder
    assert spec["template"]["spec"]["terminationGracePeriodSeconds"] == 30


@pytest.mark.parametrize(("spec", "expected"), [
    ({"parallelism": 3}, {"parallelism": 3, "backoffLimit": 6}),  # completions stay unset
    ({"completions": 5}, {"completions": 5, "parallelism": 1}),
    ({"backoffLimitPerIndex": 1, "completionMode": "Indexed", "completions": 2},
     {"backoffLimit": 2**31 - 1}),
    ({"podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}},
     {"podReplacementPolicy": "Failed"}),
])
def test_job_default_variants(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    obj, _ = created("Job", job(**spec))
    assert {k: obj["spec"].get(k) for k in expected} == expected
    if "parallelism" in spec and "completions" not in spec:
        assert "completions" not in obj["spec"]
    if "podFailurePolicy" in spec:
        assert obj["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"


def test_manual_selector_is_left_alone_and_job_labels_are_kept() -> None:
    obj = job(manualSelector=True, selector={"matchLabels": {"app": "x"}},
              template={"metadata": {"labels": {"app": "x"}}, "spec": copy.deepcopy(POD)})
    obj["metadata"]["labels"] = {"team": "a"}
    obj, errs = created("Job", obj)
    assert errs == []
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "x"}}
    assert obj["spec"]["template"]["metadata"]["labels"] == {"app": "x"}
    assert obj["metadata"]["labels"] == {"team": "a"}


@pytest.mark.parametrize(("spec", "message"), [
    ({"parallelism": -1}, "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
    ({"backoffLimit": -2}, "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0"),
    ({"activeDeadlineSeconds": -1},
     "spec.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"),
    ({"completionMode": "Sometimes"},
     'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'),
    ({"completionMode": "Indexed", "parallelism": 2},
     "spec.completions: Required value: when completion mode is Indexed"),
    ({"backoffLimitPerIndex": 1}, "spec.backoffLimitPerIndex: Forbidden: requires indexed completion mode"),
    ({"maxFailedIndexes": 1, "completionMode": "Indexed", "completions": 3},
     "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"),
    ({"template": {"spec": {"containers": POD["containers"], "restartPolicy": "Always"}}},
     'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'),
    ({"template": {"spec": {"containers": POD["containers"]}}},
     'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'),
    ({"podFailurePolicy": {"rules": []}, "template": {"spec": {"containers": POD["containers"],
                                                               "restartPolicy": "OnFailure"}}},
     'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
     "podFailurePolicy is specified"),
    ({"manualSelector": True}, "spec.selector: Required value"),
    ({"manualSelector": True, "selector": {"matchLabels": {"app": "y"}}},
     "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template "
     "`labels`"),
    ({"selector": {"matchLabels": {"controller-uid": "other"}}},
     "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
     '"batch.kubernetes.io/controller-uid":"0b1c2d3e-0000-4000-8000-000000000001", "controller-uid":"other"}, '
     "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated"),
    ({"template": {"metadata": {"labels": {"job-name": "other"}}, "spec": POD}},
     "spec.template.metadata.labels[job-name]: Invalid value: map[string]string{"
     '"batch.kubernetes.io/controller-uid":"0b1c2d3e-0000-4000-8000-000000000001", '
     '"batch.kubernetes.io/job-name":"pi", "controller-uid":"0b1c2d3e-0000-4000-8000-000000000001", '
     "\"job-name\":\"other\"}: must be 'pi'"),
])
def test_job_create_rules(spec: dict[str, Any], message: str) -> None:
    _, errs = created("Job", job(**spec))
    assert message in errs


def _stored_job(**spec: Any) -> dict[str, Any]:
    obj, errs = created("Job", job(**spec))
    assert errs == []
    obj["metadata"]["generation"] = 1
    return obj


def _update_errors(old: dict[str, Any], change: Any) -> list[str]:
    new = copy.deepcopy(old)
    change(new)
    default_object("batch", "v1", "Job", new)
    return [str(e) for e in validate_update("batch", "v1", "Job", new, old, namespaced=True)]


@pytest.mark.parametrize(("change", "message"), [
    (lambda j: j["spec"].update(completions=4), "spec.completions: Invalid value: 4: field is immutable"),
    (lambda j: j["spec"]["selector"]["matchLabels"].update(extra="x"), "spec.selector: Invalid value:"),
    (lambda j: j["spec"]["template"]["spec"]["containers"][0].update(image="nginx"),
     "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"),
    (lambda j: j["spec"].update(completionMode="Indexed"),
     'spec.completionMode: Invalid value: "Indexed": field is immutable'),
    (lambda j: j["spec"].update(podFailurePolicy={"rules": []}), "spec.podFailurePolicy: Invalid value:"),
    (lambda j: j["spec"].update(managedBy="example.com/ctl"),
     'spec.managedBy: Invalid value: "example.com/ctl": field is immutable'),
])
def test_job_update_immutability(change: Any, message: str) -> None:
    errs = _update_errors(_stored_job(), change)
    assert any(e.startswith(message) and e.endswith("field is immutable") for e in errs), errs


def test_job_update_allowed_changes() -> None:
    stored = _stored_job()
    assert _update_errors(stored, lambda j: j["spec"].update(parallelism=3, activeDeadlineSeconds=60,
                                                             suspend=True)) == []
    indexed = _stored_job(completionMode="Indexed", completions=2, parallelism=2)
    assert _update_errors(indexed, lambda j: j["spec"].update(completions=4, parallelism=4)) == []
    assert _update_errors(indexed, lambda j: j["spec"].update(completions=4)) == [
        "spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism"]


def test_suspended_job_may_change_scheduling_directives_until_started() -> None:
    stored = _stored_job(suspend=True)

    def schedule(j: dict[str, Any]) -> None:
        j["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}

    assert _update_errors(stored, schedule) == []
    started = copy.deepcopy(stored)
    started["status"] = {"startTime": "2024-01-01T00:00:00Z"}
    assert "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable" in _update_errors(
        started, schedule)


def test_cron_job_defaults() -> None:
    obj, errs = created("CronJob", cron_job())
    assert errs == []
    spec = obj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    job_spec = spec["jobTemplate"]["spec"]
    assert set(job_spec) == {"template"}  # SetDefaults_Job is for Jobs only
    assert job_spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


@pytest.mark.parametrize(("spec", "name", "message"), [
    ({"schedule": ""}, "tick", "spec.schedule: Required value"),
    ({"schedule": "* * *"}, "tick",
     'spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]'),
    ({"schedule": "61 * * * *"}, "tick",
     'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61'),
    ({"schedule": "TZ=UTC * * * * *"}, "tick",
     'spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field '
     "instead"),
    ({"timeZone": "Mars/Olympus"}, "tick", 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone '
     "Mars/Olympus"),
    ({"concurrencyPolicy": "Sometimes"}, "tick",
     'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"'),
    ({"startingDeadlineSeconds": -1}, "tick",
     "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"),
    ({"successfulJobsHistoryLimit": -1}, "tick",
     "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0"),
    ({"jobTemplate": {"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"spec": POD}}}}, "tick",
     "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, "
     "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated"),
    ({"jobTemplate": {"spec": {"template": {"spec": {"containers": POD["containers"]}}}}}, "tick",
     'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'),
    ({}, "x" * 53, f'metadata.name: Invalid value: "{"x" * 53}": must be no more than 52 characters'),
])
def test_cron_job_rules(spec: dict[str, Any], name: str, message: str) -> None:
    obj = cron_job(**spec)
    obj["metadata"]["name"] = name
    _, errs = created("CronJob", obj)
    assert message in errs


@pytest.mark.parametrize(("schedule", "message"), [
    ("*/5 * * * *", None), ("0 0 1 jan mon", None), ("@hourly", None), ("@every 1h30m", None),
    ("1-5/2 0-23 * * 1-5", None),
    ("@often", "unrecognized descriptor: @often"),
    ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
])
def test_cron_schedule_parser(schedule: str, message: str | None) -> None:
    assert schedule_errors(schedule) == ([] if message is None else [message])
