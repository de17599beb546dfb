"""Every resource kube-apiserver 1.33 serves by default, as discovery describes it.

One entry per resource of each group version: plural and singular names, kind, scope, short
names, categories, verbs and subresources (with their own kinds and verbs), as
``kubectl api-resources`` lists them against a 1.33 server with its default
``--runtime-config``. Upstream declares these per registry (``pkg/registry/<group>/<resource>/
storage``: ``ShortNames()``, ``Categories()`` and the REST interfaces each storage implements);
they are restated here as data, once, for every layer: the embedded server serves exactly these
(adding its own registry traits in ``kubeloop.server.builtins``), and the client knows them
without asking discovery (``kubeloop.client``).
"""

from __future__ import annotations

from dataclasses import dataclass

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUBRESOURCE_VERBS = ("get", "patch", "update")
_NO_DELETECOLLECTION = tuple(v for v in ALL_VERBS if v != "deletecollection")
_CREATE = ("create",)
_GET_LIST = ("get", "list")
_CONNECT = ("create", "delete", "get", "patch", "update")
_ALL = ("all",)
_EXT = ("api-extensions",)


@dataclass(frozen=True)
class Subresource:
    """A subresource beyond ``status`` and ``scale`` (which :class:`Entry` flags itself)."""

    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str | None = None
    """The subresource kind's group when it differs from the resource's (``policy`` Eviction)."""
    version: str | None = None


@dataclass(frozen=True)
class Entry:
    """One resource of one group version."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    status: bool = False
    scale: bool = False
    subresources: tuple[Subresource, ...] = ()

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def subresource_names(self) -> frozenset[str]:
        names = {sub.name for sub in self.subresources}
        if self.status:
            names.add("status")
        if self.scale:
            names.add("scale")
        return frozenset(names)


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

CATALOG: tuple[Entry, ...] = (# core/v1, in the order kube-apiserver lists them.
    Entry("", "v1", "bindings", "Binding", True, verbs=_CREATE),
    Entry("", "v1", "componentstatuses", "ComponentStatus", False, ("cs",), verbs=_GET_LIST),
    Entry("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
    Entry("", "v1", "endpoints", "Endpoints", True, ("ep",)),
    Entry("", "v1", "events", "Event", True, ("ev",)),
    Entry("", "v1", "limitranges", "LimitRange", True, ("limits",)),
    Entry("", "v1", "namespaces", "Namespace", False, ("ns",), verbs=_NO_DELETECOLLECTION, status=True,
          subresources=(Subresource("finalize", "Namespace", ("update",)),)),
    Entry("", "v1", "nodes", "Node", False, ("no",), status=True,
          subresources=(Subresource("proxy", "NodeProxyOptions", _CONNECT),)),
    Entry("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), status=True),
    Entry("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",), status=True),
    Entry("", "v1", "pods", "Pod", True, ("po",), _ALL, status=True, subresources=_POD_SUBRESOURCES),
    Entry("", "v1", "podtemplates", "PodTemplate", True),
    Entry("", "v1", "replicationcontrollers", "ReplicationController", True, ("rc",), _ALL, status=True,
          scale=True),
    Entry("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",), status=True),
    Entry("", "v1", "secrets", "Secret", True),
    Entry("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",),
          subresources=(Subresource("token", "TokenRequest", _CREATE, group="authentication.k8s.io",
                                    version="v1"),)),
    Entry("", "v1", "services", "Service", True, ("svc",), _ALL, status=True,
          subresources=(Subresource("proxy", "ServiceProxyOptions", _CONNECT),)),
    # apiregistration.k8s.io
    Entry("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, (), _EXT, status=True),
    # apps
    Entry("apps", "v1", "controllerrevisions", "ControllerRevision", True),
    Entry("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), _ALL, status=True),
    Entry("apps", "v1", "deployments", "Deployment", True, ("deploy",), _ALL, status=True, scale=True),
    Entry("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), _ALL, status=True, scale=True),
    Entry("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), _ALL, status=True, scale=True),
    # events.k8s.io
    Entry("events.k8s.io", "v1", "events", "Event", True, ("ev",)),
    # authentication.k8s.io and authorization.k8s.io: reviews, answered and never stored.
    Entry("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=_CREATE),
    Entry("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=_CREATE),
    Entry("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True,
          verbs=_CREATE),
    Entry("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False,
          verbs=_CREATE),
    Entry("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False,
          verbs=_CREATE),
    Entry("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False, verbs=_CREATE),
    # autoscaling: v2 is the preferred (and storage) version; v1 objects are converted.
    Entry("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), _ALL,
          status=True),
    Entry("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), _ALL,
          status=True),
    # batch
    Entry("batch", "v1", "cronjobs", "CronJob", True, ("cj",), _ALL, status=True),
    Entry("batch", "v1", "jobs", "Job", True, (), _ALL, status=True),
    # certificates.k8s.io
    Entry("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", False, ("csr",),
          status=True,
          subresources=(Subresource("approval", "CertificateSigningRequest", SUBRESOURCE_VERBS),)),
    # networking.k8s.io
    Entry("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False),
    Entry("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",), status=True),
    Entry("networking.k8s.io", "v1", "ipaddresses", "IPAddress", False, ("ip",)),
    Entry("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    Entry("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", False, status=True),
    # policy
    Entry("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), status=True),
    # rbac.authorization.k8s.io
    Entry("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    Entry("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    Entry("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    Entry("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    # storage.k8s.io
    Entry("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    Entry("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    Entry("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    Entry("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",)),
    Entry("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, status=True),
    # admissionregistration.k8s.io
    Entry("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
          False, (), _EXT),
    Entry("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", False,
          (), _EXT, status=True),
    Entry("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
          "ValidatingAdmissionPolicyBinding", False, (), _EXT),
    Entry("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration",
          False, (), _EXT),
    # apiextensions.k8s.io
    Entry("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
          ("crd", "crds"), _EXT, status=True),
    # scheduling.k8s.io
    Entry("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",)),
    # coordination.k8s.io
    Entry("coordination.k8s.io", "v1", "leases", "Lease", True),
    # node.k8s.io
    Entry("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False),
    # discovery.k8s.io
    Entry("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True),
    # flowcontrol.apiserver.k8s.io
    Entry("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "FlowSchema", False, status=True),
    Entry("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "PriorityLevelConfiguration",
          False, status=True))
"""Served by default, in discovery order (groups as kube-apiserver 1.33 orders ``/apis``); a
group's first version listed is its preferred one."""


def find(group: str, resource: str) -> Entry:
    """The entry of a served built-in resource at its preferred version (``KeyError`` when there is none)."""
    return _BY_GROUP_RESOURCE[(group, resource)]


_BY_GROUP_RESOURCE: dict[tuple[str, str], Entry] = {}
for _entry in CATALOG:
    _BY_GROUP_RESOURCE.setdefault((_entry.group, _entry.resource), _entry)
