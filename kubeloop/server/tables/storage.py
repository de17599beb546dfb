"""Rows of the storage kinds: PersistentVolumes and their claims, StorageClasses,
VolumeAttachments, CSIDrivers, CSINodes and CSIStorageCapacities.

As kube-apiserver 1.33's printers (``pkg/printers/internalversion``: ``printPersistentVolume``,
``printPersistentVolumeClaim``, ``printStorageClass``, ``printVolumeAttachment``,
``printCSIDriver``, ``printCSINode``, ``printCSIStorageCapacity``). Access modes print
abbreviated in a fixed order (RWO, ROX, RWX, RWOP); the storage class comes from the beta
annotation when present, else ``spec.storageClassName``; unset volume modes and volume
attributes classes print ``<unset>``; capacities print as Go's canonical quantities (a claim
shows one only once bound to a volume). A StorageClass marked default by annotation shows
`` (default)`` after its name; unset reclaim policy and binding mode show their defaults.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.server.tables.ages import age
from kubeloop.server.tables.docs import FieldDoc
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    created,
    dig,
    go_bool,
    items,
    mapping,
    name_of,
    text,
)
from kubeloop.server.tables.quantity import canonical_quantity

_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))
STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")


def access_modes(modes: Any) -> str:
    """Abbreviated access modes in upstream's fixed order, without duplicates."""
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)


def storage_class_of(obj: Obj) -> str:
    """The class from the beta annotation when present, else ``spec.storageClassName``."""
    annotations = mapping(dig(obj, "metadata", "annotations"))
    if STORAGE_CLASS_ANNOTATION in annotations:
        return text(annotations[STORAGE_CLASS_ANNOTATION])
    return text(dig(obj, "spec", "storageClassName"))


def _storage(resources: Any) -> str:
    """The ``storage`` quantity of a resource list; a missing one is Go's zero quantity, ``0``."""
    value = mapping(resources).get("storage")
    return canonical_quantity(value) if value is not None else "0"


def _phase(obj: Obj) -> str:
    return "Terminating" if dig(obj, "metadata", "deletionTimestamp") else text(dig(obj, "status", "phase"))


def _unset(value: Any) -> str:
    return value if isinstance(value, str) else "<unset>"


def volume_cells(volume: Obj, now: datetime) -> list[Any]:
    claim = dig(volume, "spec", "claimRef")
    claim_text = f"{text(dig(claim, 'namespace'))}/{text(dig(claim, 'name'))}" if isinstance(claim, dict) else ""
    return [
        name_of(volume), _storage(dig(volume, "spec", "capacity")), access_modes(dig(volume, "spec", "accessModes")),
        text(dig(volume, "spec", "persistentVolumeReclaimPolicy")), _phase(volume), claim_text,
        storage_class_of(volume), _unset(dig(volume, "spec", "volumeAttributesClassName")),
        text(dig(volume, "status", "reason")), age(created(volume), now), _unset(dig(volume, "spec", "volumeMode")),
    ]


def _pv_spec(field: str) -> FieldDoc:
    return FieldDoc("core.v1.PersistentVolumeSpec", field)


VOLUME_PRINTER = Printer(
    (
        NAME,
        Column("Capacity", "string", _pv_spec("capacity")),
        Column("Access Modes", "string", _pv_spec("accessModes")),
        Column("Reclaim Policy", "string", _pv_spec("persistentVolumeReclaimPolicy")),
        Column("Status", "string", FieldDoc("core.v1.PersistentVolumeStatus", "phase")),
        Column("Claim", "string", _pv_spec("claimRef")),
        Column("StorageClass", "string", "StorageClass of the pv"),
        Column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
        Column("Reason", "string", FieldDoc("core.v1.PersistentVolumeStatus", "reason")),
        AGE,
        Column("VolumeMode", "string", _pv_spec("volumeMode"), priority=1),
    ),
    volume_cells,
)


def claim_cells(claim: Obj, now: datetime) -> list[Any]:
    volume = text(dig(claim, "spec", "volumeName"))
    capacity = modes = ""
    if volume:
        modes = access_modes(dig(claim, "status", "accessModes"))
        capacity = _storage(dig(claim, "status", "capacity"))
    return [
        name_of(claim), _phase(claim), volume, capacity, modes, storage_class_of(claim),
        _unset(dig(claim, "spec", "volumeAttributesClassName")), age(created(claim), now),
        _unset(dig(claim, "spec", "volumeMode")),
    ]


