"""apps/v1 Deployments, ReplicaSets and ControllerRevisions, and autoscaling/v1 Scale.

Defaults are ``pkg/apis/apps/v1/defaults.go`` plus the pod template defaults; validation is
``pkg/apis/apps/validation`` and the registry strategies' extra update rules (the selector is
immutable in apps/v1). Errors carry upstream's paths, values (as Go prints them) and words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from kubeloop.api.labels import SelectorError, selector_from_label_selector, validate_label_selector
from kubeloop.api.status import forbidden, go_quote, invalid, not_supported, required, type_invalid
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    go_int_or_string,
    go_label_selector,
    go_string_map,
    int_at,
    mapping_at,
    semantically_equal,
)
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    name_is_dns_subdomain,
    nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.podspec import default_pod_template_spec, validate_pod_template_spec

DEFAULT_MAX_SURGE = "25%"
DEFAULT_MAX_UNAVAILABLE = "25%"
DEFAULT_REVISION_HISTORY_LIMIT = 10
DEFAULT_PROGRESS_DEADLINE_SECONDS = 600
ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"
STRATEGY_TYPES = ("Recreate", "RollingUpdate")
_PERCENT_ERROR = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
_NOT_GREATER = "cannot be greater than status.replicas"
_NOT_GREATER_READY = "cannot be greater than readyReplicas"
_EMPTY_SELECTOR = "empty selector is invalid for deployment"
# Upstream shares the ReplicaSet template check with Deployments, message included.
_NO_DEADLINE = "activeDeadlineSeconds in ReplicaSet is not Supported"


# ---------------------------------------------------------------------------------- defaults


def _template(spec: dict[str, Any]) -> dict[str, Any] | None:
    template = spec.get("template")
    if template is None:
        template = spec["template"] = {}
    return template if isinstance(template, dict) else None


def _spec(obj: dict[str, Any]) -> dict[str, Any] | None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    return spec if isinstance(spec, dict) else None


def default_deployment(deployment: dict[str, Any]) -> None:
    """Replicas 1, RollingUpdate 25%/25%, history 10, progress deadline 600, template defaults."""
    spec = _spec(deployment)
    if spec is None:
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = spec.get("strategy")
    if strategy is None:
        strategy = spec["strategy"] = {}
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if rolling is None:
                rolling = strategy["rollingUpdate"] = {}
            if isinstance(rolling, dict):
                if rolling.get("maxUnavailable") is None:
                    rolling["maxUnavailable"] = DEFAULT_MAX_UNAVAILABLE
                if rolling.get("maxSurge") is None:
                    rolling["maxSurge"] = DEFAULT_MAX_SURGE
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = DEFAULT_REVISION_HISTORY_LIMIT
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = DEFAULT_PROGRESS_DEADLINE_SECONDS
    template = _template(spec)
    if template is not None:
        default_pod_template_spec(template)


def default_replica_set(replica_set: dict[str, Any]) -> None:
    spec = _spec(replica_set)
    if spec is None:
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    template = _template(spec)
    if template is not None:
        default_pod_template_spec(template)


# -------------------------------------------------------------------------------- validation


def _labels_literal(labels: Any) -> Any:
    return GoLiteral(go_string_map(labels)) if labels is None else labels


def _validate_selector_and_template(spec: Mapping[str, Any], errs: Errors) -> None:
    """Selector present, valid, non-empty and matching the template; the template itself."""
    selector = spec.get("selector")
    if selector is None:
        errs.append(required("spec.selector"))
    else:
        errs.extend(validate_label_selector(selector, "spec.selector"))
        if isinstance(selector, Mapping) and not selector.get("matchLabels") and not selector.get("matchExpressions"):
            errs.append(invalid("spec.selector", go_label_selector(selector), _EMPTY_SELECTOR))
    try:
        parsed = selector_from_label_selector(selector)
    except SelectorError:
        errs.append(invalid("spec.selector", go_label_selector(selector), "invalid label selector"))
        return
    template = mapping_at(spec, "template", "spec", errs)
    template_meta = mapping_at(template, "metadata", "spec.template", [])
    labels = template_meta.get("labels")
    if not parsed.empty():
        plain = labels if isinstance(labels, Mapping) else {}
        if not all(isinstance(v, str) for v in plain.values()) or not parsed.matches(plain):
            errs.append(invalid("spec.template.metadata.labels", _labels_literal(labels),
                                "`selector` does not match template `labels`"))
    errs.extend(validate_pod_template_spec(template, "spec.template"))
    pod_spec = mapping_at(template, "spec", "spec.template", [])
    restart_policy = pod_spec.get("restartPolicy")
    if restart_policy != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", restart_policy or "", ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds", _NO_DEADLINE))


def _percent_value(value: Any) -> int | None:
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit() and value[:-1].isascii():
        return int(value[:-1])
    return None


def _raw_value(value: Any) -> int:
    """``getIntOrPercentValue``: the percent number, the int, or 0 for anything else."""
    percent = _percent_value(value)
    if percent is not None:
        return percent
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return 0
    return 0


def _validate_int_or_percent(value: Any, path: str, errs: Errors) -> None:
    if isinstance(value, str):
        if _percent_value(value) is None:
            errs.append(invalid(path, go_int_or_string(value), _PERCENT_ERROR))
    elif isinstance(value, int) and not isinstance(value, bool):
        errs.extend(nonnegative(value, path))
    elif value is not None:
        errs.append(type_invalid(path, value, "must be an integer or percentage (e.g '5%')"))


def _go_strategy(strategy: Mapping[str, Any]) -> GoLiteral:
    # Go prints a set pointer as its address, which has no stable counterpart here.
    rolling = "(*apps.RollingUpdateDeployment)(nil)"
    if strategy.get("rollingUpdate") is not None:
        rolling = "(*apps.RollingUpdateDeployment)(0xc000000000)"
    type_text = go_quote(str(strategy.get("type") or ""))
    return GoLiteral(f"apps.DeploymentStrategy{{Type:{type_text}, RollingUpdate:{rolling}}}")


def _validate_strategy(spec: Mapping[str, Any], errs: Errors) -> None:
    strategy = mapping_at(spec, "strategy", "spec", errs)
    strategy_type = strategy.get("type")
    if strategy_type == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            errs.append(forbidden("spec.strategy.rollingUpdate",
                                  "may not be specified when strategy `type` is 'Recreate'"))
    elif strategy_type == "RollingUpdate":
        if strategy.get("rollingUpdate") is None:
            errs.append(required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil"))
            return
        rolling = mapping_at(strategy, "rollingUpdate", "spec.strategy", errs)
        path = "spec.strategy.rollingUpdate"
        max_unavailable = rolling.get("maxUnavailable")
        max_surge = rolling.get("maxSurge")
        _validate_int_or_percent(max_unavailable, child(path, "maxUnavailable"), errs)
        _validate_int_or_percent(max_surge, child(path, "maxSurge"), errs)
        if _raw_value(max_unavailable) == 0 and _raw_value(max_surge) == 0:
            errs.append(invalid(child(path, "maxUnavailable"), go_int_or_string(max_unavailable),
                                "may not be 0 when `maxSurge` is 0"))
        percent = _percent_value(max_unavailable)
        if percent is not None and percent > 100:
            errs.append(invalid(child(path, "maxUnavailable"), go_int_or_string(max_unavailable),
                                "must not be greater than 100%"))
    else:
        errs.append(not_supported("spec.strategy", _go_strategy(strategy), STRATEGY_TYPES))


def _validate_rollback_annotation(deployment: Mapping[str, Any], errs: Errors) -> None:
    annotations = mapping_at(mapping_at(deployment, "metadata", "", []), "annotations", "metadata", [])
    revision = annotations.get(ROLLBACK_TO_ANNOTATION)
    if not isinstance(revision, str) or not revision:
        return
    try:
        number = int(revision)
    except ValueError:
        errs.append(type_invalid(
            f"metadata.annotations[{ROLLBACK_TO_ANNOTATION}]", revision,
            f"failed to parse annotation[{ROLLBACK_TO_ANNOTATION}]={revision} as int64",
        ))
        return
    errs.extend(nonnegative(number, "spec.rollback.version"))


def validate_deployment_spec(deployment: Mapping[str, Any]) -> Errors:
    """``ValidateDeploymentSpec`` on a defaulted Deployment."""
    errs: Errors = []
    spec = mapping_at(deployment, "spec", "", errs)
    replicas = int_at(spec, "replicas", "spec", errs)
    errs.extend(nonnegative(replicas, "spec.replicas"))
    _validate_selector_and_template(spec, errs)
    _validate_strategy(spec, errs)
    min_ready = int_at(spec, "minReadySeconds", "spec", errs) or 0
    errs.extend(nonnegative(min_ready, "spec.minReadySeconds"))
    errs.extend(nonnegative(int_at(spec, "revisionHistoryLimit", "spec", errs), "spec.revisionHistoryLimit"))
    _validate_rollback_annotation(deployment, errs)
    deadline = int_at(spec, "progressDeadlineSeconds", "spec", errs)
    if deadline is not None:
        errs.extend(nonnegative(deadline, "spec.progressDeadlineSeconds"))
        if deadline <= min_ready:
            errs.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return errs


def validate_replica_set_spec(replica_set: Mapping[str, Any]) -> Errors:
    errs: Errors = []
    spec = mapping_at(replica_set, "spec", "", errs)
    replicas = int_at(spec, "replicas", "spec", errs)
    errs.extend(nonnegative(replicas, "spec.replicas"))
    errs.extend(nonnegative(int_at(spec, "minReadySeconds", "spec", errs), "spec.minReadySeconds"))
    _validate_selector_and_template(spec, errs)
    return errs


def selector_immutable(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``spec.selector`` may not change (Deployments, ReplicaSets, DaemonSets, StatefulSets)."""
    new_selector = mapping_at(new, "spec", "", []).get("selector")
    old_selector = mapping_at(old, "spec", "", []).get("selector")
    if semantically_equal(new_selector, old_selector):
        return []
    return [invalid("spec.selector", go_label_selector(new_selector), FIELD_IMMUTABLE)]


