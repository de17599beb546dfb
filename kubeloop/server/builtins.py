"""Every resource kube-apiserver 1.33 serves by default, with its upstream registry traits.

One entry per resource of each group version: plural and singular names, kind, scope, short
names, categories, verbs and subresources as discovery lists them (``kubectl api-resources``
against a 1.33 server with its default ``--runtime-config``), and the registry strategy's traits
(generation policy, field-selector whitelist, graceful deletion, what DELETE returns). Upstream
declares these per registry (``pkg/registry/<group>/<resource>/storage``: ``ShortNames()``,
``Categories()``, the REST interfaces each storage implements, and ``strategy.go``); they are
restated here as data. Schemas come from :mod:`kubeloop.server.kinds.upstream`; defaulting and
validation from :mod:`kubeloop.server.admission.kinds`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.server.registry import ALL_VERBS, SUBRESOURCE_VERBS, Generation, ResourceInfo, ScaleSpec, Subresource

_NO_DELETECOLLECTION = tuple(v for v in ALL_VERBS if v != "deletecollection")
_CREATE = ("create",)
_GET_LIST = ("get", "list")
_CONNECT = ("create", "delete", "get", "patch", "update")
_ALL = ("all",)
_EXT = ("api-extensions",)


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


def service_fields(service: Mapping[str, Any]) -> dict[str, str]:
    return {"spec.clusterIP": _text(_dig(service, "spec", "clusterIP")),
            "spec.type": _text(_dig(service, "spec", "type"))}


def job_fields(job: Mapping[str, Any]) -> dict[str, str]:
    return {"status.successful": _text(_dig(job, "status", "succeeded") or 0)}


def csr_fields(csr: Mapping[str, Any]) -> dict[str, str]:
    return {"spec.signerName": _text(_dig(csr, "spec", "signerName"))}


def _info(group: str, version: str, resource: str, kind: str, namespaced: bool, short_names: tuple[str, ...] = (),
          categories: tuple[str, ...] = (), **traits: Any) -> ResourceInfo:
    return ResourceInfo(group, version, resource, kind, namespaced, kind.lower(), short_names, categories, **traits)


_POD_SUBRESOURCES = (
    Subresource("attach", "PodAttachOptions", ("create", "get")),
    Subresource("binding", "Binding", _CREATE),
    Subresource("ephemeralcontainers", "Pod", SUBRESOURCE_VERBS),
    Subresource("eviction", "Eviction", _CREATE, group="policy", version="v1"),
    Subresource("exec", "PodExecOptions", ("create", "get")),
    Subresource("log", "Pod", ("get",)),
    Subresource("portforward", "PodPortForwardOptions", ("create", "get")),
    Subresource("proxy", "PodProxyOptions", _CONNECT),
    Subresource("resize", "Pod", SUBRESOURCE_VERBS),
)
_SPEC = Generation.SPEC


BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = (
    # core/v1, in the order kube-apiserver lists them.
    _info("", "v1", "bindings", "Binding", True, verbs=_CREATE, virtual=True),
    _info("", "v1", "componentstatuses", "ComponentStatus", False, ("cs",), verbs=_GET_LIST, virtual=True),
    _info("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
    _info("", "v1", "endpoints", "Endpoints", True, ("ep",)),
    _info("", "v1", "events", "Event", True, ("ev",), extra_fields=core_event_fields),
    _info("", "v1", "limitranges", "LimitRange", True, ("limits",)),
    _info("", "v1", "namespaces", "Namespace", False, ("ns",), verbs=_NO_DELETECOLLECTION, status=True,
          extra_fields=namespace_fields, return_deleted_object=True,
          subresources=(Subresource("finalize", "Namespace", ("update",)),)),
    _info("", "v1", "nodes", "Node", False, ("no",), status=True, extra_fields=node_fields,
          subresources=(Subresource("proxy", "NodeProxyOptions", _CONNECT),)),
    _info("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), status=True,
          return_deleted_object=True),
    _info("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",), status=True,
          return_deleted_object=True),
    _info("", "v1", "pods", "Pod", True, ("po",), _ALL, status=True, extra_fields=pod_fields,
          return_deleted_object=True, graceful=True, subresources=_POD_SUBRESOURCES),
    _info("", "v1", "podtemplates", "PodTemplate", True),
    _info("", "v1", "replicationcontrollers", "ReplicationController", True, ("rc",), _ALL, status=True,
          scale=ScaleSpec(), generation=_SPEC, extra_fields=replication_controller_fields),
    _info("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",), status=True),
    _info("", "v1", "secrets", "Secret", True, extra_fields=secret_fields),
    _info("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",), return_deleted_object=True,
          subresources=(Subresource("token", "TokenRequest", _CREATE, group="authentication.k8s.io",
                                    version="v1"),)),
    _info("", "v1", "services", "Service", True, ("svc",), _ALL, status=True, extra_fields=service_fields,
          return_deleted_object=True, subresources=(Subresource("proxy", "ServiceProxyOptions", _CONNECT),)),
    # apiregistration.k8s.io
    _info("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, (), _EXT, status=True),
    # apps
    _info("apps", "v1", "controllerrevisions", "ControllerRevision", True),
    _info("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), _ALL, status=True, generation=_SPEC),
    _info("apps", "v1", "deployments", "Deployment", True, ("deploy",), _ALL, status=True, scale=ScaleSpec(),
          generation=Generation.SPEC_AND_ANNOTATIONS),
    _info("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), _ALL, status=True, scale=ScaleSpec(),
          generation=_SPEC, extra_fields=replica_set_fields),
    _info("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), _ALL, status=True, scale=ScaleSpec(),
          generation=_SPEC),
    # events.k8s.io
    _info("events.k8s.io", "v1", "events", "Event", True, ("ev",)),
    # authentication.k8s.io and authorization.k8s.io: reviews, answered and never stored.
    _info("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=_CREATE,
          virtual=True),
    _info("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=_CREATE, virtual=True),
    _info("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True,
          verbs=_CREATE, virtual=True),
    _info("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False,
          verbs=_CREATE, virtual=True),
    _info("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False,
          verbs=_CREATE, virtual=True),
    _info("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False, verbs=_CREATE,
          virtual=True),
    # autoscaling: v2 is the preferred version (see docs/decisions.md for v1).
    _info("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), _ALL,
          status=True),
    # batch
    _info("batch", "v1", "cronjobs", "CronJob", True, ("cj",), _ALL, status=True, generation=_SPEC),
    _info("batch", "v1", "jobs", "Job", True, (), _ALL, status=True, generation=_SPEC, extra_fields=job_fields),
    # certificates.k8s.io
    _info("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", False, ("csr",),
          status=True, extra_fields=csr_fields,
          subresources=(Subresource("approval", "CertificateSigningRequest", SUBRESOURCE_VERBS),)),
    # networking.k8s.io
    _info("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, generation=_SPEC),
    _info("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",), status=True, generation=_SPEC),
    _info("networking.k8s.io", "v1", "ipaddresses", "IPAddress", False, ("ip",)),
    _info("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",), generation=_SPEC),
    _info("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", False, status=True),
    # policy
    _info("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), status=True,
          generation=_SPEC),
    # rbac.authorization.k8s.io
    _info("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _info("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    _info("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    _info("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    # storage.k8s.io
    _info("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    _info("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    _info("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    _info("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",)),
    _info("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, status=True),
    # admissionregistration.k8s.io
    _info("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
          False, (), _EXT, generation=_SPEC),
    _info("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", False,
          (), _EXT, status=True, generation=_SPEC),
    _info("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
          "ValidatingAdmissionPolicyBinding", False, (), _EXT, generation=_SPEC),
    _info("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration",
          False, (), _EXT, generation=_SPEC),
    # apiextensions.k8s.io
    _info("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
          ("crd", "crds"), _EXT, status=True, generation=Generation.NON_METADATA),
    # scheduling.k8s.io
    _info("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",)),
    # coordination.k8s.io
    _info("coordination.k8s.io", "v1", "leases", "Lease", True),
    # node.k8s.io
    _info("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False),
    # discovery.k8s.io
    _info("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True),
    # flowcontrol.apiserver.k8s.io
    _info("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "FlowSchema", False, status=True, generation=_SPEC),
    _info("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "PriorityLevelConfiguration",
          False, status=True, generation=_SPEC),
)
"""Served built-ins, in the order discovery lists them."""

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