CLAIM_PRINTER = Printer(
    (
        NAME,
        Column("Status", "string", FieldDoc("core.v1.PersistentVolumeClaimStatus", "phase")),
        Column("Volume", "string", FieldDoc("core.v1.PersistentVolumeClaimSpec", "volumeName")),
        Column("Capacity", "string", FieldDoc("core.v1.PersistentVolumeClaimStatus", "capacity")),
        Column("Access Modes", "string", FieldDoc("core.v1.PersistentVolumeClaimStatus", "accessModes")),
        Column("StorageClass", "string", "StorageClass of the pvc"),
        Column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
        AGE,
        Column("VolumeMode", "string", FieldDoc("core.v1.PersistentVolumeClaimSpec", "volumeMode"), priority=1),
    ),
    claim_cells,
)


def is_default_class(obj: Obj) -> bool:
    annotations = mapping(dig(obj, "metadata", "annotations"))
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)


def storage_class_cells(storage_class: Obj, now: datetime) -> list[Any]:
    name = name_of(storage_class) + (" (default)" if is_default_class(storage_class) else "")
    return [
        name, text(storage_class.get("provisioner")), text(storage_class.get("reclaimPolicy")) or "Delete",
        text(storage_class.get("volumeBindingMode")) or "Immediate", go_bool(storage_class.get("allowVolumeExpansion")),
        age(created(storage_class), now),
    ]


def _class_doc(field: str) -> FieldDoc:
    return FieldDoc("storage.v1.StorageClass", field)


STORAGE_CLASS_PRINTER = Printer(
    (
        NAME,
        Column("Provisioner", "string", _class_doc("provisioner")),
        Column("ReclaimPolicy", "string", _class_doc("reclaimPolicy")),
        Column("VolumeBindingMode", "string", _class_doc("volumeBindingMode")),
        Column("AllowVolumeExpansion", "string", _class_doc("allowVolumeExpansion")),
        AGE,
    ),
    storage_class_cells,
)

VOLUME_ATTACHMENT_PRINTER = Printer(
    (
        NAME,
        Column("Attacher", "string", FieldDoc("storage.v1.VolumeAttachmentSpec", "attacher"), "name"),
        Column("PV", "string", FieldDoc("storage.v1.VolumeAttachmentSource", "persistentVolumeName")),
        Column("Node", "string", FieldDoc("storage.v1.VolumeAttachmentSpec", "nodeName")),
        Column("Attached", "boolean", FieldDoc("storage.v1.VolumeAttachmentStatus", "attached")),
        AGE,
    ),
    lambda attachment, now: [
        name_of(attachment), text(dig(attachment, "spec", "attacher")),
        text(dig(attachment, "spec", "source", "persistentVolumeName")), text(dig(attachment, "spec", "nodeName")),
        go_bool(dig(attachment, "status", "attached")), age(created(attachment), now)],
)


def csi_driver_cells(driver: Obj, now: datetime) -> list[Any]:
    spec = mapping(driver.get("spec"))
    attach_required = spec.get("attachRequired")
    requests = spec.get("tokenRequests")
    tokens = ",".join(text(r.get("audience")) for r in items(requests)) if isinstance(requests, list) else "<unset>"
    modes = ",".join(text(mode) for mode in spec.get("volumeLifecycleModes") or ())
    return [
        name_of(driver), attach_required if isinstance(attach_required, bool) else True,
        go_bool(spec.get("podInfoOnMount")), go_bool(spec.get("storageCapacity")), tokens,
        go_bool(spec.get("requiresRepublish")), modes or "<none>", age(created(driver), now),
    ]


def _driver_doc(field: str) -> FieldDoc:
    return FieldDoc("storage.v1.CSIDriverSpec", field)


CSI_DRIVER_PRINTER = Printer(
    (
        NAME,
        Column("AttachRequired", "boolean", _driver_doc("attachRequired")),
        Column("PodInfoOnMount", "boolean", _driver_doc("podInfoOnMount")),
        Column("StorageCapacity", "boolean", _driver_doc("storageCapacity")),
        Column("TokenRequests", "string", _driver_doc("tokenRequests")),
        Column("RequiresRepublish", "boolean", _driver_doc("requiresRepublish")),
        Column("Modes", "string", _driver_doc("volumeLifecycleModes")),
        AGE,
    ),
    csi_driver_cells,
)

CSI_NODE_PRINTER = Printer(
    (NAME, Column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"), AGE),
    lambda node, now: [name_of(node), len(items(dig(node, "spec", "drivers"))), age(created(node), now)],
)

CSI_STORAGE_CAPACITY_PRINTER = Printer(
    (
        NAME,
        Column("StorageClassName", "string", FieldDoc("storage.v1.CSIStorageCapacity", "storageClassName")),
        Column("Capacity", "string", FieldDoc("storage.v1.CSIStorageCapacity", "capacity")),
    ),
    lambda capacity, now: [
        name_of(capacity), text(capacity.get("storageClassName")),
        canonical_quantity(capacity["capacity"]) if capacity.get("capacity") is not None else "<unset>"],
)
