"""autoscaling/v2 HorizontalPodAutoscalers: defaults and validation.

Defaults are upstream's ``pkg/apis/autoscaling/v2/defaults.go``: ``minReplicas`` 1, a CPU
utilization target of 80% when no metric is given, and, when ``behavior`` is set, every unset
scaling rule filled from the built-in ones (scale up: no stabilization, Max of 4 pods or 100%
per 15s; scale down: Max of 100% per 15s, stabilization left to the controller).
Validation is ``pkg/apis/autoscaling/validation`` ``ValidateHorizontalPodAutoscaler``: the
target reference, the replica bounds, then (only when those pass) metrics, then behavior.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubeloop.api.status import forbidden, invalid, not_supported, required
from kubeloop.server.admission.fields import Errors, child, int_at, mapping_at, objects_at, str_at
from kubeloop.server.admission.metadata import (
    name_is_dns_subdomain,
    name_is_path_segment,
    nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.quantity import QuantityError, parse_quantity

DEFAULT_CPU_UTILIZATION = 80
MAX_STABILIZATION_WINDOW = 3600
MAX_PERIOD_SECONDS = 1800
METRIC_SOURCE_TYPES = ("Object", "Pods", "Resource", "External", "ContainerResource")
SELECT_POLICIES = ("Max", "Min", "Disabled")
SCALING_POLICY_TYPES = ("Pods", "Percent")
_SCALE_UP: dict[str, Any] = {
    "stabilizationWindowSeconds": 0, "selectPolicy": "Max",
    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                 {"type": "Percent", "value": 100, "periodSeconds": 15}],
}
_SCALE_DOWN: dict[str, Any] = {
    "selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}
# The JSON field holding each metric source type.
_SOURCE_FIELDS = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                  "ContainerResource": "containerResource"}


def _scaling_rules(given: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``copyHPAScalingRules``: the defaults, overridden by every field the client set."""
    rules = copy.deepcopy(dict(defaults))
    if isinstance(given, dict):
        for name in ("selectPolicy", "stabilizationWindowSeconds", "policies", "tolerance"):
            if given.get(name) is not None:
                rules[name] = given[name]
    return rules


def default_horizontal_pod_autoscaler(autoscaler: dict[str, Any]) -> None:
    spec = autoscaler.get("spec")
    if spec is None:
        spec = autoscaler["spec"] = {}
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _scaling_rules(behavior.get("scaleUp"), _SCALE_UP)
        behavior["scaleDown"] = _scaling_rules(behavior.get("scaleDown"), _SCALE_DOWN)


# -------------------------------------------------------------------------------- validation


