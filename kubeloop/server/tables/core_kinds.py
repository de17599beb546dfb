"""Rows of the core/v1 kinds other than pods, of Leases, and the generic fallback.

Columns follow kube-apiserver 1.20's printers: Node (NAME STATUS ROLES AGE VERSION; wide
INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME), Namespace (NAME STATUS AGE),
Event (LAST SEEN TYPE REASON OBJECT MESSAGE; wide SUBOBJECT SOURCE FIRST SEEN COUNT NAME),
ConfigMap (NAME DATA AGE), Secret (NAME TYPE DATA AGE), ServiceAccount (NAME SECRETS AGE),
PersistentVolumeClaim (NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS AGE; wide
VOLUMEMODE), Lease (NAME HOLDER AGE). Kinds without a printer (CRDs, Scale, ...) get the
generic table: NAME and CREATED AT (the RFC 3339 creation time, a ``date`` column).

Events of ``events.k8s.io/v1`` are shown through the same printer after mapping their fields
onto the core/v1 names (the server stores both as one type upstream).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.server.tables.ages import UNKNOWN, age
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    NAME_DESCRIPTION,
    Column,
    Obj,
    Printer,
    created,
    dig,
    integer,
    items,
    mapping,
    name_of,
    text,
)

ROLE_LABEL_PREFIX = "node-role.kubernetes.io/"
LEGACY_ROLE_LABEL = "kubernetes.io/role"


def node_roles(node: Obj) -> str:
    """Roles from ``node-role.kubernetes.io/<role>`` label keys and the ``kubernetes.io/role`` label
    value, sorted and comma-separated; ``<none>`` without any."""
    roles: set[str] = set()
    for key, value in mapping(dig(node, "metadata", "labels")).items():
        if key.startswith(ROLE_LABEL_PREFIX) and key[len(ROLE_LABEL_PREFIX):]:
            roles.add(key[len(ROLE_LABEL_PREFIX):])
        elif key == LEGACY_ROLE_LABEL and isinstance(value, str) and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def node_status(node: Obj) -> str:
    """``Ready``/``NotReady`` from the Ready condition (``Unknown`` without one), plus
    ``SchedulingDisabled`` for a cordoned node."""
    states = [("Ready" if c.get("status") == "True" else "NotReady")
              for c in items(dig(node, "status", "conditions")) if c.get("type") == "Ready"][-1:]
    states = states or ["Unknown"]
    if dig(node, "spec", "unschedulable") is True:
        states.append("SchedulingDisabled")
    return ",".join(states)


def _address(node: Obj, kind: str) -> str:
    for address in items(dig(node, "status", "addresses")):
        if address.get("type") == kind:
            return text(address.get("address"))
    return "<none>"


def node_cells(node: Obj, now: datetime) -> list[Any]:
    info = mapping(dig(node, "status", "nodeInfo"))
    return [
        name_of(node), node_status(node), node_roles(node), age(created(node), now),
        text(info.get("kubeletVersion")), _address(node, "InternalIP"), _address(node, "ExternalIP"),
        text(info.get("osImage")) or UNKNOWN, text(info.get("kernelVersion")) or UNKNOWN,
        text(info.get("containerRuntimeVersion")) or UNKNOWN,
    ]


NODE_PRINTER = Printer(
    (
        NAME,
        Column("Status", "string", "Whether the node is ready and schedulable."),
        Column("Roles", "string", "The node's roles, from its role labels."),
        AGE,
        Column("Version", "string", "The kubelet version."),
        Column("Internal-IP", "string", "The node's first internal IP address.", priority=1),
        Column("External-IP", "string", "The node's first external IP address.", priority=1),
        Column("OS-Image", "string", "The operating system image.", priority=1),
        Column("Kernel-Version", "string", "The kernel version.", priority=1),
        Column("Container-Runtime", "string", "The container runtime and its version.", priority=1),
    ),
    node_cells,
)

NAMESPACE_PRINTER = Printer(
    (NAME, Column("Status", "string", "Active or Terminating."), AGE),
    lambda ns, now: [name_of(ns), text(dig(ns, "status", "phase")), age(created(ns), now)],
)


def core_event(event: Obj) -> Obj:
    """An ``events.k8s.io/v1`` Event in core/v1 field names (core events are returned as they are)."""
    if "regarding" not in event and "note" not in event and "deprecatedSource" not in event:
        return event
    return {
        "metadata": event.get("metadata"), "involvedObject": event.get("regarding"), "message": event.get("note"),
        "source": event.get("deprecatedSource"), "firstTimestamp": event.get("deprecatedFirstTimestamp"),
        "lastTimestamp": event.get("deprecatedLastTimestamp"), "count": event.get("deprecatedCount"),
        "type": event.get("type"), "reason": event.get("reason"), "eventTime": event.get("eventTime"),
        "series": event.get("series"), "reportingComponent": event.get("reportingController"),
        "reportingInstance": event.get("reportingInstance"),
    }


def event_source(event: Obj) -> str:
    """``component, host`` of the source; the reporting controller and instance when the event
    has no source (events written through events.k8s.io)."""
    component = text(dig(event, "source", "component"))
    host = text(dig(event, "source", "host"))
    if not component:
        component = text(event.get("reportingComponent"))
        host = host or text(event.get("reportingInstance"))
    return ", ".join(part for part in (component, host) if part)


def event_cells(raw: Obj, now: datetime) -> list[Any]:
    event = core_event(raw)
    first = age(event.get("firstTimestamp") or event.get("eventTime"), now)
    last = age(event.get("lastTimestamp"), now) if event.get("lastTimestamp") else first
    count = integer(event.get("count"))
    series = event.get("series")
    if isinstance(series, dict):
        last = age(series.get("lastObservedTime"), now)
        count = integer(series.get("count"))
    elif count == 0:
        count = 1
    involved = mapping(event.get("involvedObject"))
    kind = text(involved.get("kind")).lower()
    target = f"{kind}/{text(involved.get('name'))}" if text(involved.get("name")) else kind
    return [
        last, text(event.get("type")), text(event.get("reason")), target, text(involved.get("fieldPath")),
        event_source(event), text(event.get("message")).strip(), first, count, name_of(raw),
    ]


EVENT_PRINTER = Printer(
    (
        Column("Last Seen", "string", "Time since the event last occurred."),
        Column("Type", "string", "Normal or Warning."),
        Column("Reason", "string", "A short machine-readable cause."),
        Column("Object", "string", "The object the event is about."),
        Column("Subobject", "string", "The part of the object, such as a container.", priority=1),
        Column("Source", "string", "The component that reported the event.", priority=1),
        Column("Message", "string", "What happened."),
        Column("First Seen", "string", "Time since the event first occurred.", priority=1),
        Column("Count", "string", "How many times the event occurred.", priority=1),
        Column("Name", "string", NAME_DESCRIPTION, "name", priority=1),
    ),
    event_cells,
)

CONFIG_MAP_PRINTER = Printer(
    (NAME, Column("Data", "integer", "The number of keys."), AGE),
    lambda cm, now: [name_of(cm), len(mapping(cm.get("data"))) + len(mapping(cm.get("binaryData"))),
                     age(created(cm), now)],
)

SECRET_PRINTER = Printer(
    (NAME, Column("Type", "string", "How the data is used."), Column("Data", "integer", "The number of keys."), AGE),
    lambda secret, now: [name_of(secret), text(secret.get("type")), len(mapping(secret.get("data"))),
                         age(created(secret), now)],
)

SERVICE_ACCOUNT_PRINTER = Printer(
    (NAME, Column("Secrets", "integer", "The number of secrets listed."), AGE),
    lambda sa, now: [name_of(sa), len(items(sa.get("secrets"))), age(created(sa), now)],
)

_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))
STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def access_modes(modes: Any) -> str:
    """Abbreviated access modes in upstream's fixed order, without duplicates."""
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)


