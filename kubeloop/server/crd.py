"""CustomResourceDefinitions: checking them, and serving their custom resources.

A stored CRD turns into one :class:`~kubeloop.server.registry.ResourceInfo` per served
version, carrying a :class:`CustomResource` that prunes unknown fields (unless the schema
preserves them), applies schema defaults and validates objects against the version's
``openAPIV3Schema`` with ``jsonschema``. :func:`install` keeps the registry in step with the
stored CRDs, so a CRD's resources are served (and discoverable) as soon as it is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.api import names
from kubeloop.api.status import FieldError, forbidden, invalid, not_supported, required
from kubeloop.server.conversion import Relabel
from kubeloop.server.crd_schema import CustomResource
from kubeloop.server.registry import Generation, Registry, ResourceInfo, ScaleSpec
from kubeloop.server.state import ServerState
from kubeloop.server.storage import ResourceType

Obj = dict[str, Any]

GROUP = "apiextensions.k8s.io"
_SCOPES = ("Cluster", "Namespaced")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _spec(definition: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(definition.get("spec"))


def resource_type_of(definition: Mapping[str, Any]) -> ResourceType | None:
    spec = _spec(definition)
    group, plural = spec.get("group"), _mapping(spec.get("names")).get("plural")
    if not isinstance(group, str) or not isinstance(plural, str):
        return None
    return ResourceType(group, plural)


def validate_definition(definition: Obj, registry: Registry) -> list[FieldError]:
    """The checks upstream's CRD validation makes that matter for serving it."""
    errors: list[FieldError] = []
    spec = _spec(definition)
    group = spec.get("group")
    names_ = _mapping(spec.get("names"))
    plural = names_.get("plural")
    if not isinstance(group, str) or not group:
        errors.append(required("spec.group"))
    elif "." not in group:
        errors.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    elif names.dns1123_subdomain_errors(group):
        errors.append(invalid("spec.group", group, "; ".join(names.dns1123_subdomain_errors(group))))
    for key in ("plural", "kind"):
        if not isinstance(names_.get(key), str) or not names_.get(key):
            errors.append(required(f"spec.names.{key}"))
    if isinstance(plural, str) and plural and names.dns1123_label_errors(plural):
        errors.append(invalid("spec.names.plural", plural, "; ".join(names.dns1123_label_errors(plural))))
    name = _mapping(definition.get("metadata")).get("name")
    if isinstance(group, str) and isinstance(plural, str) and name != f"{plural}.{group}":
        errors.append(invalid("metadata.name", name, "must be spec.names.plural+\".\"+spec.group"))
    if spec.get("scope") not in _SCOPES:
        errors.append(not_supported("spec.scope", spec.get("scope"), _SCOPES))
    errors += _version_errors(spec.get("versions"))
    if isinstance(group, str) and isinstance(plural, str) and not errors:
        for version in registry.versions(group):
            existing = registry.lookup(group, version, plural)
            if existing is not None and existing.custom is None:
                errors.append(forbidden("spec.group", f"{plural}.{group} is served by the server itself"))
                break
    return errors


def _version_errors(versions: Any) -> list[FieldError]:
    if not isinstance(versions, list) or not versions:
        return [required("spec.versions", "must have exactly one version marked as storage version")]
    errors: list[FieldError] = []
    storage = 0
    seen: set[str] = set()
    for index, version in enumerate(versions):
        path = f"spec.versions[{index}]"
        if not isinstance(version, Mapping):
            errors.append(invalid(path, version, "must be an object"))
            continue
        name = version.get("name")
        if not isinstance(name, str) or not name:
            errors.append(required(f"{path}.name"))
        elif name in seen:
            errors.append(invalid(f"{path}.name", name, "must be unique"))
        else:
            seen.add(name)
        storage += version.get("storage") is True
        schema = _mapping(version.get("schema")).get("openAPIV3Schema")
        if schema is not None and not isinstance(schema, Mapping):
            errors.append(invalid(f"{path}.schema.openAPIV3Schema", schema, "must be an object"))
        elif schema is not None:
            problem = CustomResource.schema_problem(schema)
            if problem:
                errors.append(invalid(f"{path}.schema.openAPIV3Schema", "", problem))
    if storage != 1:
        errors.append(invalid("spec.versions", versions and "", "must have exactly one version marked as storage "
                                                                  "version"))
    return errors


