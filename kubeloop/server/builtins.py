"""Every resource kube-apiserver 1.33 serves by default, with its upstream registry traits.

Names, scope, verbs and subresources come from :data:`kubeloop.api.catalog.CATALOG`; this
module adds what each upstream registry strategy does beyond generic storage (generation policy,
field-selector whitelist, graceful deletion, what DELETE returns, reviews that are never
stored), from ``pkg/registry/<group>/<resource>/strategy.go``. Schemas come from
:mod:`kubeloop.server.kinds.upstream`; defaulting and validation from
:mod:`kubeloop.server.admission.kinds`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api.catalog import CATALOG, Entry
from kubeloop.server.conversion import builtin_converter
from kubeloop.server.registry import Generation, ResourceInfo, ScaleSpec
from kubeloop.server.services.fields import service_fields


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


def replication_controller_fields(rc: Mapping[str, Any]) -> dict[str, str]:
    return {"status.replicas": _text(_dig(rc, "status", "replicas") or 0)}


def job_fields(job: Mapping[str, Any]) -> dict[str, str]:
    return {"status.successful": _text(_dig(job, "status", "succeeded") or 0)}


def csr_fields(csr: Mapping[str, Any]) -> dict[str, str]:
    return {"spec.signerName": _text(_dig(csr, "spec", "signerName"))}


_SPEC = Generation.SPEC

_TRAITS: dict[tuple[str, str], dict[str, Any]] = {
    ("", "bindings"): {"virtual": True},
    ("", "componentstatuses"): {"virtual": True},
    ("", "events"): {"extra_fields": core_event_fields},
    ("", "namespaces"): {"extra_fields": namespace_fields, "return_deleted_object": True},
    ("", "nodes"): {"extra_fields": node_fields},
    ("", "persistentvolumeclaims"): {"return_deleted_object": True},
    ("", "persistentvolumes"): {"return_deleted_object": True},
    ("", "pods"): {"extra_fields": pod_fields, "return_deleted_object": True, "graceful": True},
    ("", "replicationcontrollers"): {"generation": _SPEC, "extra_fields": replication_controller_fields},
    ("", "secrets"): {"extra_fields": secret_fields},
    ("", "serviceaccounts"): {"return_deleted_object": True},
    ("", "services"): {"extra_fields": service_fields, "return_deleted_object": True},
    ("apps", "daemonsets"): {"generation": _SPEC},
    ("apps", "deployments"): {"generation": Generation.SPEC_AND_ANNOTATIONS},
    ("apps", "replicasets"): {"generation": _SPEC, "extra_fields": replica_set_fields},
    ("apps", "statefulsets"): {"generation": _SPEC},
    ("authentication.k8s.io", "selfsubjectreviews"): {"virtual": True},
    ("authentication.k8s.io", "tokenreviews"): {"virtual": True},
    ("authorization.k8s.io", "localsubjectaccessreviews"): {"virtual": True},
    ("authorization.k8s.io", "selfsubjectaccessreviews"): {"virtual": True},
    ("authorization.k8s.io", "selfsubjectrulesreviews"): {"virtual": True},
    ("authorization.k8s.io", "subjectaccessreviews"): {"virtual": True},
    ("batch", "cronjobs"): {"generation": _SPEC},
    ("batch", "jobs"): {"generation": _SPEC, "extra_fields": job_fields},
    ("certificates.k8s.io", "certificatesigningrequests"): {"extra_fields": csr_fields},
    ("networking.k8s.io", "ingressclasses"): {"generation": _SPEC},
    ("networking.k8s.io", "ingresses"): {"generation": _SPEC},
    ("networking.k8s.io", "networkpolicies"): {"generation": _SPEC},
    ("policy", "poddisruptionbudgets"): {"generation": _SPEC},
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): {"generation": _SPEC},
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): {"generation": _SPEC},
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): {"generation": _SPEC},
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): {"generation": _SPEC},
    ("apiextensions.k8s.io", "customresourcedefinitions"): {"generation": Generation.NON_METADATA},
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): {"generation": _SPEC},
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): {"generation": _SPEC},
}
"""What each registry strategy does beyond generic storage, by (group, resource); the rest of a
resource's facts come from :data:`kubeloop.api.catalog.CATALOG`."""


def resource_info(entry: Entry) -> ResourceInfo:
    """The server's record of a catalog entry, with the registry traits of its resource."""
    return ResourceInfo(entry.group, entry.version, entry.resource, entry.kind, entry.namespaced, entry.singular,
                        entry.short_names, entry.categories, entry.verbs, status=entry.status,
                        scale=ScaleSpec() if entry.scale else None, subresources=entry.subresources,
                        conversion=builtin_converter(entry.group, entry.version, entry.resource),
                        **_TRAITS.get((entry.group, entry.resource), {}))


BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = tuple(resource_info(entry) for entry in CATALOG)
"""Served built-ins, in the order discovery lists them."""

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