def validate_deployment_create(deployment: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(deployment, True, name_is_dns_subdomain)
    errs.extend(validate_deployment_spec(deployment))
    return errs


def validate_deployment_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_deployment_spec(new))
    errs.extend(selector_immutable(new, old))
    return errs


def validate_replica_set_create(replica_set: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(replica_set, True, name_is_dns_subdomain)
    errs.extend(validate_replica_set_spec(replica_set))
    return errs


def validate_replica_set_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_replica_set_spec(new))
    errs.extend(selector_immutable(new, old))
    return errs


def status_counts(obj: Mapping[str, Any], names: tuple[str, ...], errs: Errors) -> dict[str, int]:
    """The named ``status`` counters of a workload (0 when absent), each checked non-negative."""
    status = mapping_at(obj, "status", "", errs)
    counts: dict[str, int] = {}
    for name in names:
        value = int_at(status, name, "status", errs) or 0
        counts[name] = value
        errs.extend(nonnegative(value, f"status.{name}"))
    return counts


def validate_deployment_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """Counters non-negative and consistent; ``collisionCount`` never decremented."""
    errs = validate_object_meta_update(new, old)
    counts = status_counts(new, ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                                  "availableReplicas", "unavailableReplicas"), errs)
    status = mapping_at(new, "status", "", [])
    collisions = int_at(status, "collisionCount", "status", errs)
    errs.extend(nonnegative(collisions, "status.collisionCount"))
    for name in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(invalid(f"status.{name}", counts[name], _NOT_GREATER))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(invalid("status.availableReplicas", counts["availableReplicas"], _NOT_GREATER_READY))
    old_collisions = int_at(mapping_at(old, "status", "", []), "collisionCount", "status", [])
    if old_collisions is not None and (collisions is None or collisions < old_collisions):
        errs.append(invalid("status.collisionCount", collisions or 0, "cannot be decremented"))
    return errs


