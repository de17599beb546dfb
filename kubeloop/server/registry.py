"""The resource registry: which resources the server serves, and the per-kind rules of each.

A :class:`ResourceInfo` carries everything the generic handlers need to treat a kind the way
its upstream registry strategy does (status subresource, scale subresource, generation policy,
field-selector whitelist, graceful deletion, what DELETE returns). Built-in kinds are listed in
:mod:`kubeloop.server.builtins`; custom resources are added and removed at run time as their
CustomResourceDefinitions come and go (:mod:`kubeloop.server.crd`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from kubeloop.api.catalog import ALL_VERBS, SUBRESOURCE_VERBS, Subresource
from kubeloop.server.storage import ResourceType

__all__ = ["ALL_VERBS", "SUBRESOURCE_VERBS", "Generation", "Registry", "ResourceInfo", "ScaleSpec", "Subresource"]


class Generation(Enum):
    """When ``metadata.generation`` is kept and bumped (per registry strategy upstream)."""

    NONE = "none"
    """Kinds without generation (ConfigMap, Namespace, ...): the field is cleared."""
    SPEC = "spec"
    """+1 when ``spec`` changes (ReplicaSet, Pod, ...)."""
    SPEC_AND_ANNOTATIONS = "spec+annotations"
    """+1 when ``spec`` or ``metadata.annotations`` change (Deployment)."""
    NON_METADATA = "non-metadata"
    """+1 when anything outside ``metadata`` (and ``status``) changes (custom resources, CRDs)."""


@dataclass(frozen=True)
class ScaleSpec:
    """Where a kind keeps the numbers its ``/scale`` subresource exposes (dotted JSON paths)."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None
    """For CRs: a path to a selector *string*; ``None`` means built-in ``spec.selector`` (a LabelSelector)."""
    builtin_selector: bool = True


FieldsOf = Callable[[Mapping[str, Any]], dict[str, str]]


@dataclass(frozen=True)
class ResourceInfo:
    """One served resource of one group version."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    singular: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    status: bool = False
    """Whether a ``/status`` subresource exists (the main endpoint then ignores ``status``)."""
    scale: ScaleSpec | None = None
    generation: Generation = Generation.NONE
    extra_fields: FieldsOf | None = None
    """Fields beyond ``metadata.name``/``metadata.namespace`` usable in field selectors."""
    return_deleted_object: bool = False
    """DELETE answers with the deleted object (pods, CRs, ...) rather than a Success Status."""
    graceful: bool = False
    """Deletion honours a grace period (pods)."""
    custom: Any = None
    """For custom resources: the :class:`kubeloop.server.crd.CustomResource` validating and pruning them."""
    subresources: tuple[Subresource, ...] = ()
    """Other subresources discovery lists (``pods/log``, ``serviceaccounts/token``, ...)."""
    virtual: bool = False
    """Never stored: a create is answered from the request (reviews), a read is computed."""
    rules: Any = None
    """The kind's defaulting and validation (:class:`kubeloop.server.admission.KindRules`), attached
    by :class:`Registry` from the rules it was built with; ``None`` for kinds with only the generic
    metadata rules."""
    conversion: Any = None
    """How objects of this version map to and from their stored form
    (:class:`kubeloop.server.conversion.Converter`); ``None``: stored and served as is."""

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def resource_type(self) -> ResourceType:
        return ResourceType(self.group, self.resource)

    def field_set(self, obj: Mapping[str, Any]) -> dict[str, str]:
        """The selectable fields of ``obj`` as strings (``fields.Set`` upstream)."""
        meta = obj.get("metadata") or {}
        fields = {"metadata.name": str(meta.get("name") or "")}
        if self.namespaced:
            fields["metadata.namespace"] = str(meta.get("namespace") or "")
        if self.extra_fields is not None:
            fields.update(self.extra_fields(obj))
        return fields

    def selectable_fields(self) -> frozenset[str]:
        """Names usable in ``fieldSelector`` for this resource."""
        return frozenset(self.field_set({}))


class Registry:
    """The set of served resources, indexed for routing and discovery.

    Groups keep the order in which they were first registered (``/apis`` lists them that way,
    built-ins first). Mutated only from the event loop.
    """

    def __init__(self, rules: Mapping[tuple[str, str], Any] | None = None) -> None:
        """``rules`` maps ``(group, kind)`` to the admission rules of that kind, for built-ins and
        for the kinds of CRDs the server knows (CloneSets): entries added later get theirs."""
        self._rules: Mapping[tuple[str, str], Any] = dict(rules or {})
        self._by_path: dict[tuple[str, str, str], ResourceInfo] = {}
        self._group_versions: dict[str, list[str]] = {}
        self._preferred: dict[str, str] = {}

    def add(self, info: ResourceInfo, preferred: bool = True) -> None:
        rules = self._rules.get((info.group, info.kind))
        if rules is not None and info.rules is None:
            info = replace(info, rules=rules)
        self._by_path[(info.group, info.version, info.resource)] = info
        versions = self._group_versions.setdefault(info.group, [])
        if info.version not in versions:
            versions.append(info.version)
        if preferred or info.group not in self._preferred:
            self._preferred[info.group] = info.version

    def add_all(self, infos: Iterable[ResourceInfo]) -> None:
        """Serve ``infos``; a group's first version among them is its preferred one (catalog order)."""
        for info in infos:
            self.add(info, preferred=info.group not in self._preferred)

    def remove_group_resource(self, group: str, resource: str) -> None:
        """Stop serving ``resource`` in ``group`` at every version (its CRD went away)."""
        for key in [k for k in self._by_path if k[0] == group and k[2] == resource]:
            del self._by_path[key]
        remaining = {k[1] for k in self._by_path if k[0] == group}
        if not remaining:
            self._group_versions.pop(group, None)
            self._preferred.pop(group, None)
            return
        self._group_versions[group] = [v for v in self._group_versions[group] if v in remaining]
        if self._preferred.get(group) not in remaining:
            self._preferred[group] = self._group_versions[group][0]

    def lookup(self, group: str, version: str, resource: str) -> ResourceInfo | None:
        return self._by_path.get((group, version, resource))

    def has_group_version(self, group: str, version: str) -> bool:
        return version in self._group_versions.get(group, ())

    def groups(self) -> list[str]:
        return list(self._group_versions)

    def versions(self, group: str) -> list[str]:
        return list(self._group_versions.get(group, ()))

    def preferred_version(self, group: str) -> str:
        return self._preferred[group]

    def resources(self, group: str, version: str) -> list[ResourceInfo]:
        return [i for (g, v, _), i in self._by_path.items() if g == group and v == version]

    def namespaced_types(self) -> list[ResourceInfo]:
        """One entry per namespaced stored collection (for cascading namespace deletion)."""
        seen: dict[tuple[str, str], ResourceInfo] = {}
        for (g, _, r), info in self._by_path.items():
            if info.namespaced:
                seen.setdefault((g, r), info)
        return list(seen.values())
