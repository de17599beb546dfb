"""Rows of cluster-level kinds: ComponentStatuses, ResourceQuotas, PriorityClasses and
RuntimeClasses.

As kube-apiserver 1.33's ``printComponentStatus``, ``printResourceQuota``, ``printPriorityClass``
and ``printRuntimeClass`` (``pkg/printers/internalversion``). ComponentStatus: NAME STATUS
(Healthy / Unhealthy from the ``Healthy`` condition, Unknown without one) MESSAGE ERROR, no
age. ResourceQuota: NAME REQUEST LIMIT AGE, where each resource of ``status.hard`` in name
order reads ``name: used/hard`` (quantities in Go's canonical form, a missing ``used`` as
``0``), ``limits.*`` resources under LIMIT and the rest under REQUEST, joined with ``", "``.
PriorityClass: NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY. RuntimeClass: NAME HANDLER AGE
(upstream describes HANDLER with a field ``ObjectMeta`` lacks, so its description is empty).
LimitRanges have no printer upstream (generic NAME / CREATED AT).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.server.tables.ages import age
from kubeloop.server.tables.docs import FieldDoc, meta
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    created,
    dig,
    go_bool,
    integer,
    items,
    mapping,
    name_of,
    text,
)
from kubeloop.server.tables.quantity import canonical_quantity


def component_cells(component: Obj, now: datetime) -> list[Any]:
    status, message, error = "Unknown", "", ""
    for condition in items(component.get("conditions")):
        if condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            message, error = text(condition.get("message")), text(condition.get("error"))
            break
    return [name_of(component), status, message, error]


COMPONENT_STATUS_PRINTER = Printer(
    (
        NAME,
        Column("Status", "string", "Status of the component conditions"),
        Column("Message", "string", "Message of the component conditions"),
        Column("Error", "string", "Error of the component conditions"),
    ),
    component_cells,
)


def quota_columns(quota: Obj) -> tuple[str, str]:
    """The REQUEST and LIMIT cells of a resource quota."""
    hard = mapping(dig(quota, "status", "hard"))
    used = mapping(dig(quota, "status", "used"))
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        current = canonical_quantity(used[resource]) if used.get(resource) is not None else "0"
        entry = f"{resource}: {current}/{canonical_quantity(hard[resource])}"
        pieces = resource.split(".")
        (limits if len(pieces) > 1 and pieces[0] == "limits" else requests).append(entry)
    return ", ".join(requests), ", ".join(limits)


def quota_cells(quota: Obj, now: datetime) -> list[Any]:
    request, limit = quota_columns(quota)
    return [name_of(quota), request, limit, age(created(quota), now)]


RESOURCE_QUOTA_PRINTER = Printer(
    (
        NAME,
        Column("Request", "string",
               "Request represents a minimum amount of cpu/memory that a container may consume."),
        Column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use "
                                  "independent of contention on the node."),
        AGE,
    ),
    quota_cells,
)


def _priority_doc(field: str) -> FieldDoc:
    return FieldDoc("scheduling.v1.PriorityClass", field)


PRIORITY_CLASS_PRINTER = Printer(
    (
        NAME,
        Column("Value", "integer", _priority_doc("value")),
        Column("Global-Default", "boolean", _priority_doc("globalDefault")),
        AGE,
        Column("PreemptionPolicy", "string", _priority_doc("preemptionPolicy")),
    ),
    lambda priority, now: [name_of(priority), integer(priority.get("value")), go_bool(priority.get("globalDefault")),
                           age(created(priority), now), text(priority.get("preemptionPolicy"))],
)

RUNTIME_CLASS_PRINTER = Printer(
    (NAME, Column("Handler", "string", meta("handler")), AGE),
    lambda runtime_class, now: [name_of(runtime_class), text(runtime_class.get("handler")),
                                age(created(runtime_class), now)],
)
