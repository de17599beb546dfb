"""Aggregated discovery (``apidiscovery.k8s.io/v2``): every group, version and resource in one document.

kubectl 1.27+ and client-go ask ``/api`` and ``/apis`` for ``APIGroupDiscoveryList`` first
(``Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList``) and fall back
to the legacy documents. The shape follows upstream's ``staging/src/k8s.io/api/apidiscovery/v2``
types and ``apiserver/pkg/endpoints/discovery/aggregated``: ``/api`` holds the core group,
``/apis`` the others, each with its versions (preferred first) and resources; a resource's
``responseKind`` leaves group and version empty when they are the resource's own, a subresource
names its kind's group and version when it differs (``deployments/scale`` is
``autoscaling/v1`` Scale).
"""

from __future__ import annotations

from typing import Any

from kubeloop.server.registry import SUBRESOURCE_VERBS, Registry, ResourceInfo

Obj = dict[str, Any]

GROUP = "apidiscovery.k8s.io"
VERSIONS = ("v2", "v2beta1")
KIND = "APIGroupDiscoveryList"


def content_type(version: str) -> str:
    return f"application/json;g={GROUP};v={version};as={KIND}"


def requested_version(accept: str | None) -> str | None:
    """The aggregated version the Accept header asks for first (``None``: the legacy documents)."""
    if not accept:
        return None
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        params: dict[str, str] = {}
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            if value:
                params[key.strip()] = value.strip()
        if pieces[0].lower() not in ("application/json", "application/*", "*/*"):
            continue
        if params.get("as") == KIND and params.get("g") == GROUP and params.get("v") in VERSIONS:
            return params["v"]
        if "as" not in params:
            return None
    return None


def _kind(group: str | None, version: str | None, kind: str) -> Obj:
    return {"group": group or "", "version": version or "", "kind": kind}


def _resource(info: ResourceInfo) -> Obj:
    entry: Obj = {"resource": info.resource, "responseKind": _kind(None, None, info.kind),
                  "scope": "Namespaced" if info.namespaced else "Cluster", "singularResource": info.singular,
                  "verbs": list(info.verbs)}
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    if info.categories:
        entry["categories"] = list(info.categories)
    subresources: list[Obj] = []
    if info.scale is not None:
        subresources.append({"subresource": "scale", "responseKind": _kind("autoscaling", "v1", "Scale"),
                             "verbs": list(SUBRESOURCE_VERBS)})
    if info.status:
        subresources.append({"subresource": "status", "responseKind": _kind(None, None, info.kind),
                             "verbs": list(SUBRESOURCE_VERBS)})
    for sub in info.subresources:
        subresources.append({"subresource": sub.name, "responseKind": _kind(sub.group, sub.version, sub.kind),
                             "verbs": list(sub.verbs)})
    if subresources:
        entry["subresources"] = sorted(subresources, key=lambda s: str(s["subresource"]))
    return entry


def _group(registry: Registry, group: str) -> Obj:
    preferred = registry.preferred_version(group)
    ordered = [preferred, *[v for v in registry.versions(group) if v != preferred]]
    versions: list[Obj] = []
    for version in ordered:
        resources = sorted((_resource(i) for i in registry.resources(group, version)), key=lambda r: str(r["resource"]))
        versions.append({"version": version, "resources": resources, "freshness": "Current"})
    return {"metadata": {"name": group, "creationTimestamp": None}, "versions": versions}


def group_discovery_list(registry: Registry, legacy: bool, version: str = "v2") -> Obj:
    """``/api`` (``legacy``: the core group alone) or ``/apis`` as an ``APIGroupDiscoveryList``."""
    groups = [""] if legacy else [g for g in registry.groups() if g]
    return {"kind": KIND, "apiVersion": f"{GROUP}/{version}", "metadata": {},
            "items": [_group(registry, g) for g in groups if registry.versions(g)]}
