"""Discovery documents (``/api``, ``/apis``, group and resource lists) and ``/version``.

Shapes follow the legacy (unaggregated) discovery of kube-apiserver 1.20, which every client
still accepts; subresource entries (``x/status``, ``x/scale``) are listed because client-go's
scale client and kopf look them up there.
"""

from __future__ import annotations

from typing import Any

from kubeloop.server.registry import SUBRESOURCE_VERBS, Registry, ResourceInfo

Obj = dict[str, Any]

VERSION_INFO: Obj = {
    "major": "1",
    "minor": "20",
    "gitVersion": "v1.20.0",
    "gitCommit": "af46c47ce925f4c4ad5cc8d1fca46c7b77d13b38",
    "gitTreeState": "clean",
    "buildDate": "2020-12-08T17:51:19Z",
    "goVersion": "go1.15.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}
"""``/version``: numbers of the release whose behaviour the server reproduces."""


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
    if info.group == "" and info.resource == "namespaces":
        entries.append({"name": "namespaces/finalize", "singularName": "", "namespaced": False, "kind": "Namespace",
                        "verbs": ["update"]})
    if info.group == "" and info.resource == "pods":
        entries.append({"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                        "verbs": ["create"]})
    return entries


def api_resource_list(registry: Registry, group: str, version: str) -> Obj:
    group_version = f"{group}/{version}" if group else version
    resources = [entry for info in registry.resources(group, version) for entry in _resource_entries(info)]
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}
