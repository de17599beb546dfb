"""Rows of HorizontalPodAutoscalers and PodDisruptionBudgets.

As kube-apiserver 1.33's ``printHorizontalPodAutoscaler`` and ``printPodDisruptionBudget``
(``pkg/printers/internalversion``), read from ``autoscaling/v2`` and ``policy/v1`` objects.

HPA: NAME REFERENCE (``Kind/name``) TARGETS MINPODS (``<unset>`` without ``minReplicas``)
MAXPODS REPLICAS AGE. TARGETS pairs each metric spec with the current metric at the same index
of ``status.currentMetrics`` (``<unknown>`` when missing): ``current/target`` for Pods, Object
and External metrics (`` (avg)`` appended for average-value targets), ``name: current/target``
for Resource and ContainerResource metrics (utilizations as ``N%``, ``<auto>`` without a
target), ``<unknown type>`` for anything else; two at most, then `` + N more...``; ``<none>``
without metrics. Quantities print in Go's canonical form; a missing quantity as ``<nil>``.

PDB: NAME MIN AVAILABLE MAX UNAVAILABLE (``N/A`` when unset) ALLOWED DISRUPTIONS AGE.
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
    integer,
    items,
    mapping,
    name_of,
    text,
)
from kubeloop.server.tables.quantity import canonical_quantity

METRICS_LIMIT = 2
UNKNOWN = "<unknown>"


def _quantity(value: Any) -> str:
    """Go's ``(*Quantity).String()``, which prints a nil quantity as ``<nil>``."""
    return "<nil>" if value is None else canonical_quantity(value)


def _percent(value: Any) -> str | None:
    return f"{integer(value)}%" if value is not None else None


def _value_metric(spec: Any, status: Any) -> str:
    """Object and External metrics: an average-value target, else a value target."""
    target = mapping(dig(spec, "target"))
    if target.get("averageValue") is not None:
        current_average = dig(status, "current", "averageValue")
        current = _quantity(current_average) if current_average is not None else UNKNOWN
        return f"{current}/{_quantity(target.get('averageValue'))} (avg)"
    current = _quantity(dig(status, "current", "value")) if isinstance(status, dict) else UNKNOWN
    return f"{current}/{_quantity(target.get('value'))}"


def _resource_metric(spec: Any, status: Any) -> str:
    """Resource and ContainerResource metrics: ``name: current/target``."""
    name = text(dig(spec, "name"))
    target = mapping(dig(spec, "target"))
    if target.get("averageValue") is not None:
        current = _quantity(dig(status, "current", "averageValue")) if isinstance(status, dict) else UNKNOWN
        return f"{name}: {current}/{_quantity(target.get('averageValue'))}"
    current = _percent(dig(status, "current", "averageUtilization")) or UNKNOWN
    return f"{name}: {current}/{_percent(target.get('averageUtilization')) or '<auto>'}"


_SOURCES = {"External": "external", "Pods": "pods", "Object": "object", "Resource": "resource",
            "ContainerResource": "containerResource"}


def hpa_metrics(specs: Any, statuses: Any) -> str:
    """The TARGETS cell."""
    metric_specs = items(specs)
    if not metric_specs:
        return "<none>"
    metric_statuses = items(statuses)
    listed: list[str] = []
    for index, spec in enumerate(metric_specs):
        spec_type = text(spec.get("type"))
        field = _SOURCES.get(spec_type)
        if field is None:
            listed.append("<unknown type>")
            continue
        source = spec.get(field)
        status = metric_statuses[index].get(field) if index < len(metric_statuses) else None
        if spec_type == "Pods":
            current = _quantity(dig(status, "current", "averageValue")) if isinstance(status, dict) else UNKNOWN
            listed.append(f"{current}/{_quantity(dig(source, 'target', 'averageValue'))}")
        elif spec_type in ("Resource", "ContainerResource"):
            listed.append(_resource_metric(source, status))
        else:
            listed.append(_value_metric(source, status))
    if len(listed) > METRICS_LIMIT:
        return f"{', '.join(listed[:METRICS_LIMIT])} + {len(listed) - METRICS_LIMIT} more..."
    return ", ".join(listed)


def hpa_cells(hpa: Obj, now: datetime) -> list[Any]:
    reference = mapping(dig(hpa, "spec", "scaleTargetRef"))
    min_replicas = dig(hpa, "spec", "minReplicas")
    return [
        name_of(hpa), f"{text(reference.get('kind'))}/{text(reference.get('name'))}",
        hpa_metrics(dig(hpa, "spec", "metrics"), dig(hpa, "status", "currentMetrics")),
        str(integer(min_replicas)) if min_replicas is not None else "<unset>",
        integer(dig(hpa, "spec", "maxReplicas")), integer(dig(hpa, "status", "currentReplicas")),
        age(created(hpa), now),
    ]


def _hpa_spec(field: str) -> FieldDoc:
    return FieldDoc("autoscaling.v2.HorizontalPodAutoscalerSpec", field)


HPA_PRINTER = Printer(
    (
        NAME,
        Column("Reference", "string", _hpa_spec("scaleTargetRef")),
        Column("Targets", "string", _hpa_spec("metrics")),
        Column("MinPods", "string", _hpa_spec("minReplicas")),
        Column("MaxPods", "string", _hpa_spec("maxReplicas")),
        Column("Replicas", "string", FieldDoc("autoscaling.v2.HorizontalPodAutoscalerStatus", "currentReplicas")),
        AGE,
    ),
    hpa_cells,
)


def int_or_string(value: Any) -> str:
    """``intstr.IntOrString.String()``, ``N/A`` when the field is unset."""
    if value is None:
        return "N/A"
    return value if isinstance(value, str) else str(integer(value))


PDB_PRINTER = Printer(
    (
        NAME,
        Column("Min Available", "string", "The minimum number of pods that must be available."),
        Column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
        Column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
        AGE,
    ),
    lambda pdb, now: [name_of(pdb), int_or_string(dig(pdb, "spec", "minAvailable")),
                      int_or_string(dig(pdb, "spec", "maxUnavailable")),
                      integer(dig(pdb, "status", "disruptionsAllowed")), age(created(pdb), now)],
)
