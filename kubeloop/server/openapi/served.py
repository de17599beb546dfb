"""What the server serves, as the OpenAPI builders need it.

:class:`ServedResource` is a small, hashable description of one resource of one group version;
:func:`served_from_info` makes one from the server registry's
:class:`~kubeloop.server.registry.ResourceInfo`, so the registry stays the single source of
truth and this package needs no knowledge of how it is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubeloop.server.openapi.crd_definitions import crd_definition_name
from kubeloop.server.openapi.definitions import builtin_definition_name
from kubeloop.server.registry import ALL_VERBS, Registry, ResourceInfo


@dataclass(frozen=True)
class ServedResource:
    """One served resource (``deployments`` in ``apps/v1``) and the subresources it has."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    status: bool = False
    scale: bool = False
    verbs: tuple[str, ...] = ALL_VERBS
    custom: bool = False
    """Served from a CRD: its definition is named after the reversed group."""

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def definition_name(self) -> str | None:
        """The name of the kind's definition, ``None`` for a built-in kind we define no schema for."""
        if self.custom:
            return crd_definition_name(self.group, self.version, self.kind)
        return builtin_definition_name(self.group, self.version, self.kind)

    @property
    def list_definition_name(self) -> str | None:
        name = self.definition_name
        return None if name is None or "list" not in self.verbs else f"{name}List"

    @property
    def openapi_v3_path(self) -> str:
        """The group version's key in ``/openapi/v3`` discovery (``api/v1``, ``apis/apps/v1``)."""
        return f"apis/{self.group}/{self.version}" if self.group else f"api/{self.version}"


def served_from_info(info: ResourceInfo) -> ServedResource:
    """The builder's view of a registry entry."""
    return ServedResource(
        group=info.group, version=info.version, resource=info.resource, kind=info.kind,
        namespaced=info.namespaced, status=info.status, scale=info.scale is not None,
        verbs=tuple(info.verbs), custom=info.custom is not None,
    )


def served_from_infos(infos: Iterable[ResourceInfo]) -> tuple[ServedResource, ...]:
    """Every entry, in a stable order (so equal registries give byte-identical documents)."""
    return tuple(sorted((served_from_info(i) for i in infos),
                        key=lambda s: (s.group, s.version, s.resource)))


def served_from_registry(registry: Registry) -> tuple[ServedResource, ...]:
    """Every resource ``registry`` serves, at every version."""
    return served_from_infos(info for group in registry.groups() for version in registry.versions(group)
                             for info in registry.resources(group, version))
