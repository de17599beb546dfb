"""policy/v1 PodDisruptionBudgets: validation (the kind has no API defaults).

As upstream's ``pkg/apis/policy/validation``: ``minAvailable`` and ``maxUnavailable`` are
exclusive, each a non-negative integer or a percentage of at most 100%; the selector is a valid
label selector; ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow`` or ``IfHealthyBudget``. The
spec may change after creation (since Kubernetes 1.15). Status updates keep the counters
non-negative. The strategy's status reset and generation are the generic registry's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.labels import validate_label_selector
from kubeloop.api.status import invalid, not_supported
from kubeloop.server.admission.apps import _percent_value, _validate_int_or_percent
from kubeloop.server.admission.fields import Errors, GoLiteral, child, go_int_or_string, int_at, mapping_at
from kubeloop.server.admission.metadata import (
    name_is_dns_subdomain,
    nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)

UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
# Go prints the whole spec struct here, with pointers as addresses.
_SPEC_LITERAL = GoLiteral("policy.PodDisruptionBudgetSpec{...}")


def validate_pod_disruption_budget_spec(budget: Mapping[str, Any]) -> Errors:
    errs: Errors = []
    spec = mapping_at(budget, "spec", "", errs)
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(invalid("spec", _SPEC_LITERAL, "minAvailable and maxUnavailable cannot be both set"))
    for name in ("minAvailable", "maxUnavailable"):
        value = spec.get(name)
        if value is None:
            continue
        _validate_int_or_percent(value, child("spec", name), errs)
        percent = _percent_value(value)
        if percent is not None and percent > 100:
            errs.append(invalid(child("spec", name), go_int_or_string(value), "must not be greater than 100%"))
    errs.extend(validate_label_selector(spec.get("selector"), "spec.selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, UNHEALTHY_POD_EVICTION_POLICIES))
    return errs


def validate_pod_disruption_budget_create(budget: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(budget, True, name_is_dns_subdomain)
    errs.extend(validate_pod_disruption_budget_spec(budget))
    return errs


def validate_pod_disruption_budget_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_pod_disruption_budget_spec(new))
    return errs


def validate_pod_disruption_budget_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    status = mapping_at(new, "status", "", errs)
    for name in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        errs.extend(nonnegative(int_at(status, name, "status", errs), child("status", name)))
    return errs
