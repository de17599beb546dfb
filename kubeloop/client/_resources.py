"""Resources by group, version and plural name, and the URL paths built from them.

A :class:`Resource` is what discovery returns for one ``APIResource``: enough to build every
URL of that resource without further lookups. The constants below cover the kinds the
kubeloop controllers and most user controllers touch, so common calls need no discovery;
anything else (CRDs included) is resolved by :class:`kubeloop.client.Discovery`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote


@dataclass(frozen=True, slots=True)
class Resource:
    """One API resource (``deployments`` in ``apps/v1``), not an object of it."""

    group: str
    """API group, ``""`` for the core group."""
    version: str
    plural: str
    """The resource name used in URLs, e.g. ``deployments``."""
    kind: str
    namespaced: bool
    subresources: frozenset[str] = frozenset()
    """Subresource names the server offers (``status``, ``scale``...)."""
    short_names: tuple[str, ...] = ()
    singular: str = ""
    verbs: frozenset[str] = frozenset()
    _prefix: str = field(init=False, repr=False, compare=False, hash=False, default="")

    def __post_init__(self) -> None:
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        object.__setattr__(self, "_prefix", prefix)

    @property
    def api_version(self) -> str:
        """``apiVersion`` of objects of this resource: ``v1`` or ``apps/v1``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``deployments.apps`` (``pods`` for core), as error messages name resources."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
        """URL path for the collection (no ``name``) or one object.

        ``namespace`` is ignored for cluster-scoped resources; for namespaced ones ``None``
        means all namespaces (valid for list, watch and nothing else).
        """
        parts = [self._prefix]
        if self.namespaced and namespace:
            parts.append("/namespaces/")
            parts.append(quote(namespace, safe=""))
        parts.append("/")
        parts.append(self.plural)
        if name is not None:
            if not name:
                raise ValueError(f"an empty name is not valid for {self.group_resource}")
            parts.append("/")
            parts.append(quote(name, safe=""))
            if subresource:
                parts.append("/")
                parts.append(subresource)
        return "".join(parts)


_ALL_VERBS = frozenset({"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"})
_STATUS = frozenset({"status"})
_STATUS_SCALE = frozenset({"status", "scale"})


def _r(group: str, version: str, plural: str, kind: str, namespaced: bool = True,
       subresources: frozenset[str] = frozenset(), short: tuple[str, ...] = ()) -> Resource:
    return Resource(group, version, plural, kind, namespaced, subresources, short,
                    kind.lower(), _ALL_VERBS)


PODS = _r("", "v1", "pods", "Pod", subresources=frozenset({"status", "log", "eviction", "binding"}),
          short=("po",))
SERVICES = _r("", "v1", "services", "Service", subresources=_STATUS, short=("svc",))
CONFIG_MAPS = _r("", "v1", "configmaps", "ConfigMap", short=("cm",))
SECRETS = _r("", "v1", "secrets", "Secret")
NAMESPACES = _r("", "v1", "namespaces", "Namespace", False, frozenset({"status", "finalize"}), ("ns",))
NODES = _r("", "v1", "nodes", "Node", False, _STATUS, ("no",))
EVENTS = _r("", "v1", "events", "Event", short=("ev",))
ENDPOINTS = _r("", "v1", "endpoints", "Endpoints", short=("ep",))
SERVICE_ACCOUNTS = _r("", "v1", "serviceaccounts", "ServiceAccount", short=("sa",))
PERSISTENT_VOLUME_CLAIMS = _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim",
                              subresources=_STATUS, short=("pvc",))
PERSISTENT_VOLUMES = _r("", "v1", "persistentvolumes", "PersistentVolume", False, _STATUS, ("pv",))
REPLICATION_CONTROLLERS = _r("", "v1", "replicationcontrollers", "ReplicationController",
                             subresources=_STATUS_SCALE, short=("rc",))
DEPLOYMENTS = _r("apps", "v1", "deployments", "Deployment", subresources=_STATUS_SCALE, short=("deploy",))
REPLICA_SETS = _r("apps", "v1", "replicasets", "ReplicaSet", subresources=_STATUS_SCALE, short=("rs",))
STATEFUL_SETS = _r("apps", "v1", "statefulsets", "StatefulSet", subresources=_STATUS_SCALE, short=("sts",))
DAEMON_SETS = _r("apps", "v1", "daemonsets", "DaemonSet", subresources=_STATUS, short=("ds",))
CONTROLLER_REVISIONS = _r("apps", "v1", "controllerrevisions", "ControllerRevision")
JOBS = _r("batch", "v1", "jobs", "Job", subresources=_STATUS)
CRON_JOBS = _r("batch", "v1", "cronjobs", "CronJob", subresources=_STATUS, short=("cj",))
LEASES = _r("coordination.k8s.io", "v1", "leases", "Lease")
EVENTS_V1 = _r("events.k8s.io", "v1", "events", "Event", short=("ev",))
POD_DISRUPTION_BUDGETS = _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget",
                            subresources=_STATUS, short=("pdb",))
CUSTOM_RESOURCE_DEFINITIONS = _r("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                 "CustomResourceDefinition", False, _STATUS, ("crd", "crds"))

BUILTIN_RESOURCES: tuple[Resource, ...] = (
    PODS, SERVICES, CONFIG_MAPS, SECRETS, NAMESPACES, NODES, EVENTS, ENDPOINTS, SERVICE_ACCOUNTS,
    PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, REPLICATION_CONTROLLERS, DEPLOYMENTS, REPLICA_SETS,
    STATEFUL_SETS, DAEMON_SETS, CONTROLLER_REVISIONS, JOBS, CRON_JOBS, LEASES, EVENTS_V1,
    POD_DISRUPTION_BUDGETS, CUSTOM_RESOURCE_DEFINITIONS,
)


def resource_names(resource: Resource) -> set[str]:
    """Lower-cased names a user may type for ``resource``: plural, singular, kind, short names."""
    names = {resource.plural.lower(), resource.kind.lower()}
    if resource.singular:
        names.add(resource.singular.lower())
    names.update(s.lower() for s in resource.short_names)
    return names


def split_qualified_name(name: str) -> tuple[str, str | None, str | None]:
    """Split ``deployments``, ``deployments.apps`` or ``deployments.v1.apps`` the way kubectl
    does: ``(resource, version or None, group or None)``; a bare name has neither."""
    head, dot, rest = name.partition(".")
    if not dot:
        return name, None, None
    version, dot2, group = rest.partition(".")
    if dot2 and version[:1] == "v" and version[1:2].isdigit():
        return head, version, group
    return head, None, rest


def find_builtin(name: str) -> Resource | None:
    """The built-in resource ``name`` denotes (same rules as discovery), or ``None``.

    For a bare name shared by two groups (``events``), the core group wins, as in kubectl.
    """
    resource, version, group = split_qualified_name(name)
    wanted = resource.lower()
    for candidate in BUILTIN_RESOURCES:
        if group is not None and candidate.group != group:
            continue
        if version is not None and candidate.version != version:
            continue
        if wanted in resource_names(candidate):
            return candidate
    return None
