"""Building ``meta.k8s.io`` Table responses for a single object, a list and a watch event.

A row holds the printer's cells and, by ``includeObject``, nothing (``null``), the object's
metadata as a ``PartialObjectMetadata`` (the default; kubectl reads the namespace and labels
from it for ``-A``, ``--show-labels`` and ``-L``) or the whole object. A list's Table carries
the list's ``resourceVersion``, ``continue`` and ``remainingItemCount``; a single object's Table
carries the object's ``resourceVersion``. In a watch, only the first event's Table has column
definitions (upstream sends headers once per watch).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson

from kubeloop.server.tables import access, autoscaling, batch, cluster, control_plane, services, storage
from kubeloop.server.tables.core_kinds import (
    CONFIG_MAP_PRINTER,
    EVENT_PRINTER,
    GENERIC_PRINTER,
    LEASE_PRINTER,
    NAMESPACE_PRINTER,
    NODE_PRINTER,
    SECRET_PRINTER,
    SERVICE_ACCOUNT_PRINTER,
)
from kubeloop.server.tables.custom import custom_printer
from kubeloop.server.tables.negotiation import IncludeObject, TableRequest, include_object, table_request
from kubeloop.server.tables.pods import POD_PRINTER
from kubeloop.server.tables.printers import Obj, Printer, mapping
from kubeloop.server.tables.workloads import (
    CONTROLLER_REVISION_PRINTER,
    DAEMON_SET_PRINTER,
    DEPLOYMENT_PRINTER,
    POD_TEMPLATE_PRINTER,
    REPLICA_SET_PRINTER,
    REPLICATION_CONTROLLER_PRINTER,
    STATEFUL_SET_PRINTER,
)

BUILTIN_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Pod"): POD_PRINTER,
    ("", "Node"): NODE_PRINTER,
    ("", "Namespace"): NAMESPACE_PRINTER,
    ("", "Event"): EVENT_PRINTER,
    ("events.k8s.io", "Event"): EVENT_PRINTER,
    ("", "ConfigMap"): CONFIG_MAP_PRINTER,
    ("", "Secret"): SECRET_PRINTER,
    ("", "ServiceAccount"): SERVICE_ACCOUNT_PRINTER,
    ("", "PersistentVolumeClaim"): storage.CLAIM_PRINTER,
    ("", "PersistentVolume"): storage.VOLUME_PRINTER,
    ("", "ComponentStatus"): cluster.COMPONENT_STATUS_PRINTER,
    ("", "Endpoints"): services.ENDPOINTS_PRINTER,
    ("", "PodTemplate"): POD_TEMPLATE_PRINTER,
    ("", "ReplicationController"): REPLICATION_CONTROLLER_PRINTER,
    ("", "ResourceQuota"): cluster.RESOURCE_QUOTA_PRINTER,
    ("", "Service"): services.SERVICE_PRINTER,
    ("apiregistration.k8s.io", "APIService"): control_plane.API_SERVICE_PRINTER,
    ("apps", "Deployment"): DEPLOYMENT_PRINTER,
    ("apps", "ReplicaSet"): REPLICA_SET_PRINTER,
    ("apps", "StatefulSet"): STATEFUL_SET_PRINTER,
    ("apps", "DaemonSet"): DAEMON_SET_PRINTER,
    ("apps", "ControllerRevision"): CONTROLLER_REVISION_PRINTER,
    ("autoscaling", "HorizontalPodAutoscaler"): autoscaling.HPA_PRINTER,
    ("batch", "Job"): batch.JOB_PRINTER,
    ("batch", "CronJob"): batch.CRON_JOB_PRINTER,
    ("certificates.k8s.io", "CertificateSigningRequest"): access.CSR_PRINTER,
    ("networking.k8s.io", "Ingress"): services.INGRESS_PRINTER,
    ("networking.k8s.io", "IngressClass"): services.INGRESS_CLASS_PRINTER,
    ("networking.k8s.io", "NetworkPolicy"): services.NETWORK_POLICY_PRINTER,
    ("networking.k8s.io", "IPAddress"): services.IP_ADDRESS_PRINTER,
    ("networking.k8s.io", "ServiceCIDR"): services.SERVICE_CIDR_PRINTER,
    ("discovery.k8s.io", "EndpointSlice"): services.ENDPOINT_SLICE_PRINTER,
    ("policy", "PodDisruptionBudget"): autoscaling.PDB_PRINTER,
    ("rbac.authorization.k8s.io", "RoleBinding"): access.ROLE_BINDING_PRINTER,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): access.CLUSTER_ROLE_BINDING_PRINTER,
    ("storage.k8s.io", "StorageClass"): storage.STORAGE_CLASS_PRINTER,
    ("storage.k8s.io", "VolumeAttachment"): storage.VOLUME_ATTACHMENT_PRINTER,
    ("storage.k8s.io", "CSIDriver"): storage.CSI_DRIVER_PRINTER,
    ("storage.k8s.io", "CSINode"): storage.CSI_NODE_PRINTER,
    ("storage.k8s.io", "CSIStorageCapacity"): storage.CSI_STORAGE_CAPACITY_PRINTER,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): control_plane.WEBHOOK_CONFIGURATION_PRINTER,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): control_plane.WEBHOOK_CONFIGURATION_PRINTER,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"):
        control_plane.VALIDATING_ADMISSION_POLICY_PRINTER,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"):
        control_plane.VALIDATING_ADMISSION_POLICY_BINDING_PRINTER,
    ("scheduling.k8s.io", "PriorityClass"): cluster.PRIORITY_CLASS_PRINTER,
    ("coordination.k8s.io", "Lease"): LEASE_PRINTER,
    ("node.k8s.io", "RuntimeClass"): cluster.RUNTIME_CLASS_PRINTER,
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): control_plane.FLOW_SCHEMA_PRINTER,
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): control_plane.PRIORITY_LEVEL_PRINTER,
}
"""Built-in kinds with their own columns; every other built-in gets :data:`GENERIC_PRINTER` (as
upstream's default table convertor: Roles, ClusterRoles, LimitRanges, CustomResourceDefinitions)."""


def printer_for(group: str, version: str, kind: str, crd: Mapping[str, Any] | None = None) -> Printer:
    """The printer of a served kind: from ``crd``'s printer columns for a custom resource (pass
    its CustomResourceDefinition), upstream's columns for the built-ins above, else the generic
    Name / Created At table."""
    if crd is not None:
        return custom_printer(crd, version)
    return BUILTIN_PRINTERS.get((group, kind), GENERIC_PRINTER)


def _row_object(obj: Obj, include: IncludeObject, request: TableRequest, api_version: str, kind: str) -> Any:
    if include == "None":
        return None
    if include == "Object":
        return {"kind": kind, "apiVersion": api_version, **obj}
    return {"kind": "PartialObjectMetadata", "apiVersion": request.api_version,
            "metadata": dict(mapping(obj.get("metadata")))}


def _row(printer: Printer, obj: Obj, include: IncludeObject, request: TableRequest, api_version: str, kind: str,
         now: datetime) -> dict[str, Any]:
    row: dict[str, Any] = {"cells": printer.cells(obj, now)}
    conditions = printer.conditions(obj)
    if conditions:
        row["conditions"] = conditions
    row["object"] = _row_object(obj, include, request, api_version, kind)
    return row


def _table(printer: Printer, request: TableRequest, metadata: dict[str, Any], rows: list[dict[str, Any]],
           headers: bool = True) -> dict[str, Any]:
    return {
        "kind": "Table",
        "apiVersion": request.api_version,
        "metadata": metadata,
        "columnDefinitions": [c.definition() for c in printer.columns] if headers else None,
        "rows": rows,
    }


def object_table(printer: Printer, obj: Obj, *, request: TableRequest, include: IncludeObject, api_version: str,
                 kind: str, now: datetime, headers: bool = True) -> dict[str, Any]:
    """The Table of one object (a GET of a named object, or one watch event's object).

    ``api_version``/``kind`` are the object's, used when the row holds the whole object and the
    stored form lacks them. ``obj`` is not modified."""
    version = mapping(obj.get("metadata")).get("resourceVersion")
    metadata = {"resourceVersion": version} if isinstance(version, str) and version else {}
    return _table(printer, request, metadata, [_row(printer, obj, include, request, api_version, kind, now)],
                  headers)


def list_table(printer: Printer, list_object: Obj, *, request: TableRequest, include: IncludeObject,
               api_version: str, kind: str, now: datetime) -> dict[str, Any]:
    """The Table of a list response: one row per item, the list's paging metadata kept.
    ``kind`` is the kind of the items (``Deployment``, not ``DeploymentList``)."""
    source = mapping(list_object.get("metadata"))
    metadata = {key: source[key] for key in ("resourceVersion", "continue", "remainingItemCount")
                if source.get(key) not in (None, "")}
    listed = [item for item in list_object.get("items") or () if isinstance(item, Mapping)]
    if printer.order is not None:
        listed.sort(key=printer.order)
    rows = [_row(printer, item, include, request, api_version, kind, now) for item in listed]
    return _table(printer, request, metadata, rows)


def watch_event_table(printer: Printer, event: Obj, *, request: TableRequest, include: IncludeObject,
                      api_version: str, kind: str, now: datetime, first: bool) -> dict[str, Any]:
    """A watch event (``{"type": ..., "object": ...}``) whose object is replaced by its Table.

    BOOKMARK and ERROR events are returned unchanged (their objects are not rows). Pass
    ``first=True`` for the first converted event of the watch: only it carries headers."""
    if event.get("type") not in ("ADDED", "MODIFIED", "DELETED") or not isinstance(event.get("object"), Mapping):
        return dict(event)
    table = object_table(printer, event["object"], request=request, include=include, api_version=api_version,
                         kind=kind, now=now, headers=first)
    return {"type": event["type"], "object": table}


class TableConverter:
    """Everything one request needs to answer with Tables: the printer, the Table version asked
    for, what rows hold, and the served kind. :meth:`watch_event` remembers whether headers were
    sent, so use one converter per watch stream."""

    def __init__(self, printer: Printer, request: TableRequest, include: IncludeObject, api_version: str, kind: str,
                 now: datetime) -> None:
        self.printer = printer
        self.request = request
        self.include: IncludeObject = include
        self.api_version = api_version
        self.kind = kind
        self.now = now
        self._headers_sent = False

    def object(self, obj: Obj) -> dict[str, Any]:
        return object_table(self.printer, obj, request=self.request, include=self.include,
                            api_version=self.api_version, kind=self.kind, now=self.now)

    def list(self, list_object: Obj) -> dict[str, Any]:
        return list_table(self.printer, list_object, request=self.request, include=self.include,
                          api_version=self.api_version, kind=self.kind, now=self.now)

    def watch_event(self, event: Obj, now: datetime | None = None) -> dict[str, Any]:
        """``event`` with its object as a Table; ``now`` updates the clock reading for ages."""
        if now is not None:
            self.now = now
        converted = watch_event_table(self.printer, event, request=self.request, include=self.include,
                                      api_version=self.api_version, kind=self.kind, now=self.now,
                                      first=not self._headers_sent)
        if mapping(converted.get("object")).get("kind") == "Table":
            self._headers_sent = True
        return converted


    def watch_line(self, line: bytes, now: datetime | None = None) -> bytes:
        """An encoded watch event line (``{"type":...,"object":...}`` and a newline) with its
        object as a Table; for watch code that works on pre-encoded lines."""
        return orjson.dumps(self.watch_event(orjson.loads(line), now)) + b"\n"


def table_converter(accept: str | None, include_object_param: str | None, group: str, version: str, kind: str,
                    now: datetime, crd: Mapping[str, Any] | None = None) -> TableConverter | None:
    """A converter when the ``Accept`` header asks for a Table, else ``None`` (send plain JSON).

    Raises :class:`~kubeloop.api.status.ApiError` (400) for a bad ``includeObject`` value, and only
    when a Table was asked for (plain requests ignore the parameter, as upstream does)."""
    request = table_request(accept)
    if request is None:
        return None
    api_version = f"{group}/{version}" if group else version
    return TableConverter(printer_for(group, version, kind, crd), request, include_object(include_object_param),
                          api_version, kind, now)
