"""The small core kinds: Namespaces, Nodes, ConfigMaps, Secrets, ServiceAccounts,
PersistentVolumeClaims, and coordination.k8s.io Leases.

Their rules are mostly metadata plus a few field checks each (data keys and sizes, immutable
data, access modes and requested storage, lease durations, node taints).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.labels import validate_label_selector
from kubeloop.api.status import (
    FieldError,
    forbidden,
    go_quote,
    invalid,
    not_supported,
    required,
    too_long,
    type_invalid,
)
from kubeloop.server.admission.fields import (
    Errors,
    GoLiteral,
    child,
    int_at,
    key,
    mapping_at,
    objects_at,
    semantically_equal,
    spec_diff,
    str_at,
    str_list_at,
)
from kubeloop.server.admission.gobase64 import canonicalize_byte_map
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    IS_NEGATIVE,
    STANDARD_FINALIZERS,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.quantity import QuantityError, parse_quantity, quantity_text
from kubeloop.server.admission.syntax import config_map_key_errors

MAX_SECRET_SIZE = 1024 * 1024
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"


# ---------------------------------------------------------------------------------- defaults


def default_namespace(namespace: dict[str, Any]) -> None:
    """The ``kubernetes.io/metadata.name`` label and ``status.phase: Active``."""
    meta = namespace.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]:
        labels = meta.get("labels")
        if labels is None:
            labels = meta["labels"] = {}
        if isinstance(labels, dict):
            labels[NAMESPACE_NAME_LABEL] = meta["name"]
    status = namespace.get("status")
    if status is None:
        status = namespace["status"] = {}
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Active"


def default_node(node: dict[str, Any]) -> None:
    """Allocatable defaults to capacity."""
    status = node.get("status")
    if isinstance(status, dict) and status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
        status["allocatable"] = dict(status["capacity"])


def default_secret(secret: dict[str, Any]) -> None:
    """Type ``Opaque``; ``data`` read as Go reads bytes (:mod:`.gobase64`, 400 when it cannot);
    ``stringData`` is folded into ``data`` (base64) and never stored."""
    canonicalize_byte_map(secret, "data")
    if not secret.get("type"):
        secret["type"] = "Opaque"
    string_data = secret.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = secret.get("data")
        if not isinstance(data, dict):
            data = secret["data"] = {}
        for data_key, value in string_data.items():
            if isinstance(value, str):
                data[data_key] = base64.b64encode(value.encode()).decode()


def default_config_map(config_map: dict[str, Any]) -> None:
    """``binaryData`` read as Go reads bytes (:mod:`.gobase64`, 400 when it cannot)."""
    canonicalize_byte_map(config_map, "binaryData")


def default_persistent_volume_claim(claim: dict[str, Any]) -> None:
    spec = claim.get("spec")
    if spec is None:
        spec = claim["spec"] = {}
    if isinstance(spec, dict) and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    status = claim.get("status")
    if status is None:
        status = claim["status"] = {}
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


# -------------------------------------------------------------------------------- namespaces


def validate_namespace_create(namespace: Mapping[str, Any]) -> Errors:
    """DNS-1123 label names; ``spec.finalizers`` qualified or standard (reported unindexed)."""
    errs = validate_object_meta(namespace, False, name_is_dns_label)
    spec = mapping_at(namespace, "spec", "", errs)
    for finalizer in str_list_at(spec, "finalizers", "spec", errs):
        errs.extend(invalid("spec.finalizers", finalizer, m) for m in names.qualified_name_errors(finalizer))
        if "/" not in finalizer and finalizer not in STANDARD_FINALIZERS:
            errs.append(invalid("spec.finalizers", finalizer,
                                "name is neither a standard finalizer name nor is it fully qualified"))
    return errs


def validate_namespace_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_namespace_create(new)
    errs.extend(validate_object_meta_update(new, old))
    return errs


def validate_namespace_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """The phase is ``Active`` until deletion starts and ``Terminating`` after."""
    errs = validate_object_meta_update(new, old)
    phase = mapping_at(new, "status", "", errs).get("phase")
    shown = phase if isinstance(phase, str) else ""
    if not mapping_at(new, "metadata", "", []).get("deletionTimestamp"):
        if phase != "Active":
            errs.append(invalid("status.Phase", shown, "may only be 'Active' if `deletionTimestamp` is empty"))
    elif phase != "Terminating":
        errs.append(invalid("status.Phase", shown, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
    return errs


# ------------------------------------------------------------------------------------- nodes


def _go_taint(taint: Mapping[str, Any]) -> GoLiteral:
    added = "(*v1.Time)(nil)" if not taint.get("timeAdded") else "&v1.Time{...}"
    return GoLiteral(
        f"core.Taint{{Key:{go_quote(str(taint.get('key') or ''))}, Value:{go_quote(str(taint.get('value') or ''))}, "
        f"Effect:{go_quote(str(taint.get('effect') or ''))}, TimeAdded:{added}}}"
    )


def validate_node_create(node: Mapping[str, Any]) -> Errors:
    """Subdomain names; taints (reported under ``metadata.taints`` as upstream does); pod CIDRs."""
    errs = validate_object_meta(node, False, name_is_dns_subdomain)
    spec = mapping_at(node, "spec", "", errs)
    unique: set[tuple[str, str]] = set()
    for position, (item_path, taint) in enumerate(objects_at(spec, "taints", "spec", errs)):
        shown_path = f"metadata.taints[{position}]"
        taint_key = str_at(taint, "key", item_path, errs)
        value = str_at(taint, "value", item_path, errs)
        effect = str_at(taint, "effect", item_path, errs)
        errs.extend(invalid(child(shown_path, "key"), taint_key, m) for m in names.qualified_name_errors(taint_key))
        messages = names.label_value_errors(value)
        if messages:
            errs.append(invalid(child(shown_path, "value"), value, ";".join(messages)))
        if not effect:
            errs.append(required(child(shown_path, "effect")))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(child(shown_path, "effect"), effect, TAINT_EFFECTS))
        if (effect, taint_key) in unique:
            errs.append(FieldError("FieldValueDuplicate", shown_path, _go_taint(taint),
                                   "taints must be unique by key and effect pair"))
            continue
        unique.add((effect, taint_key))
    cidrs = str_list_at(spec, "podCIDRs", "spec", errs)
    for position, cidr in enumerate(cidrs):
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            errs.append(invalid(f"spec.podCIDRs[{position}]", cidrs, "must be valid CIDR"))
    return errs


def validate_node_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """Metadata rules; ``spec.podCIDRs`` and ``spec.providerID`` may be set once, never changed."""
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_node_create(new))
    new_spec = mapping_at(new, "spec", "", [])
    old_spec = mapping_at(old, "spec", "", [])
    old_cidrs = old_spec.get("podCIDRs") or []
    if old_cidrs and (new_spec.get("podCIDRs") or []) != old_cidrs:
        errs.append(forbidden("spec.podCIDRs", "node updates may not change podCIDR except from \"\" to valid"))
    old_provider = old_spec.get("providerID") or ""
    if old_provider and new_spec.get("providerID") != old_provider:
        errs.append(forbidden("spec.providerID",
                              "node updates may not change providerID except from \"\" to valid"))
    return errs


# ------------------------------------------------------------------ config maps and secrets


def _data_size_and_keys(obj: Mapping[str, Any], field_name: str, decode: bool, errs: Errors) -> int:
    total = 0
    for data_key, value in mapping_at(obj, field_name, "", errs).items():
        errs.extend(invalid(key(field_name, data_key), data_key, m) for m in config_map_key_errors(data_key))
        if not isinstance(value, str):
            errs.append(type_invalid(key(field_name, data_key), value, "must be of type string"))
            continue
        if decode:
            try:
                total += len(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                errs.append(invalid(key(field_name, data_key), "<secret contents redacted>", "illegal base64 data"))
        else:
            total += len(value.encode())
    return total


def validate_config_map_create(config_map: Mapping[str, Any]) -> Errors:
    """Keys are config keys, not repeated across data and binaryData; 1 MiB in total."""
    errs = validate_object_meta(config_map, True, name_is_dns_subdomain)
    total = _data_size_and_keys(config_map, "data", False, errs)
    binary = mapping_at(config_map, "binaryData", "", [])
    for data_key in mapping_at(config_map, "data", "", []):
        if data_key in binary:
            errs.append(invalid(key("data", data_key), data_key, "duplicate of key present in binaryData"))
    total += _data_size_and_keys(config_map, "binaryData", True, errs)
    if total > MAX_SECRET_SIZE:
        errs.append(too_long("", MAX_SECRET_SIZE))
    return errs


def _immutable_data(new: Mapping[str, Any], old: Mapping[str, Any], fields: tuple[str, ...]) -> Errors:
    if old.get("immutable") is not True:
        return []
    errs: Errors = []
    if new.get("immutable") is not True:
        errs.append(forbidden("immutable", _IMMUTABLE_WHEN_SET))
    for field_name in fields:
        if (new.get(field_name) or {}) != (old.get(field_name) or {}):
            errs.append(forbidden(field_name, _IMMUTABLE_WHEN_SET))
    return errs


def validate_config_map_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(_immutable_data(new, old, ("data", "binaryData")))
    errs.extend(validate_config_map_create(new))
    return errs


_SECRET_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def validate_secret_create(secret: Mapping[str, Any]) -> Errors:
    """Data keys and the 1 MiB limit; the keys each well-known secret type requires."""
    errs = validate_object_meta(secret, True, name_is_dns_subdomain)
    total = _data_size_and_keys(secret, "data", True, errs)
    if total > MAX_SECRET_SIZE:
        errs.append(too_long("data", MAX_SECRET_SIZE))
    data = mapping_at(secret, "data", "", [])
    secret_type = secret.get("type")
    if secret_type == "kubernetes.io/service-account-token":
        annotations = mapping_at(mapping_at(secret, "metadata", "", []), "annotations", "", [])
        if not annotations.get("kubernetes.io/service-account.name"):
            errs.append(required("metadata.annotations[kubernetes.io/service-account.name]"))
    elif secret_type == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errs.extend([required("data[username]"), required("data[password]")])
    elif isinstance(secret_type, str) and secret_type in _SECRET_REQUIRED_KEYS:
        for required_key in _SECRET_REQUIRED_KEYS[secret_type]:
            if required_key not in data:
                errs.append(required(key("data", required_key)))
                if secret_type != "kubernetes.io/tls":
                    break
    return errs


def validate_secret_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    if new.get("type") != old.get("type"):
        errs.append(invalid("type", new.get("type") or "", FIELD_IMMUTABLE))
    errs.extend(_immutable_data(new, old, ("data",)))
    errs.extend(validate_secret_create(new))
    return errs


def validate_service_account_create(account: Mapping[str, Any]) -> Errors:
    return validate_object_meta(account, True, name_is_dns_subdomain)


def validate_service_account_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_service_account_create(new))
    return errs


# -------------------------------------------------------------------- persistent volume claims


def validate_persistent_volume_claim_create(claim: Mapping[str, Any]) -> Errors:
    """Access modes required and known; ``resources.requests.storage`` required and positive."""
    errs = validate_object_meta(claim, True, name_is_dns_subdomain)
    spec = mapping_at(claim, "spec", "", errs)
    modes = str_list_at(spec, "accessModes", "spec", errs)
    if not modes:
        errs.append(required("spec.accessModes", "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        errs.extend(validate_label_selector(spec.get("selector"), "spec.selector"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported("spec.accessModes", mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(m != "ReadWriteOncePod" and m in ACCESS_MODES for m in modes):
        errs.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    requests = mapping_at(mapping_at(spec, "resources", "spec", errs), "requests", "spec.resources", errs)
    storage_path = "spec.resources[storage]"
    if "storage" not in requests:
        errs.append(required(storage_path))
    else:
        try:
            amount = parse_quantity(requests["storage"])
        except QuantityError as exc:
            errs.append(invalid(storage_path, requests["storage"], str(exc)))
        else:
            if amount <= 0:
                errs.append(invalid(storage_path, quantity_text(requests["storage"]), "must be greater than zero"))
    class_name = str_at(spec, "storageClassName", "spec", errs)
    if class_name:
        errs.extend(invalid("spec.storageClassName", class_name, m) for m in names.dns1123_subdomain_errors(class_name))
    volume_mode = spec.get("volumeMode")
    if volume_mode is not None and volume_mode not in VOLUME_MODES:
        errs.append(not_supported("spec.volumeMode", volume_mode, VOLUME_MODES))
    return errs


def _storage(claim: Mapping[str, Any]) -> Any:
    resources = mapping_at(mapping_at(claim, "spec", "", []), "resources", "", [])
    return mapping_at(resources, "requests", "", []).get("storage")


def validate_persistent_volume_claim_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """The spec is immutable except binding a volume and growing a bound claim's storage."""
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_persistent_volume_claim_create(new))
    new_spec = dict(mapping_at(new, "spec", "", []))
    old_spec = dict(mapping_at(old, "spec", "", []))
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = new_spec.get("volumeName")
    if mapping_at(new, "status", "", []).get("phase") == "Bound":
        resources = dict(mapping_at(new_spec, "resources", "", []))
        requests = dict(mapping_at(resources, "requests", "", []))
        requests["storage"] = _storage(old)
        resources["requests"] = requests
        new_spec["resources"] = resources
    if not semantically_equal(new_spec, old_spec):
        errs.append(forbidden("spec", "spec is immutable after creation except resources.requests for bound claims\n"
                              + spec_diff("core.PersistentVolumeClaimSpec", old_spec, new_spec)))
    try:
        if parse_quantity(_storage(new)) < parse_quantity(_storage(old)):
            errs.append(forbidden("spec.resources.requests.storage", "field can not be less than previous value"))
    except QuantityError:
        pass
    if new_spec.get("volumeMode") != old_spec.get("volumeMode"):
        errs.append(invalid("volumeMode", new_spec.get("volumeMode"), FIELD_IMMUTABLE))
    return errs


# ------------------------------------------------------------------------------------ leases


def validate_lease_spec(lease: Mapping[str, Any]) -> Errors:
    errs: Errors = []
    spec = mapping_at(lease, "spec", "", errs)
    duration = int_at(spec, "leaseDurationSeconds", "spec", errs)
    if duration is not None and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = int_at(spec, "leaseTransitions", "spec", errs)
    if transitions is not None and transitions < 0:
        errs.append(invalid("spec.leaseTransitions", transitions, IS_NEGATIVE))
    return errs


def validate_lease_create(lease: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(lease, True, name_is_dns_subdomain, builtin=False)
    errs.extend(validate_lease_spec(lease))
    return errs


def validate_lease_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old, builtin=False)
    errs.extend(validate_lease_spec(new))
    return errs

