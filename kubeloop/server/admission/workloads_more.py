"""apps/v1 DaemonSets and StatefulSets: defaults and validation.

Defaults are upstream's ``SetDefaults_DaemonSet`` / ``SetDefaults_StatefulSet``
(``pkg/apis/apps/v1/defaults.go``, with ``StatefulSetAutoDeletePVC`` on, as in 1.33) plus the
pod template defaults; a StatefulSet's ``volumeClaimTemplates`` get the PersistentVolumeClaim
defaults. Validation is ``pkg/apis/apps/validation``: ``ValidateDaemonSet`` /
``ValidateDaemonSetUpdate`` (selector immutable) and ``ValidateStatefulSet`` /
``ValidateStatefulSetUpdate`` (only replicas, ordinals, template, updateStrategy,
revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds may change).
Status is reset on create and kept on update by the generic strategy.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubeloop.api.labels import SelectorError, selector_from_label_selector, validate_label_selector
from kubeloop.api.status import forbidden, go_quote, invalid, not_supported, required
from kubeloop.server.admission.apps import (
    _percent_value,
    _raw_value,
    _validate_int_or_percent,
    selector_immutable,
    status_counts,
)
from kubeloop.server.admission.core_kinds import default_persistent_volume_claim
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    go_int_or_string,
    go_label_selector,
    int_at,
    mapping_at,
    semantically_equal,
    str_map_at,
)
from kubeloop.server.admission.metadata import (
    name_is_dns_label,
    name_is_dns_subdomain,
    nonnegative,
    validate_annotations,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.podspec import default_pod_template_spec, validate_pod_template_spec

DEFAULT_REVISION_HISTORY_LIMIT = 10
DAEMON_SET_STRATEGIES = ("RollingUpdate", "OnDelete")
POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
PVC_RETENTION_POLICIES = ("Delete", "Retain")
STATEFUL_SET_MUTABLE = (
    "replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy", "minReadySeconds",
)
STATEFUL_SET_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)
_NO_MATCH = "`selector` does not match template `labels`"
_NOT_GREATER = "cannot be greater than status.replicas"


def _dict_at(parent: dict[str, Any], name: str) -> dict[str, Any] | None:
    value = parent.get(name)
    if value is None:
        value = parent[name] = {}
    return value if isinstance(value, dict) else None


# ---------------------------------------------------------------------------------- defaults


def default_daemon_set(daemon_set: dict[str, Any]) -> None:
    """RollingUpdate with maxUnavailable 1 and maxSurge 0, history 10, template defaults."""
    spec = _dict_at(daemon_set, "spec")
    if spec is None:
        return
    strategy = _dict_at(spec, "updateStrategy")
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = _dict_at(strategy, "rollingUpdate")
            if rolling is not None:
                if rolling.get("maxUnavailable") is None:
                    rolling["maxUnavailable"] = 1
                if rolling.get("maxSurge") is None:
                    rolling["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = DEFAULT_REVISION_HISTORY_LIMIT
    template = _dict_at(spec, "template")
    if template is not None:
        default_pod_template_spec(template)


def default_stateful_set(stateful_set: dict[str, Any]) -> None:
    """OrderedReady, RollingUpdate partition 0 (only when the type was unset), Retain/Retain
    claim retention, replicas 1, history 10, template and claim template defaults."""
    spec = _dict_at(stateful_set, "spec")
    if spec is None:
        return
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = _dict_at(spec, "updateStrategy")
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            if strategy.get("rollingUpdate") is None:
                strategy["rollingUpdate"] = {}
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict) and rolling.get("partition") is None:
            rolling["partition"] = 0
    retention = _dict_at(spec, "persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        for name in ("whenDeleted", "whenScaled"):
            if not retention.get(name):
                retention[name] = "Retain"
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = DEFAULT_REVISION_HISTORY_LIMIT
    template = _dict_at(spec, "template")
    if template is not None:
        default_pod_template_spec(template)
    claims = spec.get("volumeClaimTemplates")
    for claim in claims if isinstance(claims, list) else []:
        if isinstance(claim, dict):
            default_persistent_volume_claim(claim)


# -------------------------------------------------------------------------------- validation


def _labels_value(labels: Any) -> Any:
    return labels if isinstance(labels, Mapping) and labels else GoLiteral("map[string]string(nil)")


def _restart_and_deadline(spec: Mapping[str, Any], owner: str, errs: Errors) -> None:
    pod_spec = mapping_at(mapping_at(spec, "template", "spec", []), "spec", "spec.template", [])
    policy = pod_spec.get("restartPolicy")
    if policy != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", policy or "", ("Always",)))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                              f"activeDeadlineSeconds in {owner} is not Supported"))


def _go_strategy(strategy: Mapping[str, Any], struct: str, rolling_struct: str) -> GoLiteral:
    """An update strategy as Go's ``%#v`` prints it (the rolling-update pointer as an address)."""
    pointer = "0xc000000000" if strategy.get("rollingUpdate") is not None else "nil"
    type_text = go_quote(str(strategy.get("type") or ""))
    return GoLiteral(f"apps.{struct}{{Type:{type_text}, RollingUpdate:(*apps.{rolling_struct})({pointer})}}")


