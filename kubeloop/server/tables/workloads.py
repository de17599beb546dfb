"""Rows of the apps/v1 kinds: Deployments, ReplicaSets and ControllerRevisions.

Deployment: NAME READY ("ready/desired") UP-TO-DATE AVAILABLE AGE, wide CONTAINERS IMAGES
SELECTOR. ReplicaSet: NAME DESIRED CURRENT READY AGE and the same wide columns. A missing
``spec.replicas`` counts as 1 (what defaulting stores). ControllerRevision: NAME CONTROLLER
(``<kind>.<group>/<name>`` of the controlling owner, ``<none>`` without one) REVISION AGE.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubeloop.api.labels import SelectorError, label_selector_string
from kubeloop.server.tables.ages import age
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
    name_of,
    text,
)

CONTAINERS = Column("Containers", "string", "The names of the template's containers.", priority=1)
IMAGES = Column("Images", "string", "The images of the template's containers.", priority=1)
SELECTOR = Column("Selector", "string", "The label selector of the managed pods.", priority=1)


def template_cells(obj: Obj) -> list[str]:
    """CONTAINERS, IMAGES and SELECTOR cells of a workload with a pod template."""
    containers = items(dig(obj, "spec", "template", "spec", "containers"))
    names = ",".join(text(c.get("name")) for c in containers)
    images = ",".join(text(c.get("image")) for c in containers)
    selector = dig(obj, "spec", "selector")
    try:
        selector_text = label_selector_string(selector if isinstance(selector, dict) else None)
    except SelectorError:
        selector_text = "<error>"
    return [names, images, selector_text]


def deployment_cells(deployment: Obj, now: datetime) -> list[Any]:
    desired = integer(dig(deployment, "spec", "replicas"), 1)
    status = dig(deployment, "status")
    return [
        name_of(deployment),
        f"{integer(dig(status, 'readyReplicas'))}/{desired}",
        integer(dig(status, "updatedReplicas")),
        integer(dig(status, "availableReplicas")),
        age(created(deployment), now),
        *template_cells(deployment),
    ]


DEPLOYMENT_PRINTER = Printer(
    (
        NAME,
        Column("Ready", "string", "Ready pods out of the desired number."),
        Column("Up-to-date", "integer", "Pods running the current template."),
        Column("Available", "integer", "Pods ready for at least minReadySeconds."),
        AGE, CONTAINERS, IMAGES, SELECTOR,
    ),
    deployment_cells,
)


def replica_set_cells(replica_set: Obj, now: datetime) -> list[Any]:
    return [
        name_of(replica_set),
        integer(dig(replica_set, "spec", "replicas"), 1),
        integer(dig(replica_set, "status", "replicas")),
        integer(dig(replica_set, "status", "readyReplicas")),
        age(created(replica_set), now),
        *template_cells(replica_set),
    ]


REPLICA_SET_PRINTER = Printer(
    (
        NAME,
        Column("Desired", "integer", "The number of pods wanted."),
        Column("Current", "integer", "The number of pods observed."),
        Column("Ready", "integer", "The number of ready pods."),
        AGE, CONTAINERS, IMAGES, SELECTOR,
    ),
    replica_set_cells,
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
        Column("Controller", "string", "The controller that owns the revision."),
        Column("Revision", "integer", "The revision number."),
        AGE,
    ),
    controller_revision_cells,
)
