"""core/v1 ReplicationControllers, PodTemplates, LimitRanges, ResourceQuotas, PersistentVolumes.

Defaults are upstream's ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_ReplicationController``,
``SetDefaults_LimitRangeItem``, ``SetDefaults_PersistentVolume`` and the pod template
defaults); validation is ``pkg/apis/core/validation`` (``ValidateReplicationController``,
``ValidatePodTemplate``, ``ValidateLimitRange``, ``ValidateResourceQuota``,
``ValidatePersistentVolume`` and their updates). A new PersistentVolume's status is
``Pending`` with ``lastPhaseTransitionTime`` set, as its strategy's ``PrepareForCreate``.

Quantities in messages read as the client wrote them (upstream prints their canonical form).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import duplicate, forbidden, invalid, not_supported, required
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    go_string_map,
    int_at,
    key,
    mapping_at,
    objects_at,
    semantically_equal,
    spec_diff,
    str_at,
    str_list_at,
)
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    IS_NEGATIVE,
    name_is_dns_subdomain,
    nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.podspec import default_pod_template_spec, validate_pod_template_spec
from kubeloop.server.admission.quantity import QuantityError, parse_quantity, quantity_text

LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
QUOTA_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                "CrossNamespacePodAffinity")
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
PV_SOURCES = (
    "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "quobyte", "cinder",
    "cephfs", "flexVolume", "flocker", "azureFile", "vsphereVolume", "azureDisk", "photonPersistentDisk",
    "portworxVolume", "scaleIO", "local", "storageos", "csi", "iscsi", "fc",
)
_STANDARD_QUOTA_RESOURCES = frozenset({
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers", "cpu", "memory",
    "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage",
})
_INTEGER_QUOTA_RESOURCES = frozenset({
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
_STANDARD_RESOURCES = _STANDARD_QUOTA_RESOURCES | {"storage"}
_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_NO_MATCH = "`selector` does not match template `labels`"


def _dict_at(parent: dict[str, Any], name: str) -> dict[str, Any] | None:
    value = parent.get(name)
    if value is None:
        value = parent[name] = {}
    return value if isinstance(value, dict) else None


# ---------------------------------------------------------------------------------- defaults


def default_replication_controller(controller: dict[str, Any]) -> None:
    """Selector and labels from the template's labels when unset; replicas 1; template defaults."""
    spec = _dict_at(controller, "spec")
    if spec is None:
        return
    template = spec.get("template")
    if isinstance(template, dict):
        meta = template.get("metadata")
        labels = meta.get("labels") if isinstance(meta, dict) else None
        if isinstance(labels, dict):
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            controller_meta = controller.get("metadata")
            if isinstance(controller_meta, dict) and not controller_meta.get("labels"):
                controller_meta["labels"] = dict(labels)
        default_pod_template_spec(template)
    if spec.get("replicas") is None:
        spec["replicas"] = 1


def default_pod_template(pod_template: dict[str, Any]) -> None:
    template = _dict_at(pod_template, "template")
    if template is not None:
        default_pod_template_spec(template)


def default_limit_range(limit_range: dict[str, Any]) -> None:
    """``SetDefaults_LimitRangeItem``: container defaults from max, requests from defaults or min."""
    spec = limit_range.get("spec")
    limits = spec.get("limits") if isinstance(spec, dict) else None
    for item in limits if isinstance(limits, list) else []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        found_default = item.get("default")
        found_request = item.get("defaultRequest")
        default: dict[str, Any] = found_default if isinstance(found_default, dict) else {}
        request: dict[str, Any] = found_request if isinstance(found_request, dict) else {}
        for source, target in (("max", default), ("default", request), ("min", request)):
            values = default if source == "default" else item.get(source)
            for name, value in (values.items() if isinstance(values, dict) else []):
                target.setdefault(name, value)
        # Empty maps are omitted on the wire, as Go's omitempty drops them.
        for name, value in (("default", default), ("defaultRequest", request)):
            if value:
                item[name] = value


