"""Pods as a ReplicaSet creates them.

A new pod copies the template's labels, annotations, finalizers and spec, is named by the
server from the prefix ``<replica set>-``, and carries a controller reference to the
ReplicaSet (``blockOwnerDeletion`` set, so a foreground deletion of the ReplicaSet waits for
it). A template without labels, or with labels the ReplicaSet's selector does not match, is
refused: such a pod could never be matched back to its owner. These are plain functions; the
controller does the writing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.labels import Selector
from kubeloop.api.meta import deep_copy, name_of, namespace_of, new_controller_ref
from kubeloop.api.nested import section
from kubeloop.controllers.pod_guard import NO_LABELS, creation_refusal

Obj = dict[str, Any]

REPLICA_SET_API_VERSION = "apps/v1"
REPLICA_SET_KIND = "ReplicaSet"

# A generated name adds five random characters; the prefix must leave room for them.
_MAX_GENERATE_NAME_PREFIX = 253 - 5


class PodTemplateError(ValueError):
    """The pod template cannot produce a pod (no labels, or none the selector matches)."""


def generate_name_prefix(controller_name: str) -> str:
    """``<name>-``, shortened if needed so the server's random suffix still fits."""
    prefix = f"{controller_name}-"
    return prefix if len(prefix) <= _MAX_GENERATE_NAME_PREFIX else prefix[:_MAX_GENERATE_NAME_PREFIX]


def pod_from_template(replica_set: Mapping[str, Any], selector: Selector | None = None) -> Obj:
    """The pod to create for ``replica_set`` (a new dict; the ReplicaSet is not touched).

    Raises :class:`PodTemplateError` when the template has no labels, or (given the
    ReplicaSet's ``selector``) labels it does not match: see :mod:`kubeloop.controllers.pod_guard`.
    """
    template = section(replica_set, "spec", "template")
    template_meta = section(template, "metadata")
    labels = section(template_meta, "labels")
    if not labels:
        raise PodTemplateError(NO_LABELS)
    if selector is not None:
        refusal = creation_refusal(selector, labels)
        if refusal is not None:
            raise PodTemplateError(refusal)
    meta: Obj = {
        "generateName": generate_name_prefix(name_of(replica_set)),
        "namespace": namespace_of(replica_set),
        "labels": dict(labels),
        "ownerReferences": [new_controller_ref(replica_set, REPLICA_SET_API_VERSION, REPLICA_SET_KIND)],
    }
    annotations = section(template_meta, "annotations")
    if annotations:
        meta["annotations"] = dict(annotations)
    finalizers = template_meta.get("finalizers")
    if isinstance(finalizers, list) and finalizers:
        meta["finalizers"] = list(finalizers)
    spec = template.get("spec")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": deep_copy(spec) if isinstance(spec, Mapping) else {},
    }
