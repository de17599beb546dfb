"""The paths section: operations kubectl's dry-run check and other clients look for."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.server.builtins import BUILTIN_RESOURCES
from kubeloop.server.crd import infos_for
from kubeloop.server.crds.cloneset import CLONESET_CRD
from kubeloop.server.openapi import ServedResource, served_from_infos
from kubeloop.server.openapi.paths import resource_paths

SERVED = served_from_infos([*BUILTIN_RESOURCES, *infos_for(CLONESET_CRD)])


def _by_kind(group: str, kind: str) -> ServedResource:
    return next(s for s in SERVED if s.group == group and s.kind == kind)


def _query_names(operation: dict[str, Any]) -> set[str]:
    return {p["name"] for p in operation.get("parameters", ()) if p["in"] == "query"}


PATCHABLE = [s for s in SERVED if "patch" in s.verbs]


def test_only_review_and_status_kinds_lack_patch() -> None:
    assert sorted(s.resource for s in SERVED if s not in PATCHABLE) == [
        "bindings", "componentstatuses", "localsubjectaccessreviews", "selfsubjectaccessreviews",
        "selfsubjectreviews", "selfsubjectrulesreviews", "subjectaccessreviews", "tokenreviews"]


@pytest.mark.parametrize("served", PATCHABLE, ids=lambda s: f"{s.group or 'core'}/{s.resource}")
def test_every_resource_has_a_patch_with_its_gvk_and_dry_run(served: ServedResource) -> None:
    paths = resource_paths(served)
    gvk = {"group": served.group, "version": served.version, "kind": served.kind}
    patches = [item["patch"] for item in paths.values() if item.get("patch", {}).get(
        "x-kubernetes-group-version-kind") == gvk]
    assert patches
    assert all("dryRun" in _query_names(p) and "fieldManager" in _query_names(p) for p in patches)
    assert all(p["x-kubernetes-action"] == "patch" for p in patches)


def test_namespaced_resource_paths_and_actions() -> None:
    paths = resource_paths(_by_kind("apps", "Deployment"))
    item = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
    assert set(paths) == {"/apis/apps/v1/namespaces/{namespace}/deployments", item, "/apis/apps/v1/deployments",
                          item + "/status", item + "/scale"}
    actions = {(url, method): op["x-kubernetes-action"] for url, entry in paths.items()
               for method, op in entry.items() if method != "parameters"}
    assert actions[("/apis/apps/v1/namespaces/{namespace}/deployments", "get")] == "list"
    assert actions[("/apis/apps/v1/namespaces/{namespace}/deployments", "post")] == "post"
    assert actions[("/apis/apps/v1/namespaces/{namespace}/deployments", "delete")] == "deletecollection"
    assert actions[(item, "put")] == "put"
    assert actions[(item, "delete")] == "delete"
    scale = paths[item + "/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert paths[item]["get"]["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.apps.v1.Deployment"}
    assert [p["name"] for p in paths[item]["parameters"]] == ["name", "namespace", "pretty"]
    assert paths[item]["get"]["operationId"] == "readAppsV1NamespacedDeployment"


def test_cluster_scoped_resource_without_deletecollection() -> None:
    paths = resource_paths(_by_kind("", "Namespace"))
    assert set(paths) == {"/api/v1/namespaces", "/api/v1/namespaces/{name}", "/api/v1/namespaces/{name}/status"}
    assert "delete" not in paths["/api/v1/namespaces"]
    assert [p["name"] for p in paths["/api/v1/namespaces/{name}"]["parameters"]] == ["name", "pretty"]


def test_custom_resource_paths_use_its_definition() -> None:
    paths = resource_paths(_by_kind("apps.kruise.io", "CloneSet"))
    item = paths["/apis/apps.kruise.io/v1alpha1/namespaces/{namespace}/clonesets/{name}"]
    assert item["put"]["responses"]["200"]["schema"]["$ref"] == "#/definitions/io.kruise.apps.v1alpha1.CloneSet"
    body = item["patch"]["parameters"][0]
    assert body["in"] == "body" and body["schema"]["$ref"].endswith("meta.v1.Patch")


def test_kind_without_definition_has_no_paths() -> None:
    served = ServedResource("example.com", "v1", "things", "Thing", True)
    assert served.definition_name is None
    assert resource_paths(served) == {}
