"""Mapping request paths onto served resources, as kube-apiserver's path layout defines them.

``/api/v1/...`` is the core group, ``/apis/{group}/{version}/...`` the others; namespaced
resources live under ``namespaces/{ns}/{resource}[/{name}[/{subresource}]]`` and are listed
across namespaces at ``{resource}``. ``namespaces/{name}/status`` is the Namespace's own
subresource, not a resource called "status" in that namespace.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeloop.api.status import ApiError
from kubeloop.server.registry import Registry, ResourceInfo

NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def not_found_path() -> ApiError:
    """The answer for a path that names nothing served."""
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


@dataclass(frozen=True)
class Target:
    """What a resource request addresses."""

    info: ResourceInfo
    namespace: str | None
    """The URL's namespace; None for cluster-scoped resources and cross-namespace collections."""
    name: str | None
    subresource: str | None

    @property
    def is_collection(self) -> bool:
        return self.name is None


@dataclass(frozen=True)
class DiscoveryTarget:
    """A discovery document: ``group`` None means ``/api`` or ``/apis`` (``legacy`` tells which)."""

    legacy: bool
    group: str | None
    version: str | None


def resolve(registry: Registry, path: str) -> Target | DiscoveryTarget:
    """Resolve ``path`` or raise the 404 upstream gives for unknown paths."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        raise not_found_path()
    if parts[0] == "api":
        if len(parts) == 1:
            return DiscoveryTarget(True, None, None)
        group, version, rest = "", parts[1], parts[2:]
        if not registry.has_group_version("", version):
            raise not_found_path()
        if not rest:
            return DiscoveryTarget(True, "", version)
    elif parts[0] == "apis":
        if len(parts) == 1:
            return DiscoveryTarget(False, None, None)
        group = parts[1]
        if group not in registry.groups() or group == "":
            raise not_found_path()
        if len(parts) == 2:
            return DiscoveryTarget(False, group, None)
        version, rest = parts[2], parts[3:]
        if not registry.has_group_version(group, version):
            raise not_found_path()
        if not rest:
            return DiscoveryTarget(False, group, version)
    else:
        raise not_found_path()
    return _resource_target(registry, group, version, rest)


def _resource_target(registry: Registry, group: str, version: str, rest: list[str]) -> Target:
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3 and not (len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES
                                                           and group == ""):
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise not_found_path()
    info = registry.lookup(group, version, rest[0])
    if info is None:
        raise not_found_path()
    if namespace is not None and not info.namespaced:
        raise not_found_path()
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else None
    if subresource is not None and not _has_subresource(info, subresource):
        raise not_found_path()
    if info.namespaced and namespace is None and name is not None:
        raise not_found_path()
    return Target(info, namespace, name, subresource)


def _has_subresource(info: ResourceInfo, subresource: str) -> bool:
    if subresource == "status":
        return info.status
    if subresource == "scale":
        return info.scale is not None
    if subresource == "binding":
        return info.group == "" and info.resource == "pods"
    if subresource == "finalize":
        return info.group == "" and info.resource == "namespaces"
    return False
