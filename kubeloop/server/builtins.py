"""The built-in kinds the server serves, with their upstream registry traits.

Short names, categories, subresources, generation policies and field-selector whitelists
follow what kube-apiserver 1.20 advertises and enforces for the same resources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.server.registry import ALL_VERBS, Generation, ResourceInfo, ScaleSpec
from kubeloop.server.services.fields import service_fields

_NO_DELETECOLLECTION = tuple(v for v in ALL_VERBS if v != "deletecollection")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _dig(obj: Mapping[str, Any], *path: str) -> Any:
    current: Any = obj
    for part in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def pod_fields(pod: Mapping[str, Any]) -> dict[str, str]:
    return {
        "spec.nodeName": _text(_dig(pod, "spec", "nodeName")),
        "spec.restartPolicy": _text(_dig(pod, "spec", "restartPolicy")),
        "spec.schedulerName": _text(_dig(pod, "spec", "schedulerName")),
        "spec.serviceAccountName": _text(_dig(pod, "spec", "serviceAccountName")),
        "spec.hostNetwork": _text(bool(_dig(pod, "spec", "hostNetwork"))),
        "status.phase": _text(_dig(pod, "status", "phase")),
        "status.podIP": _text(_dig(pod, "status", "podIP")),
        "status.nominatedNodeName": _text(_dig(pod, "status", "nominatedNodeName")),
    }


def core_event_fields(event: Mapping[str, Any]) -> dict[str, str]:
    involved = event.get("involvedObject")
    if not isinstance(involved, Mapping):
        involved = {}
    source = _text(_dig(event, "source", "component")) or _text(event.get("reportingController"))
    fields = {f"involvedObject.{key}": _text(involved.get(key)) for key in
              ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")}
    fields.update({
        "reason": _text(event.get("reason")),
        "reportingComponent": _text(event.get("reportingComponent")),
        "source": source,
        "type": _text(event.get("type")),
    })
    return fields


def replica_set_fields(rs: Mapping[str, Any]) -> dict[str, str]:
    return {"status.replicas": _text(_dig(rs, "status", "replicas") or 0)}


def namespace_fields(ns: Mapping[str, Any]) -> dict[str, str]:
    return {"status.phase": _text(_dig(ns, "status", "phase"))}


def secret_fields(secret: Mapping[str, Any]) -> dict[str, str]:
    return {"type": _text(secret.get("type"))}


def node_fields(node: Mapping[str, Any]) -> dict[str, str]:
    return {"spec.unschedulable": _text(bool(_dig(node, "spec", "unschedulable")))}


BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = (
    ResourceInfo("", "v1", "namespaces", "Namespace", False, "namespace", ("ns",),
                 verbs=_NO_DELETECOLLECTION, status=True, extra_fields=namespace_fields,
                 return_deleted_object=True),
    ResourceInfo("", "v1", "pods", "Pod", True, "pod", ("po",), ("all",), status=True,
                 generation=Generation.NONE, extra_fields=pod_fields, return_deleted_object=True,
                 graceful=True),
    ResourceInfo("", "v1", "nodes", "Node", False, "node", ("no",), status=True, extra_fields=node_fields),
    ResourceInfo("", "v1", "events", "Event", True, "event", ("ev",), extra_fields=core_event_fields),
    ResourceInfo("", "v1", "configmaps", "ConfigMap", True, "configmap", ("cm",)),
    ResourceInfo("", "v1", "secrets", "Secret", True, "secret", extra_fields=secret_fields),
    ResourceInfo("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, "persistentvolumeclaim",
                 ("pvc",), status=True),
    ResourceInfo("", "v1", "services", "Service", True, "service", ("svc",), ("all",), status=True,
                 extra_fields=service_fields, return_deleted_object=True),
    ResourceInfo("", "v1", "endpoints", "Endpoints", True, "endpoints", ("ep",)),
    ResourceInfo("", "v1", "serviceaccounts", "ServiceAccount", True, "serviceaccount", ("sa",),
                 return_deleted_object=True),
    ResourceInfo("apps", "v1", "deployments", "Deployment", True, "deployment", ("deploy",), ("all",),
                 status=True, scale=ScaleSpec(), generation=Generation.SPEC_AND_ANNOTATIONS),
    ResourceInfo("apps", "v1", "replicasets", "ReplicaSet", True, "replicaset", ("rs",), ("all",),
                 status=True, scale=ScaleSpec(), generation=Generation.SPEC, extra_fields=replica_set_fields),
    ResourceInfo("apps", "v1", "controllerrevisions", "ControllerRevision", True, "controllerrevision"),
    ResourceInfo("events.k8s.io", "v1", "events", "Event", True, "event", ("ev",)),
    ResourceInfo("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, "endpointslice"),
    ResourceInfo("coordination.k8s.io", "v1", "leases", "Lease", True, "lease"),
    ResourceInfo("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
                 "customresourcedefinition", ("crd", "crds"), ("api-extensions",), status=True,
                 generation=Generation.NON_METADATA),
)
"""Served built-ins, in the order discovery lists them."""

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
