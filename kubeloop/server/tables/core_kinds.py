"""Rows of the core/v1 kinds other than pods, of Leases, and the generic fallback.

Columns follow kube-apiserver 1.33's printers (``pkg/printers/internalversion``): Node (NAME
STATUS ROLES AGE VERSION; wide INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME),
Namespace (NAME STATUS AGE), Event (LAST SEEN TYPE REASON OBJECT MESSAGE; wide SUBOBJECT SOURCE FIRST SEEN COUNT NAME),
ConfigMap (NAME DATA AGE), Secret (NAME TYPE DATA AGE), ServiceAccount (NAME SECRETS AGE),
Lease (NAME HOLDER AGE). Kinds without a printer (CRDs, Scale, ...) get the
generic table: NAME and CREATED AT (the RFC 3339 creation time, a ``date`` column).

Events of ``events.k8s.io/v1`` are shown through the same printer after mapping their fields
onto the core/v1 names (the server stores both as one type upstream).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.server.tables.ages import UNKNOWN, age
from kubeloop.server.tables.docs import FieldDoc
from kubeloop.server.tables.printers import (
    AGE,
    AGE_DESCRIPTION,
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


def _info(field: str) -> FieldDoc:
    return FieldDoc("core.v1.NodeSystemInfo", field)


_ADDRESSES = FieldDoc("core.v1.NodeStatus", "addresses")

NODE_PRINTER = Printer(
    (
        NAME,
        Column("Status", "string", "The status of the node"),
        Column("Roles", "string", "The roles of the node"),
        AGE,
        Column("Version", "string", _info("kubeletVersion")),
        Column("Internal-IP", "string", _ADDRESSES, priority=1),
        Column("External-IP", "string", _ADDRESSES, priority=1),
        Column("OS-Image", "string", _info("osImage"), priority=1),
        Column("Kernel-Version", "string", _info("kernelVersion"), priority=1),
        Column("Container-Runtime", "string", _info("containerRuntimeVersion"), priority=1),
    ),
    node_cells,
)

NAMESPACE_PRINTER = Printer(
    (NAME, Column("Status", "string", "The status of the namespace"), AGE),
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


def _event(field: str) -> FieldDoc:
    return FieldDoc("core.v1.Event", field)


EVENT_PRINTER = Printer(
    (
        Column("Last Seen", "string", _event("lastTimestamp")),
        Column("Type", "string", _event("type")),
        Column("Reason", "string", _event("reason")),
        Column("Object", "string", _event("involvedObject")),
        Column("Subobject", "string", FieldDoc("core.v1.ObjectReference", "fieldPath"), priority=1),
        Column("Source", "string", _event("source"), priority=1),
        Column("Message", "string", _event("message")),
        Column("First Seen", "string", _event("firstTimestamp"), priority=1),
        Column("Count", "string", _event("count"), priority=1),
        Column("Name", "string", NAME_DESCRIPTION, "name", priority=1),
    ),
    event_cells,
)

CONFIG_MAP_PRINTER = Printer(
    (NAME, Column("Data", "string", FieldDoc("core.v1.ConfigMap", "data")), AGE),
    lambda cm, now: [name_of(cm), len(mapping(cm.get("data"))) + len(mapping(cm.get("binaryData"))),
                     age(created(cm), now)],
)

SECRET_PRINTER = Printer(
    (NAME, Column("Type", "string", FieldDoc("core.v1.Secret", "type")),
     Column("Data", "string", FieldDoc("core.v1.Secret", "data")), AGE),
    lambda secret, now: [name_of(secret), text(secret.get("type")), len(mapping(secret.get("data"))),
                         age(created(secret), now)],
)

SERVICE_ACCOUNT_PRINTER = Printer(
    (NAME, Column("Secrets", "string", FieldDoc("core.v1.ServiceAccount", "secrets")), AGE),
    lambda sa, now: [name_of(sa), len(items(sa.get("secrets"))), age(created(sa), now)],
)

LEASE_PRINTER = Printer(
    (NAME, Column("Holder", "string", FieldDoc("coordination.v1.LeaseSpec", "holderIdentity")), AGE),
    lambda lease, now: [name_of(lease), text(dig(lease, "spec", "holderIdentity")), age(created(lease), now)],
)

ZERO_TIME = "0001-01-01T00:00:00Z"
"""How Go formats a zero creation time in the generic table."""

GENERIC_PRINTER = Printer(
    (NAME, Column("Created At", "date", AGE_DESCRIPTION)),
    lambda obj, now: [name_of(obj), text(created(obj)) or ZERO_TIME],
)