def default_persistent_volume(volume: dict[str, Any]) -> None:
    """Phase Pending, reclaim policy Retain, volume mode Filesystem, hostPath type ""."""
    status = _dict_at(volume, "status")
    if status is not None and not status.get("phase"):
        status["phase"] = "Pending"
    spec = _dict_at(volume, "spec")
    if spec is None:
        return
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""


def stamp_persistent_volume_phase(volume: dict[str, Any]) -> None:
    """The strategy's ``PrepareForCreate``: a new volume is ``Pending`` since its creation."""
    status = volume.get("status")
    meta = volume.get("metadata")
    if isinstance(status, dict) and isinstance(meta, dict) and meta.get("creationTimestamp"):
        status["phase"] = "Pending"
        status["lastPhaseTransitionTime"] = meta["creationTimestamp"]


# ---------------------------------------------------------------------- replication controllers


def _validate_rc_spec(controller: Mapping[str, Any], errs: Errors) -> None:
    """``ValidateReplicationControllerSpec``."""
    spec = mapping_at(controller, "spec", "", errs)
    errs.extend(nonnegative(int_at(spec, "minReadySeconds", "spec", errs), "spec.minReadySeconds"))
    selector = spec.get("selector")
    selector_map = selector if isinstance(selector, Mapping) else {}
    if not selector_map:
        errs.append(required("spec.selector"))
    errs.extend(nonnegative(int_at(spec, "replicas", "spec", errs), "spec.replicas"))
    if spec.get("template") is None:
        errs.append(required("spec.template"))
        return
    template = mapping_at(spec, "template", "spec", errs)
    labels = mapping_at(template, "metadata", "spec.template", []).get("labels")
    plain = labels if isinstance(labels, Mapping) else {}
    if selector_map and any(plain.get(k) != v for k, v in selector_map.items()):
        shown = labels if plain else GoLiteral(go_string_map(None))
        errs.append(invalid("spec.template.metadata.labels", shown, _NO_MATCH))
    errs.extend(validate_pod_template_spec(template, "spec.template"))
    pod_spec = mapping_at(template, "spec", "spec.template", [])
    if pod_spec.get("restartPolicy") != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", pod_spec.get("restartPolicy") or "",
                                  ("Always",)))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                              "activeDeadlineSeconds in ReplicationController is not Supported"))


