"""Our own OpenAPI definitions of every built-in kind the server serves.

:data:`BUILTIN_DEFINITIONS` maps upstream's definition names (``io.k8s.api.apps.v1.Deployment``)
to Swagger 2.0 schemas; :func:`builtin_definition_name` finds the one for a served kind.
Custom resources get theirs from their CRD (:mod:`kubeloop.server.openapi.crd_definitions`).
"""

from __future__ import annotations

from types import MappingProxyType

from kubeloop.server.openapi.definitions import (
    apiextensions,
    apps_and_more,
    core_containers,
    core_kinds,
    core_pods,
    core_volumes,
    meta,
    services,
)
from kubeloop.server.openapi.dsl import (
    APIEXTENSIONS,
    APPS,
    AUTOSCALING,
    COORDINATION,
    CORE,
    EVENTS,
    GVK_EXTENSION,
    Schema,
    gvk,
    list_definition,
)

GROUP_PREFIXES: dict[str, str] = {
    "": CORE,
    "apps": APPS,
    "autoscaling": AUTOSCALING,
    "coordination.k8s.io": COORDINATION,
    "events.k8s.io": EVENTS,
    "apiextensions.k8s.io": APIEXTENSIONS,
    "discovery.k8s.io": services.DISCOVERY,
}
"""Definition-name prefix of each built-in group (all served at version v1)."""

_LISTED_KINDS = (
    ("", "Pod"), ("", "Namespace"), ("", "Node"), ("", "Event"), ("", "ConfigMap"), ("", "Secret"),
    ("", "PersistentVolumeClaim"), ("", "ServiceAccount"), ("apps", "Deployment"), ("apps", "ReplicaSet"),
    ("apps", "ControllerRevision"), ("coordination.k8s.io", "Lease"), ("events.k8s.io", "Event"),
    ("", "Service"), ("", "Endpoints"), ("discovery.k8s.io", "EndpointSlice"),
)


def _lists() -> dict[str, Schema]:
    lists: dict[str, Schema] = {}
    for group, kind in _LISTED_KINDS:
        prefix = GROUP_PREFIXES[group]
        lists[f"{prefix}{kind}List"] = list_definition(
            prefix + kind, f"A list of {kind} objects.", gvk(group, "v1", f"{kind}List"))
    return lists


def _all() -> dict[str, Schema]:
    merged: dict[str, Schema] = {}
    for module in (meta, core_pods, core_containers, core_volumes, core_kinds, apps_and_more, apiextensions,
                   services):
        overlap = merged.keys() & module.DEFINITIONS.keys()
        assert not overlap, f"defined twice: {sorted(overlap)}"
        merged.update(module.DEFINITIONS)
    merged.update(_lists())
    return dict(sorted(merged.items()))


BUILTIN_DEFINITIONS: MappingProxyType[str, Schema] = MappingProxyType(_all())
"""Every built-in definition by name; shared, so never mutate a schema taken from it."""


def _index_by_kind() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in BUILTIN_DEFINITIONS.items():
        for entry in schema.get(GVK_EXTENSION, ()):
            index.setdefault((entry["group"], entry["version"], entry["kind"]), name)
    return index


_BY_KIND = _index_by_kind()


def builtin_definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a built-in group-version-kind, ``None`` when we define none."""
    return _BY_KIND.get((group, version, kind))
