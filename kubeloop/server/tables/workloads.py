"""Rows of the workload kinds: Deployments, ReplicaSets, StatefulSets, DaemonSets,
ReplicationControllers, PodTemplates and ControllerRevisions.

As kube-apiserver 1.33's printers (``pkg/printers/internalversion``). Deployment: NAME READY
("ready/desired") UP-TO-DATE AVAILABLE AGE, wide CONTAINERS IMAGES SELECTOR (the selector's
string form, ``<invalid>`` when it does not parse). ReplicaSet and ReplicationController: NAME
DESIRED CURRENT READY AGE and the same wide columns. StatefulSet: NAME READY AGE, wide
CONTAINERS IMAGES. DaemonSet: NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE
and the wide columns. PodTemplate: NAME CONTAINERS IMAGES POD LABELS. A missing
``spec.replicas`` counts as 1 (what defaulting stores); empty selectors and label sets print
``<none>`` (except a Deployment's selector, which prints empty as upstream's does).
ControllerRevision: NAME CONTROLLER (``<kind>.<group>/<name>`` of the controlling owner,
``<none>`` without one) REVISION AGE.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.api.labels import SelectorError, format_label_selector, label_selector_string
from kubeloop.server.tables.ages import age
from kubeloop.server.tables.docs import FieldDoc
from kubeloop.server.tables.printers import (
    AGE,
    NAME,
    Column,
    Obj,
    Printer,
    container_cells,
    created,
    dig,
    format_labels,
    integer,
    items,
    name_of,
    text,
)

CONTAINERS = Column("Containers", "string", "Names of each container in the template.", priority=1)
IMAGES = Column("Images", "string", "Images referenced by each container in the template.", priority=1)
READY = Column("Ready", "string", "Number of the pod with ready state")


def _selector(doc: FieldDoc) -> Column:
    return Column("Selector", "string", doc, priority=1)


def template_cells(obj: Obj) -> list[str]:
    """CONTAINERS, IMAGES and SELECTOR (``metav1.FormatLabelSelector``) of a workload."""
    names, images = container_cells(dig(obj, "spec", "template", "spec"))
    return [names, images, format_label_selector(dig(obj, "spec", "selector"))]


def _replicas(obj: Obj) -> int:
    return integer(dig(obj, "spec", "replicas"), 1)


def deployment_cells(deployment: Obj, now: datetime) -> list[Any]:
    status = dig(deployment, "status")
    names, images = container_cells(dig(deployment, "spec", "template", "spec"))
    selector = dig(deployment, "spec", "selector")
    try:
        selector_text = label_selector_string(selector if isinstance(selector, dict) else None)
    except SelectorError:
        selector_text = "<invalid>"
    return [
        name_of(deployment), f"{integer(dig(status, 'readyReplicas'))}/{_replicas(deployment)}",
        integer(dig(status, "updatedReplicas")), integer(dig(status, "availableReplicas")),
        age(created(deployment), now), names, images, selector_text,
    ]


DEPLOYMENT_PRINTER = Printer(
    (
        NAME,
        READY,
        Column("Up-to-date", "string", FieldDoc("apps.v1.DeploymentStatus", "updatedReplicas")),
        Column("Available", "string", FieldDoc("apps.v1.DeploymentStatus", "availableReplicas")),
        AGE, CONTAINERS, IMAGES, _selector(FieldDoc("apps.v1.DeploymentSpec", "selector")),
    ),
    deployment_cells,
)


def _replica_columns(spec: str, status: str) -> tuple[Column, ...]:
    return (
        NAME,
        Column("Desired", "integer", FieldDoc(spec, "replicas")),
        Column("Current", "integer", FieldDoc(status, "replicas")),
        Column("Ready", "integer", FieldDoc(status, "readyReplicas")),
        AGE, CONTAINERS, IMAGES, _selector(FieldDoc(spec, "selector")),
    )


def replica_set_cells(replica_set: Obj, now: datetime) -> list[Any]:
    return [
        name_of(replica_set), _replicas(replica_set), integer(dig(replica_set, "status", "replicas")),
        integer(dig(replica_set, "status", "readyReplicas")), age(created(replica_set), now),
        *template_cells(replica_set),
    ]


REPLICA_SET_PRINTER = Printer(_replica_columns("apps.v1.ReplicaSetSpec", "apps.v1.ReplicaSetStatus"),
                              replica_set_cells)


def replication_controller_cells(controller: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(dig(controller, "spec", "template", "spec"))
    return [
        name_of(controller), _replicas(controller), integer(dig(controller, "status", "replicas")),
        integer(dig(controller, "status", "readyReplicas")), age(created(controller), now),
        names, images, format_labels(dig(controller, "spec", "selector")),
    ]


REPLICATION_CONTROLLER_PRINTER = Printer(
    _replica_columns("core.v1.ReplicationControllerSpec", "core.v1.ReplicationControllerStatus"),
    replication_controller_cells,
)


def stateful_set_cells(stateful_set: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(dig(stateful_set, "spec", "template", "spec"))
    return [name_of(stateful_set),
            f"{integer(dig(stateful_set, 'status', 'readyReplicas'))}/{_replicas(stateful_set)}",
            age(created(stateful_set), now), names, images]


STATEFUL_SET_PRINTER = Printer((NAME, READY, AGE, CONTAINERS, IMAGES), stateful_set_cells)


def daemon_set_cells(daemon_set: Obj, now: datetime) -> list[Any]:
    status = dig(daemon_set, "status")
    return [
        name_of(daemon_set),
        *(integer(dig(status, field)) for field in ("desiredNumberScheduled", "currentNumberScheduled",
                                                     "numberReady", "updatedNumberScheduled", "numberAvailable")),
        format_labels(dig(daemon_set, "spec", "template", "spec", "nodeSelector")), age(created(daemon_set), now),
        *template_cells(daemon_set),
    ]


def _daemon_status(field: str) -> FieldDoc:
    return FieldDoc("apps.v1.DaemonSetStatus", field)


DAEMON_SET_PRINTER = Printer(
    (
        NAME,
        Column("Desired", "integer", _daemon_status("desiredNumberScheduled")),
        Column("Current", "integer", _daemon_status("currentNumberScheduled")),
        Column("Ready", "integer", _daemon_status("numberReady")),
        Column("Up-to-date", "integer", _daemon_status("updatedNumberScheduled")),
        Column("Available", "integer", _daemon_status("numberAvailable")),
        Column("Node Selector", "string", FieldDoc("core.v1.PodSpec", "nodeSelector")),
        AGE, CONTAINERS, IMAGES, _selector(FieldDoc("apps.v1.DaemonSetSpec", "selector")),
    ),
    daemon_set_cells,
)


def pod_template_cells(template: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(dig(template, "template", "spec"))
    return [name_of(template), names, images, format_labels(dig(template, "template", "metadata", "labels"))]


POD_TEMPLATE_PRINTER = Printer(
    (
        NAME,
        Column("Containers", "string", "Names of each container in the template."),
        Column("Images", "string", "Images referenced by each container in the template."),
        Column("Pod Labels", "string", "The labels for the pod template."),
    ),
    pod_template_cells,
)


def controller_name(obj: Obj) -> str:
    """``<kind>.<group>/<name>`` (lower case kind and group, no group for the core group) of the
    controlling owner reference, ``<none>`` when there is none."""
    for reference in items(dig(obj, "metadata", "ownerReferences")):
        if reference.get("controller") is True:
            api_version = text(reference.get("apiVersion"))
            group = api_version.rpartition("/")[0] if "/" in api_version else ""
            kind = text(reference.get("kind"))
            qualified = f"{kind}.{group}" if group else kind
            if not qualified:
                return text(reference.get("name"))
            return f"{qualified.lower()}/{text(reference.get('name'))}"
    return "<none>"


def controller_revision_cells(revision: Obj, now: datetime) -> list[Any]:
    return [name_of(revision), controller_name(revision), integer(revision.get("revision")),
            age(created(revision), now)]


CONTROLLER_REVISION_PRINTER = Printer(
    (
        NAME,
        Column("Controller", "string", "Controller of the object"),
        Column("Revision", "string", FieldDoc("apps.v1.ControllerRevision", "revision")),
        AGE,
    ),
    controller_revision_cells,
)
