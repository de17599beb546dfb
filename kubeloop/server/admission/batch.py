"""batch/v1 Jobs and CronJobs: defaults, the Job strategy's generated selector, validation.

Defaults are upstream's ``pkg/apis/batch/v1/defaults.go`` (``SetDefaults_Job``,
``SetDefaults_CronJob``) plus the pod template defaults every workload gets. A CronJob's
``jobTemplate.spec`` gets only the pod template defaults: ``SetDefaults_Job`` applies to Jobs.

On create, the Job strategy (``pkg/registry/batch/job/strategy.go`` ``PrepareForCreate``)
generates the selector unless ``manualSelector`` is true: the template gains the
``batch.kubernetes.io/controller-uid`` / ``controller-uid`` labels (the object's uid) and the
``batch.kubernetes.io/job-name`` / ``job-name`` labels (its name), and the selector matches the
uid label. Upstream reads the stored object back through the defaulting decoder, so a Job
created without labels is returned with its template's labels; :func:`generate_job_selector`
does both.

Validation follows ``pkg/apis/batch/validation``: ``ValidateJob``, ``ValidateJobUpdate``
(selector, template unless suspended and never started, completion mode, pod failure policy,
backoff limit per index, managedBy and successPolicy are immutable; completions too, except
in tandem with parallelism for Indexed Jobs) and ``ValidateCronJobCreate`` / ``Update``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubeloop.api.labels import SelectorError, selector_from_label_selector, validate_label_selector
from kubeloop.api.status import forbidden, invalid, not_supported, required
from kubeloop.server.admission.cron import schedule_errors, valid_zone
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    go_label_selector,
    int_at,
    key,
    mapping_at,
    semantically_equal,
    str_at,
)
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    name_is_dns_subdomain,
    nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.podspec import default_pod_template_spec, validate_pod_template_spec

MAX_INT32 = 2**31 - 1
DEFAULT_BACKOFF_LIMIT = 6
DEFAULT_SUCCESSFUL_JOBS_HISTORY = 3
DEFAULT_FAILED_JOBS_HISTORY = 1
MAX_PARALLELISM_INDEXED = 100_000
MAX_CRONJOB_NAME = 52
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
COMPLETION_MODES = ("NonIndexed", "Indexed")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
POD_REPLACEMENT_POLICIES = ("TerminatingOrFailed", "Failed")
_NOT_GENERATED = "`selector` not auto-generated"
_NO_MATCH = "`selector` does not match template `labels`"
# Go prints the whole template struct here; no JSON rendering reproduces its %#v.
_TEMPLATE_LITERAL = GoLiteral("core.PodTemplateSpec{...}")


# ---------------------------------------------------------------------------------- defaults


def _dict_at(parent: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The object under ``name``, created empty when absent; None when it is not an object."""
    value = parent.get(name)
    if value is None:
        value = parent[name] = {}
    return value if isinstance(value, dict) else None