def validate_replication_controller_create(controller: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(controller, True, name_is_dns_subdomain)
    _validate_rc_spec(controller, errs)
    return errs


def validate_replication_controller_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    _validate_rc_spec(new, errs)
    return errs


def validate_replication_controller_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateReplicationControllerStatus``: counters non-negative, within ``status.replicas``."""
    errs = validate_object_meta_update(new, old)
    status = mapping_at(new, "status", "", errs)
    counts: dict[str, int] = {}
    for name in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration"):
        counts[name] = int_at(status, name, "status", errs) or 0
        errs.extend(nonnegative(counts[name], f"status.{name}"))
    for name in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(invalid(f"status.{name}", counts[name], "cannot be greater than status.replicas"))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(invalid("status.availableReplicas", counts["availableReplicas"],
                            "cannot be greater than readyReplicas"))
    return errs


# ------------------------------------------------------------------------------ pod templates


def validate_pod_template_create(pod_template: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(pod_template, True, name_is_dns_subdomain)
    errs.extend(validate_pod_template_spec(mapping_at(pod_template, "template", "", errs), "template"))
    return errs


def validate_pod_template_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_pod_template_spec(mapping_at(new, "template", "", errs), "template"))
    return errs


# -------------------------------------------------------------------------------- quantities


def _resource_name(name: str, path: str, standard: frozenset[str], message: str) -> Errors:
    """``validateResourceName`` and the standard-name rule for names without a prefix."""
    errs = [invalid(path, name, m) for m in names.qualified_name_errors(name)]
    if not errs and "/" not in name and name not in standard and not name.startswith("hugepages-"):
        errs.append(invalid(path, name, message))
    return errs


def _quantities(parent: Mapping[str, Any], name: str, path: str, errs: Errors) -> dict[str, tuple[Any, Decimal]]:
    """A ``ResourceList``: each entry's written form and exact value; bad quantities are errors."""
    out: dict[str, tuple[Any, Decimal]] = {}
    for resource, value in mapping_at(parent, name, path, errs).items():
        try:
            out[resource] = (value, parse_quantity(value))
        except QuantityError as error:
            errs.append(invalid(key(child(path, name), resource), quantity_text(value), str(error)))
    return out


# ------------------------------------------------------------------------------ limit ranges


def _limit_type_errors(limit_type: str, path: str) -> Errors:
    errs = [invalid(path, limit_type, m) for m in names.qualified_name_errors(limit_type)]
    if not errs and "/" not in limit_type and limit_type not in LIMIT_TYPES:
        errs.append(invalid(path, limit_type, "must be a standard limit type or fully qualified"))
    return errs


def _compare_limits(item_path: str, groups: dict[str, dict[str, tuple[Any, Decimal]]], errs: Errors) -> None:
    """min <= defaultRequest <= default <= max, and ratios of at least 1, per resource."""
    keys = set(groups["max"]) | set(groups["min"]) | set(groups["default"]) | set(groups["defaultRequest"]) | set(
        groups["maxLimitRequestRatio"])
    for resource in sorted(keys):
        low = groups["min"].get(resource)
        high = groups["max"].get(resource)
        limit = groups["default"].get(resource)
        request = groups["defaultRequest"].get(resource)
        ratio = groups["maxLimitRequestRatio"].get(resource)

        def text(found: tuple[Any, Decimal]) -> str:
            return quantity_text(found[0])

        # (smaller, larger, field reported, the value shown, message), in upstream's order.
        checks = (
            (low, high, "min", low, "min value {a} is greater than max value {b}"),
            (low, request, "defaultRequest", request, "min value {a} is greater than default request value {b}"),
            (request, high, "defaultRequest", request, "default request value {a} is greater than max value {b}"),
            (request, limit, "defaultRequest", request,
             "default request value {a} is greater than default limit value {b}"),
            (low, limit, "default", low, "min value {a} is greater than default value {b}"),
            (limit, high, "default", high, "default value {a} is greater than max value {b}"),
        )
        for first, second, field_name, shown, message in checks:
            if first is not None and second is not None and shown is not None and first[1] > second[1]:
                errs.append(invalid(key(child(item_path, field_name), resource), text(shown),
                                    message.format(a=text(first), b=text(second))))
        if ratio is not None and ratio[1] < 1:
            errs.append(invalid(key(child(item_path, "maxLimitRequestRatio"), resource), text(ratio),
                                f"ratio {text(ratio)} is less than 1"))


def _validate_limit_range_spec(limit_range: Mapping[str, Any], errs: Errors) -> None:
    """``ValidateLimitRange`` for the rules users meet: types, names, orderings."""
    spec = mapping_at(limit_range, "spec", "", errs)
    seen: set[str] = set()
    for item_path, item in objects_at(spec, "limits", "spec", errs):
        limit_type = str_at(item, "type", item_path, errs)
        errs.extend(_limit_type_errors(limit_type, child(item_path, "type")))
        if limit_type in seen:
            errs.append(duplicate(child(item_path, "type"), limit_type))
        seen.add(limit_type)
        groups: dict[str, dict[str, tuple[Any, Decimal]]] = {}
        for name in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            groups[name] = _quantities(item, name, item_path, errs)
            if name in ("maxLimitRequestRatio",):
                continue
            for resource in groups[name]:
                resource_path = key(child(item_path, name), resource)
                if limit_type in ("Pod", "Container"):
                    errs.extend(_resource_name(resource, resource_path, _CONTAINER_RESOURCES,
                                               "must be a standard resource for containers"))
                else:
                    errs.extend(_resource_name(resource, resource_path, _STANDARD_RESOURCES,
                                               "must be a standard resource type or fully qualified"))
        if limit_type == "Pod":
            for name in ("default", "defaultRequest"):
                if groups[name]:
                    errs.append(forbidden(child(item_path, name), "may not be specified when `type` is 'Pod'"))
        if limit_type == "PersistentVolumeClaim" and "storage" not in groups["min"] and "storage" not in groups["max"]:
            errs.append(required(child(item_path, "limits"),
                                 "either minimum or maximum storage value is required, but neither was provided"))
        _compare_limits(item_path, groups, errs)


def validate_limit_range_create(limit_range: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(limit_range, True, name_is_dns_subdomain)
    _validate_limit_range_spec(limit_range, errs)
    return errs


def validate_limit_range_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    _validate_limit_range_spec(new, errs)
    return errs


# ---------------------------------------------------------------------------- resource quotas


def _validate_quota_values(values: dict[str, tuple[Any, Decimal]], path: str, names_too: bool, errs: Errors) -> None:
    for resource, (written, value) in values.items():
        resource_path = key(path, resource)
        if names_too:
            errs.extend(_resource_name(resource, resource_path, _STANDARD_QUOTA_RESOURCES,
                                       "must be a standard resource for quota"))
        if value < 0:
            errs.append(invalid(resource_path, quantity_text(written), IS_NEGATIVE))
        if resource in _INTEGER_QUOTA_RESOURCES and value != value.to_integral_value():
            errs.append(invalid(resource_path, quantity_text(written), "must be an integer"))


def _validate_quota_spec(quota: Mapping[str, Any], errs: Errors) -> None:
    """``ValidateResourceQuotaSpec``: names, non-negative (integer) amounts, known scopes."""
    spec = mapping_at(quota, "spec", "", errs)
    _validate_quota_values(_quantities(spec, "hard", "spec", errs), "spec.hard", True, errs)
    scopes = str_list_at(spec, "scopes", "spec", errs)
    for scope in scopes:
        if scope not in QUOTA_SCOPES:
            errs.append(invalid("spec.scopes", scopes, "unsupported scope"))
    selector = mapping_at(spec, "scopeSelector", "spec", errs)
    for item_path, expression in objects_at(selector, "matchExpressions", "spec.scopeSelector", errs):
        scope = str_at(expression, "scopeName", item_path, errs)
        if scope not in QUOTA_SCOPES:
            errs.append(invalid(child(item_path, "scopeName"), scope, "unsupported scope"))
        operator = str_at(expression, "operator", item_path, errs)
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            errs.append(invalid(child(item_path, "operator"), operator, "not a valid selector operator"))


def _validate_quota_status(quota: Mapping[str, Any], errs: Errors) -> None:
    status = mapping_at(quota, "status", "", errs)
    for name in ("hard", "used"):
        _validate_quota_values(_quantities(status, name, "status", errs), child("status", name), False, errs)


def validate_resource_quota_create(quota: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(quota, True, name_is_dns_subdomain)
    _validate_quota_spec(quota, errs)
    _validate_quota_status(quota, errs)
    return errs


def validate_resource_quota_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    _validate_quota_spec(new, errs)
    return errs


def validate_resource_quota_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    _validate_quota_status(new, errs)
    return errs


# ------------------------------------------------------------------------- persistent volumes


def _go_resource_list(values: Mapping[str, Any]) -> GoLiteral:
    body = ", ".join(f'"{k}":resource.Quantity{{...}}' for k in sorted(values))
    return GoLiteral("core.ResourceList{" + body + "}" if values else "core.ResourceList(nil)")


def _validate_pv_spec(volume: Mapping[str, Any], errs: Errors) -> None:
    """``ValidatePersistentVolumeSpec``: modes, capacity, one volume source, policies."""
    spec = mapping_at(volume, "spec", "", errs)
    modes = str_list_at(spec, "accessModes", "spec", errs)
    if not modes:
        errs.append(required("spec.accessModes"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported("spec.accessModes", mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(m != "ReadWriteOncePod" for m in modes):
        errs.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    capacity = mapping_at(spec, "capacity", "spec", errs)
    if not capacity:
        errs.append(required("spec.capacity"))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported("spec.capacity", _go_resource_list(capacity), ("storage",)))
    for resource, (written, value) in _quantities(spec, "capacity", "spec", errs).items():
        if value <= 0:
            errs.append(invalid(key("spec.capacity", resource), quantity_text(written), "must be greater than zero"))
    storage_class = str_at(spec, "storageClassName", "spec", errs)
    if storage_class:
        errs.extend(invalid("spec.storageClassName", storage_class, m)
                    for m in names.dns1123_subdomain_errors(storage_class))
    policy = str_at(spec, "persistentVolumeReclaimPolicy", "spec", errs)
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    sources = [name for name in PV_SOURCES if spec.get(name) is not None]
    for extra in sources[1:]:
        errs.append(forbidden(child("spec", extra), "may not specify more than 1 volume type"))
    if not sources:
        errs.append(required("spec", "must specify a volume type"))
    host_path = mapping_at(spec, "hostPath", "spec", errs)
    if spec.get("hostPath") is not None:
        path_text = str_at(host_path, "path", "spec.hostPath", errs)
        if not path_text:
            errs.append(required("spec.hostPath.path"))
        elif policy == "Recycle" and posixpath.normpath(path_text) == "/":
            errs.append(forbidden("spec.persistentVolumeReclaimPolicy",
                                  "may not be 'recycle' for a hostPath mount of '/'"))
    local = mapping_at(spec, "local", "spec", errs)
    if spec.get("local") is not None:
        if not str_at(local, "path", "spec.local", errs):
            errs.append(required("spec.local.path"))
        if spec.get("nodeAffinity") is None:
            errs.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    volume_mode = spec.get("volumeMode")
    if volume_mode is not None and volume_mode not in VOLUME_MODES:
        errs.append(not_supported("spec.volumeMode", volume_mode, VOLUME_MODES))
    claim_ref = mapping_at(spec, "claimRef", "spec", errs)
    if spec.get("claimRef") is not None and not str_at(claim_ref, "name", "spec.claimRef", errs):
        errs.append(required("spec.claimRef.name"))


def validate_persistent_volume_create(volume: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(volume, False, name_is_dns_subdomain)
    _validate_pv_spec(volume, errs)
    return errs


def validate_persistent_volume_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """The volume source and the volume mode are immutable after creation."""
    errs = validate_object_meta_update(new, old)
    _validate_pv_spec(new, errs)
    new_spec = mapping_at(new, "spec", "", [])
    old_spec = mapping_at(old, "spec", "", [])
    new_source = {name: new_spec[name] for name in PV_SOURCES if name in new_spec}
    old_source = {name: old_spec[name] for name in PV_SOURCES if name in old_spec}
    if not semantically_equal(new_source, old_source):
        diff = spec_diff("core.PersistentVolumeSource", old_source, new_source)
        errs.append(forbidden("spec.persistentvolumesource",
                              f"spec.persistentvolumesource is immutable after creation\n{diff}"))
    if new_spec.get("volumeMode") != old_spec.get("volumeMode"):
        errs.append(invalid("volumeMode", new_spec.get("volumeMode"), FIELD_IMMUTABLE))
    if old_spec.get("nodeAffinity") is not None and not semantically_equal(
            new_spec.get("nodeAffinity"), old_spec.get("nodeAffinity")):
        errs.append(invalid("nodeAffinity", GoLiteral("&core.VolumeNodeAffinity{...}"), FIELD_IMMUTABLE))
    return errs


def validate_persistent_volume_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    status = mapping_at(new, "status", "", errs)
    phase = status.get("phase")
    phases = ("Pending", "Available", "Bound", "Released", "Failed")
    if phase and phase not in phases:
        errs.append(not_supported("status.phase", phase, phases))
    return errs