def _validate_reference(ref: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``ValidateCrossVersionObjectReference``: kind and name set and usable in a URL path."""
    for name in ("kind", "name"):
        value = str_at(ref, name, path, errs)
        if not value:
            errs.append(required(child(path, name)))
        else:
            errs.extend(invalid(child(path, name), value, m) for m in name_is_path_segment(value, False))


def _quantity_positive(target: Mapping[str, Any], name: str, path: str, errs: Errors) -> None:
    value = target.get(name)
    if value is None:
        return
    try:
        positive = parse_quantity(value) > 0
    except QuantityError:
        positive = False
    if not positive:
        errs.append(invalid(child(path, name), value, "must be positive"))


def _validate_target(target: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``validateMetricTarget``."""
    target_type = str_at(target, "type", path, errs)
    if not target_type:
        errs.append(required(child(path, "type"), "must specify a metric target type"))
    if target_type not in ("Utilization", "Value", "AverageValue"):
        errs.append(invalid(child(path, "type"), target_type, "must be either Utilization, Value, or AverageValue"))
    _quantity_positive(target, "value", path, errs)
    _quantity_positive(target, "averageValue", path, errs)
    utilization = int_at(target, "averageUtilization", path, errs)
    if utilization is not None and utilization < 1:
        errs.append(invalid(child(path, "averageUtilization"), utilization, "must be greater than 0"))


def _validate_resource_source(source: Mapping[str, Any], path: str, errs: Errors) -> None:
    if not str_at(source, "name", path, errs):
        errs.append(required(child(path, "name"), "must specify a resource name"))
    if path.endswith("containerResource") and not str_at(source, "container", path, errs):
        errs.append(required(child(path, "container"), "must specify a container"))
    target = mapping_at(source, "target", path, errs)
    target_path = child(path, "target")
    _validate_target(target, target_path, errs)
    if target.get("averageUtilization") is None and target.get("averageValue") is None:
        errs.append(required(child(target_path, "averageUtilization"),
                             "must set either a target raw value or a target utilization"))
    if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
        errs.append(forbidden(child(target_path, "averageValue"),
                              "may not set both a target raw value and a target utilization"))


def _validate_metric_source(source: Mapping[str, Any], path: str, errs: Errors) -> None:
    """Object, Pods and External sources: a metric name and a target."""
    metric = mapping_at(source, "metric", path, errs)
    if not str_at(metric, "name", child(path, "metric"), errs):
        errs.append(required(child(path, "metric.name"), "must specify a metric name"))
    if path.endswith(".object"):
        _validate_reference(mapping_at(source, "describedObject", path, errs), child(path, "describedObject"), errs)
    _validate_target(mapping_at(source, "target", path, errs), child(path, "target"), errs)


def _validate_metrics(spec: Mapping[str, Any], errs: Errors) -> None:
    for item_path, metric in objects_at(spec, "metrics", "spec", errs):
        metric_type = str_at(metric, "type", item_path, errs)
        if not metric_type:
            errs.append(required(child(item_path, "type"), "must specify a metric source type"))
        if metric_type not in METRIC_SOURCE_TYPES:
            errs.append(not_supported(child(item_path, "type"), metric_type, METRIC_SOURCE_TYPES))
        present = [f for f in _SOURCE_FIELDS.values() if metric.get(f) is not None]
        if len(present) == 1:
            source_path = child(item_path, present[0])
            source = mapping_at(metric, present[0], item_path, errs)
            if present[0] in ("resource", "containerResource"):
                _validate_resource_source(source, source_path, errs)
            else:
                _validate_metric_source(source, source_path, errs)
        expected = _SOURCE_FIELDS.get(metric_type)
        if expected is not None and metric.get(expected) is None:
            errs.append(required(child(item_path, expected), "must populate information for the given metric source"))
        if len(present) != 1:
            for extra in present:
                if extra != expected:
                    errs.append(forbidden(child(item_path, extra), "must populate the given metric source only"))


def _validate_rules(rules: Mapping[str, Any], path: str, errs: Errors) -> None:
    """``validateScalingRules``: window, select policy, and at least one valid policy."""
    window = int_at(rules, "stabilizationWindowSeconds", path, errs)
    window_path = child(path, "stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(invalid(window_path, window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW:
        errs.append(invalid(window_path, window, f"must be less than or equal to {MAX_STABILIZATION_WINDOW}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(not_supported(child(path, "selectPolicy"), select, SELECT_POLICIES))
    policies = objects_at(rules, "policies", path, errs)
    if not policies:
        errs.append(required(child(path, "policies"), "must specify at least one Policy"))
    for item_path, policy in policies:
        policy_type = str_at(policy, "type", item_path, errs)
        if policy_type not in SCALING_POLICY_TYPES:
            errs.append(not_supported(child(item_path, "type"), policy_type, SCALING_POLICY_TYPES))
        value = int_at(policy, "value", item_path, errs) or 0
        if value <= 0:
            errs.append(invalid(child(item_path, "value"), value, "must be greater than zero"))
        period = int_at(policy, "periodSeconds", item_path, errs) or 0
        if period <= 0:
            errs.append(invalid(child(item_path, "periodSeconds"), period, "must be greater than zero"))
        if period > MAX_PERIOD_SECONDS:
            errs.append(invalid(child(item_path, "periodSeconds"), period,
                                f"must be less than or equal to {MAX_PERIOD_SECONDS}"))


def validate_horizontal_pod_autoscaler_spec(autoscaler: Mapping[str, Any]) -> Errors:
    errs: Errors = []
    spec = mapping_at(autoscaler, "spec", "", errs)
    low = int_at(spec, "minReplicas", "spec", errs)
    high = int_at(spec, "maxReplicas", "spec", errs) or 0
    if low is not None and low < 1:
        errs.append(invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if high < 1:
        errs.append(invalid("spec.maxReplicas", high, "must be greater than 0"))
    if low is not None and high < low:
        errs.append(invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
    staged: Errors = []
    _validate_reference(mapping_at(spec, "scaleTargetRef", "spec", errs), "spec.scaleTargetRef", staged)
    if not staged:
        _validate_metrics(spec, staged)
    if not staged:
        behavior = mapping_at(spec, "behavior", "spec", errs)
        for name in ("scaleUp", "scaleDown"):
            if behavior.get(name) is not None:
                _validate_rules(mapping_at(behavior, name, "spec.behavior", errs), f"spec.behavior.{name}", staged)
    errs.extend(staged)
    return errs


def validate_horizontal_pod_autoscaler_create(autoscaler: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(autoscaler, True, name_is_dns_subdomain)
    errs.extend(validate_horizontal_pod_autoscaler_spec(autoscaler))
    return errs


def validate_horizontal_pod_autoscaler_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_horizontal_pod_autoscaler_spec(new))
    return errs


def validate_horizontal_pod_autoscaler_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateHorizontalPodAutoscalerStatusUpdate``: replica counts are never negative."""
    errs = validate_object_meta_update(new, old)
    status = mapping_at(new, "status", "", errs)
    for name in ("currentReplicas", "desiredReplicas"):
        errs.extend(nonnegative(int_at(status, name, "status", errs), child("status", name)))
    return errs