def claim_cells(claim: Obj, now: datetime) -> list[Any]:
    phase = "Terminating" if dig(claim, "metadata", "deletionTimestamp") else text(dig(claim, "status", "phase"))
    volume = text(dig(claim, "spec", "volumeName"))
    capacity = modes = ""
    if volume:
        modes = access_modes(dig(claim, "status", "accessModes"))
        storage = dig(claim, "status", "capacity", "storage")
        capacity = str(storage) if storage is not None else "0"
    annotations = mapping(dig(claim, "metadata", "annotations"))
    storage_class = (text(annotations.get(STORAGE_CLASS_ANNOTATION)) if STORAGE_CLASS_ANNOTATION in annotations
                     else text(dig(claim, "spec", "storageClassName")))
    volume_mode = text(dig(claim, "spec", "volumeMode")) or "<unset>"
    return [name_of(claim), phase, volume, capacity, modes, storage_class, age(created(claim), now), volume_mode]


CLAIM_PRINTER = Printer(
    (
        NAME,
        Column("Status", "string", "Pending, Bound or Lost."),
        Column("Volume", "string", "The bound volume."),
        Column("Capacity", "string", "The capacity of the bound volume."),
        Column("Access Modes", "string", "The access modes of the bound volume."),
        Column("StorageClass", "string", "The storage class of the claim."),
        AGE,
        Column("VolumeMode", "string", "Filesystem or Block.", priority=1),
    ),
    claim_cells,
)

LEASE_PRINTER = Printer(
    (NAME, Column("Holder", "string", "The current holder of the lease."), AGE),
    lambda lease, now: [name_of(lease), text(dig(lease, "spec", "holderIdentity")), age(created(lease), now)],
)

ZERO_TIME = "0001-01-01T00:00:00Z"
"""How Go formats a zero creation time in the generic table."""

GENERIC_PRINTER = Printer(
    (NAME, Column("Created At", "date", "When the object was created.")),
    lambda obj, now: [name_of(obj), text(created(obj)) or ZERO_TIME],
)