def _copy_template_labels(job: dict[str, Any], spec: Mapping[str, Any]) -> None:
    template = spec.get("template")
    meta = template.get("metadata") if isinstance(template, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    job_meta = job.get("metadata")
    if isinstance(labels, dict) and isinstance(job_meta, dict) and not job_meta.get("labels"):
        job_meta["labels"] = dict(labels)


def default_job(job: dict[str, Any]) -> None:
    """``SetDefaults_Job`` and the template defaults, in place."""
    spec = _dict_at(job, "spec")
    if spec is None:
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else DEFAULT_BACKOFF_LIMIT
    _copy_template_labels(job, spec)
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    policy = spec.get("podFailurePolicy")
    rules = policy.get("rules") if isinstance(policy, dict) else None
    for rule in rules if isinstance(rules, list) else []:
        patterns = rule.get("onPodConditions") if isinstance(rule, dict) else None
        for pattern in patterns if isinstance(patterns, list) else []:
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if policy is not None else "TerminatingOrFailed"
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    template = _dict_at(spec, "template")
    if template is not None:
        default_pod_template_spec(template)


def generate_job_selector(job: dict[str, Any]) -> None:
    """The Job strategy's ``PrepareForCreate``: selector and template labels unless manual.

    Labels the client already set are kept (validation then refuses wrong values); the Job's
    own labels default to the template's afterwards, as the stored object reads upstream.
    """
    spec = job.get("spec")
    meta = job.get("metadata")
    if not isinstance(spec, dict) or not isinstance(meta, dict) or spec.get("manualSelector") is True:
        return
    template = _dict_at(spec, "template")
    template_meta = _dict_at(template, "metadata") if template is not None else None
    labels = _dict_at(template_meta, "labels") if template_meta is not None else None
    selector = _dict_at(spec, "selector")
    match_labels = _dict_at(selector, "matchLabels") if selector is not None else None
    if labels is None or match_labels is None:
        return
    name = str(meta.get("name") or "")
    uid = str(meta.get("uid") or "")
    for label, value in ((LEGACY_JOB_NAME_LABEL, name), (JOB_NAME_LABEL, name),
                         (LEGACY_CONTROLLER_UID_LABEL, uid), (CONTROLLER_UID_LABEL, uid)):
        labels.setdefault(label, value)
    match_labels.setdefault(CONTROLLER_UID_LABEL, uid)
    _copy_template_labels(job, spec)


def default_cron_job(cron_job: dict[str, Any]) -> None:
    """``SetDefaults_CronJob`` and the defaults of the job template's pod template."""
    spec = _dict_at(cron_job, "spec")
    if spec is None:
        return
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = DEFAULT_SUCCESSFUL_JOBS_HISTORY
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = DEFAULT_FAILED_JOBS_HISTORY
    job_template = _dict_at(spec, "jobTemplate")
    job_spec = _dict_at(job_template, "spec") if job_template is not None else None
    template = _dict_at(job_spec, "template") if job_spec is not None else None
    if template is not None:
        default_pod_template_spec(template)


# ------------------------------------------------------------------------------ job validation


def _template_labels(spec: Mapping[str, Any]) -> Any:
    return mapping_at(mapping_at(spec, "template", "", []), "metadata", "", []).get("labels")


def _has_label(spec: Mapping[str, Any], label: str, expected: str, errs: Errors) -> None:
    """``ValidateHasLabel`` on the template's metadata."""
    labels = _template_labels(spec)
    labels = labels if isinstance(labels, Mapping) else {}
    path = key("spec.template.metadata.labels", label)
    if label not in labels:
        errs.append(required(path, expected))
    elif labels[label] != expected:
        errs.append(invalid(path, dict(labels), f"must be '{expected}'"))


def _validate_generated_selector(job: Mapping[str, Any], prefixed: bool, errs: Errors) -> None:
    """``validateGeneratedSelector``: the uid and name labels and a selector matching them."""
    spec = mapping_at(job, "spec", "", [])
    if spec.get("manualSelector") is True:
        return
    selector = spec.get("selector")
    if not isinstance(selector, Mapping):
        return
    if selector.get("matchLabels") is None:
        errs.append(invalid("spec.selector", go_label_selector(selector), _NOT_GENERATED))
        return
    meta = mapping_at(job, "metadata", "", [])
    uid = str_at(meta, "uid", "metadata", [])
    name = str_at(meta, "name", "metadata", [])
    _has_label(spec, LEGACY_CONTROLLER_UID_LABEL, uid, errs)
    _has_label(spec, LEGACY_JOB_NAME_LABEL, name, errs)
    expected = {LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name}
    if prefixed:
        _has_label(spec, CONTROLLER_UID_LABEL, uid, errs)
        _has_label(spec, JOB_NAME_LABEL, name, errs)
        expected.update({CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name})
    try:
        parsed = selector_from_label_selector(selector)
    except SelectorError:
        return
    if not parsed.matches(expected):
        errs.append(invalid("spec.selector", go_label_selector(selector), _NOT_GENERATED))


def _validate_restart_policy(spec: Mapping[str, Any], path: str, errs: Errors) -> None:
    pod_spec = mapping_at(mapping_at(spec, "template", path, []), "spec", "", [])
    policy = pod_spec.get("restartPolicy")
    policy_path = child(path, "template.spec.restartPolicy")
    if policy in ("Always", "", None):
        errs.append(required(policy_path, 'valid values: "OnFailure", "Never"'))
    elif policy not in ("OnFailure", "Never"):
        errs.append(not_supported(policy_path, policy, ("OnFailure", "Never")))
    elif spec.get("podFailurePolicy") is not None and policy != "Never":
        errs.append(invalid(policy_path, policy, 'only "Never" is supported when podFailurePolicy is specified'))


def _validate_job_spec_fields(spec: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``validateJobSpec``: counters, completion mode, per-index limits, template."""
    for name in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        errs.extend(nonnegative(int_at(spec, name, path, errs), child(path, name)))
    mode = spec.get("completionMode")
    indexed = mode == "Indexed"
    per_index = int_at(spec, "backoffLimitPerIndex", path, errs)
    if per_index is not None:
        errs.extend(nonnegative(per_index, child(path, "backoffLimitPerIndex")))
        if not indexed:
            errs.append(forbidden(child(path, "backoffLimitPerIndex"), "requires indexed completion mode"))
    max_failed = int_at(spec, "maxFailedIndexes", path, errs)
    if max_failed is not None:
        errs.extend(nonnegative(max_failed, child(path, "maxFailedIndexes")))
        if per_index is None:
            errs.append(required(child(path, "backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
        if not indexed:
            errs.append(forbidden(child(path, "maxFailedIndexes"), "requires indexed completion mode"))
    if mode is not None:
        if mode not in COMPLETION_MODES:
            errs.append(not_supported(child(path, "completionMode"), mode, COMPLETION_MODES))
        if indexed:
            if spec.get("completions") is None:
                errs.append(required(child(path, "completions"), "when completion mode is Indexed"))
            parallelism = int_at(spec, "parallelism", path, [])
            if parallelism is not None and parallelism > MAX_PARALLELISM_INDEXED:
                errs.append(invalid(child(path, "parallelism"), parallelism,
                                    f"must be less than or equal to {MAX_PARALLELISM_INDEXED} "
                                    "when completion mode is Indexed"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        if replacement not in POD_REPLACEMENT_POLICIES:
            errs.append(not_supported(child(path, "podReplacementPolicy"), replacement, POD_REPLACEMENT_POLICIES))
        elif spec.get("podFailurePolicy") is not None and replacement != "Failed":
            errs.append(not_supported(child(path, "podReplacementPolicy"), replacement, ("Failed",)))
    errs.extend(validate_pod_template_spec(mapping_at(spec, "template", path, errs), child(path, "template")))
    _validate_restart_policy(spec, path, errs)


def validate_job_spec(spec: Mapping[str, Any]) -> Errors:
    """``ValidateJobSpec``: the fields, a valid selector that matches the template."""
    errs: Errors = []
    _validate_job_spec_fields(spec, "spec", errs)
    selector = spec.get("selector")
    if selector is None:
        errs.append(required("spec.selector"))
    else:
        errs.extend(validate_label_selector(selector, "spec.selector"))
    try:
        parsed = selector_from_label_selector(selector)
    except SelectorError:
        return errs
    labels = _template_labels(spec)
    plain = labels if isinstance(labels, Mapping) else {}
    if not parsed.matches(plain):
        errs.append(invalid("spec.template.metadata.labels", dict(plain) if plain else GoLiteral(
            "map[string]string(nil)"), _NO_MATCH))
    return errs


def _validate_job(job: Mapping[str, Any], prefixed: bool) -> Errors:
    errs: Errors = []
    _validate_generated_selector(job, prefixed, errs)
    errs.extend(validate_job_spec(mapping_at(job, "spec", "", errs)))
    return errs


def validate_job_create(job: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(job, True, name_is_dns_subdomain)
    errs.extend(_validate_job(job, prefixed=True))
    return errs


def _immutable(new: Mapping[str, Any], old: Mapping[str, Any], name: str, shown: Any = None) -> Errors:
    if semantically_equal(new.get(name), old.get(name)):
        return []
    value = new.get(name) if shown is None else shown
    return [invalid(child("spec", name), value, FIELD_IMMUTABLE)]


def _scheduling_directives_open(old: Mapping[str, Any]) -> bool:
    """Suspended and never started: node affinity, selector, tolerations, labels may change."""
    suspended = mapping_at(old, "spec", "", []).get("suspend") is True
    started = mapping_at(old, "status", "", []).get("startTime") is not None
    return suspended and not started


def _template_immutable(new_spec: Mapping[str, Any], old_spec: Mapping[str, Any], open_: bool) -> Errors:
    """``validatePodTemplateUpdate``: the template may change only in scheduling directives."""
    new_template = mapping_at(new_spec, "template", "", [])
    old_template = copy.deepcopy(dict(mapping_at(old_spec, "template", "", [])))
    if open_:
        new_pod = mapping_at(new_template, "spec", "", [])
        old_pod = old_template.setdefault("spec", {})
        new_meta = mapping_at(new_template, "metadata", "", [])
        old_meta = old_template.setdefault("metadata", {})
        if isinstance(old_pod, dict):
            affinity = old_pod.get("affinity")
            new_affinity = new_pod.get("affinity")
            if isinstance(affinity, dict) or isinstance(new_affinity, dict):
                merged = dict(affinity) if isinstance(affinity, dict) else {}
                merged.pop("nodeAffinity", None)
                if isinstance(new_affinity, dict) and "nodeAffinity" in new_affinity:
                    merged["nodeAffinity"] = new_affinity["nodeAffinity"]
                old_pod["affinity"] = merged if merged or new_affinity is not None else None
            for name in ("nodeSelector", "tolerations", "schedulingGates"):
                old_pod[name] = new_pod.get(name)
        if isinstance(old_meta, dict):
            for name in ("labels", "annotations"):
                old_meta[name] = new_meta.get(name)
    if semantically_equal(new_template, old_template):
        return []
    return [invalid("spec.template", _TEMPLATE_LITERAL, FIELD_IMMUTABLE)]


def _completions_update(new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> Errors:
    """Completions are immutable, but an Indexed Job may scale them with parallelism."""
    if new_spec.get("completionMode") != "Indexed":
        return _immutable(new_spec, old_spec, "completions")
    completions = new_spec.get("completions")
    if completions == old_spec.get("completions") or completions is None:
        return []
    if completions != new_spec.get("parallelism"):
        return [invalid("spec.completions", completions, "can only be modified in tandem with spec.parallelism")]
    return []


def validate_job_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateJob`` on the new Job and ``ValidateJobUpdate`` against the old one."""
    old_labels = _template_labels(mapping_at(old, "spec", "", []))
    old_labels = old_labels if isinstance(old_labels, Mapping) else {}
    # Jobs created before the prefixed labels existed are not required to carry them.
    prefixed = JOB_NAME_LABEL in old_labels and CONTROLLER_UID_LABEL in old_labels
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_job(new, prefixed))
    new_spec = mapping_at(new, "spec", "", [])
    old_spec = mapping_at(old, "spec", "", [])
    errs.extend(_completions_update(new_spec, old_spec))
    errs.extend(_immutable(new_spec, old_spec, "selector", go_label_selector(new_spec.get("selector"))))
    errs.extend(_template_immutable(new_spec, old_spec, _scheduling_directives_open(old)))
    for name in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"):
        errs.extend(_immutable(new_spec, old_spec, name))
    return errs


def validate_job_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateJobUpdateStatus``: the counters are never negative."""
    errs = validate_object_meta_update(new, old)
    status = mapping_at(new, "status", "", errs)
    for name in ("active", "succeeded", "failed", "ready", "terminating"):
        errs.extend(nonnegative(int_at(status, name, "status", errs), child("status", name)))
    return errs


# -------------------------------------------------------------------------- cron job validation


def _validate_cron_job_spec(spec: Mapping[str, Any], old_spec: Mapping[str, Any] | None, errs: Errors) -> None:
    """``validateCronJobSpec``: schedule, time zone, policy, job template, history limits."""
    schedule = str_at(spec, "schedule", "spec", errs)
    if not schedule:
        errs.append(required("spec.schedule"))
    else:
        errs.extend(invalid("spec.schedule", schedule, m) for m in schedule_errors(schedule))
        tz_allowed = old_spec is not None and "TZ" in str(old_spec.get("schedule") or "")
        if "TZ" in schedule:
            if not tz_allowed:
                errs.append(invalid("spec.schedule", schedule,
                                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
            elif spec.get("timeZone") is not None:
                errs.append(invalid("spec.schedule", schedule,
                                    "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    errs.extend(nonnegative(int_at(spec, "startingDeadlineSeconds", "spec", errs), "spec.startingDeadlineSeconds"))
    zone = spec.get("timeZone")
    if zone is not None and (old_spec is None or old_spec.get("timeZone") != zone):
        _validate_time_zone(zone, errs)
    policy = spec.get("concurrencyPolicy")
    if not policy:
        errs.append(required("spec.concurrencyPolicy"))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    job_spec = mapping_at(mapping_at(spec, "jobTemplate", "spec", errs), "spec", "spec.jobTemplate", errs)
    _validate_job_spec_fields(job_spec, "spec.jobTemplate.spec", errs)
    if job_spec.get("selector") is not None:
        errs.append(invalid("spec.jobTemplate.spec.selector", go_label_selector(job_spec.get("selector")),
                            "`selector` will be auto-generated"))
    if job_spec.get("manualSelector") is True:
        errs.append(not_supported("spec.jobTemplate.spec.manualSelector", True, ("nil", "false")))
    for name in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs.extend(nonnegative(int_at(spec, name, "spec", errs), child("spec", name)))


def _validate_time_zone(zone: Any, errs: Errors) -> None:
    if not isinstance(zone, str):
        return
    if not zone:
        errs.append(invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string"))
    elif zone.lower() == "local":
        errs.append(invalid("spec.timeZone", zone,
                            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
    elif not valid_zone(zone):
        errs.append(invalid("spec.timeZone", zone, f"unknown time zone {zone}"))


def validate_cron_job_create(cron_job: Mapping[str, Any]) -> Errors:
    """Names leave room for the 11 characters the controller appends to its Jobs' names."""
    errs = validate_object_meta(cron_job, True, name_is_dns_subdomain)
    _validate_cron_job_spec(mapping_at(cron_job, "spec", "", errs), None, errs)
    name = str_at(mapping_at(cron_job, "metadata", "", []), "name", "metadata", [])
    if len(name) > MAX_CRONJOB_NAME:
        errs.append(invalid("metadata.name", name, f"must be no more than {MAX_CRONJOB_NAME} characters"))
    return errs


def validate_cron_job_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    _validate_cron_job_spec(mapping_at(new, "spec", "", errs), mapping_at(old, "spec", "", []), errs)
    return errs

