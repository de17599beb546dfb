"""storage.k8s.io/v1: StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities, VolumeAttachments.

Defaults as upstream's ``pkg/apis/storage/v1/defaults.go``: a StorageClass reclaims with
``Delete`` and binds ``Immediate``; a CSIDriver requires attach, takes no pod info, publishes no
capacity, applies fsGroup ``ReadWriteOnceWithFSType``, serves ``Persistent`` volumes, does not
republish and (``SELinuxMountReadWriteOncePod`` being on in 1.33) has ``seLinuxMount: false``.
Validation as ``pkg/apis/storage/validation/validation.go`` with the strategies of
``pkg/registry/storage/*``: a StorageClass's provisioner, parameters, reclaim policy and binding
mode never change; a VolumeAttachment's spec never changes; a CSIDriver keeps
``attachRequired`` (reported as upstream does, on ``spec.attachedRequired``) and its lifecycle
modes; a CSIStorageCapacity keeps its topology and class; a CSINode keeps each driver entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.labels import validate_label_selector
from kubeloop.api.status import duplicate, forbidden, invalid, not_supported, required, too_long
from kubeloop.server.admission.fields import (
    Errors,
    child,
    int_at,
    mapping_at,
    objects_at,
    semantically_equal,
    str_at,
    str_list_at,
    str_map_at,
)
from kubeloop.server.admission.metadata import (
    FIELD_IMMUTABLE,
    IS_NEGATIVE,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubeloop.server.admission.quantity import QuantityError, parse_quantity, quantity_text

RECLAIM_POLICIES = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Persistent", "Ephemeral")
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024
MAX_ATTACHMENT_METADATA_SIZE = 256 * 1024
CSI_NODE_ID_MAX_LENGTH = 192
MIN_TOKEN_EXPIRATION = 600


# ---------------------------------------------------------------------------------- defaults


def default_storage_class(storage_class: dict[str, Any]) -> None:
    if storage_class.get("reclaimPolicy") is None:
        storage_class["reclaimPolicy"] = "Delete"
    if storage_class.get("volumeBindingMode") is None:
        storage_class["volumeBindingMode"] = "Immediate"


_CSI_DRIVER_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("attachRequired", True),
    ("podInfoOnMount", False),
    ("storageCapacity", False),
    ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
    ("requiresRepublish", False),
    ("seLinuxMount", False),
)


def default_csi_driver(driver: dict[str, Any]) -> None:
    spec = driver.get("spec")
    if spec is None:
        spec = driver["spec"] = {}
    if not isinstance(spec, dict):
        return
    for name, value in _CSI_DRIVER_DEFAULTS:
        if spec.get(name) is None:
            spec[name] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


# ----------------------------------------------------------------------------- storage classes


def _parameters_errors(obj: Mapping[str, Any], errs: Errors) -> None:
    params = str_map_at(obj, "parameters", "", errs)
    if len(params) > MAX_PARAMETERS:
        errs.append(too_long("parameters", MAX_PARAMETERS))
        return
    for param_key in params:
        if not param_key:
            errs.append(invalid("parameters", param_key, "field can not be empty."))
    if sum(len(k) + len(v) for k, v in params.items()) > MAX_PARAMETERS_SIZE:
        errs.append(too_long("parameters", MAX_PARAMETERS_SIZE))


def validate_storage_class_create(storage_class: Mapping[str, Any]) -> Errors:
    """``ValidateStorageClass``."""
    errs = validate_object_meta(storage_class, False, name_is_dns_subdomain)
    provisioner = str_at(storage_class, "provisioner", "", errs)
    if not provisioner:
        errs.append(required("provisioner"))
    else:
        errs.extend(invalid("provisioner", provisioner, m) for m in names.qualified_name_errors(provisioner.lower()))
    _parameters_errors(storage_class, errs)
    reclaim = str_at(storage_class, "reclaimPolicy", "", errs)
    if reclaim and reclaim not in RECLAIM_POLICIES:
        errs.append(not_supported("reclaimPolicy", reclaim, RECLAIM_POLICIES))
    mode = storage_class.get("volumeBindingMode")
    if mode is None:
        errs.append(required("volumeBindingMode"))
    elif mode not in BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
    return errs


def validate_storage_class_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """``ValidateStorageClassUpdate`` after ``ValidateStorageClass`` (the strategy runs both)."""
    errs = validate_storage_class_create(new)
    errs.extend(validate_object_meta_update(new, old))
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        errs.append(forbidden("parameters", "updates to parameters are forbidden."))
    if (new.get("provisioner") or "") != (old.get("provisioner") or ""):
        errs.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    if new.get("volumeBindingMode") != old.get("volumeBindingMode"):
        errs.append(invalid("volumeBindingMode", new.get("volumeBindingMode"), FIELD_IMMUTABLE))
    return errs


# ---------------------------------------------------------------------------------- CSI drivers


def _csi_driver_spec_errors(driver: Mapping[str, Any], errs: Errors) -> None:
    spec = mapping_at(driver, "spec", "", errs)
    for name, path in (("attachRequired", "spec.attachedRequired"), ("podInfoOnMount", "spec.podInfoOnMount"),
                       ("storageCapacity", "spec.storageCapacity"), ("seLinuxMount", "spec.seLinuxMount")):
        if spec.get(name) is None:
            errs.append(required(path))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    audiences: set[str] = set()
    for item_path, request in objects_at(spec, "tokenRequests", "spec", errs):
        audience = str_at(request, "audience", item_path, errs)
        if audience in audiences:
            errs.append(duplicate(child(item_path, "audience"), audience))
            continue
        audiences.add(audience)
        seconds = int_at(request, "expirationSeconds", item_path, errs)
        if seconds is not None and seconds < MIN_TOKEN_EXPIRATION:
            errs.append(invalid(child(item_path, "expirationSeconds"), seconds,
                                "may not specify a duration less than 10 minutes"))
        if seconds is not None and seconds > 1 << 32:
            errs.append(invalid(child(item_path, "expirationSeconds"), seconds,
                                "may not specify a duration larger than 2^32 seconds"))
    for mode in str_list_at(spec, "volumeLifecycleModes", "spec", errs):
        if mode not in LIFECYCLE_MODES:
            errs.append(not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES))
    period = int_at(spec, "nodeAllocatableUpdatePeriodSeconds", "spec", errs)
    if period is not None and period < 10:
        errs.append(invalid("spec.nodeAllocatableUpdatePeriodSeconds", period,
                            "must be greater than or equal to 10 seconds"))


def validate_csi_driver_create(driver: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(driver, False, name_is_dns_subdomain)
    _csi_driver_spec_errors(driver, errs)
    return errs


def validate_csi_driver_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    _csi_driver_spec_errors(new, errs)
    new_spec = mapping_at(new, "spec", "", [])
    old_spec = mapping_at(old, "spec", "", [])
    if new_spec.get("attachRequired") != old_spec.get("attachRequired"):
        errs.append(invalid("spec.attachedRequired", new_spec.get("attachRequired"), FIELD_IMMUTABLE))
    if (new_spec.get("volumeLifecycleModes") or []) != (old_spec.get("volumeLifecycleModes") or []):
        errs.append(invalid("spec.volumeLifecycleModes", new_spec.get("volumeLifecycleModes") or [], FIELD_IMMUTABLE))
    return errs


# ------------------------------------------------------------------------------------ CSI nodes


def validate_csi_node_create(node: Mapping[str, Any]) -> Errors:
    """``ValidateCSINode``: node names; per driver a name, a node ID of at most 192 characters."""
    errs = validate_object_meta(node, False, name_is_dns_subdomain)
    spec = mapping_at(node, "spec", "", errs)
    seen: set[str] = set()
    for item_path, driver in objects_at(spec, "drivers", "spec", errs):
        name = str_at(driver, "name", item_path, errs)
        errs.extend(invalid(child(item_path, "name"), name, m) for m in name_is_dns_subdomain(name, False))
        node_id = str_at(driver, "nodeID", item_path, errs)
        if not node_id:
            errs.append(required(child(item_path, "nodeID")))
        if len(node_id) > CSI_NODE_ID_MAX_LENGTH:
            errs.append(invalid(child(item_path, "nodeID"), node_id,
                                f"must be {CSI_NODE_ID_MAX_LENGTH} characters or less"))
        count = int_at(mapping_at(driver, "allocatable", item_path, errs), "count", child(item_path, "allocatable"),
                       errs)
        if count is not None and count < 0:
            errs.append(invalid(child(item_path, "allocatable.count"), count, IS_NEGATIVE))
        if name in seen:
            errs.append(duplicate(child(item_path, "name"), name))
        seen.add(name)
        keys: set[str] = set()
        for topology_key in str_list_at(driver, "topologyKeys", item_path, errs):
            if not topology_key:
                errs.append(required(item_path))
            if topology_key in keys:
                errs.append(duplicate(item_path, topology_key))
            keys.add(topology_key)
            errs.extend(invalid(item_path, topology_key, m) for m in names.qualified_name_errors(topology_key))
    return errs


def _without_allocatable(driver: Mapping[str, Any]) -> dict[str, Any]:
    # MutableCSINodeAllocatableCount is beta (on) in 1.33: the count may change.
    return {k: v for k, v in driver.items() if k != "allocatable"}


def validate_csi_node_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_csi_node_create(new)
    errs.extend(validate_object_meta_update(new, old))
    new_drivers = [d for _, d in objects_at(mapping_at(new, "spec", "", []), "drivers", "spec", [])]
    for _, old_driver in objects_at(mapping_at(old, "spec", "", []), "drivers", "spec", []):
        for new_driver in new_drivers:
            if new_driver.get("name") == old_driver.get("name") and not semantically_equal(
                    _without_allocatable(new_driver), _without_allocatable(old_driver)):
                errs.append(invalid("spec.drivers", _without_allocatable(new_driver), FIELD_IMMUTABLE))
    return errs


# ----------------------------------------------------------------------- CSI storage capacities


def validate_csi_storage_capacity_create(capacity: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta(capacity, True, name_is_dns_subdomain)
    errs.extend(validate_label_selector(capacity.get("nodeTopology"), "nodeTopology"))
    class_name = str_at(capacity, "storageClassName", "", errs)
    errs.extend(invalid("storageClassName", class_name, m) for m in name_is_dns_subdomain(class_name, False))
    if capacity.get("capacity") is not None:
        try:
            if parse_quantity(capacity["capacity"]) < 0:
                errs.append(invalid("capacity", quantity_text(capacity["capacity"]), IS_NEGATIVE))
        except QuantityError as exc:
            errs.append(invalid("capacity", capacity["capacity"], str(exc)))
    return errs


def validate_csi_storage_capacity_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_csi_storage_capacity_create(new)
    errs.extend(validate_object_meta_update(new, old))
    if not semantically_equal(new.get("nodeTopology"), old.get("nodeTopology")):
        errs.append(invalid("nodeTopology", new.get("nodeTopology"), FIELD_IMMUTABLE))
    if (new.get("storageClassName") or "") != (old.get("storageClassName") or ""):
        errs.append(invalid("storageClassName", new.get("storageClassName") or "", FIELD_IMMUTABLE))
    return errs


# --------------------------------------------------------------------------- volume attachments


def _volume_attachment_status_errors(attachment: Mapping[str, Any], errs: Errors) -> None:
    status = mapping_at(attachment, "status", "", errs)
    metadata = str_map_at(status, "attachmentMetadata", "status", errs)
    if sum(len(k) + len(v) for k, v in metadata.items()) > MAX_ATTACHMENT_METADATA_SIZE:
        errs.append(too_long("status.attachmentMetadata", MAX_ATTACHMENT_METADATA_SIZE))
    for name in ("attachError", "detachError"):
        error = mapping_at(status, name, "status", errs)
        path = child("status", name)
        if len(str_at(error, "message", path, errs)) > 1024:
            # Upstream reports the metadata limit here, not the message's own 1024.
            errs.append(too_long(child(path, "message"), MAX_ATTACHMENT_METADATA_SIZE))
        code = int_at(error, "errorCode", path, errs)
        if code is not None and code < 0:
            errs.append(invalid(child(path, "errorCode"), code, "must be between 0 and 2147483647, inclusive"))


def validate_volume_attachment_create(attachment: Mapping[str, Any]) -> Errors:
    """``ValidateVolumeAttachment`` and ``ValidateVolumeAttachmentV1``."""
    errs = validate_object_meta(attachment, False, name_is_dns_subdomain)
    spec = mapping_at(attachment, "spec", "", errs)
    attacher = str_at(spec, "attacher", "spec", errs)
    if not attacher:
        errs.append(required("spec.attacher"))
    source = mapping_at(spec, "source", "spec", errs)
    pv_name = source.get("persistentVolumeName")
    inline = source.get("inlineVolumeSpec")
    if inline is None and pv_name is None:
        errs.append(required("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
    elif inline is not None and pv_name is not None:
        errs.append(forbidden("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
    elif pv_name is not None and not pv_name:
        errs.append(required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"))
    node_name = str_at(spec, "nodeName", "spec", errs)
    errs.extend(invalid("spec.nodeName", node_name, m) for m in name_is_dns_subdomain(node_name, False))
    _volume_attachment_status_errors(attachment, errs)
    errs.extend(invalid("spec.attacher", attacher, m) for m in name_is_dns_subdomain(attacher.lower(), False)
                if attacher)
    if isinstance(pv_name, str) and pv_name:
        errs.extend(invalid("spec.source.persistentVolumeName", pv_name, m)
                    for m in name_is_dns_subdomain(pv_name, False))
    return errs


def validate_volume_attachment_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_volume_attachment_create(new))
    if not semantically_equal(new.get("spec"), old.get("spec")):
        errs.append(invalid("spec", new.get("spec"), FIELD_IMMUTABLE))
    return errs


def validate_volume_attachment_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    errs = validate_object_meta_update(new, old)
    _volume_attachment_status_errors(new, errs)
    return errs