def _go_daemon_set_strategy(strategy: Mapping[str, Any]) -> GoLiteral:
    return _go_strategy(strategy, "DaemonSetUpdateStrategy", "RollingUpdateDaemonSet")


def _validate_daemon_set_strategy(spec: Mapping[str, Any], errs: Errors) -> None:
    """``ValidateDaemonSetUpdateStrategy`` and ``ValidateRollingUpdateDaemonSet``."""
    strategy = mapping_at(spec, "updateStrategy", "spec", errs)
    path = "spec.updateStrategy"
    strategy_type = strategy.get("type")
    if strategy_type == "OnDelete":
        return
    if strategy_type != "RollingUpdate":
        errs.append(not_supported(path, _go_daemon_set_strategy(strategy), DAEMON_SET_STRATEGIES))
        return
    if strategy.get("rollingUpdate") is None:
        errs.append(required(child(path, "rollingUpdate")))
        return
    rolling = mapping_at(strategy, "rollingUpdate", path, errs)
    rolling_path = child(path, "rollingUpdate")
    max_unavailable = rolling.get("maxUnavailable")
    max_surge = rolling.get("maxSurge")
    for name, value in (("maxUnavailable", max_unavailable), ("maxSurge", max_surge)):
        _validate_int_or_percent(value, child(rolling_path, name), errs)
    for name, value in (("maxUnavailable", max_unavailable), ("maxSurge", max_surge)):
        percent = _percent_value(value)
        if percent is not None and percent > 100:
            errs.append(invalid(child(rolling_path, name), go_int_or_string(value), "must not be greater than 100%"))
    has_unavailable = _raw_value(max_unavailable) != 0
    has_surge = _raw_value(max_surge) != 0
    if has_unavailable and has_surge:
        errs.append(invalid(child(rolling_path, "maxSurge"), go_int_or_string(max_surge),
                            "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        errs.append(required(child(rolling_path, "maxUnavailable"), "cannot be 0 when maxSurge is 0"))


def validate_daemon_set_spec(daemon_set: Mapping[str, Any]) -> Errors:
    """``ValidateDaemonSetSpec``: a non-empty selector matching the template, strategy, counters."""
    errs: Errors = []
    spec = mapping_at(daemon_set, "spec", "", errs)
    selector = spec.get("selector")
    errs.extend(validate_label_selector(selector, "spec.selector"))
    template = mapping_at(spec, "template", "spec", errs)
    labels = mapping_at(template, "metadata", "spec.template", []).get("labels")
    try:
        parsed = selector_from_label_selector(selector)
    except SelectorError:
        parsed = None
    plain = labels if isinstance(labels, Mapping) else {}
    if parsed is not None and not parsed.matches(plain):
        errs.append(invalid("spec.template.metadata.labels", _labels_value(labels), _NO_MATCH))
    if isinstance(selector, Mapping) and not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errs.append(invalid("spec.selector", go_label_selector(selector), "empty selector is invalid for daemonset"))
    errs.extend(validate_pod_template_spec(template, "spec.template"))
    _restart_and_deadline(spec, "DaemonSet", errs)
    errs.extend(nonnegative(int_at(spec, "minReadySeconds", "spec", errs), "spec.minReadySeconds"))
    errs.extend(nonnegative(int_at(spec, "templateGeneration", "spec", errs), "spec.templateGeneration"))
    _validate_daemon_set_strategy(spec, errs)
    errs.extend(nonnegative(int_at(spec, "revisionHistoryLimit", "spec", errs), "spec.revisionHistoryLimit"))
    return errs


def validate_daemon_set_create(daemon_set: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(daemon_set, True, name_is_dns_subdomain)
    errs.extend(validate_daemon_set_spec(daemon_set))
    return errs


def validate_daemon_set_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_daemon_set_spec(new))
    errs.extend(selector_immutable(new, old))
    return errs


def validate_daemon_set_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateDaemonSetStatusUpdate``: counters non-negative, collisionCount never decremented."""
    errs = validate_object_meta_update(new, old)
    status_counts(new, ("numberMisscheduled", "currentNumberScheduled", "desiredNumberScheduled",
                              "numberReady", "observedGeneration", "updatedNumberScheduled",
                              "numberAvailable", "numberUnavailable", "collisionCount"), errs)
    _collisions_not_decremented(new, old, errs)
    return errs


def _collisions_not_decremented(new: Mapping[str, Any], old: Mapping[str, Any], errs: Errors) -> None:
    collisions = int_at(mapping_at(new, "status", "", []), "collisionCount", "status", [])
    old_collisions = int_at(mapping_at(old, "status", "", []), "collisionCount", "status", [])
    if old_collisions is not None and (collisions is None or collisions < old_collisions):
        errs.append(invalid("status.collisionCount", collisions or 0, "cannot be decremented"))


def _go_stateful_set_strategy(strategy: Mapping[str, Any]) -> GoLiteral:
    return _go_strategy(strategy, "StatefulSetUpdateStrategy", "RollingUpdateStatefulSetStrategy")


def _validate_stateful_set_strategy(spec: Mapping[str, Any], errs: Errors) -> None:
    strategy = mapping_at(spec, "updateStrategy", "spec", errs)
    path = "spec.updateStrategy"
    strategy_type = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if not strategy_type:
        errs.append(required(path))
    elif strategy_type == "OnDelete":
        if rolling is not None:
            errs.append(invalid(child(path, "rollingUpdate"), GoLiteral("apps.RollingUpdateStatefulSetStrategy{...}"),
                                "only allowed for updateStrategy 'RollingUpdate'"))
    elif strategy_type == "RollingUpdate":
        if isinstance(rolling, Mapping):
            rolling_path = child(path, "rollingUpdate")
            errs.extend(nonnegative(int_at(rolling, "partition", rolling_path, errs), child(rolling_path, "partition")))
            max_unavailable = rolling.get("maxUnavailable")
            if max_unavailable is not None:
                unavailable_path = child(rolling_path, "maxUnavailable")
                _validate_int_or_percent(max_unavailable, unavailable_path, errs)
                if _raw_value(max_unavailable) == 0:
                    errs.append(invalid(unavailable_path, go_int_or_string(max_unavailable),
                                        "must be greater than 0"))
                percent = _percent_value(max_unavailable)
                if percent is not None and percent > 100:
                    errs.append(invalid(unavailable_path, go_int_or_string(max_unavailable),
                                        "must not be greater than 100%"))
    else:
        errs.append(invalid(path, _go_stateful_set_strategy(strategy), "must be 'RollingUpdate' or 'OnDelete'"))


def validate_stateful_set_spec(stateful_set: Mapping[str, Any]) -> Errors:
    """``ValidateStatefulSetSpec`` (the pod spec itself is not validated, as upstream)."""
    errs: Errors = []
    spec = mapping_at(stateful_set, "spec", "", errs)
    policy = spec.get("podManagementPolicy")
    if not policy:
        errs.append(required("spec.podManagementPolicy"))
    elif policy not in POD_MANAGEMENT_POLICIES:
        errs.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    _validate_stateful_set_strategy(spec, errs)
    retention = mapping_at(spec, "persistentVolumeClaimRetentionPolicy", "spec", errs)
    for name in ("whenDeleted", "whenScaled"):
        value = retention.get(name)
        if spec.get("persistentVolumeClaimRetentionPolicy") is not None and value not in PVC_RETENTION_POLICIES:
            errs.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{name}", value or "",
                                      PVC_RETENTION_POLICIES))
    errs.extend(nonnegative(int_at(spec, "replicas", "spec", errs), "spec.replicas"))
    errs.extend(nonnegative(int_at(spec, "minReadySeconds", "spec", errs), "spec.minReadySeconds"))
    ordinals = mapping_at(spec, "ordinals", "spec", errs)
    errs.extend(nonnegative(int_at(ordinals, "start", "spec.ordinals", errs), "spec.ordinals.start"))
    selector = spec.get("selector")
    if selector is None:
        errs.append(required("spec.selector"))
    else:
        errs.extend(validate_label_selector(selector, "spec.selector"))
        if isinstance(selector, Mapping) and not selector.get("matchLabels") and not selector.get("matchExpressions"):
            errs.append(invalid("spec.selector", go_label_selector(selector),
                                "empty selector is invalid for statefulset"))
    template = mapping_at(spec, "template", "spec", errs)
    try:
        parsed = selector_from_label_selector(selector)
    except SelectorError:
        errs.append(invalid("spec.selector", go_label_selector(selector), ""))
    else:
        meta = mapping_at(template, "metadata", "spec.template", errs)
        labels = meta.get("labels")
        plain = labels if isinstance(labels, Mapping) else {}
        if not parsed.empty() and not parsed.matches(plain):
            errs.append(invalid("spec.template.metadata.labels", _labels_value(labels), _NO_MATCH))
        # Upstream checks the template's labels and annotations only: its volumes may name
        # claim templates, which the pod spec validation would refuse.
        errs.extend(validate_labels(str_map_at(meta, "labels", "spec.template.metadata", errs),
                                    "spec.template.labels"))
        errs.extend(validate_annotations(str_map_at(meta, "annotations", "spec.template.metadata", errs),
                                         "spec.template.annotations"))
    _restart_and_deadline(spec, "StatefulSet", errs)
    return errs


def validate_stateful_set_create(stateful_set: Mapping[str, Any]) -> Errors:
    """Names are DNS labels: they become part of the pods' host names."""
    errs = validate_object_meta(stateful_set, True, name_is_dns_label)
    errs.extend(validate_stateful_set_spec(stateful_set))
    return errs


def validate_stateful_set_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_stateful_set_spec(new))
    new_spec = copy.deepcopy(dict(mapping_at(new, "spec", "", [])))
    old_spec = mapping_at(old, "spec", "", [])
    for name in STATEFUL_SET_MUTABLE:
        new_spec.pop(name, None)
        if name in old_spec:
            new_spec[name] = old_spec[name]
    if not semantically_equal(new_spec, old_spec):
        errs.append(forbidden("spec", STATEFUL_SET_FORBIDDEN))
    return errs


def validate_stateful_set_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateStatefulSetStatus``: counters non-negative and within ``status.replicas``."""
    errs = validate_object_meta_update(new, old)
    counts = status_counts(new, ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                                       "availableReplicas", "observedGeneration", "collisionCount"), errs)
    for name in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(invalid(f"status.{name}", counts[name], _NOT_GREATER))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(invalid("status.availableReplicas", counts["availableReplicas"],
                            "cannot be greater than status.readyReplicas"))
    _collisions_not_decremented(new, old, errs)
    return errs