def validate_replica_set_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    counts = status_counts(new, ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                                  "observedGeneration"), errs)
    for name in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(invalid(f"status.{name}", counts[name], _NOT_GREATER))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(invalid("status.availableReplicas", counts["availableReplicas"], _NOT_GREATER_READY))
    return errs


def validate_controller_revision_create(revision: Mapping[str, Any]) -> Errors:
    """``data`` is mandatory and ``revision`` non-negative."""
    errs = validate_object_meta(revision, True, name_is_dns_subdomain)
    if revision.get("data") is None:
        errs.append(required("data", "data is mandatory"))
    errs.extend(nonnegative(int_at(revision, "revision", "", errs), "revision"))
    return errs


def _go_raw_extension(data: Any) -> GoLiteral:
    if data is None:
        return GoLiteral("runtime.RawExtension{Raw:[]uint8(nil), Object:runtime.Object(nil)}")
    raw = orjson.dumps(data)
    body = ", ".join(f"0x{byte:x}" for byte in raw)
    return GoLiteral(f"runtime.RawExtension{{Raw:[]uint8{{{body}}}, Object:runtime.Object(nil)}}")


def validate_controller_revision_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_controller_revision_create(new))
    if new.get("data") != old.get("data"):
        errs.append(invalid("data", _go_raw_extension(new.get("data")), FIELD_IMMUTABLE))
    return errs


def validate_scale(scale: Mapping[str, Any], namespaced: bool) -> Errors:
    """``ValidateScale``: the Scale's metadata, and ``spec.replicas >= 0``."""
    errs = validate_object_meta(scale, namespaced, name_is_dns_subdomain)
    replicas = int_at(mapping_at(scale, "spec", "", errs), "replicas", "spec", errs)
    errs.extend(nonnegative(replicas, "spec.replicas"))
    return errs
