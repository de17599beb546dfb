"""Discovery documents (``/api``, ``/apis``, group and resource lists) and ``/version``.

Shapes follow kube-apiserver 1.33: the legacy (unaggregated) documents every client accepts,
with subresource entries (``x/status``, ``x/scale``, ``pods/log``, ...) sorted among the
resources as upstream lists them, and the aggregated ``apidiscovery.k8s.io/v2`` form in
:mod:`kubeloop.server.aggregated_discovery`.
"""

from __future__ import annotations

from typing import Any

from kubeloop.server.registry import SUBRESOURCE_VERBS, Registry, ResourceInfo

Obj = dict[str, Any]

VERSION_INFO: Obj = {
    "major": "1",
    "minor": "33",
    "emulationMajor": "1",
    "emulationMinor": "33",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "32",
    "gitVersion": "v1.33.0",
    # Not a build of kube-apiserver: no commit or build date of one is claimed.
    "gitCommit": "",
    "gitTreeState": "",
    "buildDate": "",
    "goVersion": "",
    "compiler": "gc",
    "platform": "linux/amd64",
}
"""``/version``: the release whose API and behaviour the server reproduces (1.33; 1.32 clients are
within the supported skew)."""


def api_versions(server_address: str) -> Obj:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _group_entry(registry: Registry, group: str) -> Obj:
    preferred = registry.preferred_version(group)
    versions = registry.versions(group)
    ordered = [preferred, *[v for v in versions if v != preferred]]
    return {
        "name": group,
        "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in ordered],
        "preferredVersion": {"groupVersion": f"{group}/{preferred}", "version": preferred},
    }


def api_group_list(registry: Registry) -> Obj:
    groups = [_group_entry(registry, g) for g in registry.groups() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> Obj:
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(registry, group)}


def _resource_entries(info: ResourceInfo) -> list[Obj]:
    main: Obj = {"name": info.resource, "singularName": info.singular, "namespaced": info.namespaced,
                 "kind": info.kind, "verbs": list(info.verbs)}
    if info.short_names:
        main["shortNames"] = list(info.short_names)
    if info.categories:
        main["categories"] = list(info.categories)
    entries = [main]
    if info.scale is not None:
        entries.append({"name": f"{info.resource}/scale", "singularName": "", "namespaced": info.namespaced,
                        "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": list(SUBRESOURCE_VERBS)})
    if info.status:
        entries.append({"name": f"{info.resource}/status", "singularName": "", "namespaced": info.namespaced,
                        "kind": info.kind, "verbs": list(SUBRESOURCE_VERBS)})
    for sub in info.subresources:
        entry: Obj = {"name": f"{info.resource}/{sub.name}", "singularName": "", "namespaced": info.namespaced}
        if sub.group is not None:
            entry["group"] = sub.group
            entry["version"] = sub.version
        entry["kind"] = sub.kind
        entry["verbs"] = list(sub.verbs)
        entries.append(entry)
    return sorted(entries, key=lambda e: str(e["name"]))


def api_resource_list(registry: Registry, group: str, version: str) -> Obj:
    group_version = f"{group}/{version}" if group else version
    resources = [entry for info in registry.resources(group, version) for entry in _resource_entries(info)]
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}
