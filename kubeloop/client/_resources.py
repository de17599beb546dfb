"""Resources by group, version and plural name, and the URL paths built from them.

A :class:`Resource` is what discovery returns for one ``APIResource``: enough to build every
URL of that resource without further lookups. Every built-in resource of Kubernetes 1.33 is
known without discovery (from the catalog the embedded server serves, so the two cannot
disagree); the constants below name the ones kubeloop's controllers touch. Anything else (CRDs
included) is resolved by :class:`kubeloop.client.Discovery`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

from kubeloop.api.catalog import CATALOG, Entry, find


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


def from_catalog(entry: Entry) -> Resource:
    """The client's view of a built-in resource from the shared catalog of served resources."""
    return Resource(entry.group, entry.version, entry.resource, entry.kind, entry.namespaced,
                    entry.subresource_names, entry.short_names, entry.singular, frozenset(entry.verbs))


def _builtin(group: str, plural: str) -> Resource:
    return from_catalog(find(group, plural))


PODS = _builtin("", "pods")
SERVICES = _builtin("", "services")
CONFIG_MAPS = _builtin("", "configmaps")
SECRETS = _builtin("", "secrets")
NAMESPACES = _builtin("", "namespaces")
NODES = _builtin("", "nodes")
EVENTS = _builtin("", "events")
ENDPOINTS = _builtin("", "endpoints")
SERVICE_ACCOUNTS = _builtin("", "serviceaccounts")
PERSISTENT_VOLUME_CLAIMS = _builtin("", "persistentvolumeclaims")
PERSISTENT_VOLUMES = _builtin("", "persistentvolumes")
REPLICATION_CONTROLLERS = _builtin("", "replicationcontrollers")
DEPLOYMENTS = _builtin("apps", "deployments")
REPLICA_SETS = _builtin("apps", "replicasets")
STATEFUL_SETS = _builtin("apps", "statefulsets")
DAEMON_SETS = _builtin("apps", "daemonsets")
CONTROLLER_REVISIONS = _builtin("apps", "controllerrevisions")
JOBS = _builtin("batch", "jobs")
CRON_JOBS = _builtin("batch", "cronjobs")
LEASES = _builtin("coordination.k8s.io", "leases")
EVENTS_V1 = _builtin("events.k8s.io", "events")
POD_DISRUPTION_BUDGETS = _builtin("policy", "poddisruptionbudgets")
CUSTOM_RESOURCE_DEFINITIONS = _builtin("apiextensions.k8s.io", "customresourcedefinitions")

BUILTIN_RESOURCES: tuple[Resource, ...] = tuple(from_catalog(entry) for entry in CATALOG)
"""Every resource Kubernetes 1.33 serves by default (:data:`kubeloop.api.catalog.CATALOG`)."""


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
    for candidate in _BUILTIN_BY_NAME.get(resource.lower(), ()):
        if group is not None and candidate.group != group:
            continue
        if version is not None and candidate.version != version:
            continue
        return candidate
    return None


def _index_by_name(resources: tuple[Resource, ...]) -> dict[str, tuple[Resource, ...]]:
    """Each typable name -> the resources it names, in catalog order (so the core group still
    wins a shared bare name). Resolving a name is done per request when callers pass strings:
    a scan of the whole catalog cost 16-130 us a call (a name late in the table, or a custom
    resource's, paid the most), the index one lookup."""
    index: dict[str, list[Resource]] = {}
    for resource in resources:
        for name in resource_names(resource):
            index.setdefault(name, []).append(resource)
    return {name: tuple(found) for name, found in index.items()}


_BUILTIN_BY_NAME = _index_by_name(BUILTIN_RESOURCES)