def validate_definition_update(new: Obj, old: Obj, registry: Registry) -> list[FieldError]:
    errors = validate_definition(new, registry)
    if _spec(new).get("group") != _spec(old).get("group"):
        errors.append(invalid("spec.group", _spec(new).get("group"), "field is immutable"))
    if _mapping(_spec(new).get("names")).get("plural") != _mapping(_spec(old).get("names")).get("plural"):
        errors.append(invalid("spec.names.plural", _mapping(_spec(new).get("names")).get("plural"),
                              "field is immutable"))
    return errors


def _conditions(now: str) -> list[Obj]:
    return [
        {"type": "NamesAccepted", "status": "True", "lastTransitionTime": now, "reason": "NoConflicts",
         "message": "no conflicts found"},
        {"type": "Established", "status": "True", "lastTransitionTime": now, "reason": "InitialNamesAccepted",
         "message": "the initial names have been accepted"},
    ]


def _storage_version(definition: Mapping[str, Any]) -> str | None:
    for version in _spec(definition).get("versions") or []:
        if isinstance(version, Mapping) and version.get("storage") is True:
            name = version.get("name")
            return name if isinstance(name, str) else None
    return None


def initial_status(definition: Obj, now: str) -> Obj:
    """The status the CRD controllers would converge to at once: names accepted, established."""
    stored = _storage_version(definition)
    return {
        "conditions": _conditions(now),
        "acceptedNames": dict(_mapping(_spec(definition).get("names"))),
        "storedVersions": [stored] if stored else [],
    }


def refreshed_status(definition: Obj, now: str) -> Obj:
    """Status after a spec change: accepted names follow the spec, stored versions accumulate."""
    status = dict(_mapping(definition.get("status")))
    stored = list(status.get("storedVersions") or [])
    version = _storage_version(definition)
    if version and version not in stored:
        stored.append(version)
    status["storedVersions"] = stored
    status["acceptedNames"] = dict(_mapping(_spec(definition).get("names")))
    status.setdefault("conditions", _conditions(now))
    return status


def infos_for(definition: Mapping[str, Any]) -> list[ResourceInfo]:
    """One served entry per served version of ``definition``."""
    spec = _spec(definition)
    names_ = _mapping(spec.get("names"))
    group = str(spec.get("group"))
    infos: list[ResourceInfo] = []
    for version in spec.get("versions") or []:
        if not isinstance(version, Mapping) or version.get("served") is False:
            continue
        subresources = _mapping(version.get("subresources"))
        scale_spec = None
        if "scale" in subresources:
            scale = _mapping(subresources["scale"])
            scale_spec = ScaleSpec(str(scale.get("specReplicasPath") or ".spec.replicas"),
                                   str(scale.get("statusReplicasPath") or ".status.replicas"),
                                   scale.get("labelSelectorPath"), builtin_selector=False)
        schema = _mapping(_mapping(version.get("schema")).get("openAPIV3Schema"))
        kind = str(names_.get("kind"))
        infos.append(ResourceInfo(
            group=group, version=str(version.get("name")), resource=str(names_.get("plural")), kind=kind,
            namespaced=spec.get("scope") == "Namespaced",
            singular=str(names_.get("singular") or kind.lower()),
            short_names=tuple(str(s) for s in names_.get("shortNames") or ()),
            categories=tuple(str(c) for c in names_.get("categories") or ()),
            status="status" in subresources, scale=scale_spec, generation=Generation.NON_METADATA,
            return_deleted_object=True, custom=CustomResource(schema, "status" in subresources),
            conversion=Relabel(f"{group}/{version.get('name')}"),
        ))
    return infos


def serve(registry: Registry, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
    """Bring the registry in line with a CRD change (create, update or delete)."""
    for definition in (old, new):
        rt = resource_type_of(definition) if definition is not None else None
        if rt is not None:
            registry.remove_group_resource(rt.group, rt.resource)
    if new is not None:
        stored = _storage_version(new)
        for info in infos_for(new):
            registry.add(info, preferred=info.version == stored)


def install(state: ServerState) -> None:
    """Serve every stored CRD now, and each future one as soon as it is written."""
    crd_info = state.registry.lookup(GROUP, "v1", "customresourcedefinitions")
    assert crd_info is not None, "the CRD resource is always served"
    items, _, _ = state.storage.list(crd_info.resource_type)
    for definition in items:
        serve(state.registry, None, definition)
    state.on_crd_change.append(lambda old, new: serve(state.registry, old, new))
